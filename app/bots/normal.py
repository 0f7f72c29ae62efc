"""Normal: a value-based player.

It keeps trumps and high cards while the stock is large (they carry a premium that fades as the
stock runs out), weighs taking (a bigger hand, the turn lost) against what covering spends, throws in
cheap cards and the ranks the defender probably cannot beat, transfers when the card it spends is
worth less than the trouble it passes on, and once the stock is empty treats every card in hand as
a burden to shed.
"""

from __future__ import annotations

from collections import Counter

from app.bots.base import BaseBot, of_type
from app.bots.judge import NORMAL, Judge, Weights, best_covers
from app.bots.table import Table, card, cards
from app.engine import ActionJson
from app.engine.cards import Card


class NormalBot(BaseBot):
    level = "normal"
    weights: Weights = NORMAL

    def judge(self, t: Table) -> Judge:
        return Judge(t, self.weights)

    def decide(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        ranked = self.ranked(t, honest)
        return ranked[0] if ranked else None

    def ranked(self, t: Table, honest: list[ActionJson]) -> list[ActionJson]:
        """The honest actions, best first (by this bot's judgement)."""
        j = self.judge(t)
        if of_type(honest, "lead"):
            return self.rank_leads(t, j, honest)
        if t.seat == t.defender and not t.taking:
            return self.rank_defence(t, j, honest)
        return self.rank_throw_ins(t, j, honest)

    # ------------------------------------------------------------------ attack

    def lead_score(self, t: Table, j: Judge, played: tuple[Card, ...], counts: Counter[int]) -> float:
        cost = sum(j.value(c) for c in played) / len(played)
        spare = counts[played[0].rank] - len(played)
        cost -= self.weights.pair_bonus * min(spare, 2) if played[0].suit != t.trump else 0.0
        cost -= 0.25 * (len(played) - 1)
        return cost

    def rank_leads(self, t: Table, j: Judge, honest: list[ActionJson]) -> list[ActionJson]:
        leads = of_type(honest, "lead")
        counts = Counter(c.rank for c in t.hand)
        return sorted(leads, key=lambda a: self.lead_score(t, j, cards(a["cards"]), counts))

    def throw_gain(self, t: Table, j: Judge, c: Card, shed_so_far: int) -> float:
        """What throwing ``c`` in now is worth to this seat (positive: throw)."""
        keep = j.value(c)
        hand_after = len(t.hand) - shed_so_far - 1
        gain = j.refill_gain(1, hand_after) - keep
        defender = t.defender if t.defender is not None else -1
        if t.taking:
            gain -= keep - j.burden  # the defender gets the card
        else:
            gain += self.weights.pressure + self.unbeatable_bonus(t, j, defender, c)
        if t.stock == 0 and hand_after == 0:
            gain += 5.0  # the last card: out of the match
        return gain

    def unbeatable_bonus(self, t: Table, j: Judge, defender: int, c: Card) -> float:
        return 0.3 if self.memory.lacks(defender, c) else 0.0

    def rank_throw_ins(self, t: Table, j: Judge, honest: list[ActionJson]) -> list[ActionJson]:
        """Throw-ins by gain, the pass placed where a gain of zero would be."""
        scored: list[tuple[float, int, ActionJson]] = []
        for index, action in enumerate(honest):
            if action["type"] == "throw_in":
                played = cards(action["cards"])
                gain = sum(self.throw_gain(t, j, c, i) for i, c in enumerate(played))
                if self.finishes(t, played):
                    gain += 5.0
            elif action["type"] == "pass":
                gain = 0.0
            else:
                continue
            scored.append((-gain, index, action))
        scored.sort(key=lambda s: (s[0], s[1]))
        return [action for _, _, action in scored]

    def finishes(self, t: Table, played: tuple[Card, ...]) -> bool:
        return t.stock == 0 and len(played) == len(t.hand)

    # ------------------------------------------------------------------ defence

    def cover_cost(self, t: Table, j: Judge, covers: list[Card], attacks: list[Card]) -> float:
        hand_after = len(t.hand) - len(covers)
        cost = sum(j.value(c) for c in covers) - j.refill_gain(len(covers), hand_after)
        trumped = sum(1 for c, a in zip(covers, attacks, strict=True) if c.suit == t.trump != a.suit)
        cost += self.weights.trump_spend * j.fullness * trumped
        return cost - self.weights.tempo

    def take_cost(self, t: Table, j: Judge) -> float:
        table = t.table_cards
        gained = sum(j.value(c) for c in table)
        return j.burden * len(table) - gained + self.weights.tempo + self.expected_throw_ins(t, j)

    def expected_throw_ins(self, t: Table, j: Judge) -> float:
        """Cards the attackers will add when we take: a burden each, guessed from the allowance."""
        return 0.3 * min(t.allowance, 2) * j.burden

    def transfer_cost(self, t: Table, j: Judge, played: tuple[Card, ...]) -> float:
        hand_after = len(t.hand) - len(played)
        spent = sum(j.value(c) for c in played) - j.refill_gain(len(played), hand_after)
        return spent - self.weights.transfer_gain * (len(t.attacks) + len(played))

    def rank_defence(self, t: Table, j: Judge, honest: list[ActionJson]) -> list[ActionJson]:
        """Take, transfers and the planned cover by cost; other covers after, cheapest card first."""
        covers = of_type(honest, "cover")
        transfers = of_type(honest, "transfer")
        take = of_type(honest, "take")
        options: list[tuple[float, ActionJson]] = []
        if take:
            options.append((self.take_cost(t, j), take[0]))
        for action in transfers:
            options.append((self.transfer_cost(t, j, cards(action["cards"])), action))
        plan = self.cover_plan(t, j)
        planned: ActionJson | None = None
        if plan is not None:
            cost, first = plan
            for action in covers:
                if action["attack"] == first[0] and card(action["card"]) == first[1]:
                    options.append((cost, action))
                    planned = action
                    break
        options.sort(key=lambda o: o[0])
        rest = sorted((a for a in covers if a is not planned), key=lambda a: j.value(card(a["card"])))
        return [action for _, action in options] + rest

    def cover_plan(self, t: Table, j: Judge) -> tuple[float, tuple[int, Card]] | None:
        """The cheapest full defence of the uncovered attacks: its cost and the first cover."""
        uncovered = t.uncovered
        attacks = [t.attacks[i] for i in uncovered]
        cost = {c: j.value(c) for c in t.hand}
        found = best_covers(attacks, t.hand, cost, t.trump)
        if found is None:
            return None
        _, picks = found
        # Cover the attack whose cover is cheapest first: it reveals the least.
        k = min(range(len(picks)), key=lambda i: cost[picks[i]])
        return self.cover_cost(t, j, picks, attacks), (uncovered[k], picks[k])
