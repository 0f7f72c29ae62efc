"""Benchmark of the engine's per-push work: the views and event JSON the table server sends.

    python -m bench.views            # about 10 s per configuration
    python -m bench.views --quick    # well under 30 s in all
    python -m bench.views --profile  # cProfile of the 4p/36 run

After every move of a table the server computes ``public_view`` once, ``seat_view`` for every seat,
``decision`` and ``event_to_json(public_cards(event, recipient))`` for every event and recipient
(each seat and the spectators). That is one push here. Random matches are played first (untimed);
then their pushes are timed in this process's CPU time (one core), so other load on the machine
does not distort the rate. The last line is ``views: <N> pushes/s (4p/36 random)``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from app.engine import (
    Action,
    Rules,
    State,
    apply,
    decision,
    event_to_json,
    legal_actions,
    new_match,
    public_cards,
    public_view,
    seat_view,
)
from bench.engine import Config, actors, measure_configurations

Step = tuple[State, list[dict[str, Any]]]  # a state and the events of the move that made it


CONFIGS = (
    Config("4p/36", Rules(deck=36, seats=4)),
    Config("2p/36", Rules(deck=36, seats=2)),
    Config("6p/52 transfer cheat", Rules(deck=52, seats=6, transfer=True, cheating=True)),
)


def match(rules: Rules, seed: int, rng: random.Random) -> list[Step]:
    """One complete random match (as ``bench.engine`` plays it): every state with its events."""
    state = new_match(rules, seed)
    steps: list[Step] = [(state, [])]
    while state.outcome is None:
        options: list[Action] = []
        for seat in actors(state):
            options.extend(legal_actions(state, seat))
        state, events = apply(state, rng.choice(options))
        steps.append((state, events))
    return steps


def push(state: State, events: list[dict[str, Any]]) -> None:
    """The engine's share of one push to every seat and to the spectators."""
    public_view(state)
    decision(state)
    for seat in range(state.n):
        seat_view(state, seat)
        for event in events:
            event_to_json(public_cards(event, seat))
    for event in events:
        event_to_json(public_cards(event, None))


@dataclass
class Result:
    pushes: int
    seconds: float  # CPU time of this process, pushes only
    wall: float

    @property
    def pushes_per_s(self) -> float:
        return self.pushes / self.seconds


def run(rules: Rules, seconds: float, seed: int, max_wall: float) -> Result:
    """Push for ``seconds`` of CPU time (at most ``max_wall`` of wall time, at least 5 matches)."""
    rng = random.Random(seed)
    pushes = matches = 0
    spent = 0.0
    wall = time.perf_counter()
    while True:
        steps = match(rules, rng.getrandbits(64), rng)
        start = time.process_time()
        for state, events in steps:
            push(state, events)
        spent += time.process_time() - start
        pushes += len(steps)
        matches += 1
        if matches >= 5 and (spent >= seconds or time.perf_counter() - wall >= max_wall):
            return Result(pushes, spent, time.perf_counter() - wall)


def main(argv: list[str] | None = None) -> None:
    def line(result: Result) -> str:
        return (
            f"{result.pushes:>8} pushes in {result.seconds:5.1f} s CPU ({result.wall:5.1f} s wall): "
            f"{result.pushes_per_s:8.0f} pushes/s, {1e6 / result.pushes_per_s:7.1f} us/push"
        )

    headline = measure_configurations("python -m bench.views", __doc__.splitlines()[0], CONFIGS, run, line, argv)
    print(f"views: {headline.pushes_per_s:.0f} pushes/s (4p/36 random)")


if __name__ == "__main__":
    main()
