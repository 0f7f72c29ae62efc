"""``legal_actions`` and ``apply``: the rules of a bout (§4), transfer (§5), cheating (§9), §11."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from itertools import combinations, product
from typing import Any, Literal

from app.engine import errors
from app.engine.actions import (
    Action,
    Challenge,
    Cover,
    ExchangeTrump,
    Forfeit,
    Lead,
    Pass,
    Take,
    ThrowIn,
    Transfer,
    action_text,
)
from app.engine.bout import after_card_move, draw_up, end_bout, finish
from app.engine.cards import DECK_RANKS, Card, beats, cards_text
from app.engine.events import Event
from app.engine.seating import (
    all_covered,
    allowance,
    cap,
    is_thrower,
    next_with_cards,
    pending,
    table_ranks,
    window_pending,
)
from app.engine.state import BOUT, CHALLENGE, LEAD, OVER, Move, State

MAX_GROUP_PLAY = 6
_NOTHING_LED = "nothing has been led in this bout yet"


# --------------------------------------------------------------------------- legal actions


@lru_cache(maxsize=8192, typed=True)
def _action(kind: Callable[..., Action], *args: Any) -> Action:
    """``kind(*args)``, made once: actions are immutable values, and building a frozen dataclass
    costs several times a cache look-up. For the single-card actions ``legal_actions`` offers over
    and over (a few thousand at most); groups of cards are built as they come."""
    return kind(*args)


def legal_actions(state: State, seat: int) -> list[Action]:
    """Every action ``apply`` accepts from ``seat`` now (cheats too, at a cheating table)."""
    if state.phase == OVER or seat in state.out or not 0 <= seat < len(state.hands):
        return []
    if state.phase == CHALLENGE:
        if seat not in window_pending(state):
            return []
        return [_action(Pass, seat), *_challenges(state, seat)]
    actions: list[Action] = []
    hand = state.hands[seat]
    if state.exchange_open and _lowest_trump(state) in hand:
        actions.append(_action(ExchangeTrump, seat))
    if state.phase == LEAD:
        if seat == state.attacker:
            actions.extend(_leads(state, seat, hand))
        return actions
    defender = state.defender
    if seat == defender:
        if not state.taking and not all_covered(state):
            actions.extend(_covers(state, seat, hand))
            actions.extend(_transfers(state, seat, hand))
            actions.append(_action(Take, seat))
    elif seat not in state.passed and is_thrower(state, seat):
        actions.extend(_throw_ins(state, seat, hand))
        if state.taking or all_covered(state):
            actions.append(_action(Pass, seat))
    if state.rules.cheating:
        actions.extend(_challenges(state, seat))
    return actions


def _challenges(state: State, seat: int) -> list[Action]:
    return [_action(Challenge, seat, i) for i, move in enumerate(state.moves) if move.seat != seat]


def _lowest_trump(state: State) -> Card:
    return Card(DECK_RANKS[state.rules.deck][0], state.trump)


def _leads(state: State, seat: int, hand: tuple[Card, ...]) -> list[Action]:
    if not state.rules.durac:
        return [_action(Lead, seat, (card,)) for card in hand]
    limit = min(MAX_GROUP_PLAY, allowance(state))
    return [Lead(seat, group) for group in _group_plays(hand, limit)]


def _group_plays(hand: tuple[Card, ...], limit: int) -> list[tuple[Card, ...]]:
    """Single cards, or combinations of pairs/threes/fours of a rank, at most ``limit`` cards."""
    plays: list[tuple[Card, ...]] = [(card,) for card in hand]
    by_rank: dict[int, list[Card]] = {}
    for card in hand:
        by_rank.setdefault(card.rank, []).append(card)
    options: list[list[tuple[Card, ...]]] = []
    for cards in by_rank.values():
        if len(cards) >= 2:
            groups: list[tuple[Card, ...]] = [()]
            for size in range(2, len(cards) + 1):
                groups.extend(combinations(cards, size))
            options.append(groups)

    # Depth-first over the ranks, pruning as soon as a choice is over ``limit``: the plays come out in
    # the same order as ``product(*options)`` filtered by size, without enumerating the (exponential)
    # product of a big hand.
    def extend(index: int, play: tuple[Card, ...]) -> None:
        if index == len(options):
            if len(play) >= 2:
                plays.append(play)
            return
        for group in options[index]:
            if len(play) + len(group) <= limit:
                extend(index + 1, play + group)

    extend(0, ())
    return plays


def _throw_ins(state: State, seat: int, hand: tuple[Card, ...]) -> list[Action]:
    ranks = table_ranks(state)
    room = allowance(state)
    actions: list[Action] = []
    matching = [card for card in hand if card.rank in ranks]
    if room > 0:
        if state.rules.durac:
            for size in range(1, min(room, MAX_GROUP_PLAY, len(matching)) + 1):
                actions.extend(ThrowIn(seat, combo) for combo in combinations(matching, size))
        else:
            actions.extend([_action(ThrowIn, seat, (card,)) for card in matching])
    if state.rules.cheating:
        # One illegal card at a time: a rank not on the table, or any card beyond the limit.
        actions.extend([_action(ThrowIn, seat, (card,)) for card in hand if card.rank not in ranks or room <= 0])
    return actions


def _covers(state: State, seat: int, hand: tuple[Card, ...]) -> list[Action]:
    trump = state.trump_card.suit
    cheating = state.rules.cheating
    actions: list[Action] = []
    for index, (attack, cover) in enumerate(state.table):
        if cover is not None:
            continue
        attack_rank, attack_suit = attack
        for card in hand:
            # beats(card, attack, trump), inlined: this is the innermost loop of legal_actions.
            rank, suit = card
            if cheating or (rank > attack_rank if suit == attack_suit else suit == trump):
                actions.append(_action(Cover, seat, index, card))
    return actions


def _transfer_open(state: State) -> bool:
    if not state.rules.transfer or state.taking:
        return False
    if any(cover is not None for _, cover in state.table):
        return False
    return not (state.rules.durac and state.thrown_in)


def _transfers(state: State, seat: int, hand: tuple[Card, ...]) -> list[Action]:
    if not _transfer_open(state):
        return []
    target = next_with_cards(state, seat)
    if target is None:
        return []
    ranks = sorted({attack.rank for attack, _ in state.table})
    actions: list[Action] = []
    if state.rules.cheating:
        # A cheat is one card: any card of the hand (a wrong rank, or over a limit).
        actions.extend([_action(Transfer, seat, (card,)) for card in hand])
    if len(ranks) == 1 and state.rules.cheating:
        return actions  # the honest single-card transfers are among those
    if len(ranks) > 1 and not state.rules.durac:
        return actions  # mixed ranks (after a cheat throw-in): no honest transfer exists
    choices = [[card for card in hand if card.rank == rank] for rank in ranks]
    for combo in product(*choices):
        if _transfer_limit_problem(state, target, len(combo)) is None:
            actions.append(Transfer(seat, tuple(combo)))
    return actions


def _transfer_limit_problem(state: State, target: int, added: int) -> str | None:
    total = len(state.table) + added
    if len(state.hands[target]) < total:
        return (
            f"seat {target} holds {len(state.hands[target])} cards, fewer than the {total} attacks "
            "the transfer would leave"
        )
    if total > cap(state):
        return f"the transfer would make {total} attacks, over the limit of {cap(state)}"
    return None


# --------------------------------------------------------------------------- apply


def apply(state: State, action: Action) -> tuple[State, list[Event]]:
    """The state after ``action`` and the events it caused; raises an ``IllegalAction`` subclass."""
    if state.phase == OVER:
        raise errors.MatchOver(f"{action_text(action)}: the match is over")
    seat = action.seat
    if not 0 <= seat < len(state.hands):
        raise errors.NotYourTurn(f"{action_text(action)}: there is no seat {seat} at this table")
    if seat in state.out and not isinstance(action, Forfeit):
        raise errors.NotYourTurn(f"{action_text(action)}: seat {seat} is already out of this match")
    if state.phase == CHALLENGE and not isinstance(action, _IN_WINDOW):
        raise _refuse(
            errors.NotYourTurn,
            action,
            state,
            "the bout is played out; until its challenge window closes only a challenge or a pass "
            "(no challenge) is possible",
        )
    new = state.copy()
    new.ply = state.ply + 1
    events: list[Event] = []
    handler = _HANDLERS.get(type(action))
    if handler is None:
        raise errors.BadPlay(f"{action!r} is not an action")
    handler(new, action, events)
    return new, events


def _refuse(kind: type[errors.IllegalAction], action: Action, state: State, why: str) -> errors.IllegalAction:
    where = f"phase {state.phase}, attacker {state.attacker}, defender {state.defender}"
    if state.table:
        where += ", table " + " ".join(f"{a}/{c}" if c is not None else str(a) for a, c in state.table)
    return kind(f"{action_text(action)} refused: {why} ({where})")


def _take_cards(state: State, action: Action, cards: tuple[Card, ...]) -> None:
    seat = action.seat
    if len(cards) == 1 and cards[0] in state.hands[seat]:  # the common case, made quick
        old = state.hands[seat]
        index = old.index(cards[0])
        hands = list(state.hands)
        hands[seat] = old[:index] + old[index + 1 :]
        state.hands = tuple(hands)
        return
    hand = list(state.hands[seat])
    if len(set(cards)) != len(cards):
        raise _refuse(errors.BadPlay, action, state, "the same card is named twice")
    for card in cards:
        try:
            hand.remove(card)
        except ValueError:
            raise _refuse(errors.CardNotInHand, action, state, f"{card} is not in seat {action.seat}'s hand") from None
    hands = list(state.hands)
    hands[action.seat] = tuple(hand)
    state.hands = tuple(hands)


def _record(state: State, action: Action, cheat: str | None, events: list[Event], rule: str | None = None) -> None:
    state.moves = (*state.moves, Move(action.seat, action, cheat, rule if cheat is not None else None))
    events.append({"type": "move", "seat": action.seat, "action": action, "index": len(state.moves) - 1})


def _attacker_played(state: State, seat: int, events: list[Event]) -> None:
    if state.rules.durac:
        draw_up(state, seat, events)  # Durac 1993: attackers refill during the bout
    after_card_move(state, seat)


def _check_group(state: State, action: Action, cards: tuple[Card, ...]) -> None:
    if not cards:
        raise _refuse(errors.BadPlay, action, state, "no cards named")
    if not state.rules.durac:
        if len(cards) != 1:
            raise _refuse(errors.BadPlay, action, state, "one card at a time at this table")
        return
    if len(cards) > MAX_GROUP_PLAY:
        raise _refuse(errors.BadPlay, action, state, f"at most {MAX_GROUP_PLAY} cards at once")


def _apply_lead(state: State, action: Lead, events: list[Event]) -> None:
    if state.phase != LEAD:
        raise _refuse(errors.NotYourTurn, action, state, "this bout has been led already; cards are thrown in now")
    if action.seat != state.attacker:
        raise _refuse(errors.NotYourTurn, action, state, f"seat {state.attacker} leads this bout")
    cards = action.cards
    _check_group(state, action, cards)
    if len(cards) > 1:
        counts = Counter(card.rank for card in cards)
        if min(counts.values()) < 2:
            raise _refuse(errors.BadPlay, action, state, "several cards are led only in groups of a rank")
        if len(cards) > allowance(state):
            raise _refuse(errors.LimitExceeded, action, state, f"only {allowance(state)} attacks fit in this bout")
    _take_cards(state, action, cards)
    state.exchange_open = False
    state.phase = BOUT
    state.table = tuple((card, None) for card in cards)
    _record(state, action, None, events)
    _attacker_played(state, action.seat, events)
    _maybe_end(state, events)


def _apply_throw_in(state: State, action: ThrowIn, events: list[Event]) -> None:
    seat = action.seat
    if state.phase != BOUT:
        raise _refuse(errors.NotYourTurn, action, state, _NOTHING_LED)
    if seat == state.defender:
        raise _refuse(errors.NotYourTurn, action, state, "the defender cannot throw in")
    if not is_thrower(state, seat):
        raise _refuse(errors.NotYourTurn, action, state, f"seat {seat} is not in this bout's throw-in circle")
    if seat in state.passed:
        raise _refuse(errors.NotYourTurn, action, state, f"seat {seat} already passed")
    cards = action.cards
    _check_group(state, action, cards)
    ranks = table_ranks(state)
    cheat = None
    off_rank = [card for card in cards if card.rank not in ranks]
    if off_rank:
        cheat = f"{cards_text(off_rank)}: rank not on the table"
    elif len(cards) > allowance(state):
        cheat = f"{len(cards)} more attacks but only {allowance(state)} allowed"
    if cheat is not None and (not state.rules.cheating or len(cards) != 1):
        kind = errors.RankNotOnTable if off_rank else errors.LimitExceeded
        raise _refuse(kind, action, state, cheat)
    _take_cards(state, action, cards)
    state.exchange_open = False
    state.table = state.table + tuple((card, None) for card in cards)
    state.thrown_in = True
    _record(state, action, cheat, events, "rank_not_on_table" if off_rank else "attack_limit")
    _attacker_played(state, seat, events)
    _maybe_end(state, events)


def _apply_cover(state: State, action: Cover, events: list[Event]) -> None:
    if state.phase != BOUT:
        raise _refuse(errors.NotYourTurn, action, state, _NOTHING_LED)
    if action.seat != state.defender:
        raise _refuse(errors.NotYourTurn, action, state, f"only the defender (seat {state.defender}) covers")
    if state.taking:
        raise _refuse(errors.NotYourTurn, action, state, "the defender has already decided to take")
    if not 0 <= action.attack < len(state.table):
        raise _refuse(errors.BadPlay, action, state, f"there is no attack #{action.attack}")
    attack, cover = state.table[action.attack]
    if cover is not None:
        raise _refuse(errors.BadPlay, action, state, f"{attack} is already covered by {cover}")
    cheat = None
    if not beats(action.card, attack, state.trump):
        cheat = f"{action.card} does not beat {attack} (trump {state.trump})"
        if not state.rules.cheating:
            raise _refuse(errors.DoesNotBeat, action, state, cheat)
    _take_cards(state, action, (action.card,))
    table = list(state.table)
    table[action.attack] = (attack, action.card)
    state.table = tuple(table)
    state.passed = frozenset()  # a new rank may be on the table: every attacker may add again
    _record(state, action, cheat, events, "does_not_beat")
    after_card_move(state, action.seat)
    _maybe_end(state, events)


def _apply_transfer(state: State, action: Transfer, events: list[Event]) -> None:
    seat = action.seat
    if state.phase != BOUT:
        raise _refuse(errors.NotYourTurn, action, state, _NOTHING_LED)
    if seat != state.defender:
        raise _refuse(errors.NotYourTurn, action, state, f"only the defender (seat {state.defender}) transfers")
    if not state.rules.transfer:
        raise _refuse(errors.NotAllowedHere, action, state, "this table plays without transfer")
    if not _transfer_open(state):
        why = "a card has been covered or taken" if not state.rules.durac else "too late for a transfer"
        raise _refuse(errors.TransferNotAllowed, action, state, why)
    target = next_with_cards(state, seat)
    if target is None:
        raise _refuse(errors.TransferNotAllowed, action, state, "nobody else holds cards")
    ranks = sorted({attack.rank for attack, _ in state.table})
    cards = action.cards
    cheat = None
    expected = len(ranks) if state.rules.durac else 1
    if len(cards) != expected and not (state.rules.cheating and len(cards) == 1):
        why = "a transfer is one card"
        if state.rules.durac:
            why = f"a transfer adds one card for each of {len(ranks)} rank(s)"
        raise _refuse(errors.BadPlay, action, state, why)
    rule = "transfer_rank"
    if sorted(card.rank for card in cards) != ranks:
        cheat = f"{cards_text(cards)} does not match the attacking rank(s)"
    else:
        cheat = _transfer_limit_problem(state, target, len(cards))
        rule = "transfer_limit"
    if cheat is not None and (not state.rules.cheating or len(cards) != 1):
        kind = errors.TransferNotAllowed if cheat.startswith(("seat", "the transfer")) else errors.BadPlay
        raise _refuse(kind, action, state, cheat)
    _take_cards(state, action, cards)
    state.table = state.table + tuple((card, None) for card in cards)
    state.attacker = seat
    state.defender = target
    state.bout_limit = len(state.hands[target])
    state.passed = frozenset()
    _record(state, action, cheat, events, rule)
    events.append({"type": "transferred", "attacker": seat, "defender": target, "limit": state.bout_limit})
    _attacker_played(state, seat, events)
    _maybe_end(state, events)


def _apply_take(state: State, action: Take, events: list[Event]) -> None:
    if state.phase != BOUT:
        raise _refuse(errors.NotYourTurn, action, state, _NOTHING_LED)
    if action.seat != state.defender:
        raise _refuse(errors.NotYourTurn, action, state, f"only the defender (seat {state.defender}) takes")
    if state.taking:
        raise _refuse(errors.BadPlay, action, state, "already taking")
    if all_covered(state):
        raise _refuse(errors.BadPlay, action, state, "every attack is covered; there is nothing to take")
    state.taking = True
    state.passed = frozenset()
    events.append({"type": "take", "seat": action.seat})
    _maybe_end(state, events)


def _apply_pass(state: State, action: Pass, events: list[Event]) -> None:
    seat = action.seat
    if state.phase == CHALLENGE:
        _pass_on_challenges(state, action, events)
        return
    if state.phase != BOUT:
        raise _refuse(errors.NotYourTurn, action, state, _NOTHING_LED)
    if seat == state.defender:
        raise _refuse(errors.NotYourTurn, action, state, "the defender does not pass; he covers or takes")
    if not is_thrower(state, seat):
        raise _refuse(errors.NotYourTurn, action, state, f"seat {seat} is not in this bout's throw-in circle")
    if seat in state.passed:
        raise _refuse(errors.BadPlay, action, state, f"seat {seat} already passed")
    if not (state.taking or all_covered(state)):
        raise _refuse(errors.NotYourTurn, action, state, "wait until the defender has covered or taken")
    state.passed = state.passed | {seat}
    events.append({"type": "pass", "seat": seat})
    _maybe_end(state, events)


def _pass_on_challenges(state: State, action: Pass, events: list[Event]) -> None:
    """Cheating tables: ``seat`` will not challenge this bout; the last pass resolves it."""
    seat = action.seat
    if seat in state.passed:
        raise _refuse(errors.BadPlay, action, state, f"seat {seat} already passed on challenging this bout")
    if seat not in window_pending(state):
        raise _refuse(errors.NotYourTurn, action, state, f"seat {seat} has no move of this bout to challenge")
    state.passed = state.passed | {seat}
    events.append({"type": "pass", "seat": seat})
    if not window_pending(state):
        end_bout(state, state.taking, events)


def _apply_challenge(state: State, action: Challenge, events: list[Event]) -> None:
    if not state.rules.cheating:
        raise _refuse(errors.NotAllowedHere, action, state, "challenges exist only at cheating tables")
    if state.phase not in (BOUT, CHALLENGE):
        raise _refuse(errors.BadPlay, action, state, f"{_NOTHING_LED}: there are no moves to challenge")
    if not 0 <= action.move < len(state.moves):
        raise _refuse(errors.BadPlay, action, state, f"there is no move #{action.move} in this bout")
    move = state.moves[action.move]
    if move.seat == action.seat:
        raise _refuse(errors.BadPlay, action, state, "you cannot challenge your own move")
    if state.phase == CHALLENGE and action.seat in state.passed:
        raise _refuse(errors.BadPlay, action, state, f"seat {action.seat} already passed on challenging this bout")
    ruling: Literal["upheld", "rejected"]
    if move.cheat is not None:
        loser, ruling, rule = move.seat, "upheld", move.rule
        detail = f"seat {action.seat} caught seat {move.seat}: {move.cheat}"
    else:
        loser, ruling, rule = action.seat, "rejected", None
        detail = f"seat {action.seat} challenged an honest move of seat {move.seat}"
    events.append(
        {"type": "challenge", "seat": action.seat, "move": action.move, "ruling": ruling, "loser": loser, "rule": rule}
    )
    finish(state, events, durak=loser, forfeit=loser, reason="challenge", detail=detail)


def _apply_exchange(state: State, action: ExchangeTrump, events: list[Event]) -> None:
    low = _lowest_trump(state)
    if not state.exchange_open:
        raise _refuse(errors.NotAllowedHere, action, state, "the trump can be exchanged only before the first attack")
    if low not in state.hands[action.seat]:
        raise _refuse(errors.CardNotInHand, action, state, f"{low} is not in seat {action.seat}'s hand")
    turned = state.trump_card
    hand = tuple(turned if card == low else card for card in state.hands[action.seat])
    hands = list(state.hands)
    hands[action.seat] = hand
    state.hands = tuple(hands)
    state.stock = tuple(low if card == turned else card for card in state.stock)
    state.trump_card = low
    state.exchange_open = False
    events.append({"type": "exchange_trump", "seat": action.seat, "gave": low, "got": turned})


def _apply_forfeit(state: State, action: Forfeit, events: list[Event]) -> None:
    if action.seat in state.out:
        raise _refuse(errors.BadPlay, action, state, f"seat {action.seat} is already safe")
    events.append({"type": "forfeit", "seat": action.seat, "reason": action.reason})
    finish(
        state,
        events,
        durak=action.seat,
        forfeit=action.seat,
        reason=action.reason,
        detail=f"seat {action.seat} forfeited ({action.reason})",
    )


def _maybe_end(state: State, events: list[Event]) -> None:
    if state.phase != BOUT:
        return
    if state.taking:
        if not pending(state):
            _resolve(state, events)
    elif all_covered(state) and (not state.hands[state.defender] or not pending(state)):
        _resolve(state, events)


def _resolve(state: State, events: list[Event]) -> None:
    """The bout is played out: taken if the defender said take, else beaten off. At a cheating
    table it is not resolved by its own last move: the challenge window opens first (§9), and the
    last pass on it (or the server's timer, passing for everyone left) resolves the bout."""
    if state.rules.cheating:
        state.phase = CHALLENGE
        state.passed = frozenset()
        if window_pending(state):
            return
    end_bout(state, state.taking, events)


_IN_WINDOW = (Pass, Challenge, Forfeit)
_HANDLERS: dict[type, Any] = {
    Lead: _apply_lead,
    ThrowIn: _apply_throw_in,
    Cover: _apply_cover,
    Transfer: _apply_transfer,
    Take: _apply_take,
    Pass: _apply_pass,
    Challenge: _apply_challenge,
    ExchangeTrump: _apply_exchange,
    Forfeit: _apply_forfeit,
}
