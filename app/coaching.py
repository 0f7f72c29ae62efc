"""Running the coach (``app.bots.coach``) on a stored match, off the event loop.

``seat_timeline`` replays the match as one seat lived it (its views and the events redacted for it);
the coach's decisions are independent jobs (each rebuilds the seat's memory up to its moment), so a
match spreads over a process pool and its progress is the number of jobs done.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any

from app.bots.coach import DEFAULT_WORLDS, analyse_decision, decision_count, report
from app.engine import Card
from app.engine.replay import seat_timeline

Json = dict[str, Any]

_pool: ProcessPoolExecutor | None = None


def timeline_of(match: Json, seat: int) -> list[Json]:
    """``match``: rules, seed, dealer, actions and (for a provably fair deal) the dealt deck."""
    order = match.get("deck")
    deck = [Card.parse(text) for text in order] if order else None
    return seat_timeline(match["rules"], match["seed"], match["dealer"], match["actions"], seat, deck)


def pool(workers: int = 1) -> ProcessPoolExecutor:
    """The process pool the server analyses in (made on first use; ``spawn``: no forked event loop)."""
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    return _pool


def shutdown_pool() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


async def analyse_match(
    match: Json,
    seat: int,
    *,
    executor: Executor | None = None,
    worlds: int = DEFAULT_WORLDS,
    progress: Callable[[int, int], Any] | None = None,
) -> Json:
    """The coach's report on ``seat``, computed in ``executor`` (the server's pool by default).
    ``progress(done, total)`` is called (and awaited, if it returns an awaitable) as jobs finish."""
    loop = asyncio.get_running_loop()
    runner = executor if executor is not None else pool()
    timeline = await loop.run_in_executor(runner, timeline_of, match, seat)
    total = decision_count(timeline)
    futures = [loop.run_in_executor(runner, _decision_job, timeline, seat, number, worlds) for number in range(total)]
    for done, future in enumerate(asyncio.as_completed(futures), start=1):
        await future
        if progress is not None:
            result = progress(done, total)
            if asyncio.iscoroutine(result):
                await result
    return report(seat, worlds, [f.result() for f in futures])


def _decision_job(timeline: list[Json], seat: int, number: int, worlds: int) -> Json:
    return analyse_decision(timeline, seat, number, worlds=worlds)
