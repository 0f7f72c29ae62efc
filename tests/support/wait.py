"""Waiting for something to become true, instead of sleeping a guessed time and then asserting."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable


async def eventually(
    predicate: Callable[[], bool | Awaitable[bool]], timeout: float = 5.0, what: str = "the condition holds"
) -> None:
    """Return as soon as ``predicate()`` (a plain or async function) is true; fail with ``what`` if
    it is still false after ``timeout`` seconds. Checks at once, then every few milliseconds."""
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
        await asyncio.sleep(0.005)
