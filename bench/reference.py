"""How fast this machine's CPU is right now: the CPU time of one fixed piece of Python work.

    python -m bench.reference            # prints the figure, e.g. "reference: 212 ms"
    python -m bench.reference --repeat 5

The work is the same instructions every time (the rules engine playing the same random matches from
the same seeds), so its CPU time moves only with the machine: a shared VM here runs the same code up
to about 1.7 times as slowly in some seconds as in others. ``bench.capacity`` and ``bench.scale`` run
a small piece of it every half second of each measured window (:class:`SpeedProbe`, on the server's
CPU) and print its median beside the server's CPU per command: a step over its CPU target while the
probe ran slowly was stopped by the machine's phase, not by the code (docs/performance.md).

Last line: ``reference: <ms> ms``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import statistics
import threading
import time

from app.engine import Rules
from bench.engine import play

MATCHES = 40  # about 0.2 s of CPU on this machine


def work(matches: int = MATCHES) -> float:
    """CPU milliseconds of ``matches`` fixed random four-seat matches (36 cards, transfer on)."""
    rules = Rules(deck=36, seats=4, transfer=True)
    rng = random.Random(20261203)
    start = time.process_time()
    for _ in range(matches):
        play(rules, rng.getrandbits(64), rng)
    return 1000 * (time.process_time() - start)


class SpeedProbe:
    """While a window is measured: every ``every_s`` seconds, a small fixed piece of :func:`work`
    (``matches`` matches) in a thread of this process pinned to ``cpu``, timed by the thread's own CPU
    clock. ``ms_per_match`` is the median: how fast the machine ran during the window itself. It
    costs that CPU about 1-2% (``with SpeedProbe(cpu) as probe: ...``)."""

    def __init__(self, cpu: int | None, *, every_s: float = 0.5, matches: int = 2) -> None:
        self.cpu, self.every_s, self.matches = cpu, every_s, matches
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="speed-probe", daemon=True)

    def __enter__(self) -> SpeedProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        if self.cpu is not None:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(threading.get_native_id(), {self.cpu})
        rules = Rules(deck=36, seats=4, transfer=True)
        play(rules, 1, random.Random(1))  # warm up: the interpreter's caches
        while not self._stop.wait(self.every_s):
            rng = random.Random(20261203)
            start = time.thread_time()
            for _ in range(self.matches):
                play(rules, rng.getrandbits(64), rng)
            self.samples.append(1000 * (time.thread_time() - start) / self.matches)

    @property
    def ms_per_match(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reference", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs (their median is the figure)")
    args = parser.parse_args(argv)
    work(4)  # warm up: imports, the interpreter's caches
    runs = sorted(work() for _ in range(max(1, args.repeat)))
    if len(runs) > 1:
        print("runs: " + ", ".join(f"{run:.0f}" for run in runs) + " ms")
    print(f"reference: {runs[len(runs) // 2]:.0f} ms")


if __name__ == "__main__":
    main()
