"""Server-sent events, as every feed sends them (the lobby, a tournament's page, a person's notices):
one encoding of an event, the keep-alive comment and how often it goes out, and ``EventFeed``, one
reader's queue of texts read by the loop all feeds share.

A feed pushes texts into its reader's ``EventFeed`` as they happen (from a broker subscription or
from the code that changed something); the reader's response iterates ``texts()``, which yields them
in order and, after ``keepalive_s`` with nothing to send on the feed's clock, a comment line, so that
a client that is gone is noticed by the failed write. No event carries an ``id:`` or a ``retry:``
field: a feed that reconnects starts again from a snapshot.

Here, not in app/api, because the table registry's lobby (app/tables/lobby.py) serves its feed
through it and may not import app.api; the HTTP response around it is app/api/event_stream.py.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any, Generic, TypeVar

import orjson

KEEPALIVE_S = 15.0  # a quiet feed sends ``KEEP_ALIVE`` after this long
KEEP_ALIVE = b": keep-alive\n\n"

T = TypeVar("T")


def sse(event: str, data: Any, default: Callable[[Any], Any] | None = None) -> bytes:
    """One server-sent event: ``event:`` and one ``data:`` line of JSON (``default``: orjson's, for
    what JSON has no type for). Encoded once: every reader of a change is pushed the same bytes."""
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data, default=default) + b"\n\n"


class EventFeed(Generic[T]):
    """One reader's queue: ``push`` adds an item (a text, or what the feed's own loop turns into one),
    ``texts`` yields them as they come. ``limit`` items waiting: ``overflow`` decides (by default the
    new item is dropped). ``clock``/``sleep``: the time the keep-alive and the pacing go by."""

    limit = 256

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.clock, self.sleep = clock, sleep
        self.queue: deque[T] = deque()
        self.ready = asyncio.Event()
        self.quiet_since = clock()  # when the reader last waited for something to send
        self.keepalive_due = False
        self._ticker: asyncio.Task[None] | None = None

    def push(self, item: T) -> None:
        if len(self.queue) >= self.limit:
            kept = self.overflow(item)
            if kept is None:
                return
            item = kept
        self.queue.append(item)
        self.ready.set()

    def overflow(self, item: T) -> T | None:
        """``limit`` items wait and ``item`` comes: what to queue (after trimming ``queue``), or
        None for nothing."""
        return None

    async def texts(
        self,
        keepalive_s: float = KEEPALIVE_S,
        *,
        join: Callable[[Iterable[T]], T] | None = None,
        min_interval_s: float = 0.0,
    ) -> AsyncIterator[T | bytes]:
        """The queued items as they come, and ``KEEP_ALIVE`` after ``keepalive_s`` of quiet on the
        feed's clock. ``join``: everything queued since the last write as one item, and at most one
        write per ``min_interval_s``: the first item after a quiet spell goes out at once, and under
        a stream of them a reader costs one write per ``min_interval_s``."""
        last_write = -math.inf
        self._ticker = asyncio.ensure_future(self._keep_alive(keepalive_s))
        try:
            while True:
                self.quiet_since = self.clock()
                await self.ready.wait()
                if self.keepalive_due:
                    self.keepalive_due = False
                    if not self.queue:
                        self.ready.clear()
                        yield KEEP_ALIVE
                        continue
                if join is not None:
                    early = last_write + min_interval_s - self.clock()
                    if early > 0:
                        await self.sleep(early)  # what is queued meanwhile goes out with it
                    self.ready.clear()
                    if self.queue:
                        joined = join(self.queue)
                        self.queue.clear()
                        last_write = self.clock()
                        yield joined  # what is queued meanwhile sets ``ready`` again: the next write
                    continue
                self.ready.clear()
                while self.queue:
                    yield self.queue.popleft()
        finally:
            self.close()

    async def _keep_alive(self, keepalive_s: float) -> None:
        """Wake the reader for a keep-alive once it has waited ``keepalive_s`` with nothing to send."""
        while True:
            left = self.quiet_since + keepalive_s - self.clock()
            if left > 0:
                await self.sleep(left)
                continue
            self.quiet_since = self.clock()
            self.keepalive_due = True
            self.ready.set()

    def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
