"""The part every bot shares: memory of the public history, honesty, challenges, the contract.

``choose`` always returns one of the ``legal`` dicts it was given (the very object) or ``None``.
When the seat is one of ``view["decision"]["seats"]`` it never returns ``None``.
"""

from __future__ import annotations

import random
from typing import Any

from app.bots.cheats import provable_cheats
from app.bots.memory import Memory
from app.bots.table import Table, honest_actions
from app.engine import ActionJson, EventJson, ViewJson

REPEATS_BEFORE_VARYING = 2  # the third time the very same situation comes back, vary the choice


class BaseBot:
    """Subclasses implement :meth:`decide` (the seat must act) and may override :meth:`optional`."""

    level = "base"

    def __init__(self, seat: int, seed: int, time_budget_ms: int = 200) -> None:
        self.seat = seat
        self.seed = seed
        self.time_budget_ms = time_budget_ms
        self.rng = random.Random(f"{self.level}:{seat}:{seed}")
        self.memory = Memory(seat)
        self.repeats: dict[tuple[Any, ...], int] = {}

    def observe(self, event_json: EventJson) -> None:
        self.memory.observe(event_json)

    def choose(self, view: ViewJson, legal: list[ActionJson]) -> ActionJson | None:
        if not legal:
            return None
        t, honest = honest_actions(view, legal)
        self.memory.sync(t)
        challenge = self._challenge(view, t, legal)
        if challenge is not None:
            return challenge
        if t.phase == "challenge":
            # Cheating tables: the bout is played out and nothing in it is a provable cheat: pass on
            # the challenge window at once (the bout is resolved when everyone has).
            return next((action for action in honest if action["type"] == "pass"), None)
        if not honest:
            return None
        for action in honest:
            if action["type"] == "exchange_trump":
                return action  # the turned trump is always worth more than the lowest one
        if not t.must_act:
            return self.optional(t, honest)
        repeats = self._count_repeat(view, t)
        if repeats >= REPEATS_BEFORE_VARYING and len(honest) > 1:
            # The match is going round in circles (takes and transfers can send the same cards
            # back and forth for ever, and the engine has no repetition rule): play differently.
            options = self.ranked(t, honest)
            return options[(repeats - REPEATS_BEFORE_VARYING + 1) % len(options)]
        choice = self.decide(t, honest)
        return choice if choice is not None else honest[0]

    def _count_repeat(self, view: ViewJson, t: Table) -> int:
        """How many times this seat has faced exactly this situation before (its hand, every
        count, the stock, the discard pile's size and the table)."""
        key = (
            t.decision_kind,
            t.hand,
            t.counts,
            t.stock,
            view.get("discard"),
            t.attacks,
            t.covers,
            t.attacker,
            t.defender,
            t.taking,
        )
        seen = self.repeats.get(key, 0)
        self.repeats[key] = seen + 1
        return seen

    def ranked(self, t: Table, honest: list[ActionJson]) -> list[ActionJson]:
        """The honest actions, best first; by default the policy's choice, then the rest."""
        first = self.decide(t, honest)
        return [first, *(a for a in honest if a is not first)] if first is not None else list(honest)

    def _challenge(self, view: ViewJson, t: Table, legal: list[ActionJson]) -> ActionJson | None:
        if not t.rules.get("cheating") or not view.get("moves"):
            return None
        cheats = provable_cheats(view, t, self.memory)
        for action in legal:
            if action["type"] == "challenge" and action["move"] in cheats:
                return action
        return None

    # ------------------------------------------------------------------ policy hooks

    def decide(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def optional(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        """The seat may act but the game is not waiting for it (e.g. a throw-in while the defender
        is still covering). The default is to wait: more ranks may reach the table."""
        return None


def of_type(actions: list[ActionJson], *kinds: str) -> list[ActionJson]:
    return [a for a in actions if a["type"] in kinds]
