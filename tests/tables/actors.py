"""Tables driven in-process without websockets: a registry on its own in-process broker and store,
two players, and random legal moves sent through the table's inbox."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from app.broker import Broker, open_broker
from app.engine import Rules, decision, legal_actions
from app.tables import commands as cmd
from app.tables.actor import TableActor
from app.tables.commands import Command
from app.tables.hooks import MatchHooks, MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import DecisionLimits, Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.support.clock import FakeClock

ALICE = Principal("a:1", "alice", 1)
BOB = Principal("a:2", "bob", 2)
CAROL = Principal("a:3", "carol", 3)
__all__ = [
    "ALICE",
    "BOB",
    "CAROL",
    "FakeClock",
    "HeldTakeovers",
    "advance",
    "away",
    "play_moves",
    "seated_conn",
    "seated_table",
    "two_processes",
]


@asynccontextmanager
async def seated_table(
    rules: Rules,
    *,
    name: str | None = None,
    store: MemoryStore | None = None,
    hooks: MatchHooks | None = None,
    clock: FakeClock | None = None,
    limits: DecisionLimits | None = None,
) -> AsyncIterator[tuple[Broker, TableRegistry, TableActor]]:
    """A table of ``rules`` created by alice, with alice in seat 0 and bob in seat 1 (so a full
    two-seat table has started). ``name`` is the in-process broker's URL, ``store`` its store;
    ``clock`` replaces the table's clock before anyone sits down. A staked match starts only once
    both are connected and ready (RULES §8): at a staked table each has a connection
    (``seated_conn``) and confirms; ``away`` closes them."""
    name = name or f"memory://table-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker,
            hooks or MemoryHooks(),
            store=store or MemoryStore(name),
            supervise=False,
            limits=limits,
            transport=BrokerTransport,
        )
        async with registry:
            actor = await registry.create(TableSpec(rules=rules, creator=ALICE, bot_delay_ms=0))
            if clock is not None:
                actor.clock = clock
            for person in (ALICE, BOB):
                if rules.stake > 0:
                    await registry.call(actor.code, cmd.Hello(), person, conn=seated_conn(person))
                await registry.call(actor.code, cmd.Join(), person)
            if rules.stake > 0:
                await registry.call(actor.code, cmd.Ready(), ALICE)  # bob confirmed by filling the table
            yield broker, registry, actor


def seated_conn(person: Principal) -> str:
    """The connection ``seated_table`` opens for a player of a staked table."""
    return f"{person.name}-seated"


async def away(registry: TableRegistry, actor: TableActor, *people: Principal) -> None:
    """Close the connections ``seated_table`` opened for ``people`` (and let the table take it in)."""
    for person in people:
        actor.post(Command(cmd.Bye(), conn=seated_conn(person)))
    await registry.call(actor.code, cmd.Info(), ALICE)


async def advance(registry: TableRegistry, actor: TableActor, clock: FakeClock, seconds: float) -> dict:
    """Move the table's clock on by ``seconds`` and let the table act on every deadline that came
    (a deadline that has passed goes before the next command): the table facts afterwards."""
    clock.now += seconds
    reply = await registry.call(actor.code, cmd.Info(), ALICE)
    table: dict = reply["table"]
    return table


async def play_moves(registry: TableRegistry, code: str, steps: int, rng: random.Random) -> int:
    """Random legal moves of alice and bob through the table's inbox, as a client on any process
    would send them; how many were played."""
    done = 0
    for _ in range(steps):
        actor = registry.tables[code]
        if actor.status != "playing":
            break
        waiting = decision(actor.game)["seats"]
        seat = waiting[0] if waiting else rng.randrange(2)
        options = [a for a in legal_actions(actor.game, seat) if a.kind != "challenge"]
        if not options:
            continue
        action = rng.choice(options)
        reply = await registry.call(code, cmd.move_of(action), (ALICE, BOB)[seat], id=uuid.uuid4().hex)
        assert reply["type"] == "ack", reply
        done += 1
    return done


@asynccontextmanager
async def two_processes() -> AsyncIterator[tuple[TableRegistry, TableRegistry]]:
    """Two registries, "proc-a" and "proc-b", sharing a named in-process broker and store, with no
    supervisors: the test decides when a table changes hands."""
    name = f"memory://two-{uuid.uuid4().hex}"
    hooks = MemoryHooks()
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(
            broker_a, hooks, store=MemoryStore(name), owner="proc-a", supervise=False, transport=BrokerTransport
        )
        second = TableRegistry(
            broker_b, hooks, store=MemoryStore(name), owner="proc-b", supervise=False, transport=BrokerTransport
        )
        async with first, second:
            yield first, second


def forget_table(store: MemoryStore, code: str) -> None:
    """What a Redis that restarts with nothing on disk does to a table: its record, log, live
    version and fence are gone (the store's own data, as only a test may touch it)."""
    data = store._data
    for part in (data.records, data.logs, data.fences, data.live):
        part.pop(code, None)


@dataclass
class HeldTakeovers:
    """A stand-in takeover (``take``, for ``TableLeases.take_over`` or a ``TakeoverQueue``) that
    waits until ``go_on`` is set: the codes in the order they started, and the most under way at once."""

    started: list[str] = field(default_factory=list)
    running: int = 0
    most: int = 0
    go_on: asyncio.Event = field(default_factory=asyncio.Event)

    async def take(self, code: str, why: str = "") -> None:
        self.started.append(code)
        self.running += 1
        self.most = max(self.most, self.running)
        await self.go_on.wait()
        self.running -= 1
