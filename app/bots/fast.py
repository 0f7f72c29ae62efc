"""A compact two-player durak model for exhaustive search (bit masks instead of engine states).

It follows the engine's rules (``docs/rules-decisions.md``) for two players still in the match,
single-card play (Durak Peak and Classic 36 tables; Durac 1993 goes through the engine), transfer on
or off, draws on or off, the 5/6 attack cap, refills from a known stock order. Player 0 is the
searching seat, player 1 its opponent. The tests check it against the engine move for move.

A position is a tuple::

    (h0, h1, stock_pos, attacks, covers, att, phase, taking, passed, limit, defended, emptied)

``h0``/``h1`` are card bit masks, ``attacks``/``covers`` tuples of card indices (-1: uncovered),
``att`` the attacking player (the other one defends), ``phase`` 0 = lead, 1 = bout, ``limit`` the
defender's hand when the bout began for him, ``emptied`` the players whose last card hit the
table in this bout, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app.engine import ActionJson
from app.engine.cards import Card

Pos = tuple[Any, ...]
Move = tuple[int, int, int]  # (kind, card, attack index)

LEAD, COVER, TRANSFER, TAKE, THROW, PASS = 0, 1, 2, 3, 4, 5
WIN, DRAW, LOSS = 1.0, 0.5, 0.0
EXACT, LOWER, UPPER = 0, 1, 2
SUIT_INDEX = {"c": 0, "d": 1, "h": 2, "s": 3}
MAX_BOUTS = 40  # search lines longer than this many bouts are scored as draws


class OutOfBudget(Exception):
    pass


def index(c: Card) -> int:
    return SUIT_INDEX[c.suit] * 13 + (c.rank - 2)


def card_of(i: int) -> Card:
    return Card(i % 13 + 2, "cdhs"[i // 13])


def mask(cards: Sequence[Card]) -> int:
    m = 0
    for c in cards:
        m |= 1 << index(c)
    return m


def bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


def popcount(m: int) -> int:
    return bin(m).count("1")


class Game:
    """Rules and precomputed masks for one trump suit and table."""

    def __init__(self, trump: str, *, transfer: bool, draws: bool, first_cap: int, stock: Sequence[Card] = ()) -> None:
        self.trump = SUIT_INDEX[trump]
        self.transfer = transfer
        self.draws = draws
        self.first_cap = first_cap
        self.stock = tuple(index(c) for c in stock)
        t = self.trump
        self.beat: list[int] = []
        for i in range(52):
            suit, rank = divmod(i, 13)
            higher = 0
            for r in range(rank + 1, 13):
                higher |= 1 << (suit * 13 + r)
            if suit != t:
                higher |= 0x1FFF << (t * 13)
            self.beat.append(higher)
        self.rank_mask = [sum(1 << (s * 13 + r) for s in range(4)) for r in range(13)]
        # Cheap-first order: plain cards by rank, then trumps by rank.
        self.cost = [(i % 13) + (20 if i // 13 == t else 0) for i in range(52)]

    # ------------------------------------------------------------------ rules

    def cap(self, defended: bool) -> int:
        return 6 if defended else self.first_cap

    def mover(self, p: Pos) -> int:
        att: int = p[5]
        if p[6] == 0:
            return att
        covers = p[4]
        if not p[7] and -1 in covers:
            return 1 - att
        return att

    def moves(self, p: Pos) -> list[Move]:
        h0, h1, _, attacks, covers, att, phase, taking, _, _, defended, _ = p
        cost = self.cost
        if phase == 0:
            hand = h0 if att == 0 else h1
            return [(LEAD, c, 0) for c in sorted(bits(hand), key=cost.__getitem__)]
        if not taking and -1 in covers:
            hand = h1 if att == 0 else h0
            out: list[Move] = []
            if self.transfer and all(c == -1 for c in covers):
                target = h0 if att == 0 else h1
                total = len(attacks) + 1
                if target and popcount(target) >= total and total <= self.cap(defended):
                    rank = attacks[0] % 13
                    for c in bits(hand & self.rank_mask[rank]):
                        out.append((TRANSFER, c, 0))
            beat = self.beat
            for i, a in enumerate(attacks):
                if covers[i] == -1:
                    for c in sorted(bits(hand & beat[a]), key=cost.__getitem__):
                        out.append((COVER, c, i))
            out.append((TAKE, -1, 0))
            return out
        # The attacker's turn to add or pass (the position is never terminal here).
        hand = h0 if att == 0 else h1
        ranks = 0
        for a in attacks:
            ranks |= self.rank_mask[a % 13]
        for c in covers:
            if c >= 0:
                ranks |= self.rank_mask[c % 13]
        out = [(THROW, c, 0) for c in sorted(bits(hand & ranks), key=cost.__getitem__)]
        out.append((PASS, -1, 0))
        return out

    def play(self, p: Pos, move: Move) -> Pos | float:
        """The next position, or the final value for player 0."""
        h0, h1, sp, attacks, covers, att, _, taking, passed, limit, defended, emptied = p
        kind, c, i = move
        bit = 1 << c if c >= 0 else 0
        if kind == LEAD:
            if att == 0:
                h0 ^= bit
                hand = h0
            else:
                h1 ^= bit
                hand = h1
            if not hand and att not in emptied:
                emptied = (*emptied, att)
            return (h0, h1, sp, (c,), (-1,), att, 1, False, False, limit, defended, emptied)
        d = 1 - att
        if kind == COVER:
            if d == 0:
                h0 ^= bit
                hand = h0
            else:
                h1 ^= bit
                hand = h1
            covers = (*covers[:i], c, *covers[i + 1 :])
            if not hand and d not in emptied:
                emptied = (*emptied, d)
            q = (h0, h1, sp, attacks, covers, att, 1, False, False, limit, defended, emptied)
            return self._maybe_end(q)
        if kind == TRANSFER:
            if d == 0:
                h0 ^= bit
                hand = h0
                target = h1
            else:
                h1 ^= bit
                hand = h1
                target = h0
            if not hand and d not in emptied:
                emptied = (*emptied, d)
            return (h0, h1, sp, (*attacks, c), (*covers, -1), d, 1, False, False, popcount(target), defended, emptied)
        if kind == TAKE:
            q = (h0, h1, sp, attacks, covers, att, 1, True, False, limit, defended, emptied)
            return self._maybe_end(q)
        if kind == THROW:
            if att == 0:
                h0 ^= bit
                hand = h0
            else:
                h1 ^= bit
                hand = h1
            if not hand and att not in emptied:
                emptied = (*emptied, att)
            q = (h0, h1, sp, (*attacks, c), (*covers, -1), att, 1, taking, passed, limit, defended, emptied)
            return self._maybe_end(q)
        q = (h0, h1, sp, attacks, covers, att, 1, taking, True, limit, defended, emptied)
        return self._maybe_end(q)

    def _pending(self, p: Pos) -> bool:
        h0, h1, _, attacks, _, att, _, _, passed, limit, defended, _ = p
        if passed:
            return False
        if not (h0 if att == 0 else h1):
            return False
        room: int = min(self.cap(defended), limit) - len(attacks)
        return room > 0

    def _maybe_end(self, p: Pos) -> Pos | float:
        covers = p[4]
        if p[7]:
            if not self._pending(p):
                return self._end_bout(p, True)
            return p
        if -1 not in covers:
            d_hand = p[1] if p[5] == 0 else p[0]
            if not d_hand or not self._pending(p):
                return self._end_bout(p, False)
        return p

    def _end_bout(self, p: Pos, taken: bool) -> Pos | float:
        h0, h1, sp, attacks, covers, att, _, _, _, _, defended, emptied = p
        d = 1 - att
        if taken:
            table = 0
            for a in attacks:
                table |= 1 << a
            for c in covers:
                if c >= 0:
                    table |= 1 << c
            if d == 0:
                h0 |= table
            else:
                h1 |= table
        else:
            defended = True
        stock = self.stock
        for seat in (att, d):
            if sp >= len(stock):
                break
            hand = h0 if seat == 0 else h1
            need = 6 - popcount(hand)
            if need <= 0:
                continue
            take = stock[sp : sp + need]
            sp += len(take)
            for c in take:
                hand |= 1 << c
            if seat == 0:
                h0 = hand
            else:
                h1 = hand
        if sp >= len(stock):
            if h0 and not h1:
                return LOSS  # player 1 went out: player 0 is the durak
            if h1 and not h0:
                return WIN
            if not h0 and not h1:
                if self.draws:
                    return DRAW
                last = emptied[-1] if emptied else d
                return LOSS if last == 0 else WIN
        hands = (h0, h1)
        if taken:
            leader = att if hands[att] else d
        else:
            leader = d if hands[d] else att
        defender = 1 - leader
        return (h0, h1, sp, (), (), leader, 0, False, False, popcount(hands[defender]), defended, ())


class Search:
    """Alpha-beta over a :class:`Game` from player 0's side, with a transposition table."""

    def __init__(self, game: Game, node_limit: int, deadline: Callable[[], bool] | None = None) -> None:
        self.game = game
        self.node_limit = node_limit
        self.deadline = deadline
        self.nodes = 0
        self.tt: dict[Pos, tuple[float, int, Move | None]] = {}
        self.path: set[Pos] = set()

    def value(self, p: Pos | float, alpha: float = LOSS, beta: float = WIN) -> float:
        if isinstance(p, float):
            return p
        return self._search(p, alpha, beta)[0]

    def _search(self, p: Pos, alpha: float, beta: float) -> tuple[float, Move | None]:
        self.nodes += 1
        if self.nodes > self.node_limit or (self.nodes & 255 == 0 and self.deadline is not None and self.deadline()):
            raise OutOfBudget
        if p[6] == 0:
            # Transfers and takes can send cards round in circles: a repeated position, or a line
            # longer than any sensible game, is scored as a draw.
            if p in self.path or len(self.path) >= MAX_BOUTS:
                return DRAW, None
            self.path.add(p)
            try:
                return self._node(p, alpha, beta)
            finally:
                self.path.discard(p)
        return self._node(p, alpha, beta)

    def _node(self, p: Pos, alpha: float, beta: float) -> tuple[float, Move | None]:
        tt = self.tt
        entry = tt.get(p)
        hint: Move | None = None
        if entry is not None:
            value, flag, hint = entry
            if flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha):
                return value, hint
        game = self.game
        moves = game.moves(p)
        if hint is not None and hint in moves:
            moves.remove(hint)
            moves.insert(0, hint)
        a0, b0 = alpha, beta
        best_move: Move | None = None
        if game.mover(p) == 0:
            best = -1.0
            for move in moves:
                child = game.play(p, move)
                value = child if isinstance(child, float) else self._search(child, alpha, beta)[0]
                if value > best:
                    best, best_move = value, move
                    if value > alpha:
                        alpha = value
                        if alpha >= beta:
                            break
        else:
            best = 2.0
            for move in moves:
                child = game.play(p, move)
                value = child if isinstance(child, float) else self._search(child, alpha, beta)[0]
                if value < best:
                    best, best_move = value, move
                    if value < beta:
                        beta = value
                        if alpha >= beta:
                            break
        flag = UPPER if best <= a0 else LOWER if best >= b0 else EXACT
        tt[p] = (best, flag, best_move)
        return best, best_move


# ---------------------------------------------------------------------- from an engine position


def from_state(state: Any, me: int) -> tuple[Game, Pos, int] | None:
    """The fast model of a position this seat built, with ``me`` as player 0 (and the opponent's
    seat), or None when the model does not apply (Durac 1993, more than two players in play)."""
    rules = state.rules
    if rules.durac or state.outcome is not None:
        return None
    active = [
        s
        for s in range(state.n)
        if s not in state.out and (state.hands[s] or (state.phase == "bout" and s in (state.attacker, state.defender)))
    ]
    if len(active) != 2 or me not in active:
        return None
    if state.attacker not in active or state.defender not in active:
        return None
    opp = active[0] if active[1] == me else active[1]
    seat_of = {me: 0, opp: 1}
    game = Game(
        state.trump, transfer=rules.transfer, draws=rules.draws, first_cap=rules.first_bout_cap, stock=state.stock
    )
    attacks = tuple(index(a) for a, _ in state.table)
    covers = tuple(-1 if c is None else index(c) for _, c in state.table)
    pos: Pos = (
        mask(state.hands[me]),
        mask(state.hands[opp]),
        0,
        attacks,
        covers,
        seat_of[state.attacker],
        0 if state.phase == "lead" else 1,
        bool(state.taking),
        state.attacker in state.passed,
        state.bout_limit,
        bool(state.defended_once),
        tuple(seat_of[s] for s in state.emptied if s in seat_of),
    )
    return game, pos, opp


def fast_move(action: ActionJson) -> Move:
    """The fast-model move of an action (JSON) of player 0."""
    kind = action["type"]
    if kind == "take":
        return (TAKE, -1, 0)
    if kind == "pass":
        return (PASS, -1, 0)
    if kind == "cover":
        return (COVER, index(Card.parse(action["card"])), int(action["attack"]))
    c = index(Card.parse(action["cards"][0]))
    return ({"lead": LEAD, "transfer": TRANSFER, "throw_in": THROW}[kind], c, 0)


def to_action_json(move: Move, seat: int) -> ActionJson:
    """The engine action (JSON) for a fast-model move of player 0 sitting in ``seat``."""
    kind, c, i = move
    text = str(card_of(c)) if c >= 0 else ""
    if kind == LEAD:
        return {"type": "lead", "seat": seat, "cards": [text]}
    if kind == COVER:
        return {"type": "cover", "seat": seat, "attack": i, "card": text}
    if kind == TRANSFER:
        return {"type": "transfer", "seat": seat, "cards": [text]}
    if kind == THROW:
        return {"type": "throw_in", "seat": seat, "cards": [text]}
    if kind == TAKE:
        return {"type": "take", "seat": seat}
    return {"type": "pass", "seat": seat}
