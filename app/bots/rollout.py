"""A fast heuristic player on the bit-mask model (``fast``), for Monte Carlo playouts.

It is the value model of ``normal`` boiled down to masks: lead the cheapest card, cover with the
cheapest full defence unless taking costs less, transfer when it pays, throw in cards whose value is
below what they cost to keep. Deterministic: the randomness of a playout is in the deal it is
played on.
"""

from __future__ import annotations

from app.bots.fast import COVER, LEAD, PASS, TAKE, THROW, TRANSFER, Game, Move, Pos, bits, popcount
from app.bots.judge import Weights


class Playout:
    def __init__(self, game: Game, weights: Weights, ranks: tuple[int, ...], initial_stock: int) -> None:
        self.game = game
        self.w = weights
        low = ranks[0] - 2  # index of the lowest rank in a suit block
        span = max(1, len(ranks) - 1)
        trump = game.trump
        self.plain = [0.0] * 52
        self.trump_base = [0.0] * 52
        self.is_trump = [False] * 52
        for i in range(52):
            p = (i % 13 - low) / span
            if i // 13 == trump:
                self.is_trump[i] = True
                self.trump_base[i] = weights.trump_base + weights.trump_span * p
            else:
                self.plain[i] = p
        self.initial = max(1, initial_stock)
        deck_values = [self.plain[i] if not self.is_trump[i] else self.trump_base[i] for i in range(52)]
        in_deck = [i for i in range(52) if i % 13 >= low]
        self.mean_base = sum(deck_values[i] for i in in_deck) / len(in_deck)
        self.trump_share = 0.25

    # ------------------------------------------------------------------ values at a stock level

    def values(self, stock_left: int) -> tuple[list[float], float, float]:
        """Card values, the mean value of a drawn card and the burden of a card in hand."""
        w = self.w
        fullness = stock_left / self.initial if stock_left > 0 else 0.0
        premium = w.trump_premium * fullness
        values = [self.trump_base[i] + premium if self.is_trump[i] else self.plain[i] for i in range(52)]
        if stock_left == 0:
            burden = w.burden_empty
        else:
            burden = w.burden_late + (w.burden_early - w.burden_late) * fullness
        return values, self.mean_base + self.trump_share * premium, burden

    def choose(self, p: Pos) -> Move:
        game = self.game
        h0, h1, sp, attacks, covers, att, phase, taking, _, limit, defended, _ = p
        stock_left: int = len(game.stock) - sp
        values, mean, burden = self.values(stock_left)
        w = self.w

        def refill(shed: int, hand_after: int) -> float:
            if stock_left <= 0:
                return shed * burden
            draws = min(shed, max(0, 6 - hand_after), stock_left)
            return draws * mean + (shed - draws) * burden

        if phase == 0:
            hand = h0 if att == 0 else h1
            cards = bits(hand)
            best_card, best_score = cards[0], 1e9
            rank_count: dict[int, int] = {}
            for c in cards:
                rank_count[c % 13] = rank_count.get(c % 13, 0) + 1
            for c in cards:
                score = values[c]
                if not self.is_trump[c]:
                    score -= w.pair_bonus * min(rank_count[c % 13] - 1, 2)
                if score < best_score:
                    best_card, best_score = c, score
            return (LEAD, best_card, 0)
        if not taking and -1 in covers:
            hand = h1 if att == 0 else h0
            size = popcount(hand)
            beat = game.beat
            used = 0
            plan: list[tuple[int, int]] = []
            order = sorted((i for i, c in enumerate(covers) if c == -1), key=lambda i: -values[attacks[i]])
            for i in order:
                options = [c for c in bits(hand & beat[attacks[i]] & ~used)]
                if not options:
                    plan = []
                    break
                c = min(options, key=values.__getitem__)
                used |= 1 << c
                plan.append((i, c))
            table = [a for a in attacks] + [c for c in covers if c >= 0]
            take_cost = burden * len(table) - sum(values[c] for c in table) + w.tempo
            room = min(game.cap(defended), limit) - len(attacks)
            take_cost += 0.3 * min(max(room, 0), 2) * burden
            best_move: Move = (TAKE, -1, 0)
            best_cost = take_cost
            if plan:
                spent = [c for _, c in plan]
                cost = sum(values[c] for c in spent) - refill(len(spent), size - len(spent)) - w.tempo
                if w.trump_spend and stock_left:
                    fullness = stock_left / self.initial
                    trumped = sum(1 for i, c in plan if self.is_trump[c] and not self.is_trump[attacks[i]])
                    cost += w.trump_spend * fullness * trumped
                if cost < best_cost:
                    i, c = min(plan, key=lambda ic: values[ic[1]])
                    best_move, best_cost = (COVER, c, i), cost
            if game.transfer and all(c == -1 for c in covers):
                target = h0 if att == 0 else h1
                total = len(attacks) + 1
                if target and popcount(target) >= total and total <= game.cap(defended):
                    for c in bits(hand & game.rank_mask[attacks[0] % 13]):
                        cost = values[c] - refill(1, size - 1) - w.transfer_gain * total
                        if cost < best_cost:
                            best_move, best_cost = (TRANSFER, c, 0), cost
            return best_move
        hand = h0 if att == 0 else h1
        ranks = 0
        for a in attacks:
            ranks |= game.rank_mask[a % 13]
        for c in covers:
            if c >= 0:
                ranks |= game.rank_mask[c % 13]
        size = popcount(hand)
        best_throw: Move = (PASS, -1, 0)
        best_gain = 0.0
        for c in bits(hand & ranks):
            keep = values[c]
            gain = refill(1, size - 1) - keep
            gain += -(keep - burden) if taking else w.pressure
            if stock_left == 0 and size == 1:
                gain += 5.0
            if gain > best_gain:
                best_throw, best_gain = (THROW, c, 0), gain
        return best_throw

    def run(self, p: Pos | float, max_plies: int = 400) -> float:
        """Play to the end; the result for player 0 (a line that never ends counts as a draw)."""
        return self.run_counted(p, max_plies)[0]

    def run_counted(self, p: Pos | float, max_plies: int = 400) -> tuple[float, int]:
        game = self.game
        for ply in range(max_plies):
            if isinstance(p, float):
                return p, ply
            p = game.play(p, self.choose(p))
        return (p if isinstance(p, float) else 0.5), max_plies
