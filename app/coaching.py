"""Running the coach (``app.bots.coach``) on a stored match, off the event loop.

``seat_timeline`` replays the match as one seat lived it (its views and the events redacted for it);
the coach's decisions are independent jobs (each rebuilds the seat's memory up to its moment), so a
match spreads over a process pool and its progress is the number of jobs done. An analysis has at
most as many jobs in the pool as it has workers, so that one cancelled (``Abandoned``, raised by its
``progress``) stops after the jobs already running, and analyses take turns.

The pool's worker processes go with the server: ``shutdown_pool`` (the app's shutdown) ends them,
whatever they were computing, and a worker whose server died without shutting down (killed) notices
within a second and exits.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
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


PARENT_CHECK_S = 1.0  # how often a worker looks whether the server that started it still runs


class Abandoned(Exception):
    """Raised by an analysis's ``progress`` to stop it (nobody asks for it any more)."""


def pool(workers: int = 1) -> ProcessPoolExecutor:
    """The process pool the server analyses in (made on first use; ``spawn``: no forked event loop)."""
    global _pool
    if _pool is None:
        _pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_start,
            initargs=(os.getpid(),),
        )
    return _pool


def shutdown_pool() -> None:
    """Stop the pool: queued jobs are dropped and the worker processes ended, running jobs included
    (an analysis cut short is started again by its next request)."""
    global _pool
    if _pool is None:
        return
    workers = list(_workers(_pool))
    _pool.shutdown(wait=False, cancel_futures=True)
    _pool = None
    for process in workers:
        if process.is_alive():
            process.terminate()
    for process in workers:
        process.join(timeout=5)
        if process.is_alive():
            process.kill()


def _workers(executor: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    processes: dict[int, multiprocessing.process.BaseProcess] = getattr(executor, "_processes", None) or {}
    return list(processes.values())


def _worker_start(server_pid: int) -> None:
    """In each worker: leave Ctrl-C to the server (it ends the workers), and exit when the server is
    gone without having done so (its process killed: the worker is then another's child)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(server_pid,), name="coach-parent-watch", daemon=True).start()


def _exit_with(server_pid: int) -> None:
    while os.getppid() == server_pid:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


async def analyse_match(
    match: Json,
    seat: int,
    *,
    executor: Executor | None = None,
    worlds: int = DEFAULT_WORLDS,
    progress: Callable[[int, int], Any] | None = None,
    parallel: int = 1,
) -> Json:
    """The coach's report on ``seat``, computed in ``executor`` (the server's pool by default), at most
    ``parallel`` decisions at a time. ``progress(done, total)`` is called (and awaited, if it returns
    an awaitable) as jobs finish; raising ``Abandoned`` there stops the analysis (jobs not started
    are never run)."""
    loop = asyncio.get_running_loop()
    runner = executor if executor is not None else pool()
    timeline = await loop.run_in_executor(runner, timeline_of, match, seat)
    total = decision_count(timeline)
    results: list[Json | None] = [None] * total
    running: dict[asyncio.Future[Json], int] = {}
    started = done = 0
    try:
        while done < total:
            while started < total and len(running) < max(1, parallel):
                job = loop.run_in_executor(runner, _decision_job, timeline, seat, started, worlds)
                running[job] = started
                started += 1
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for job in finished:
                results[running.pop(job)] = job.result()
                done += 1
            if progress is not None:
                answer = progress(done, total)
                if asyncio.iscoroutine(answer):
                    await answer
    finally:
        for job in running:
            job.cancel()
    return report(seat, worlds, [result for result in results if result is not None])


def _decision_job(timeline: list[Json], seat: int, number: int, worlds: int) -> Json:
    return analyse_decision(timeline, seat, number, worlds=worlds)
