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

import orjson
import pytest

from app.broker import open_broker
from app.broker.base import Message
from app.engine import Rules, state_to_json
from app.tables import commands as cmd
from app.tables.commands import Command
from app.tables.hooks import MemoryHooks
from app.tables.leases import HANDOVER
from app.tables.registry import Draining, LeaseSettings, TableLimits, TableRegistry, lease_name
from app.tables.spec import TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.support.wait import eventually
from tests.tables.actors import ALICE, BOB, HeldTakeovers, play_moves, two_processes


async def test_a_stopping_process_hands_its_table_to_a_peer_at_once() -> None:
    name = f"memory://handover-{uuid.uuid4().hex}"
    hooks = MemoryHooks(balances={1: 500, 2: 500})
    rng = random.Random(3)
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(broker_a, hooks, store=MemoryStore(name), owner="proc-a", transport=BrokerTransport)
        # No supervisor at the peer: only the handover signal can bring the table there.
        second = TableRegistry(
            broker_b, hooks, store=MemoryStore(name), owner="proc-b", supervise=False, transport=BrokerTransport
        )
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
            assert took_s < LeaseSettings().lease_ttl_s / 2, f"taken over after {took_s:.2f} s: it waited for the lease"
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
        first = TableRegistry(broker_a, hooks, store=MemoryStore(name), owner="proc-a", transport=BrokerTransport)
        second = TableRegistry(broker_b, hooks, store=MemoryStore(name), owner="proc-b", transport=BrokerTransport)
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


# ---------------------------------------------------------------------------- order and batches

MANY = TableLimits(
    waiting_per_account=100,
    waiting_per_ip=100,
    live_per_account=100,
    live_per_ip=100,
    opened_per_account=1000,
    opened_per_ip=1000,
)


async def test_the_live_tables_are_handed_first_in_batches_each_announced_as_it_goes() -> None:
    """20 live tables (19 playing, one staked table in its ready check) and 5 others (waiting or
    finished), the others opened first: the live ones are handed in batches of 16 (16, then 4), the
    others after them; each batch is named on ``handover`` as soon as it is handed, while the
    later tables are still this process's."""
    name = f"memory://batches-{uuid.uuid4().hex}"
    hooks = MemoryHooks(balances={1: 500, 2: 500})
    async with open_broker(name) as broker:
        first = TableRegistry(
            broker,
            hooks,
            store=MemoryStore(name),
            owner="proc-a",
            supervise=False,
            table_limits=MANY,
            transport=BrokerTransport,
        )
        async with first:
            rest = [await first.create(TableSpec(rules=Rules(timer=0), creator=ALICE)) for _ in range(3)]
            for _ in range(2):
                ended = await first.create(TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0))
                for who in (ALICE, BOB):
                    await first.call(ended.code, cmd.Join(), who)
                await first.call(ended.code, cmd.Leave(), BOB)  # a forfeit ends it
                assert ended.status == "finished"
                rest.append(ended)
            staked = await first.create(TableSpec(rules=Rules(stake=100, timer=30), creator=BOB, bot_delay_ms=0))
            for who in (ALICE, BOB):
                await first.call(staked.code, cmd.Hello(), who, conn=f"{who.name}-1")
                assert (await first.call(staked.code, cmd.Join(), who))["type"] == "ack"
            assert staked.status == "waiting" and staked.seating.ready is not None  # its ready check
            live = [staked]
            for _ in range(19):
                playing = await first.create(TableSpec(rules=Rules(timer=0), creator=BOB, bot_delay_ms=0))
                for who in (ALICE, BOB):
                    await first.call(playing.code, cmd.Join(), who)
                assert playing.status == "playing"
                live.append(playing)

            announced: list[tuple[list[str], set[str]]] = []  # each batch, and the tables still here then
            publish = broker.publish

            async def spy(channel: str, message: bytes | str) -> None:
                if channel == HANDOVER:
                    announced.append((orjson.loads(message)["codes"], set(first.tables)))
                await publish(channel, message)

            broker.publish = spy  # type: ignore[method-assign]
            handed = await first.hand_over()

    batches = [codes for codes, _ in announced]
    assert [len(codes) for codes in batches] == [16, 4, 5]
    assert set(batches[0] + batches[1]) == {actor.code for actor in live}
    assert set(batches[2]) == {actor.code for actor in rest}
    assert handed == batches[0] + batches[1] + batches[2]
    everything = {actor.code for actor in live + rest}
    for number, (_, still_here) in enumerate(announced):
        done = {code for codes in batches[: number + 1] for code in codes}
        assert still_here == everything - done  # named as soon as handed, before the next batch


async def test_a_peer_takes_handed_tables_over_sixteen_at_once_in_the_order_named() -> None:
    """40 tables named on ``handover``: the receiver takes the first 16 over at once, the others
    as those end, in the order named. Its supervisor shares that limit: a table it finds lapsed
    (so are the handed ones, their leases released) waits its turn behind them, and it does not
    take a handed table a second time."""
    async with two_processes() as (_, second):
        held = HeldTakeovers()
        started = held.started
        second.leases.take_over = held.take  # type: ignore[method-assign,assignment]
        handed = [f"handed{number:02d}" for number in range(40)]
        second.leases.on_handover(Message(HANDOVER, orjson.dumps({"from": "proc-a", "codes": handed})))
        for _ in range(20):
            await asyncio.sleep(0)
        assert started == handed[:16]

        async def codes() -> list[str]:  # what the store holds: the handed tables and a dead one's
            return ["lapsed", *reversed(handed)]

        second.store.codes = codes  # type: ignore[method-assign]
        sweep = asyncio.create_task(second.adopt_orphans())
        for _ in range(20):
            await asyncio.sleep(0)
        assert started == handed[:16] and not sweep.done()  # nothing beyond the limit
        held.go_on.set()
        await asyncio.wait_for(sweep, 5)
        assert started == [*handed, "lapsed"]  # each once, in the order named; the lapsed one after
        assert held.most == 16
