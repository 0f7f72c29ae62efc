"""The rate limit of a table socket's messages: a token bucket (``DURAK_WS_BURST`` at once,
``DURAK_WS_RATE_PER_S`` sustained) that each new table version the connection receives refills by one."""

from __future__ import annotations

import time
from collections.abc import Callable

BURST = 20
RATE_PER_S = 10.0


class TokenBucket:
    """``burst`` messages at once, ``rate`` per second sustained; every new table version the
    connection receives gives one back (:meth:`credit`), so a client that answers each update at
    once is never limited however fast the match goes: only messages nobody asked for count."""

    def __init__(
        self, burst: int = BURST, rate: float = RATE_PER_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.rate = rate
        self.clock = clock
        self.stamp = clock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self) -> float:
        """Take a token: 0.0, or (none left) the seconds until there is one."""
        self._refill()
        if self.tokens < 1:
            return (1 - self.tokens) / self.rate
        self.tokens -= 1
        return 0.0

    def credit(self) -> None:
        """One token back, up to the burst: the table moved on, and an answer to that is due."""
        if self.tokens >= self.capacity:
            return  # full already (a refill would change nothing: it stops at the burst)
        self._refill()
        self.tokens = min(self.capacity, self.tokens + 1)
