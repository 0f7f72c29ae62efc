"""The actor's clock: a disconnected player's grace at a table without a timer, and a decision
timer that keeps moving later with every move, both fire on time from the actor's one alarm."""

from __future__ import annotations

import asyncio
import random
import uuid

from app.broker import open_broker
from app.engine import Rules, decision
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore
from tests.tables.test_takeover import _play

ALICE = Principal("a:1", "alice", 1)
BOB = Principal("a:2", "bob", 2)


async def _until(check, timeout: float) -> float:
    loop = asyncio.get_running_loop()
    started = loop.time()
    while not check():
        if loop.time() - started > timeout:
            raise AssertionError("not reached in time")
        await asyncio.sleep(0.01)
    return loop.time() - started


async def test_a_seat_left_without_a_connection_forfeits_after_the_grace(monkeypatch) -> None:
    monkeypatch.setattr("app.tables.actor.DISCONNECT_GRACE_S", 0.3)
    name = f"memory://timers-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, MemoryHooks(), store=MemoryStore(name), supervise=False)
        async with registry:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            await registry.call(spec.code, "join", ALICE)
            await registry.call(spec.code, "join", BOB)
            assert actor.status == "playing" and actor.deadline is None
            for who, conn in ((ALICE, "c-alice"), (BOB, "c-bob")):
                actor.post({"op": "hello", "principal": who, "conn": conn, "last_version": -1})
            await _until(lambda: all(seat.connections for seat in actor.seats), 2)
            actor.post({"op": "bye", "principal": ALICE, "conn": "c-alice"})
            waited = await _until(lambda: actor.status != "playing", 3)
            assert 0.2 <= waited < 2.0
            assert actor.results is not None
            assert actor.game is not None and actor.game.outcome is not None
            outcome = actor.game.outcome
            assert (outcome.forfeit, outcome.reason) == (0, "disconnected")  # alice, not bob


async def test_the_decision_timer_fires_after_moves_pushed_it_later(monkeypatch) -> None:
    name = f"memory://timers-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, MemoryHooks(), store=MemoryStore(name), supervise=False)
        async with registry:
            spec = TableSpec(rules=Rules(timer=1), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            await registry.call(spec.code, "join", ALICE)
            await registry.call(spec.code, "join", BOB)
            rng = random.Random(3)
            for _ in range(4):  # each move sets the deadline a second from now
                await asyncio.sleep(0.3)
                await _play(registry, spec.code, 1, rng)
            assert actor.status == "playing"
            waiting = decision(actor.game)
            waited = await _until(lambda: actor.status != "playing" or decision(actor.game) != waiting, 4)
            assert 0.7 <= waited < 2.5  # the last move's second, not the first move's
