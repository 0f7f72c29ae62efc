"""``python -m app`` with bench-only instrumentation, for ``bench.load --cprofile`` / ``--patch``.

The app's code is untouched: this wraps its entry point and, for measuring what a proposed change
to ``app/`` would gain, can monkeypatch a few hot spots first (``BENCH_PATCHES``, comma-separated):

* ``gc_freeze``: ``gc.freeze()`` once the app has started, so that the collector's full passes skip
  everything created at startup.
* ``gc_threshold``: ``gc.set_threshold(10_000, 20, 10)``.
* ``sequential_publish``: ``TableActor._push`` publishes one channel after another instead of
  through ``asyncio.gather`` (a new task per publish).

(Earlier patches, ``rules_json``, ``forward_raw``, ``shared_view``, ``no_persist`` and
``one_subscription``, measured the changes that later landed in ``app/``; see the git history
of ``docs/performance.md``.)

cProfile (``$BENCH_CPROFILE`` set): SIGUSR1 starts profiling the event loop's thread, SIGUSR2 stops
it and writes pstats to ``$BENCH_CPROFILE``. tracemalloc (``$BENCH_TRACEMALLOC`` set instead): SIGUSR1
takes a snapshot, SIGUSR2 another and writes the biggest growths between them, by line, there.
Loop stats (``$BENCH_LOOPSTATS``): between SIGUSR1 and SIGUSR2, how late a 5 ms timer fires (event
loop stalls) and every garbage-collector pause, written there as JSON.

cProfile uses the wall-clock timer: on a machine whose CPUs are contended a process is often
preempted inside a socket write (the write wakes the reader), which then looks expensive; compare
with the CPU accounting that ``bench.load`` prints.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

# ``BENCH_CPROFILE_CPU=1``: time by the thread's CPU clock instead of the wall clock, so that waiting for
# a CPU (a busy machine) or for another thread holding the GIL does not look like work.
_profile = cProfile.Profile(time.thread_time) if os.environ.get("BENCH_CPROFILE_CPU") else cProfile.Profile()


_snapshots: list[Any] = []


class _LoopStats:
    """Event-loop stalls (how late a 5 ms sleep wakes up) and garbage-collector pauses; and what
    the loop's thread was doing during the stalls: a watchdog thread samples its stack every 10 ms
    while the probe has not come round for more than 30 ms."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.gc: list[tuple[int, float]] = []
        self._gc_started = 0.0
        self._task: Any = None
        self._beat = 0.0
        self._watching = False
        self._thread: Any = None
        self.stall_stacks: dict[str, int] = {}

    def _watchdog(self, main_thread: int) -> None:
        import sys
        import traceback

        while True:  # one thread for the process's life; it samples only between start and stop
            time.sleep(0.01)
            if self._watching and time.perf_counter() - self._beat > 0.03:
                frame = sys._current_frames().get(main_thread)
                if frame is None:
                    continue
                stack = traceback.extract_stack(frame)[-14:]
                key = " <- ".join(
                    f"{entry.filename.split('site-packages/')[-1].split('/capacity/')[-1]}:{entry.lineno} {entry.name}"
                    for entry in reversed(stack)
                )
                self.stall_stacks[key] = self.stall_stacks.get(key, 0) + 1

    def start(self) -> None:
        import asyncio
        import gc

        loop = asyncio.get_running_loop()
        self.lags.clear()
        self.gc.clear()
        gc.callbacks.append(self._on_gc)

        async def probe() -> None:
            while True:
                before = loop.time()
                self._beat = time.perf_counter()
                await asyncio.sleep(0.005)
                self.lags.append(loop.time() - before - 0.005)

        import threading

        self.stall_stacks = {}
        self._beat = time.perf_counter()
        self._watching = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._watchdog, args=(threading.get_ident(),), daemon=True)
            self._thread.start()
        loop.call_soon_threadsafe(lambda: setattr(self, "_task", loop.create_task(probe())))

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        import time

        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self.gc.append((info["generation"], time.perf_counter() - self._gc_started))

    def stop(self, out: str) -> None:
        import collections
        import gc
        import json

        gc.callbacks.remove(self._on_gc)
        self._watching = False
        if self._task is not None:
            self._task.cancel()
        lags = sorted(self.lags) or [0.0]
        by_gen = {
            gen: {
                "count": sum(1 for g, _ in self.gc if g == gen),
                "total_ms": 1000 * sum(d for g, d in self.gc if g == gen),
                "max_ms": 1000 * max((d for g, d in self.gc if g == gen), default=0.0),
            }
            for gen in (0, 1, 2)
        }
        report = {
            "loop_lag_ms": {
                "samples": len(self.lags),
                "p50": 1000 * lags[len(lags) // 2],
                "p99": 1000 * lags[min(len(lags) - 1, int(0.99 * len(lags)))],
                "max": 1000 * lags[-1],
                "over_20ms": sum(1 for lag in lags if lag > 0.02),
            },
            "gc": by_gen,
            "gc_objects_tracked": len(gc.get_objects()),
            "gc_objects_frozen": gc.get_freeze_count(),
            "tracked_by_type": dict(collections.Counter(type(o).__name__ for o in gc.get_objects()).most_common(12)),
            "stall_samples": sum(self.stall_stacks.values()),
            "stall_stacks": dict(sorted(self.stall_stacks.items(), key=lambda kv: -kv[1])[:15]),
        }
        with open(out, "w") as handle:
            json.dump(report, handle, indent=2)


_loop_stats = _LoopStats()


class _Sampler:
    """A statistical profile of the event loop's thread (``$BENCH_SAMPLE``): between SIGUSR1 and
    SIGUSR2 a thread reads its stack every millisecond. Unlike cProfile it does not slow every call
    (which inflates Python-heavy code against C and system calls); a sample whose innermost frame
    is the loop's own ``run`` is the loop in C: waiting for events, or in uvloop's own work."""

    def __init__(self) -> None:
        self.samples = 0
        self.idle = 0
        self.inclusive: dict[str, int] = {}
        self.exclusive: dict[str, int] = {}
        self._on = False
        self._thread: Any = None
        self._interval = 0.005

    def _run(self, main_thread: int) -> None:
        import sys

        while True:
            time.sleep(0.001)
            if not self._on:
                continue
            frame = sys._current_frames().get(main_thread)
            if frame is None:
                continue
            self.samples += 1
            names = []
            while frame is not None:
                code = frame.f_code
                where = code.co_filename.split("site-packages/")[-1]
                where = where.rsplit("/app/", 1)[-1] if "/app/" in where else where.rsplit("/", 1)[-1]
                names.append(f"{where}:{code.co_name}")
                frame = frame.f_back
            if names[0].endswith("runners.py:run"):
                self.idle += 1
                continue
            self.exclusive[names[0]] = self.exclusive.get(names[0], 0) + 1
            for name in set(names):
                self.inclusive[name] = self.inclusive.get(name, 0) + 1

    def start(self) -> None:
        import sys
        import threading

        self.samples = self.idle = 0
        self.inclusive, self.exclusive = {}, {}
        # The sampling thread needs the GIL: without a short switch interval it would get it almost
        # only while the loop waits for events, and see nothing else.
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(0.0002)
        self._on = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, args=(threading.get_ident(),), daemon=True)
            self._thread.start()

    def stop(self, out: str) -> None:
        import json
        import sys

        self._on = False
        sys.setswitchinterval(self._interval)

        def top(counts: dict[str, int], n: int) -> dict[str, float]:
            ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:n]
            return {name: round(100 * count / max(1, self.samples), 2) for name, count in ranked}

        with open(out, "w") as handle:
            json.dump(
                {
                    "samples": self.samples,
                    "in_loop_c_pct": round(100 * self.idle / max(1, self.samples), 2),
                    "inclusive_pct": top(self.inclusive, 60),
                    "exclusive_pct": top(self.exclusive, 40),
                },
                handle,
                indent=1,
            )


_sampler = _Sampler()


def _start(signum: int, frame: FrameType | None) -> None:
    if os.environ.get("BENCH_SAMPLE"):
        _sampler.start()
    if os.environ.get("BENCH_LOOPSTATS"):
        _loop_stats.start()
    if os.environ.get("BENCH_TRACEMALLOC"):
        import tracemalloc

        _snapshots[:] = [tracemalloc.take_snapshot()]
    elif os.environ.get("BENCH_CPROFILE"):
        _profile.enable()


def _stop(signum: int, frame: FrameType | None) -> None:
    if os.environ.get("BENCH_SAMPLE"):
        _sampler.stop(os.environ["BENCH_SAMPLE"])
    if os.environ.get("BENCH_LOOPSTATS"):
        _loop_stats.stop(os.environ["BENCH_LOOPSTATS"])
    out = os.environ.get("BENCH_TRACEMALLOC")
    if out:
        import tracemalloc

        after = tracemalloc.take_snapshot()
        stats = after.compare_to(_snapshots[0], "traceback")
        total = sum(stat.size_diff for stat in stats)
        with open(out, "w") as report:
            report.write(f"total growth {total / 1024:.1f} KiB over {len(stats)} allocation sites\n\n")
            report.write("by file of the allocating line:\n")
            for stat in after.compare_to(_snapshots[0], "filename")[:15]:
                report.write(f"{stat.size_diff / 1024:9.1f} KiB {stat.count_diff:+7d} blocks  {stat.traceback[0]}\n")
            report.write("\nby call site:\n")
            for stat in stats[:40]:
                report.write(f"{stat.size_diff / 1024:9.1f} KiB {stat.count_diff:+7d} blocks\n")
                for line in stat.traceback.format(limit=6):
                    report.write(f"    {line}\n")
        return
    if os.environ.get("BENCH_CPROFILE"):
        _profile.disable()
        _profile.dump_stats(os.environ["BENCH_CPROFILE"])


def _after_startup(step: Callable[[], None]) -> None:
    """Run ``step`` once the app's lifespan has started it (imports, app, database engine done)."""
    from contextlib import asynccontextmanager

    import app.main

    original = app.main.lifespan

    @asynccontextmanager
    async def lifespan(application: Any) -> Any:
        async with original(application):
            step()
            yield

    app.main.lifespan = lifespan


def _patch_gc_freeze() -> None:
    """After startup, move every object the collector tracks into the permanent generation, so that
    full collections stop re-scanning them."""
    import gc

    def freeze() -> None:
        gc.collect()
        gc.freeze()

    _after_startup(freeze)


def _patch_gc_threshold() -> None:
    """Collect the young generation after 10,000 net allocations instead of 700 (and the middle one
    after 20 young collections): fewer, shorter-per-object passes."""
    import gc

    gc.set_threshold(10_000, 20, 10)


def _patch_sequential_publish() -> None:
    """``TableActor._push`` awaits its publishes one after the other instead of through
    ``asyncio.gather`` (which wraps each in a new task). With the memory:// broker a publish never
    waits, so nothing overlaps anyway."""
    import asyncio
    import types

    import app.tables.actor

    async def gather(*aws: Any, return_exceptions: bool = False) -> list[Any]:
        return [await aw for aw in aws]

    proxy = types.ModuleType("asyncio_sequential_gather")
    proxy.__dict__.update(asyncio.__dict__)
    proxy.gather = gather  # type: ignore[attr-defined]
    app.tables.actor.asyncio = proxy  # type: ignore[attr-defined]


def _patch_gc_off() -> None:
    """No automatic collection at all once the app has started (an experiment: what the collector
    costs the run; a real server would leak reference cycles)."""
    import gc

    _after_startup(gc.disable)


PATCHES = {
    "gc_off": _patch_gc_off,
    "gc_freeze": _patch_gc_freeze,
    "gc_threshold": _patch_gc_threshold,
    "sequential_publish": _patch_sequential_publish,
}


def main() -> None:
    if os.environ.get("BENCH_TRACEMALLOC"):
        import tracemalloc

        tracemalloc.start(8)
    for name in filter(None, os.environ.get("BENCH_PATCHES", "").split(",")):
        PATCHES[name.strip()]()
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
    from app.__main__ import main as app_main

    app_main()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
