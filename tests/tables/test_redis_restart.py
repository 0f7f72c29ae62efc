"""Redis with an append-only file, as ``docker-compose.yml`` runs it: Redis and a table's owner go
down together mid-match, Redis comes back from its file, and another process takes the table over
at the same version, with the same log, and plays on."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from app.broker import LeaseHolder, open_broker
from app.engine import Rules
from app.store import open_store
from app.tables import commands as cmd
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry, lease_name
from app.tables.spec import TableSpec
from app.transport.table_transport import BrokerTransport
from tests.broker.conftest import OwnRedis, redis_server_binary, running
from tests.support.wait import eventually
from tests.tables.actors import ALICE, BOB, play_moves

pytestmark = pytest.mark.redis


async def test_a_table_comes_back_at_its_version_after_redis_restarts_from_its_append_only_file(
    tmp_path: Path,
) -> None:
    server = OwnRedis(
        redis_server_binary(), extra_args=("--appendonly", "yes", "--appendfsync", "everysec", "--dir", str(tmp_path))
    )
    hooks = MemoryHooks()
    rng = random.Random(7)
    with running(server):
        store = open_store(server.url)
        async with open_broker(server.url) as broker:
            first = TableRegistry(
                broker, hooks, store=store, owner="proc-a", supervise=False, transport=BrokerTransport
            )
            await first.__aenter__()
            actor = await first.create(TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0))
            code = actor.code
            await first.call(code, cmd.Join(), ALICE)
            await first.call(code, cmd.Join(), BOB)
            assert await play_moves(first, code, 12, rng) == 12
            version, log, token = actor.version, list(actor.log), actor.recorder.token
            # Redis goes down (SIGTERM), and the owner with it: it never writes again.
            await asyncio.to_thread(server.stop)
            await first.close(release=False)
        await store.close()
        assert (tmp_path / "appendonlydir").is_dir()

        await asyncio.to_thread(server.start)  # the same port and directory: it reads the file back
        store = open_store(server.url)
        try:
            async with (
                open_broker(server.url) as broker,
                TableRegistry(
                    broker, hooks, store=store, owner="proc-b", supervise=False, transport=BrokerTransport
                ) as second,
            ):
                # The dead owner's lease came back too, and runs out as it would have.
                assert await broker.lease_holder(lease_name(code)) == LeaseHolder("proc-a", token)

                async def lapsed() -> bool:
                    return await broker.lease_holder(lease_name(code)) is None

                await eventually(lapsed, timeout=10, what="the dead owner's lease runs out")
                taken = await second.take_over(code)
                assert taken is not None
                assert taken.version == version and taken.log == log and taken.status == "playing"
                assert taken.recorder.token > token
                assert await play_moves(second, code, 4, rng) > 0  # and the match goes on
        finally:
            await store.close()
