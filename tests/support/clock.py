"""A clock that moves only when the test says so, for code that takes a ``clock`` callable (and a
``sleep``: its loops wait on this clock, not in real time), or timers like the event loop's
(``time`` and ``call_at``: callbacks run when the test moves time past them)."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable


class FakeTimer:
    def __init__(self, when: float, callback: Callable[[], object]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []  # (wake at, its sleeper)
        self._timers: list[tuple[float, int, FakeTimer]] = []  # a heap: (when, order set, timer)
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def call_at(self, when: float, callback: Callable[[], object], /) -> FakeTimer:
        """Run ``callback`` once the test has moved time to ``when`` (``advance``)."""
        timer = FakeTimer(when, callback)
        heapq.heappush(self._timers, (when, next(self._order), timer))
        return timer

    def due_times(self) -> list[float]:
        """When the timers still set will fire, soonest first."""
        return sorted(when for when, _, timer in self._timers if not timer.cancelled)

    async def sleep(self, seconds: float) -> None:
        """Wait until the test has moved time on by ``seconds`` (``advance``); at once for none."""
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        wake = asyncio.get_running_loop().create_future()
        self._sleepers.append((self.now + seconds, wake))
        await wake

    def sleeping(self) -> int:
        """How many are waiting on this clock."""
        return sum(1 for _, wake in self._sleepers if not wake.done())

    async def advance(self, seconds: float) -> None:
        """Move time on by ``seconds``, run every timer whose time came (in the order of their times,
        each at its own time, as the event loop would), wake every sleeper whose time came, and let
        the event loop run once."""
        end = self.now + seconds
        while self._timers and self._timers[0][0] <= end:
            when, _, timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                self.now = max(self.now, when)
                timer.callback()
        self.now = end
        due = [wake for at, wake in self._sleepers if at <= self.now]
        self._sleepers = [(at, wake) for at, wake in self._sleepers if at > self.now and not wake.done()]
        for wake in due:
            if not wake.done():
                wake.set_result(None)
        await asyncio.sleep(0)
