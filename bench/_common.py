"""Shared driver for bot matches: deal with the engine, feed each player only its own view, its
legal actions and the public events redacted for its seat, and apply what it returns.

Used by ``bench/bots.py`` and by the bot tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.engine import (
    Rules,
    action_from_json,
    apply,
    decision,
    event_to_json,
    legal_actions,
    new_match,
    public_cards,
    view,
)


class Player(Protocol):
    def observe(self, event_json: dict[str, Any]) -> None: ...

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None: ...


Tap = Callable[[int, str, Any], None]  # (seat, "event" | "view" | "legal", payload)


@dataclass
class MatchResult:
    outcome: dict[str, Any]
    durak: int | None
    draw: bool
    plies: int
    # seat, wall-clock ms, whether the game waited for it, CPU ms of the deciding thread
    times: list[tuple[int, float, bool, float]] = field(default_factory=list)
    cheats: list[tuple[int, str]] = field(default_factory=list)  # dishonest moves by a player
    challenges: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)

    def score(self, seat: int) -> float:
        """1 for not being the durak, 0 for the durak, 0.5 for a draw."""
        if self.draw:
            return 0.5
        return 0.0 if self.durak == seat else 1.0


class DriverError(RuntimeError):
    pass


def play_match(
    rules: Rules,
    seed: int,
    players: Sequence[Player],
    *,
    dealer: int | None = None,
    tap: Tap | None = None,
    max_steps: int = 20_000,
    state: Any = None,
    watch: Callable[[Any, list[dict[str, Any]]], None] | None = None,
) -> MatchResult:
    """Play one match to the end. Decision seats must act; the other seats that have legal actions
    (throw-ins while the defender covers, a trump exchange, a challenge) are offered a chance first
    and may return ``None``. ``state`` starts from a given position instead of a deal; ``watch``
    sees the engine state and raw events after every action (for tests and analysis; players never
    do)."""
    if state is None:
        state = new_match(rules, seed, dealer)
    n = state.n
    result = MatchResult(outcome={}, durak=None, draw=False, plies=0)

    def ask(seat: int, must: bool) -> dict[str, Any] | None:
        seen = view(state, seat)
        legal = seen["legal"]
        if tap is not None:
            tap(seat, "view", seen)
            tap(seat, "legal", legal)
        start, cpu = time.perf_counter(), time.thread_time()
        choice = players[seat].choose(seen, legal)
        result.times.append((seat, (time.perf_counter() - start) * 1000.0, must, (time.thread_time() - cpu) * 1000.0))
        if choice is None:
            if must:
                raise DriverError(f"seat {seat} returned nothing but the game waits for it")
            return None
        if choice not in legal:
            raise DriverError(f"seat {seat} returned an action that is not legal: {choice}")
        return choice

    def play(seat: int, choice: dict[str, Any]) -> None:
        nonlocal state
        before = len(state.moves)
        state, events = apply(state, action_from_json(choice))
        result.actions.append(choice)
        if watch is not None:
            watch(state, events)
        if choice["type"] in ("lead", "throw_in", "cover", "transfer") and len(state.moves) > before:
            cheat = state.moves[-1].cheat
            if cheat is not None:
                result.cheats.append((seat, cheat))
        for event in events:
            if event.get("type") == "challenge":
                result.challenges.append(event_to_json(event))
            for other in range(n):
                redacted = event_to_json(public_cards(event, other))
                if tap is not None:
                    tap(other, "event", redacted)
                players[other].observe(redacted)

    steps = 0
    while state.outcome is None:
        steps += 1
        if steps > max_steps:
            raise DriverError("the match did not end")
        waiting = decision(state)["seats"]
        acted = False
        first = state.attacker
        for step in range(n):
            seat = (first + step) % n
            if seat in waiting or not legal_actions(state, seat):
                continue
            choice = ask(seat, False)
            if choice is not None:
                play(seat, choice)
                acted = True
                break
        if acted:
            continue
        seat = waiting[0]
        choice = ask(seat, True)
        assert choice is not None
        play(seat, choice)
    outcome = state.outcome
    result.outcome = outcome.to_json()
    result.durak = outcome.durak
    result.draw = outcome.draw
    result.plies = state.ply
    return result
