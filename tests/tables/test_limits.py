"""Bounded resources: tables waiting for players per player and per address, matches of bots only,
table sockets per address; idle, finished and unwatched tables leave memory and say so when asked."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.broker import open_broker
from app.config import Settings
from app.engine import Rules
from app.main import create_app
from app.tables import commands as cmd
from app.tables.commands import Command
from app.tables.eviction import SWEEP_S
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableClosed, TableLimits, TableRegistry, TooMany
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.support.clock import FakeClock
from tests.tables.actors import ALICE, BOB
from tests.tables.harness import ORIGIN, Player, create_table, signup

CAROL = Principal("a:3", "carol", 3)
RULES = Rules(deck=36, seats=2, timer=0)


@asynccontextmanager
async def registry_with(limits: TableLimits, clock: FakeClock | None = None) -> AsyncIterator[TableRegistry]:
    """A registry on a fake clock: its sweeps (and its other loops) run only when the test moves it."""
    name, clock = f"memory://limits-{uuid.uuid4().hex}", clock or FakeClock()
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker,
            MemoryHooks(),
            store=MemoryStore(name),
            supervise=False,
            table_limits=limits,
            clock=clock,
            sleep=clock.sleep,
            transport=BrokerTransport,
        )
        async with registry:
            yield registry


def spec(creator: Principal, **changes: Any) -> TableSpec:
    return TableSpec(rules=RULES.with_changes(**changes) if changes else RULES, creator=creator, bot_delay_ms=0)


# ---------------------------------------------------------------------------- waiting tables


async def test_a_player_may_have_only_so_many_tables_waiting() -> None:
    async with registry_with(TableLimits(waiting_per_account=3)) as registry:
        tables = [await registry.create(spec(ALICE)) for _ in range(3)]
        with pytest.raises(TooMany) as refused:
            await registry.create(spec(ALICE))
        assert refused.value.code == "too_many_tables" and "at most 3" in refused.value.message
        await registry.create(spec(BOB))  # somebody else is not held back
        await registry.call(tables[0].code, cmd.Join(), ALICE)
        await registry.call(tables[0].code, cmd.Join(), BOB)  # full: the match starts, the table waits no more
        assert tables[0].status == "playing"
        await registry.create(spec(ALICE))


async def test_tables_opened_at_once_cannot_slip_past_the_limit() -> None:
    async with registry_with(TableLimits(waiting_per_account=3)) as registry:
        results = await asyncio.gather(*(registry.create(spec(ALICE)) for _ in range(8)), return_exceptions=True)
        assert sum(not isinstance(r, BaseException) for r in results) == 3
        assert all(isinstance(r, TooMany) for r in results if isinstance(r, BaseException))


async def test_an_address_may_have_only_so_many_tables_waiting() -> None:
    async with registry_with(TableLimits(waiting_per_account=10, waiting_per_ip=2)) as registry:
        await registry.create(spec(ALICE), "10.0.0.1")
        await registry.create(spec(BOB), "10.0.0.1")
        with pytest.raises(TooMany, match="from your address"):
            await registry.create(spec(CAROL), "10.0.0.1")
        await registry.create(spec(CAROL), "10.0.0.2")


def test_the_fourth_waiting_table_is_refused_over_rest(client: TestClient) -> None:
    alice = signup(client, "alice")
    for _ in range(3):
        create_table(client, alice)
    response = client.post("/api/tables", json={}, headers=alice)
    assert response.status_code == 429
    assert response.json()["detail"].startswith("too_many_tables: you have 3 tables waiting for players")


# ---------------------------------------------------------------------------- bots only


def test_a_player_runs_one_match_of_bots_only_at_a_time(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    first = create_table(client, alice, bot_delay_ms=5000)["code"]  # slow bots: the match keeps running
    for _ in range(2):
        assert client.post(f"/api/tables/{first}/bots", json={}, headers=alice).status_code == 200
    assert client.get(f"/api/tables/{first}").json()["status"] == "playing"
    second = create_table(client, alice)["code"]
    response = client.post(f"/api/tables/{second}/bots", json={}, headers=alice)
    assert response.status_code == 429
    assert response.json()["detail"].startswith("too_many_bot_tables:")
    assert client.post(f"/api/tables/{second}/start", headers=alice).status_code == 429
    # With a person at the table it is not a match of bots only.
    assert client.post(f"/api/tables/{second}/join", json={}, headers=alice).status_code == 200
    assert client.post(f"/api/tables/{second}/bots", json={}, headers=alice).status_code == 200
    # Somebody else still may.
    third = create_table(client, bob, bot_delay_ms=5000)["code"]
    assert client.post(f"/api/tables/{third}/bots", json={}, headers=bob).status_code == 200


async def test_matches_of_bots_are_stopped_when_nobody_watches_or_they_run_too_long() -> None:
    clock = FakeClock()
    limits = TableLimits(bot_table_unwatched_s=60, bot_match_max_s=600)
    async with registry_with(limits, clock) as registry:
        unwatched = await registry.create(TableSpec(rules=RULES, creator=ALICE, bot_delay_ms=5000))
        watched = await registry.create(TableSpec(rules=RULES, creator=BOB, bot_delay_ms=5000))
        for actor in (unwatched, watched):
            for _ in range(2):
                assert (await registry.call(actor.code, cmd.AddBot(level="easy"), actor.spec.creator))["type"] == "ack"
            assert actor.status == "playing"
        await registry.call(watched.code, cmd.Hello(), CAROL, conn="carol-1")  # a spectator stays
        clock.now += 59
        assert await registry.sweep() == []
        clock.now += 2
        assert await registry.sweep() == [unwatched.code]
        assert unwatched.code not in registry.tables and unwatched._task is not None and unwatched._task.done()
        with pytest.raises(TableClosed, match="nobody was watching"):
            await registry.resolve(unwatched.code)
        clock.now += 540
        assert await registry.sweep() == [watched.code]
        with pytest.raises(TableClosed, match="stopped after 10 minutes"):
            await registry.resolve(watched.code)


# ---------------------------------------------------------------------------- eviction


async def test_idle_and_finished_tables_leave_memory_and_the_store() -> None:
    clock = FakeClock()
    async with registry_with(TableLimits(idle_ttl_s=1800, finished_ttl_s=600), clock) as registry:
        hooks = registry.hooks
        assert isinstance(hooks, MemoryHooks)
        idle = await registry.create(spec(ALICE))
        finished = await registry.create(spec(ALICE))
        running = await registry.create(spec(BOB))
        for actor in (finished, running):
            await registry.call(actor.code, cmd.Join(), ALICE)
            await registry.call(actor.code, cmd.Join(), BOB)
        await registry.call(finished.code, cmd.Leave(), BOB)  # a forfeit ends it
        assert finished.status == "finished"
        clock.now += 599
        assert await registry.sweep() == []
        clock.now += 1
        assert await registry.sweep() == [finished.code]
        assert finished.match_id in hooks.finished  # its match stays in the history
        assert await registry.store.load(finished.code) is None
        clock.now += 1200
        await registry.call(idle.code, cmd.Hello(), CAROL, conn="carol-1")  # a visitor keeps it a while
        idle.post(Command(cmd.Bye(), conn="carol-1"))
        await registry.call(idle.code, cmd.Info(), CAROL)  # handled after the bye
        assert not idle.seating.spectators
        clock.now += 1799
        assert await registry.sweep() == []
        clock.now += 1
        assert await registry.sweep() == [idle.code]
        clock.now += 10**6
        assert await registry.sweep() == []  # a running match of people: its timers end it
        assert set(registry.tables) == {running.code}
        assert set(registry.created_from) | set(registry.idle.changed_at) | set(registry.idle.seen_at) <= {running.code}
        for code in (idle.code, idle.spec.watch_code, finished.code):
            with pytest.raises(TableClosed):
                await registry.resolve(code)


async def test_a_finished_table_someone_sits_at_stays() -> None:
    clock = FakeClock()
    async with registry_with(TableLimits(finished_ttl_s=600), clock) as registry:
        actor = await registry.create(spec(ALICE))
        await registry.call(actor.code, cmd.Join(), ALICE)
        await registry.call(actor.code, cmd.Join(), BOB)
        await registry.call(actor.code, cmd.Hello(), ALICE, conn="alice-1")
        await registry.call(actor.code, cmd.Leave(), BOB)
        assert actor.status == "finished"
        clock.now += 10**5
        assert await registry.sweep() == []


async def test_the_sweeps_run_on_the_registrys_clock_and_nothing_happens_while_it_stands() -> None:
    """The sweep loop waits on the injected clock: however long the test takes, an idle table stays
    until the clock passes its limit and the next sweep; then the loop closes it by itself."""

    async def let_run() -> None:
        for _ in range(50):
            await asyncio.sleep(0)

    clock = FakeClock()
    async with registry_with(TableLimits(idle_ttl_s=1800), clock) as registry:
        idle = await registry.create(spec(ALICE))
        await let_run()
        assert clock.sleeping() >= 2  # the sweeps and the lease renewals wait on it
        await clock.advance(SWEEP_S)  # a sweep, long before the limit
        await let_run()
        await clock.advance(1800 - 2 * SWEEP_S)  # the sweep then still finds it within its limit
        await let_run()
        assert idle.code in registry.tables
        await clock.advance(SWEEP_S)  # the sweep after the limit closes it
        for _ in range(20):
            await let_run()
            if idle.code not in registry.tables:
                break
        assert idle.code not in registry.tables
        with pytest.raises(TableClosed, match="waited 30 minutes for players"):
            await registry.resolve(idle.code)


def test_a_closed_table_answers_410_and_its_socket_closes_with_4010(client: TestClient) -> None:
    alice = signup(client, "alice")
    table = create_table(client, alice)
    registry: TableRegistry = client.app.state.tables  # type: ignore[attr-defined]
    client.portal.call(registry.close_table, table["code"], "test")  # type: ignore[union-attr]
    for path in (f"/api/tables/{table['code']}", f"/api/tables/{table['watch_code']}"):
        response = client.get(path)
        assert response.status_code == 410
        assert response.json()["detail"].startswith("table_closed: this table was closed")
    assert client.post(f"/api/tables/{table['code']}/join", json={}, headers=alice).status_code == 410
    with (
        pytest.raises(WebSocketDisconnect) as closed,
        client.websocket_connect(f"/ws/tables/{table['code']}", headers=alice) as ws,
    ):
        ws.receive_text()
    assert closed.value.code == 4010
    assert client.get("/api/tables/never-was").status_code == 404


# ---------------------------------------------------------------------------- table sockets


@pytest.fixture
def two_sockets_client(migrated_template: Path, tmp_path: Path) -> Iterator[TestClient]:
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret_key="test-secret-key-0123456789abcdef-32",
        max_table_sockets_per_ip=2,
        allowed_origins=[ORIGIN],  # as tests/tables/harness.py: websockets go to ws://testserver
    )
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as test_client:
        yield test_client


def test_table_sockets_per_address_are_limited(two_sockets_client: TestClient) -> None:
    client = two_sockets_client
    alice = signup(client, "alice")
    code = create_table(client, alice)["code"]
    url = f"/ws/tables/{code}"
    with client.websocket_connect(url, headers=alice) as one, client.websocket_connect(url, headers=alice) as two:
        Player(one, "one").hello()
        Player(two, "two").hello()
        with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(url, headers=alice) as three:
            three.receive_text()
        assert refused.value.code == 4029
    with client.websocket_connect(url, headers=alice) as again:  # closed sockets give their places back
        assert Player(again, "again").hello()["type"] == "welcome"
    assert dict(client.app.state.table_sockets.open) == {}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------- live tables (issue 35.4)


async def test_a_player_may_have_only_so_many_tables_waiting_or_playing() -> None:
    """Running matches count: a table that starts at once (a match against a bot) is no way past it."""
    async with registry_with(TableLimits(waiting_per_account=10, live_per_account=2)) as registry:
        running = []
        for _ in range(2):
            actor = await registry.create(spec(ALICE))
            await registry.call(actor.code, cmd.Join(), ALICE)
            await registry.call(actor.code, cmd.Join(), BOB)
            assert actor.status == "playing"
            running.append(actor)
        with pytest.raises(TooMany) as refused:
            await registry.create(spec(ALICE))
        assert refused.value.code == "too_many_tables"
        assert "2 tables open (waiting or playing)" in refused.value.message
        await registry.create(spec(BOB))  # bob sits at alice's tables; he opened none
        await registry.call(running[0].code, cmd.Leave(), BOB)  # a forfeit ends one: it is live no more
        assert running[0].status == "finished"
        await registry.create(spec(ALICE))


async def test_an_address_may_have_only_so_many_tables_waiting_or_playing() -> None:
    async with registry_with(TableLimits(live_per_ip=2)) as registry:
        actor = await registry.create(spec(ALICE), "2001:db8:0:1::/64")
        await registry.call(actor.code, cmd.Join(), ALICE)
        await registry.call(actor.code, cmd.Join(), BOB)
        await registry.create(spec(BOB), "2001:db8:0:1::/64")
        with pytest.raises(TooMany, match="open \\(waiting or playing\\)"):
            await registry.create(spec(CAROL), "2001:db8:0:1::/64")
        await registry.create(spec(CAROL), "2001:db8:0:2::/64")


async def test_tables_opened_lately_are_counted_though_their_matches_ended() -> None:
    """A match left at once is no longer live, but its table stays in memory (and its match in the
    history): a player or an address may open only so many tables within the window."""
    clock = FakeClock()
    limits = TableLimits(opened_per_account=3, opened_per_ip=4, opened_window_s=600)
    async with registry_with(limits, clock) as registry:
        for _ in range(3):
            actor = await registry.create(spec(ALICE), "2001:db8:0:3::/64")
            await registry.call(actor.code, cmd.Join(), ALICE)
            await registry.call(actor.code, cmd.Join(), BOB)
            await registry.call(actor.code, cmd.Leave(), ALICE)  # a forfeit: the match is over at once
            assert actor.status == "finished"
        with pytest.raises(TooMany) as refused:
            await registry.create(spec(ALICE), "2001:db8:0:4::/64")
        assert refused.value.code == "too_many_tables"
        assert (
            refused.value.message
            == "you opened 3 tables in the last 10 minutes, the most that may be: the next one in 600 s"
        )
        await registry.create(spec(BOB), "2001:db8:0:3::/64")  # the address's fourth
        with pytest.raises(TooMany, match="your address opened 4 tables"):
            await registry.create(spec(CAROL), "2001:db8:0:3::/64")
        clock.now += 599
        with pytest.raises(TooMany, match="the next one in 1 s"):
            await registry.create(spec(ALICE))
        clock.now += 1
        await registry.create(spec(ALICE))
        await registry.sweep()
        assert set(registry.opening.opened) == {"a:a:1"}  # the counts older than the window are dropped


@pytest.fixture
async def strict_app(migrated_template: Path, tmp_path: Path) -> AsyncIterator[Any]:
    """An app with small per-player and per-address limits (the rest as shipped)."""
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret_key="test-secret-key-0123456789abcdef-32",
        max_live_tables_per_account=3,
        max_live_tables_per_ip=5,
        max_tables_opened_per_account=5,
        max_table_sockets_per_ip=2,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


async def guest_at(app: Any, address: str, name: str) -> httpx.AsyncClient:
    """A guest with its own cookie jar, connecting from ``address``."""
    transport = httpx.ASGITransport(app=app, client=(address, 50000))
    client = httpx.AsyncClient(transport=transport, base_url="http://testserver")
    assert (await client.post("/api/auth/guest", json={"name": name})).status_code == 200
    return client


async def test_play_a_bot_counts_toward_live_tables_per_player_and_per_ipv6_64(strict_app: Any) -> None:
    first = await guest_at(strict_app, "2001:db8:0:1::1", "first")
    codes = []
    for _ in range(3):
        response = await first.post("/api/quickplay/bot", json={})
        assert response.status_code == 200, response.text
        code = response.json()["code"]
        assert (await first.post(f"/api/tables/{code}/start")).status_code == 200  # dealt before any seed came
        codes.append(code)
    refused = await first.post("/api/quickplay/bot", json={})
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("too_many_tables: you have 3 tables open (waiting or playing)")
    # Other guests from other addresses of the same /64 share its limit (5): two more, then no more.
    neighbours = [await guest_at(strict_app, f"2001:db8:0:1:{n}::7", f"next{n}") for n in range(1, 4)]
    for neighbour in neighbours[:2]:
        assert (await neighbour.post("/api/quickplay/bot", json={})).status_code == 200
    over = await neighbours[2].post("/api/quickplay/bot", json={})
    assert over.status_code == 429 and "opened from your address" in over.json()["detail"]
    assert (await neighbours[2].post("/api/tables", json={})).status_code == 429  # any table
    elsewhere = await guest_at(strict_app, "2001:db8:0:2::1", "elsewhere")  # another /64
    assert (await elsewhere.post("/api/quickplay/bot", json={})).status_code == 200
    # A match that ends (here by leaving: a forfeit) gives its place back.
    assert (await first.post(f"/api/tables/{codes[0]}/leave")).status_code == 200
    assert (await neighbours[2].post("/api/quickplay/bot", json={})).status_code == 200
    # Leaving each match at once ends it, but does not open tables without end: five per window.
    for _ in range(2):  # his fourth and fifth, each left at once
        for code in registry_codes(strict_app, "first"):
            assert (await first.post(f"/api/tables/{code}/leave")).status_code == 200
        opened = await first.post("/api/quickplay/bot", json={})
        assert opened.status_code == 200
        assert (await first.post(f"/api/tables/{opened.json()['code']}/start")).status_code == 200
    for code in registry_codes(strict_app, "first"):
        assert (await first.post(f"/api/tables/{code}/leave")).status_code == 200
    churn = await first.post("/api/quickplay/bot", json={})
    assert churn.status_code == 429 and "you opened 5 tables in the last 10 minutes" in churn.json()["detail"]


def registry_codes(app: Any, name: str) -> list[str]:
    """The live tables the player called ``name`` opened (tables of this process)."""
    registry: TableRegistry = app.state.tables
    return [
        code
        for code, actor in registry.tables.items()
        if actor.spec.creator.name == name and actor.status in ("waiting", "playing")
    ]


class RawSocket:
    """A table websocket straight through the ASGI app from ``address``, as far as its handshake."""

    def __init__(self, app: Any, address: str, code: str) -> None:
        self.sent: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.connected = False
        scope = {
            "type": "websocket",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "scheme": "ws",
            "path": f"/ws/tables/{code}",
            "raw_path": f"/ws/tables/{code}".encode(),
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", b"testserver")],
            "client": (address, 40000),
            "server": ("testserver", 80),
            "subprotocols": [],
        }
        self.task = asyncio.create_task(app(scope, self._receive, self.sent.put))

    async def _receive(self) -> dict[str, Any]:
        if not self.connected:
            self.connected = True
            return {"type": "websocket.connect"}
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def answers(self) -> list[dict[str, Any]]:
        """What the server sent until it closed, or for a moment."""
        out = []
        with contextlib.suppress(TimeoutError):
            while True:
                out.append(await asyncio.wait_for(self.sent.get(), 0.5))
                if out[-1]["type"] == "websocket.close":
                    break
        return out

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_table_sockets_are_counted_per_ipv6_64(strict_app: Any) -> None:
    registry: TableRegistry = strict_app.state.tables
    actor = await registry.create(TableSpec(rules=RULES, creator=ALICE))
    first = RawSocket(strict_app, "2001:db8:0:7::1", actor.code)
    second = RawSocket(strict_app, "2001:db8:0:7:a::2", actor.code)
    assert (await first.answers())[0]["type"] == "websocket.accept"
    assert (await second.answers())[0]["type"] == "websocket.accept"
    third = RawSocket(strict_app, "2001:db8:0:7:ffff::3", actor.code)  # the same /64, a third socket
    answers = await third.answers()
    assert answers[-1] == {"type": "websocket.close", "code": 4029, "reason": answers[-1]["reason"]}
    other = RawSocket(strict_app, "2001:db8:0:8::1", actor.code)
    assert (await other.answers())[0]["type"] == "websocket.accept"
    for socket in (first, second, third, other):
        await socket.close()


async def test_a_finished_table_leaves_memory_a_minute_after_its_match_unless_a_player_is_there() -> None:
    """The default limits: a finished table nobody is connected to goes 60 s after its match ended;
    one a player is still at stays, and its players can agree a rematch long after."""
    clock = FakeClock()
    async with registry_with(TableLimits(), clock) as registry:
        left = await registry.create(spec(ALICE))
        stayed = await registry.create(spec(BOB))
        for actor in (left, stayed):
            await registry.call(actor.code, cmd.Join(), ALICE)
            await registry.call(actor.code, cmd.Join(), BOB)
        await registry.call(stayed.code, cmd.Hello(), ALICE, conn="alice-1")
        for actor in (left, stayed):
            await registry.call(actor.code, cmd.Leave(), BOB)  # a forfeit ends it
            assert actor.status == "finished"
        clock.now += 59
        assert await registry.sweep() == []
        clock.now += 1
        assert await registry.sweep() == [left.code]
        with pytest.raises(TableClosed, match="nobody was at the table for 60 s"):
            await registry.resolve(left.code)
        clock.now += 3600
        assert await registry.sweep() == []
        for who in (ALICE, BOB):
            assert (await registry.call(stayed.code, cmd.Rematch(), who))["type"] == "ack"
        assert stayed.status == "playing"
