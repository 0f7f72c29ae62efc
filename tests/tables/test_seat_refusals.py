"""The table asks its hooks before anyone sits down (``MatchHooks.may_sit``): a refusal (here, two
related accounts at a staked table) leaves the seat free and the table unchanged; free tables do
not ask (docs/integrity.md)."""

from __future__ import annotations

import uuid

from app.broker import open_broker
from app.engine import Rules
from app.tables import commands as cmd
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.tables.actors import ALICE, BOB, CAROL


async def test_a_refused_seat_stays_free_and_others_may_take_it() -> None:
    name = f"memory://seats-{uuid.uuid4().hex}"
    hooks = MemoryHooks(balances={1: 100, 2: 100, 3: 100}, related={frozenset((1, 2))})
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, hooks, store=MemoryStore(name), supervise=False, transport=BrokerTransport)
        async with registry:
            staked = await registry.create(TableSpec(rules=Rules(timer=0, stake=10), creator=ALICE))
            for who in (ALICE, CAROL):  # at the table: a staked match starts once all are there and ready
                await registry.call(staked.code, cmd.Hello(), who, conn=f"{who.name}-1")
            assert (await registry.call(staked.code, cmd.Join(), ALICE))["type"] == "ack"
            version = staked.version
            refused = await registry.call(staked.code, cmd.Join(), BOB)
            assert refused["type"] == "error" and refused["code"] == "related_accounts"
            assert staked.version == version and staked.seats[1].kind == "empty" and staked.status == "waiting"
            assert (await registry.call(staked.code, cmd.Join(), CAROL))["type"] == "ack"
            assert (await registry.call(staked.code, cmd.Ready(), ALICE))["type"] == "ack"
            assert staked.status == "playing" and hooks.balances == {1: 90, 2: 100, 3: 90}
            free = await registry.create(TableSpec(rules=Rules(timer=0), creator=ALICE))
            assert (await registry.call(free.code, cmd.Join(), ALICE))["type"] == "ack"
            assert (await registry.call(free.code, cmd.Join(), BOB))["type"] == "ack"
            assert free.status == "playing"
