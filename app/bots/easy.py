"""Easy: leads its lowest card, covers with the smallest card that beats, takes when it cannot
cover, rarely throws in, never transfers."""

from __future__ import annotations

from app.bots.base import BaseBot, of_type
from app.bots.table import Table, card, cards
from app.engine import ActionJson
from app.engine.cards import Card


def low_key(c: Card, trump: str) -> tuple[bool, int, str]:
    """Smallest first: non-trumps by rank, then trumps by rank."""
    return (c.suit == trump, c.rank, c.suit)


class EasyBot(BaseBot):
    level = "easy"
    throw_in_chance = 0.15

    def decide(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        leads = of_type(honest, "lead")
        if leads:
            singles = [a for a in leads if len(a["cards"]) == 1]
            return min(singles or leads, key=lambda a: low_key(card(a["cards"][0]), t.trump))
        if t.seat == t.defender and not t.taking:
            return self._defend(t, honest)
        return self._throw_or_pass(t, honest)

    def _defend(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        covers = of_type(honest, "cover")
        take = of_type(honest, "take")
        for index in t.uncovered:
            options = [a for a in covers if a["attack"] == index]
            if not options:
                return take[0] if take else None
        for index in t.uncovered:
            options = [a for a in covers if a["attack"] == index]
            return min(options, key=lambda a: low_key(card(a["card"]), t.trump))
        return take[0] if take else None

    def _throw_or_pass(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        passes = of_type(honest, "pass")
        throws = [a for a in of_type(honest, "throw_in") if len(a["cards"]) == 1]
        cheap = [a for a in throws if all(c.suit != t.trump for c in cards(a["cards"]))]
        if cheap and (not passes or self.rng.random() < self.throw_in_chance):
            return min(cheap, key=lambda a: low_key(card(a["cards"][0]), t.trump))
        return passes[0] if passes else (throws[0] if throws else None)
