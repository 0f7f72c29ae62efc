"""The part every bot shares: memory of the public history, honesty, challenges, the contract.

``choose`` always returns one of the ``legal`` dicts it was given (the very object) or ``None``.
When the seat is one of ``view["decision"]["seats"]`` it never returns ``None``.
"""

from __future__ import annotations

import random
from typing import Any

from app.bots.cheats import provable_cheats
from app.bots.memory import Memory
from app.bots.table import Json, Table, honest_actions


class BaseBot:
    """Subclasses implement :meth:`decide` (the seat must act) and may override :meth:`optional`."""

    level = "base"

    def __init__(self, seat: int, seed: int, time_budget_ms: int = 200) -> None:
        self.seat = seat
        self.seed = seed
        self.time_budget_ms = time_budget_ms
        self.rng = random.Random(f"{self.level}:{seat}:{seed}")
        self.memory = Memory(seat)

    def observe(self, event_json: dict[str, Any]) -> None:
        self.memory.observe(event_json)

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        if not legal:
            return None
        t, honest = honest_actions(view, legal)
        self.memory.sync(t)
        challenge = self._challenge(view, t, legal)
        if challenge is not None:
            return challenge
        if not honest:
            return None
        for action in honest:
            if action["type"] == "exchange_trump":
                return action  # the turned trump is always worth more than the lowest one
        if not t.must_act:
            return self.optional(t, honest)
        choice = self.decide(t, honest)
        return choice if choice is not None else honest[0]

    def _challenge(self, view: Json, t: Table, legal: list[Json]) -> Json | None:
        if not t.rules.get("cheating") or not view.get("moves"):
            return None
        cheats = provable_cheats(view, t, self.memory)
        for action in legal:
            if action["type"] == "challenge" and action["move"] in cheats:
                return action
        return None

    # ------------------------------------------------------------------ policy hooks

    def decide(self, t: Table, honest: list[Json]) -> Json | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def optional(self, t: Table, honest: list[Json]) -> Json | None:
        """The seat may act but the game is not waiting for it (e.g. a throw-in while the defender
        is still covering). The default is to wait: more ranks may reach the table."""
        return None


def of_type(actions: list[Json], *kinds: str) -> list[Json]:
    return [a for a in actions if a["type"] in kinds]
