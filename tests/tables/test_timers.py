"""The actor's clock: a disconnected player's grace, and a decision timer that keeps moving later
with every move, both fire on time from the actor's one alarm."""

from __future__ import annotations

import asyncio
import random

from app.engine import Rules, decision
from app.tables.spec import DecisionLimits
from tests.tables.actors import ALICE, BOB, play_moves, seated_table


async def _until(check, timeout: float) -> float:
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not check():
        if loop.time() - started > timeout:
            raise AssertionError("not reached in time")
        await asyncio.sleep(0.01)
    return loop.time() - started


async def test_a_seat_left_without_a_connection_forfeits_after_the_grace() -> None:
    """On the real clock: the actor's one alarm wakes it when the grace of a player who went while
    the match waited for him is over (fake-clock tests of the limits: test_decision_limits.py)."""
    async with seated_table(Rules(timer=0), limits=DecisionLimits(disconnect_grace_s=0.3)) as (_, _, actor):
        assert actor.status == "playing" and actor.deadline is None
        for who, conn in ((ALICE, "c-alice"), (BOB, "c-bob")):
            actor.post({"op": "hello", "principal": who, "conn": conn, "last_version": -1})
        await _until(lambda: all(seat.connections for seat in actor.seats), 2)
        leader = actor.game.attacker
        actor.post({"op": "bye", "principal": (ALICE, BOB)[leader], "conn": ("c-alice", "c-bob")[leader]})
        waited = await _until(lambda: actor.status != "playing", 3)
        assert 0.2 <= waited < 2.0
        assert actor.results is not None
        assert actor.game is not None and actor.game.outcome is not None
        outcome = actor.game.outcome
        assert (outcome.forfeit, outcome.reason) == (leader, "disconnected")  # the one who went


async def test_the_decision_timer_fires_after_moves_pushed_it_later() -> None:
    async with seated_table(Rules(timer=1)) as (_, registry, actor):
        rng = random.Random(3)
        for _ in range(4):  # each move sets the deadline a second from now
            await asyncio.sleep(0.3)
            await play_moves(registry, actor.code, 1, rng)
        assert actor.status == "playing"
        waiting = decision(actor.game)
        waited = await _until(lambda: actor.status != "playing" or decision(actor.game) != waiting, 4)
        assert 0.7 <= waited < 2.5  # the last move's second, not the first move's
