"""The actor's clock: a disconnected player's grace, and a decision timer that keeps moving later
with every move, both fire on time from the actor's one alarm."""

from __future__ import annotations

import asyncio
import random

from app.engine import Rules, decision
from app.tables import commands as cmd
from app.tables.commands import Command
from app.tables.spec import DecisionLimits
from tests.support.wait import eventually
from tests.tables.actors import ALICE, BOB, FakeClock, advance, play_moves, seated_table


async def test_a_seat_left_without_a_connection_forfeits_after_the_grace() -> None:
    """On the real clock: the actor's one alarm wakes it when the grace of a player who went while
    the match waited for him is over (fake-clock tests of the limits: test_decision_limits.py)."""
    async with seated_table(Rules(timer=0), limits=DecisionLimits(disconnect_grace_s=0.3)) as (_, _, actor):
        assert actor.status == "playing" and actor.timers.deadline is None
        for who, conn in ((ALICE, "c-alice"), (BOB, "c-bob")):
            actor.post(Command(cmd.Hello(last_version=-1), principal=who, conn=conn))
        await eventually(lambda: all(seat.connections for seat in actor.seats), 2, "both are connected")
        leader = actor.game.attacker
        actor.post(Command(cmd.Bye(), principal=(ALICE, BOB)[leader], conn=("c-alice", "c-bob")[leader]))
        gone_at = asyncio.get_running_loop().time()
        await eventually(lambda: actor.status != "playing", 3, "the grace is over")
        waited = asyncio.get_running_loop().time() - gone_at
        assert 0.2 <= waited < 2.0
        assert actor.results is not None
        assert actor.game is not None and actor.game.outcome is not None
        outcome = actor.game.outcome
        assert (outcome.forfeit, outcome.reason) == (leader, "disconnected")  # the one who went


async def test_the_decision_timer_fires_after_moves_pushed_it_later() -> None:
    """On the actor's clock: each move gives the next decision its full second."""
    clock = FakeClock()
    async with seated_table(Rules(timer=1), clock=clock) as (_, registry, actor):
        rng = random.Random(3)
        for _ in range(4):  # each move sets the deadline a second from now
            await advance(registry, actor, clock, 0.3)
            await play_moves(registry, actor.code, 1, rng)
        assert actor.status == "playing"
        waiting = decision(actor.game)
        await advance(registry, actor, clock, 0.95)  # the first moves' seconds are long over
        assert actor.status == "playing" and decision(actor.game) == waiting
        await advance(registry, actor, clock, 0.1)  # the last move's second is over
        assert actor.status != "playing" or decision(actor.game) != waiting
