"""``python -m app`` with bench-only instrumentation, for ``bench.load --cprofile`` / ``--patch``.

The app's code is untouched: this wraps its entry point and, for measuring what a proposed change
to ``app/`` would gain, can monkeypatch a few hot spots first (``BENCH_PATCHES``, comma-separated):

* ``rules_json``: ``Rules.to_json`` memoised per (immutable) ``Rules`` instead of
  ``dataclasses.asdict`` on every call (about eight calls per applied command today).
* ``forward_raw``: ``Connection.forward`` sends an ``update`` on as the text the actor published,
  reading only its leading ``type``/``version``/``seat`` fields, instead of ``json.loads`` followed
  by ``json.dumps`` of the same message (the actor already wrote it as JSON).
* ``no_persist``: ``TableActor._persist`` does nothing: an upper bound on what building and storing
  the table record on every action costs with the memory:// store.
* ``gc_freeze``: ``gc.freeze()`` once the app has started, so that the collector's full passes skip
  everything created at startup.
* ``gc_threshold``: ``gc.set_threshold(10_000, 20, 10)``.
* ``shared_view``: ``TableActor._push`` builds and serializes the part of the update that is the
  same for every seat (the public view, the table info) once per version, and only each seat's
  hand, legal actions and redacted events per seat, splicing the JSON texts together.

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
import re
import signal
from types import FrameType
from typing import Any

_profile = cProfile.Profile()


_snapshots: list[Any] = []


class _LoopStats:
    """Event-loop stalls (how late a 5 ms sleep wakes up) and garbage-collector pauses."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self.gc: list[tuple[int, float]] = []
        self._gc_started = 0.0
        self._task: Any = None

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
                await asyncio.sleep(0.005)
                self.lags.append(loop.time() - before - 0.005)

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
        }
        with open(out, "w") as handle:
            json.dump(report, handle, indent=2)


_loop_stats = _LoopStats()


def _start(signum: int, frame: FrameType | None) -> None:
    if os.environ.get("BENCH_LOOPSTATS"):
        _loop_stats.start()
    if os.environ.get("BENCH_TRACEMALLOC"):
        import tracemalloc

        _snapshots[:] = [tracemalloc.take_snapshot()]
    elif os.environ.get("BENCH_CPROFILE"):
        _profile.enable()


def _stop(signum: int, frame: FrameType | None) -> None:
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


def _patch_rules_json() -> None:
    from app.engine.rules import Rules

    original = Rules.to_json
    cache: dict[Any, dict[str, Any]] = {}

    def to_json(self: Rules) -> dict[str, Any]:
        cached = cache.get(self)
        if cached is None:
            cached = cache[self] = original(self)
        return dict(cached)  # callers may change their copy; every value is a scalar

    Rules.to_json = to_json  # type: ignore[method-assign]


_UPDATE_HEAD = re.compile(rb'^\{"type":"update","version":(\d+),"seat":(null|\d+),')


def _patch_forward_raw() -> None:
    from app.api.routes import play
    from app.broker import Gap

    original_forward = play.Connection.forward

    async def forward(self: play.Connection, sub: Any, *, personal: bool) -> None:
        async for item in sub:
            head = None if isinstance(item, Gap) else _UPDATE_HEAD.match(item.data)
            if head is None:  # anything but an update: the original, field by field
                await original_forward(self, _once(item), personal=personal)
                continue
            seat = head.group(2)
            if personal:
                self.seated = seat != b"null"
            elif self.seated:
                continue
            self.last_version = max(self.last_version, int(head.group(1)))
            try:
                await self.send(item.data.decode())
            except Exception:
                return

    play.Connection.forward = forward  # type: ignore[method-assign]


class _once:
    """A one-item subscription, to hand a single message to the original forward()."""

    def __init__(self, item: Any) -> None:
        self.item = item

    def __aiter__(self) -> _once:
        return self

    async def __anext__(self) -> Any:
        if self.item is None:
            raise StopAsyncIteration
        item, self.item = self.item, None
        return item


def _patch_gc_freeze() -> None:
    """After startup (imports, app, database engine), move every object the collector tracks into
    the permanent generation, so that full collections stop re-scanning them."""
    import gc
    from contextlib import asynccontextmanager

    import app.main

    original = app.main.lifespan

    @asynccontextmanager
    async def lifespan(application: Any) -> Any:
        async with original(application):
            gc.collect()
            gc.freeze()
            yield

    app.main.lifespan = lifespan


def _patch_gc_threshold() -> None:
    """Collect the young generation after 10,000 net allocations instead of 700 (and the middle one
    after 20 young collections): fewer, shorter-per-object passes."""
    import gc

    gc.set_threshold(10_000, 20, 10)


def _patch_no_persist() -> None:
    from app.tables.actor import TableActor

    async def _persist(self: TableActor, entry: Any) -> None:
        return None

    TableActor._persist = _persist  # type: ignore[method-assign]


def _patch_shared_view() -> None:
    import json

    from app.engine import event_to_json, legal_actions, public_cards, view
    from app.engine.actions import action_to_json
    from app.engine.views import sort_hand
    from app.tables import channels
    from app.tables.actor import TableActor, log

    dumps = json.JSONEncoder(separators=(",", ":")).encode

    async def publish(actor: TableActor, channel: str, text: str) -> None:
        try:
            await actor.broker.publish(channel, text)
        except Exception as exc:
            log.warning("table %s: publish to %s failed: %s", actor.code[:8], channel, exc)

    async def _push(self: TableActor, events: list[dict[str, Any]]) -> None:
        base = self.info()
        game = self.game
        version = self.version
        public = dumps(view(game, None))[len('{"seat":null,') :] if game is not None else None
        table = dumps(base)[:-1]  # ends with "you":null
        table = table[: table.rfind(',"you":')]
        for seat in self.seats:
            if seat.kind == "bot":
                self.bots.observe(self.code, seat.seat, [event_to_json(public_cards(e, seat.seat)) for e in events])
                continue
            if seat.principal is None or not seat.connections:
                continue
            mine = [{**event_to_json(public_cards(e, seat.seat)), "version": version} for e in events]
            if public is None:
                seat_view = "null"
            else:
                hand = [str(card) for card in sort_hand(game.hands[seat.seat], game.trump)]
                legal = [action_to_json(action) for action in legal_actions(game, seat.seat)]
                seat_view = f'{{"seat":{seat.seat},{public[:-1]},"hand":{dumps(hand)},"legal":{dumps(legal)}}}'
            text = (
                f'{{"type":"update","version":{version},"seat":{seat.seat},"events":{dumps(mine)},'
                f'"view":{seat_view},"table":{table},"you":{dumps(seat.principal.key)}}}}}'
            )
            await publish(self, channels.person(self.code, seat.principal.key), text)
        if self.spectators:
            mine = [{**event_to_json(public_cards(e, None)), "version": version} for e in events]
            seat_view = "null" if public is None else '{"seat":null,' + public
            text = (
                f'{{"type":"update","version":{version},"seat":null,"events":{dumps(mine)},'
                f'"view":{seat_view},"table":{dumps({**base, "code": None})}}}'
            )
            await publish(self, channels.watch(self.code), text)

    TableActor._push = _push  # type: ignore[method-assign]


PATCHES = {
    "rules_json": _patch_rules_json,
    "forward_raw": _patch_forward_raw,
    "no_persist": _patch_no_persist,
    "shared_view": _patch_shared_view,
    "gc_freeze": _patch_gc_freeze,
    "gc_threshold": _patch_gc_threshold,
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
