"""Benchmark of the rules engine: random full matches on one core.

    python -m bench.engine            # about 10 s per configuration
    python -m bench.engine --quick    # well under 30 s in all
    python -m bench.engine --profile  # cProfile of the 2p/36 run

Each step picks uniformly among the legal actions of the seats whose decision it is plus the
attackers who may throw in. Rates are per second of this process's CPU time (one core, single
thread), so other load on the machine does not distort them; wall time is shown too. The last line
is ``engine: <N> games/s (2p/36 random)``.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from app.engine import Action, Rules, State, apply, legal_actions, new_match
from app.engine.seating import all_covered, throwers
from app.engine.state import LEAD

R = TypeVar("R")


@dataclass(frozen=True)
class Config:
    name: str
    rules: Rules


CONFIGS = (
    Config("2p/36", Rules(deck=36, seats=2)),
    Config("4p/52 transfer", Rules(deck=52, seats=4, transfer=True)),
    Config("6p/36 all throw in", Rules(deck=36, seats=6, circle="all")),
)


def actors(state: State) -> list[int]:
    """The seats whose decision it is, plus attackers who may still throw in.

    The same seats as ``decision(state)["seats"]`` plus every thrower who has not passed, in that
    order, computed directly (``decision`` builds a dict the benchmark does not need)."""
    if state.phase == LEAD:
        return [state.attacker]
    seats = [] if state.taking or all_covered(state) else [state.defender]
    passed = state.passed
    seats.extend([seat for seat in throwers(state) if seat not in passed])
    return seats


def play(rules: Rules, seed: int, rng: random.Random) -> int:
    """One complete random match; returns the number of actions applied."""
    state = new_match(rules, seed)
    count = 0
    while state.outcome is None:
        options: list[Action] = []
        for seat in actors(state):
            options.extend(legal_actions(state, seat))
        state, _ = apply(state, rng.choice(options))
        count += 1
    return count


@dataclass
class Result:
    games: int
    actions: int
    seconds: float  # CPU time of this process
    wall: float

    @property
    def games_per_s(self) -> float:
        return self.games / self.seconds

    @property
    def actions_per_s(self) -> float:
        return self.actions / self.seconds


def run(rules: Rules, seconds: float, seed: int, max_wall: float) -> Result:
    """Play for ``seconds`` of CPU time (at most ``max_wall`` seconds of wall time, at least 20 games)."""
    rng = random.Random(seed)
    games = actions = 0
    start, wall = time.process_time(), time.perf_counter()
    while True:
        actions += play(rules, rng.getrandbits(64), rng)
        games += 1
        now = time.process_time()
        if games >= 20 and (now - start >= seconds or time.perf_counter() - wall >= max_wall):
            return Result(games, actions, now - start, time.perf_counter() - wall)


def measure_configurations(
    prog: str,
    description: str,
    configs: Sequence[Config],
    run: Callable[[Rules, float, int, float], R],
    line: Callable[[R], str],
    argv: list[str] | None,
) -> R:
    """The shared command line of the CPU benchmarks (``--quick``, ``--seconds``, ``--seed``,
    ``--profile``): runs each configuration, prints a line for it, returns the first one's result."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--quick", action="store_true", help="about 2 s per configuration")
    parser.add_argument("--seconds", type=float, default=None, help="time per configuration")
    parser.add_argument("--seed", type=int, default=1, help="master seed (default 1)")
    parser.add_argument("--profile", action="store_true", help=f"cProfile the {configs[0].name} configuration")
    args = parser.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (2.0 if args.quick else 10.0)
    max_wall = 8.0 if args.quick else 4 * seconds  # --quick stays under 30 s on a loaded machine

    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        run(configs[0].rules, seconds, args.seed, max_wall)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)

    results = []
    for config in configs:
        results.append(run(config.rules, seconds, args.seed, max_wall))
        print(f"{config.name:<22} {line(results[-1])}", flush=True)
    return results[0]


def main(argv: list[str] | None = None) -> None:
    def line(result: Result) -> str:
        return (
            f"{result.games:>7} games in {result.seconds:5.1f} s CPU ({result.wall:5.1f} s wall): "
            f"{result.games_per_s:8.1f} games/s, {result.actions_per_s:10.0f} actions/s, "
            f"{result.actions / result.games:6.1f} actions/game"
        )

    headline = measure_configurations("python -m bench.engine", __doc__.splitlines()[0], CONFIGS, run, line, argv)
    print(f"engine: {headline.games_per_s:.0f} games/s (2p/36 random)")


if __name__ == "__main__":
    main()
