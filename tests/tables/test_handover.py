"""A stopping process hands its tables to a peer at once (docs/operations.md, "Drain"): the table is
saved, its lease released and its code published on ``handover``; a peer takes it over at the same
version without waiting for the lease's TTL. Commands that reach the old owner after that are
refused ``moved`` (retryable: a REST call sends it again and gets the new owner's answer), and the
stopping process opens no new table."""

from __future__ import annotations

import asyncio
import random
import time
import uuid

import pytest

from app.broker import open_broker
from app.engine import Rules, state_to_json
from app.tables import commands as cmd
from app.tables.commands import Command
from app.tables.hooks import MemoryHooks
from app.tables.registry import LEASE_TTL_S, Draining, TableRegistry, lease_name
from app.tables.spec import TableSpec
from app.tables.store import MemoryStore
from tests.support.wait import eventually
from tests.tables.actors import ALICE, BOB, play_moves


async def test_a_stopping_process_hands_its_table_to_a_peer_at_once() -> None:
    name = f"memory://handover-{uuid.uuid4().hex}"
    hooks = MemoryHooks(balances={1: 500, 2: 500})
    rng = random.Random(3)
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(broker_a, hooks, store=MemoryStore(name), owner="proc-a")
        # No supervisor at the peer: only the handover signal can bring the table there.
        second = TableRegistry(broker_b, hooks, store=MemoryStore(name), owner="proc-b", supervise=False)
        async with first, second:
            spec = TableSpec(rules=Rules(stake=100, timer=30), creator=ALICE, bot_delay_ms=0)
            actor = await first.create(spec)
            for who in (ALICE, BOB):
                await first.call(spec.code, cmd.Hello(), who, conn=f"{who.name}-1")
                assert (await first.call(spec.code, cmd.Join(), who))["type"] == "ack"
            assert (await first.call(spec.code, cmd.Ready(), ALICE))["type"] == "ack"
            await play_moves(first, spec.code, 7, rng)
            version, game = actor.version, state_to_json(actor.game)
            remaining = actor.timers.deadline - actor.clock()

            started = time.monotonic()
            assert await first.hand_over() == [spec.code]
            assert first.draining and spec.code not in first.tables
            await eventually(lambda: spec.code in second.tables, 2.0, what="the peer took the table over")
            took_s = time.monotonic() - started
            assert took_s < LEASE_TTL_S / 2, f"taken over after {took_s:.2f} s: it waited for the lease"
            successor = second.tables[spec.code]
            assert successor.version == version and state_to_json(successor.game) == game
            assert successor.timers.deadline - successor.clock() >= remaining - 1.0  # its time, plus grace
            holder = await broker_b.lease_holder(lease_name(spec.code))
            assert holder is not None and holder.owner == "proc-b"

            # The old actor refuses what still reaches it, retryably; a REST call through the old
            # process's registry ends at the new owner.
            seen: list[str] = []
            actor.delivery.deliver = lambda outbox, everywhere=False: seen.extend(text for _, text in outbox)  # type: ignore[method-assign]
            actor.post(Command(cmd.Info(), principal=ALICE, reply="reply:test"))
            assert any('"moved"' in text for text in seen), seen
            reply = await first.call(spec.code, cmd.Info(), ALICE)
            assert reply["type"] == "info" and reply["table"]["version"] == version
            await play_moves(second, spec.code, 3, rng)
            assert successor.version > version

            # The stopping process opens nothing new, and takes nothing over.
            with pytest.raises(Draining):
                await first.create(TableSpec(rules=Rules(), creator=BOB))
            await first.adopt_orphans()
            assert first.tables == {}


async def test_an_in_flight_command_is_answered_before_the_table_goes() -> None:
    """A command queued before the handover is handled and answered by the old owner (its effect is
    in the saved table); none is lost or applied twice."""
    name = f"memory://inflight-{uuid.uuid4().hex}"
    hooks = MemoryHooks()
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(broker_a, hooks, store=MemoryStore(name), owner="proc-a")
        second = TableRegistry(broker_b, hooks, store=MemoryStore(name), owner="proc-b")
        async with first, second:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            await first.create(spec)
            joining = asyncio.create_task(first.call(spec.code, cmd.Join(), ALICE))
            await asyncio.sleep(0)  # published: in the table's inbox before the handover begins
            handing = asyncio.create_task(first.hand_over())
            assert (await joining)["type"] == "ack"
            await handing
            await eventually(lambda: spec.code in second.tables, 2.0, what="the peer took the table over")
            seats = [seat.principal for seat in second.tables[spec.code].seats if seat.principal is not None]
            assert [p.key for p in seats] == [ALICE.key]
