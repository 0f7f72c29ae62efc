"""Failed log-ins per account name: after ``limit`` failures within ``window_s`` the name is locked
until the oldest of them is ``window_s`` old. A success clears the name's failures.

Kept in each server process (with N processes a guesser gets N times the attempts before all of
them lock); names are compared case-insensitively, as accounts are.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable

MAX_NAMES = 100_000  # a flood of made-up names cannot grow the table without bound


class LoginThrottle:
    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, name: str) -> deque[float] | None:
        key = name.casefold()
        failures = self._failures.get(key)
        if failures is None:
            return None
        horizon = self.clock() - self.window_s
        while failures and failures[0] <= horizon:
            failures.popleft()
        if not failures:
            del self._failures[key]
            return None
        return failures

    def retry_after(self, name: str) -> float | None:
        """Seconds until ``name`` may try again, or None when it may try now."""
        failures = self._recent(name)
        if failures is None or len(failures) < self.limit:
            return None
        return max(0.0, failures[0] + self.window_s - self.clock())

    def failed(self, name: str) -> None:
        failures = self._recent(name)
        if failures is None:
            if len(self._failures) >= MAX_NAMES:
                self._failures.pop(next(iter(self._failures)))
            failures = self._failures[name.casefold()] = deque()
        failures.append(self.clock())

    def succeeded(self, name: str) -> None:
        self._failures.pop(name.casefold(), None)
