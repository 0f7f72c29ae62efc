"""Every match's real start is recorded and counts toward the rated minimum, free matches as staked
ones (docs/integrity.md, "Matches that count"): a table on ``DbHooks`` with a wall clock moved by
hand, on SQLite and PostgreSQL."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta

from sqlalchemy import func, select

from app.broker import open_broker
from app.db.models import Match, RatingChange
from app.db.session import Database
from app.db.table_hooks import DbHooks
from app.engine import Rules, decision, legal_actions
from app.integrity_policy import IntegrityRules
from app.tables import commands as cmd
from app.tables.actor import TableActor
from app.tables.registry import TableRegistry, lease_name
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.db.helpers import make_player
from tests.db.test_integrity import Clock
from tests.support.wait import eventually


@asynccontextmanager
async def table_of(
    db: Database, hooks: DbHooks, stake: int
) -> AsyncIterator[tuple[TableRegistry, TableActor, list[Principal]]]:
    """A two-seat table on ``hooks`` with two fresh accounts seated: the match has started."""
    ids = [await make_player(db), await make_player(db)]
    people = [Principal(f"a:{i}", f"P{i}", i) for i in ids]
    name = f"memory://start-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, hooks, store=MemoryStore(name), supervise=False, transport=BrokerTransport)
        async with registry:
            actor = await registry.create(TableSpec(Rules(deck=24, timer=0, stake=stake), people[0], bot_delay_ms=0))
            for person in people:  # at the table (a staked match starts once both are there and ready)
                await registry.call(actor.code, cmd.Hello(), person, conn=f"conn-{person.key}")
                reply = await registry.call(actor.code, cmd.Join(), person)
                assert reply["type"] == "ack", reply
            if stake > 0:
                assert (await registry.call(actor.code, cmd.Ready(), people[0]))["type"] == "ack"
            yield registry, actor, people


async def play_bouts(registry: TableRegistry, actor: TableActor, people: list[Principal], bouts: int) -> None:
    """Leads, covers and throw-ins first (a bout opens with each lead) until ``bouts`` bouts opened."""
    leads = 0
    while actor.status == "playing" and actor.game is not None:
        seat = decision(actor.game)["seats"][0]
        options = legal_actions(actor.game, seat)
        action = next((a for a in options if a.kind in ("cover", "lead", "throw_in")), options[0])
        if action.kind == "lead":
            if leads == bouts:
                return
            leads += 1
        reply = await registry.call(actor.code, cmd.move_of(action), people[seat], id=uuid.uuid4().hex)
        assert reply["type"] == "ack", reply


async def finished_row(db: Database, match_id: str) -> Match:
    async def found() -> Match | None:
        async with db.session() as session:
            return await session.get(Match, match_id)

    await eventually(found, 10, f"match {match_id} is recorded")
    row = await found()
    assert row is not None
    return row


async def rating_rows(db: Database, match_id: str) -> int:
    async with db.session() as session:
        query = select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
        return int(await session.scalar(query) or 0)


async def test_a_short_free_match_is_recorded_with_its_start_and_not_rated_like_a_staked_one(db: Database) -> None:
    """Three bouts, then the loser leaves: after 5 s that is under the 60 s minimum, so not rated,
    free or staked; after 61 s it is rated, free or staked. The free match's ``created_at`` is its
    deal, not its end."""
    for stake, seconds, rated in ((0, 5, False), (1, 5, False), (0, 61, True), (1, 61, True)):
        clock = Clock()
        hooks = DbHooks(db, IntegrityRules(related_same_ip=False), now=clock)
        async with table_of(db, hooks, stake) as (registry, actor, people):
            dealt_at = clock()
            await play_bouts(registry, actor, people, 3)
            clock.advance(seconds)
            match_id = actor.match_id
            assert match_id is not None
            assert (await registry.call(actor.code, cmd.Leave(), people[1]))["type"] == "ack"
            row = await finished_row(db, match_id)
        assert row.created_at == dealt_at and row.finished_at - row.created_at == timedelta(seconds=seconds)
        assert await rating_rows(db, match_id) == (2 if rated else 0), (stake, seconds)


async def test_the_start_of_a_free_match_survives_a_takeover(db: Database) -> None:
    """The process that takes a running free match over knows when it was dealt (the table's record
    keeps it), so a match of a few seconds is still too short to rate there."""
    ids = [await make_player(db), await make_player(db)]
    people = [Principal(f"a:{i}", f"P{i}", i) for i in ids]
    rules = IntegrityRules(related_same_ip=False)
    name = f"memory://takeover-{uuid.uuid4().hex}"
    dealt = time.time()
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(
            broker_a, DbHooks(db, rules), store=MemoryStore(name), owner="a", supervise=False, transport=BrokerTransport
        )
        second = TableRegistry(
            broker_b, DbHooks(db, rules), store=MemoryStore(name), owner="b", supervise=False, transport=BrokerTransport
        )
        async with second:
            await first.__aenter__()
            actor = await first.create(TableSpec(Rules(deck=24, timer=0), people[0], bot_delay_ms=0))
            for person in people:
                assert (await first.call(actor.code, cmd.Join(), person))["type"] == "ack"
            await play_bouts(first, actor, people, 3)
            match_id = actor.match_id
            assert match_id is not None
            await first.close(release=False)  # the owner dies
            await first.broker.release_lease(lease_name(actor.code), "a", actor.recorder.token)
            successor = await second.take_over(actor.code)
            assert successor is not None and successor.match_id == match_id
            assert (await second.call(actor.code, cmd.Leave(), people[1]))["type"] == "ack"
            row = await finished_row(db, match_id)
    assert await rating_rows(db, match_id) == 0  # three bouts in a few seconds: too short
    assert dealt <= row.created_at.timestamp() < row.finished_at.timestamp()
