"""Waiting for something to become true, instead of sleeping a guessed time and then asserting."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable


async def eventually(
    predicate: Callable[[], bool | Awaitable[bool]],
    timeout: float = 5.0,
    what: str = "the condition holds",
    every: float = 0.005,
) -> None:
    """Return as soon as ``predicate()`` (a plain or async function) is true; fail with ``what`` if
    it is still false after ``timeout`` seconds. Checks at once, then every ``every`` seconds (a
    predicate that asks a server over HTTP may want a longer pause than the default few ms)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting until {what}")
        await asyncio.sleep(every)


def wait_until(
    predicate: Callable[[], bool], timeout: float = 5.0, what: str = "the condition holds", every: float = 0.005
) -> None:
    """``eventually`` for synchronous tests (a TestClient whose server settles matches in the
    background, a server process coming up): return as soon as ``predicate()`` is true, fail with
    ``what`` after ``timeout``; checks every ``every`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting until {what}")
        time.sleep(every)


async def loop_turns(count: int = 3) -> None:
    """Let the event loop go round ``count`` times: every task that is ready runs as far as it can
    without time or I/O. For checking that something waiting on the test's own event has not moved."""
    for _ in range(count):
        await asyncio.sleep(0)
