"""The arena runner's loop (app/tournaments/runner.py): a pass every ``tick_s`` on its clock, and
at once when a match ends; nothing in between (shown on the fake clock, with no real sleep)."""

from __future__ import annotations

import asyncio
from typing import Any

from app.config import TournamentSettings
from app.tournaments.runner import ArenaRunner
from tests.support.clock import FakeClock
from tests.support.wait import eventually


async def test_a_pass_every_tick_and_at_once_when_woken() -> None:
    clock = FakeClock()
    runner = ArenaRunner(None, None, TournamentSettings(tick_s=1.0), sleep=clock.sleep)  # type: ignore[arg-type]
    passes: list[float] = []

    async def step() -> None:
        passes.append(clock.now)

    runner.step = step  # type: ignore[method-assign]
    task: asyncio.Task[Any] = asyncio.create_task(runner.run_forever())
    try:
        await eventually(lambda: clock.sleeping() == 1, what="the first pass is done")
        assert passes == [1000.0]
        await clock.advance(0.9)
        assert passes == [1000.0] and clock.sleeping() == 1  # not before its tick
        await clock.advance(0.1)
        await eventually(lambda: len(passes) == 2 and clock.sleeping() == 1, what="the second pass")
        runner.wake.set()  # a match ended
        await eventually(lambda: len(passes) == 3 and clock.sleeping() == 1, what="the pass of the wake")
        assert passes == [1000.0, 1001.0, 1001.0]  # woken with no time gone; its old tick was dropped
    finally:
        task.cancel()
