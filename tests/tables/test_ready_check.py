"""Nobody is pulled into a staked match he is not there for (RULES §8, docs/protocol.md "Ready
check"): a staked match starts only when every human seated is connected and has confirmed, the
check frees the seats of those who have not when it runs out, and a player away from a waiting
table too long loses his seat. On the table's own clock (a fake one), through the registry."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from app.broker import open_broker
from app.engine import Rules
from app.tables import commands as cmd
from app.tables.actor import TableActor
from app.tables.commands import Command
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry, lease_name
from app.tables.spec import DecisionLimits, Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.tables.actors import ALICE, BOB, CAROL, FakeClock, two_processes

LIMITS = DecisionLimits(ready_check_s=30, waiting_seat_away_s=180)


@asynccontextmanager
async def table(stake: int, seats: int = 2) -> AsyncIterator[tuple[TableRegistry, TableActor, MemoryHooks, FakeClock]]:
    """A table opened by alice (nobody seated yet) on a fake clock; everyone holds 1000 coins."""
    name = f"memory://ready-{uuid.uuid4().hex}"
    hooks = MemoryHooks(balances={1: 1000, 2: 1000, 3: 1000})
    clock = FakeClock()
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker, hooks, store=MemoryStore(name), supervise=False, limits=LIMITS, transport=BrokerTransport
        )
        async with registry:
            rules = Rules(deck=36, seats=seats, timer=0, stake=stake)
            actor = await registry.create(TableSpec(rules=rules, creator=ALICE, bot_delay_ms=0))
            actor.clock = clock
            yield registry, actor, hooks, clock


async def call(
    registry: TableRegistry, actor: TableActor, op: str, who: Principal, conn: str | None = None, **fields: Any
) -> dict[str, Any]:
    return await registry.call(actor.code, cmd.body_from_json({"type": op, **fields}), who, conn=conn)


async def connect(registry: TableRegistry, actor: TableActor, who: Principal) -> str:
    """Open a connection for ``who`` (its hello answered): its id."""
    conn = f"{who.name}-{uuid.uuid4().hex[:6]}"
    await call(registry, actor, "hello", who, conn=conn)
    return conn


async def close(registry: TableRegistry, actor: TableActor, conn: str) -> None:
    actor.post(Command(cmd.Bye(), conn=conn))
    await call(registry, actor, "info", CAROL)  # handled after the bye


async def later(registry: TableRegistry, actor: TableActor, clock: FakeClock, seconds: float) -> dict[str, Any]:
    """Move the table's clock on; the deadlines that came are acted on before the next command."""
    clock.now += seconds
    reply = await call(registry, actor, "info", CAROL)
    facts: dict[str, Any] = reply["table"]
    return facts


def seated(facts: dict[str, Any]) -> list[str | None]:
    return [seat["player"] for seat in facts["seats"]]


async def test_an_absent_player_is_not_pulled_into_a_staked_match_the_creator_starts() -> None:
    """The issue's case: bob sits at a waiting staked table and closes the tab; alice (the creator)
    starts early. The match waits for bob's confirmation, which cannot come; when the check runs
    out bob's seat is freed and nothing was staked."""
    async with table(stake=100, seats=3) as (registry, actor, hooks, clock):
        await connect(registry, actor, ALICE)
        bob = await connect(registry, actor, BOB)
        assert (await call(registry, actor, "join", ALICE))["type"] == "ack"
        assert (await call(registry, actor, "join", BOB))["type"] == "ack"
        await close(registry, actor, bob)  # bob closes the tab
        started = await call(registry, actor, "start", ALICE)
        assert started["type"] == "ack" and started["match_id"] is None
        facts = (await call(registry, actor, "info", ALICE))["table"]
        assert actor.status == "waiting" and facts["ready_check"] == {"ready": [0], "deadline_ms": 30000}
        assert hooks.escrows == {} and hooks.balances == {1: 1000, 2: 1000, 3: 1000}
        facts = await later(registry, actor, clock, 29.9)
        assert facts["ready_check"]["ready"] == [0] and seated(facts) == ["a:1", "a:2", None]
        facts = await later(registry, actor, clock, 0.2)
        assert facts["ready_check"] is None and facts["status"] == "waiting"
        assert seated(facts) == ["a:1", None, None]  # bob's seat is free, alice keeps hers
        assert hooks.escrows == {} and hooks.balances == {1: 1000, 2: 1000, 3: 1000}


async def test_a_staked_match_starts_when_every_player_is_connected_and_confirmed() -> None:
    async with table(stake=100) as (registry, actor, hooks, _clock):
        await connect(registry, actor, ALICE)
        await connect(registry, actor, BOB)
        refused = await call(registry, actor, "ready", ALICE)
        assert refused["code"] == "not_seated"
        await call(registry, actor, "join", ALICE)
        assert (await call(registry, actor, "ready", ALICE))["code"] == "no_ready_check"
        await call(registry, actor, "join", BOB)  # fills the table: bob confirms by sitting down
        assert actor.status == "waiting" and actor.seating.ready is not None and actor.seating.ready.ready == {1}
        assert actor.history.versions()[-1][1] == [{"type": "ready_check", "ready": [1]}]
        assert hooks.escrows == {}
        ack = await call(registry, actor, "ready", ALICE)
        assert ack["type"] == "ack" and actor.status == "playing"
        assert hooks.balances == {1: 900, 2: 900, 3: 1000}
        assert (await call(registry, actor, "ready", ALICE))["code"] == "no_ready_check"


async def test_only_a_connected_player_confirms_and_a_confirmation_lapses_with_his_connection() -> None:
    async with table(stake=100) as (registry, actor, hooks, _clock):
        await call(registry, actor, "join", ALICE)  # by REST: no connection
        bob = await connect(registry, actor, BOB)
        await call(registry, actor, "join", BOB)
        assert (await call(registry, actor, "ready", ALICE))["code"] == "not_connected"
        alice = await connect(registry, actor, ALICE)
        await close(registry, actor, bob)  # bob had confirmed by sitting down; he goes
        assert actor.seating.ready is not None and actor.seating.ready.ready == set()
        assert (await call(registry, actor, "ready", ALICE))["type"] == "ack"
        assert actor.status == "waiting"  # bob is not there
        bob = await connect(registry, actor, BOB)
        assert actor.status == "waiting"  # back, but he has not confirmed again
        await call(registry, actor, "ready", BOB)
        assert actor.status == "playing" and hooks.balances[1] == hooks.balances[2] == 900
        assert alice


async def test_a_seat_change_ends_the_check_and_a_full_table_opens_a_new_one() -> None:
    async with table(stake=50, seats=3) as (registry, actor, hooks, clock):
        for who in (ALICE, BOB, CAROL):
            await connect(registry, actor, who)
        await call(registry, actor, "join", ALICE)
        await call(registry, actor, "join", BOB)
        await call(registry, actor, "start", ALICE)  # the creator confirms by starting
        assert actor.seating.ready is not None and actor.seating.ready.ready == {0}
        await clock.advance(20)
        await call(registry, actor, "join", CAROL)  # the table changed: a new check, carol confirmed
        assert actor.status == "waiting" and actor.seating.ready is not None and actor.seating.ready.ready == {2}
        await call(registry, actor, "ready", ALICE)
        facts = await later(registry, actor, clock, 15)  # 35 s after the first check: the second one runs
        assert facts["ready_check"] == {"ready": [0, 2], "deadline_ms": 15000}
        await call(registry, actor, "ready", BOB)
        assert actor.status == "playing" and len(actor.seats) == 3
        assert hooks.balances == {1: 950, 2: 950, 3: 950}


async def test_a_staked_rematch_waits_for_a_player_who_agreed_and_went() -> None:
    async with table(stake=100) as (registry, actor, hooks, _clock):
        await connect(registry, actor, ALICE)
        bob = await connect(registry, actor, BOB)
        await call(registry, actor, "join", ALICE)
        await call(registry, actor, "join", BOB)
        await call(registry, actor, "ready", ALICE)
        await call(registry, actor, "leave", BOB)  # a forfeit: alice wins 200
        assert actor.status == "finished" and hooks.balances == {1: 1100, 2: 900, 3: 1000}
        await call(registry, actor, "rematch", BOB)
        await close(registry, actor, bob)  # bob agreed, then closed the tab
        await call(registry, actor, "rematch", ALICE)  # everyone agreed: bob is not there
        facts = (await call(registry, actor, "info", ALICE))["table"]
        assert facts["status"] == "waiting" and facts["ready_check"]["ready"] == [0]
        assert hooks.balances == {1: 1100, 2: 900, 3: 1000}  # nothing staked
        await connect(registry, actor, BOB)
        await call(registry, actor, "ready", BOB)
        assert actor.status == "playing" and hooks.balances == {1: 1000, 2: 800, 3: 1000}
        await call(registry, actor, "leave", ALICE)
        await call(registry, actor, "rematch", ALICE)
        await call(registry, actor, "rematch", BOB)  # both here: the agreement is the confirmation
        assert actor.status == "playing"


async def test_free_tables_start_at_once_as_before() -> None:
    async with table(stake=0) as (registry, actor, _hooks, _clock):
        await call(registry, actor, "join", ALICE)
        await call(registry, actor, "join", BOB)
        assert actor.status == "playing" and actor.seating.ready is None


async def test_a_player_away_from_a_waiting_table_too_long_loses_his_seat() -> None:
    """Free or staked: no connection for 180 s (never connected, or gone) frees the seat."""
    async with table(stake=0, seats=3) as (registry, actor, _hooks, clock):
        await call(registry, actor, "join", BOB)  # by REST, never connected
        alice = await connect(registry, actor, ALICE)
        await call(registry, actor, "join", ALICE)
        facts = await later(registry, actor, clock, 120)
        await close(registry, actor, alice)  # alice goes at t = 120
        facts = await later(registry, actor, clock, 59)
        assert seated(facts) == ["a:2", "a:1", None]
        facts = await later(registry, actor, clock, 2)  # bob: 181 s without a connection
        assert seated(facts) == [None, "a:1", None]
        await connect(registry, actor, ALICE)  # alice is back in time
        facts = await later(registry, actor, clock, 200)
        assert seated(facts) == [None, "a:1", None]
        await call(registry, actor, "join", CAROL)
        await call(registry, actor, "join", BOB)
        assert actor.status == "playing" and actor.seating.away_since == {}  # a running match has graces


async def test_after_a_takeover_the_seats_of_a_waiting_table_count_as_away_until_their_players_come_back() -> None:
    async with two_processes() as (first, second):
        actor = await first.create(TableSpec(rules=Rules(deck=36, seats=3, timer=0), creator=ALICE, bot_delay_ms=0))
        await first.call(actor.code, cmd.Join(), ALICE)
        await first.call(actor.code, cmd.Join(), BOB)
        await first.broker.release_lease(lease_name(actor.code), "proc-a", actor.recorder.token)  # it lapsed
        successor = await second.take_over(actor.code)
        assert successor is not None and successor.status == "waiting"
        assert set(successor.seating.away_since) == {0, 1}  # nobody is connected to the new owner yet
        await second.call(actor.code, cmd.Hello(), BOB, conn="bob-back")
        assert set(successor.seating.away_since) == {0}


async def test_a_full_staked_table_taken_over_before_its_match_started_opens_its_ready_check_again() -> None:
    """The ready check is not in the stored record: the new owner opens a new one, else the table,
    every seat taken, would wait for a start that nothing makes (the soak's stuck table)."""
    async with two_processes() as (first, second):
        assert isinstance(first.hooks, MemoryHooks)
        first.hooks.balances.update({1: 1000, 2: 1000})  # the two processes' hooks are one
        actor = await first.create(TableSpec(rules=Rules(deck=36, seats=2, timer=0, stake=100), creator=ALICE,
                                             bot_delay_ms=0))  # fmt: skip
        await first.call(actor.code, cmd.Join(), ALICE)
        await first.call(actor.code, cmd.Join(), BOB)
        assert actor.seating.ready is not None
        await first.close()  # its process stops: actor stopped, lease released
        successor = await second.take_over(actor.code)
        assert successor is not None and successor.status == "waiting"
        assert successor.seating.ready is not None and successor.seating.ready.ready == set()
        for who in (ALICE, BOB):
            await second.call(actor.code, cmd.Hello(), who, conn=f"{who.name}-back")
            answer = await second.call(actor.code, cmd.Ready(), who, conn=f"{who.name}-back")
            assert answer["type"] == "ack", answer
        assert successor.status == "playing"
