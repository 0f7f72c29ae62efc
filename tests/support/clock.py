"""A clock that moves only when the test says so, for code that takes a ``clock`` callable (and a
``sleep``: its loops wait on this clock, not in real time)."""

from __future__ import annotations

import asyncio


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []  # (wake at, its sleeper)

    def __call__(self) -> float:
        return self.now

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
        """Move time on by ``seconds``, wake every sleeper whose time came, and let the event loop
        run once."""
        self.now += seconds
        due = [wake for at, wake in self._sleepers if at <= self.now]
        self._sleepers = [(at, wake) for at, wake in self._sleepers if at > self.now and not wake.done()]
        for wake in due:
            if not wake.done():
                wake.set_result(None)
        await asyncio.sleep(0)
