"""Bot-vs-bot benchmark: ``python -m bench.bots [--quick] [--matches N] [--procs P]``.

Two seats, 36 cards, the Durak Peak table. Every deal (seed) is played twice with the seats
swapped, so both sides get the same cards. A win is "not the durak"; a draw counts as half a win
(draws are reported too). Win rates come with a 95% confidence interval (normal approximation over
matches). The hard bot's decision times are those of ``choose`` calls where the game waited for it.

``--quick`` plays 40 matches per pairing but only 12 for hard-vs-normal (under 30 s). The hard
bot's p95 on the last line is wall-clock time; CPU time is printed too (the machine may be shared).

The last line is machine-readable:
``bots: hard-vs-normal <x>% normal-vs-easy <y>% easy-vs-random <z>% hard-p95 <t> ms``
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import statistics
import sys
import time
from dataclasses import dataclass, field

from app.bots import make_bot
from app.engine import Rules
from bench._common import play_match

PAIRINGS: tuple[tuple[str, str], ...] = (("hard", "normal"), ("normal", "easy"), ("easy", "random"))
BASE_SEED = 20_240_000
QUICK_HARD_DEALS = 6


@dataclass
class Tally:
    games: int = 0
    score: float = 0.0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    scores: list[float] = field(default_factory=list)
    hard_ms: list[float] = field(default_factory=list)  # wall clock
    hard_cpu_ms: list[float] = field(default_factory=list)  # CPU time of the deciding thread
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        self.games += other.games
        self.score += other.score
        self.wins += other.wins
        self.draws += other.draws
        self.losses += other.losses
        self.scores.extend(other.scores)
        self.hard_ms.extend(other.hard_ms)
        self.hard_cpu_ms.extend(other.hard_cpu_ms)
        self.seconds += other.seconds

    @property
    def rate(self) -> float:
        return self.score / self.games if self.games else 0.0

    def interval(self) -> tuple[float, float]:
        if self.games < 2:
            return 0.0, 1.0
        sd = statistics.pstdev(self.scores)
        half = 1.96 * sd / math.sqrt(self.games)
        return max(0.0, self.rate - half), min(1.0, self.rate + half)


def play_deal(job: tuple[str, str, int, int]) -> Tally:
    """Both seatings of one deal: ``first`` plays seat 0 then seat 1."""
    first, second, deal, budget = job
    rules = Rules(deck=36, seats=2)
    tally = Tally()
    started = time.perf_counter()
    for swap in (False, True):
        levels = (second, first) if swap else (first, second)
        me = 1 if swap else 0
        players = [make_bot(levels[s], s, seed=deal * 10 + s, time_budget_ms=budget) for s in range(2)]
        result = play_match(rules, BASE_SEED + deal, players)
        score = result.score(me)
        tally.games += 1
        tally.score += score
        tally.scores.append(score)
        if result.draw:
            tally.draws += 1
        elif score > 0.5:
            tally.wins += 1
        else:
            tally.losses += 1
        for seat, ms, must, cpu_ms in result.times:
            if must and levels[seat] == "hard":
                tally.hard_ms.append(ms)
                tally.hard_cpu_ms.append(cpu_ms)
    tally.seconds = time.perf_counter() - started
    return tally


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small run (under 30 s)")
    parser.add_argument("--matches", type=int, default=None, help="matches per pairing (default 1000)")
    parser.add_argument("--procs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--budget", type=int, default=200, help="bots' time budget per decision, ms")
    parser.add_argument("--offset", type=int, default=0, help="first deal number (other deals)")
    args = parser.parse_args(argv)
    matches = args.matches if args.matches is not None else (40 if args.quick else 1000)
    deals = max(1, (matches + 1) // 2)
    # --quick keeps the hard pairing small: the hard bot spends real time on each decision.
    hard_deals = min(deals, QUICK_HARD_DEALS) if args.quick else deals
    started = time.perf_counter()
    jobs = [
        (a, b, args.offset + d, args.budget)
        for a, b in PAIRINGS
        for d in range(hard_deals if "hard" in (a, b) else deals)
    ]
    tallies = {pairing: Tally() for pairing in PAIRINGS}
    print(
        f"bench.bots: {deals * 2} matches per pairing ({deals} deals x 2 seatings"
        + (f"; hard-vs-normal {hard_deals * 2}" if hard_deals != deals else "")
        + f"), 2 seats, 36 cards, {args.procs} process(es), budget {args.budget} ms; "
        "a draw counts as half a win",
        flush=True,
    )
    if args.procs > 1:
        with multiprocessing.get_context("fork").Pool(args.procs) as pool:
            results = pool.map(play_deal, jobs, chunksize=2)
    else:
        results = [play_deal(job) for job in jobs]
    for job, tally in zip(jobs, results, strict=True):
        tallies[(job[0], job[1])].add(tally)
    rates: dict[tuple[str, str], float] = {}
    for (a, b), tally in tallies.items():
        low, high = tally.interval()
        rates[(a, b)] = tally.rate
        print(
            f"{a:>6} vs {b:<6}: {100 * tally.rate:5.1f}%  95% CI [{100 * low:.1f}, {100 * high:.1f}]  "
            f"W/D/L {tally.wins}/{tally.draws}/{tally.losses} of {tally.games}  "
            f"({tally.seconds:.0f} s of play)"
        )
    hard_ms = tallies[("hard", "normal")].hard_ms
    hard_cpu = tallies[("hard", "normal")].hard_cpu_ms
    p95 = percentile(hard_ms, 0.95)
    if hard_ms:
        for label, values in (("wall clock", hard_ms), ("CPU", hard_cpu)):
            print(
                f"hard decisions ({label}): {len(values)}, median {percentile(values, 0.5):.1f} ms, "
                f"p95 {percentile(values, 0.95):.1f} ms, p99 {percentile(values, 0.99):.1f} ms, "
                f"max {max(values):.1f} ms"
            )
    print(f"wall time {time.perf_counter() - started:.1f} s")
    print(
        f"bots: hard-vs-normal {100 * rates[('hard', 'normal')]:.1f}% "
        f"normal-vs-easy {100 * rates[('normal', 'easy')]:.1f}% "
        f"easy-vs-random {100 * rates[('easy', 'random')]:.1f}% "
        f"hard-p95 {p95:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
