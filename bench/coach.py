"""Coach benchmark: ``python -m bench.coach [--quick] [--matches N] [--worlds W]``.

Plays random two-player 36-card matches (Durak Peak table, a normal bot against a hard one, seats
alternating), then analyses one seat of each finished match with the coach (``app.bots.coach``) the
way the server does — from that seat's timeline, never the hidden cards — twice: with the default
budget (``--worlds`` deals per decision) and with four times the deals (a different random stream).
Reported: the seconds per match of the default analysis (one process, wall clock) and the
agreement, the share of estimated decisions where both name the same best action.

``--quick``: one match at a quarter of the deals (under a minute).

The last line is machine-readable:
``coach: <s> s per 2p/36 match, agreement <x>% with a 4x budget``
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from app.bots import make_bot
from app.bots.coach import DEFAULT_WORLDS, action_key, analyse
from app.engine import Rules
from app.engine.replay import seat_timeline
from bench._common import play_match

BASE_SEED = 18_000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.coach", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="one match at a quarter of the deals")
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--worlds", type=int, default=DEFAULT_WORLDS, help="deals per decision")
    parser.add_argument("--seed", type=int, default=BASE_SEED)
    args = parser.parse_args(argv)
    matches, worlds = args.matches, args.worlds
    if args.quick:
        matches, worlds = 1, max(8, worlds // 4)
    rules = Rules(deck=36, seats=2)
    rng = random.Random(args.seed)
    seconds: list[float] = []
    agree = compared = blunders = 0
    for number in range(matches):
        seed = rng.randrange(1 << 62)
        seat = number % 2
        players = [make_bot("normal", 0, seed), make_bot("hard", 1, seed, 50)]
        if seat == 1:
            players = [make_bot("hard", 0, seed, 50), make_bot("normal", 1, seed)]
        played = play_match(rules, seed, players, dealer=number % 2)
        timeline = seat_timeline(rules.to_json(), seed, number % 2, played.actions, seat)
        start = time.perf_counter()
        base = analyse(timeline, seat, worlds=worlds, seed=1)
        seconds.append(time.perf_counter() - start)
        larger = analyse(timeline, seat, worlds=4 * worlds, seed=2)
        pairs = [
            (a, b)
            for a, b in zip(base["decisions"], larger["decisions"], strict=True)
            if a.get("status") == "estimated" and b.get("status") == "estimated"
        ]
        same = sum(1 for a, b in pairs if action_key(a["best"]) == action_key(b["best"]))
        agree += same
        compared += len(pairs)
        blunders += base["blunders"]
        print(
            f"match {number + 1}/{matches} (seed {seed}, seat {seat}, {played.plies} plies): "
            f"{seconds[-1]:.1f} s, {len(base['decisions'])} decisions, {base['estimated']} estimated, "
            f"{base['blunders']} blunders; best action as with {4 * worlds} deals: {same}/{len(pairs)}",
            flush=True,
        )
    per_match = statistics.mean(seconds)
    agreement = 100.0 * agree / compared if compared else 0.0
    print(f"{worlds} deals per decision; {compared} decisions compared; {blunders} blunders marked")
    print(f"coach: {per_match:.1f} s per 2p/36 match, agreement {agreement:.0f}% with a 4x budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
