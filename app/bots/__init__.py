"""Bots for any seat: pure code on top of the engine's public surface (no I/O, no asyncio).

    bot = make_bot("hard", seat=1, seed=7, time_budget_ms=200)
    bot.observe(event_json)            # every event, redacted for the seat (public_cards)
    action = bot.choose(view, legal)   # one of ``legal`` (JSON), or None = "nothing now"

A bot sees exactly what a player in its seat sees: its ``view`` dict, the public history and the
legal actions. It never receives the engine's State. Given the same seed and inputs it makes the
same choices.
"""

from __future__ import annotations

from typing import Literal, Protocol

from app.engine import ActionJson, EventJson, ViewJson

Level = Literal["easy", "normal", "hard"]
LEVELS: tuple[Level, ...] = ("easy", "normal", "hard")


class Bot(Protocol):
    level: str
    seat: int

    def observe(self, event_json: EventJson) -> None: ...

    def choose(self, view: ViewJson, legal: list[ActionJson]) -> ActionJson | None: ...


def make_bot(level: str, seat: int, seed: int, time_budget_ms: int = 200) -> Bot:
    """A bot of ``level`` ("easy", "normal" or "hard") for ``seat``; ``seed`` fixes its choices."""
    if level == "easy":
        from app.bots.easy import EasyBot

        return EasyBot(seat, seed, time_budget_ms)
    if level == "normal":
        from app.bots.normal import NormalBot

        return NormalBot(seat, seed, time_budget_ms)
    if level == "hard":
        from app.bots.hard import HardBot

        return HardBot(seat, seed, time_budget_ms)
    if level == "random":
        from app.bots.randomplay import RandomBot

        return RandomBot(seat, seed, time_budget_ms)
    raise ValueError(f"unknown bot level {level!r}; choose one of {', '.join(LEVELS)}")


__all__ = ["LEVELS", "Bot", "Level", "make_bot"]
