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

cProfile: SIGUSR1 starts profiling the event loop's thread, SIGUSR2 stops it and writes pstats to
``$BENCH_CPROFILE``. Wall-clock timer: on a machine whose CPUs are contended a process is often
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


def _start(signum: int, frame: FrameType | None) -> None:
    _profile.enable()


def _stop(signum: int, frame: FrameType | None) -> None:
    _profile.disable()
    _profile.dump_stats(os.environ.get("BENCH_CPROFILE", "server.pstats"))


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


def _patch_no_persist() -> None:
    from app.tables.actor import TableActor

    async def _persist(self: TableActor, entry: Any) -> None:
        return None

    TableActor._persist = _persist  # type: ignore[method-assign]


PATCHES = {"rules_json": _patch_rules_json, "forward_raw": _patch_forward_raw, "no_persist": _patch_no_persist}


def main() -> None:
    for name in filter(None, os.environ.get("BENCH_PATCHES", "").split(",")):
        PATCHES[name.strip()]()
    signal.signal(signal.SIGUSR1, _start)
    signal.signal(signal.SIGUSR2, _stop)
    from app.__main__ import main as app_main

    app_main()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
