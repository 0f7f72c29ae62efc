"""A uniformly random honest player: the benchmark's floor, not one of the three levels."""

from __future__ import annotations

from app.bots.base import BaseBot
from app.bots.table import Table
from app.engine import ActionJson


class RandomBot(BaseBot):
    level = "random"

    def decide(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        return self.rng.choice(honest)

    def optional(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        """Acts (uniformly among its honest actions) or waits, each with equal chance."""
        index = self.rng.randrange(len(honest) + 1)
        return honest[index] if index < len(honest) else None
