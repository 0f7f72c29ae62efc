"""A clock that moves only when the test says so, for code that takes a ``clock`` callable."""

from __future__ import annotations

import asyncio


class FakeClock:
    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    async def advance(self, seconds: float) -> None:
        """Move time on by ``seconds`` and let the event loop run once."""
        self.now += seconds
        await asyncio.sleep(0)
