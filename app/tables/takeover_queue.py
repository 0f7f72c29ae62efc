"""The tables a process is to take over, in order and a limited number at once (``TakeoverQueue``,
used by ``app.tables.leases``)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

# Tables nobody plays at (waiting, finished) taken over at most this many at a time, and only while
# no live one waits: in a rolling restart a peer took 120 of them over at 16 at once right after the
# 37 live ones, in the 4 s in which those tables' players reconnected and resent their moves, and the
# moves waited behind them (bench.soak: 1.4 s from a player's reconnect to his move's ack).
LATER_AT_ONCE = 2


class TakeoverQueue:
    """The tables to take over in this process: at most ``at_once`` at a time, in the order asked
    for, each code once while it waits or is being taken (a handover's and the supervisor's
    takeovers of one table would serve it twice). Tables asked for ``later`` (no match running at
    them) wait in a slow lane: taken only while no other waits, ``LATER_AT_ONCE`` at a time."""

    def __init__(self, at_once: int, take: Callable[[str, str], Awaitable[None]]) -> None:
        self.at_once, self.take = at_once, take
        self.waiting: OrderedDict[str, tuple[str, asyncio.Future[None]]] = OrderedDict()  # code -> (why, done)
        self.later: OrderedDict[str, tuple[str, asyncio.Future[None]]] = OrderedDict()  # the slow lane
        self.running: dict[str, asyncio.Task[None]] = {}

    def has(self, code: str) -> bool:
        return code in self.waiting or code in self.later or code in self.running

    def ask(self, code: str, why: str, *, later: bool = False) -> asyncio.Future[None] | None:
        """Take ``code`` over when its turn comes; the future is done when it was tried (None: it is
        asked for already; a table waiting in the slow lane moves up when asked for without ``later``)."""
        if not later and code in self.later:
            self.waiting[code] = self.later.pop(code)
            self._next()
            return None
        if self.has(code):
            return None
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        (self.later if later else self.waiting)[code] = (why, done)
        self._next()
        return done

    def _next(self) -> None:
        """Start what the limits allow: the first lane up to ``at_once`` running, then the slow lane
        up to ``LATER_AT_ONCE`` (which starts nothing while the first lane waits: it waits only when
        ``at_once`` are running)."""
        for lane, limit in ((self.waiting, self.at_once), (self.later, min(self.at_once, LATER_AT_ONCE))):
            while lane and len(self.running) < limit:
                code, (why, done) = lane.popitem(last=False)
                self.running[code] = asyncio.get_running_loop().create_task(self._run(code, why, done))

    async def _run(self, code: str, why: str, done: asyncio.Future[None]) -> None:
        try:
            await self.take(code, why)
        finally:
            self.running.pop(code, None)
            if not done.done():
                done.set_result(None)
            self._next()

    def clear(self) -> None:
        """Take nothing more over (those under way finish)."""
        for lane in (self.waiting, self.later):
            for _, done in lane.values():
                if not done.done():
                    done.set_result(None)
            lane.clear()

    def tasks(self) -> Sequence[asyncio.Task[None]]:
        return list(self.running.values())
