"""The garbage collector's schedule (``app/collector.py``): no automatic full collection however
much the old generation grows, and the full collection on the timer finds the cycles that reached
the old generation."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator

import pytest

from app import collector
from tests.support.clock import FakeClock


@pytest.fixture
def settled() -> Iterator[None]:
    thresholds = gc.get_threshold()
    collector.settle()
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def old_garbage_cycle() -> weakref.ref[Node]:
    """A reference cycle that lived long enough to reach the old generation, then became garbage."""
    a, b = Node(), Node()
    a.other, b.other = b, a
    gc.collect(1)  # survives the young and middle generations: now old
    gc.collect(1)
    return weakref.ref(a)


def test_the_old_generation_grows_without_a_full_collection(settled: None) -> None:
    cycle = old_garbage_cycle()
    full_before = gc.get_stats()[2]["collections"]
    middle_before = gc.get_stats()[1]["collections"]
    kept = [[i] for i in range(400_000)]  # long-lived objects: the old generation more than doubles
    # The middle generation ran often (every 20th young collection, as before, would be twice), but
    # no full collection came (CPython's own schedule would have run several).
    assert gc.get_stats()[1]["collections"] - middle_before >= 5
    assert gc.get_stats()[2]["collections"] == full_before
    assert cycle() is not None  # so the old cycle is still there
    assert collector.collect_old_garbage() >= 2
    assert cycle() is None
    del kept


async def test_the_timer_runs_the_full_collections(settled: None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="durak.collector")
    clock = FakeClock()
    cycle = old_garbage_cycle()
    task = asyncio.create_task(collector.collect_old_garbage_forever(3600.0, clock.sleep))
    try:
        await clock.advance(0)
        await clock.advance(3599.0)
        assert cycle() is not None and "full garbage collection:" not in caplog.text  # not before its time
        await clock.advance(1.0)
        assert cycle() is None
        assert caplog.text.count("full garbage collection:") == 1
        assert clock.sleeping() == 1  # waiting for the next hour
    finally:
        task.cancel()
