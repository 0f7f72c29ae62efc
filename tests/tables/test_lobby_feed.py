"""The lobby: only open and running public tables, a page at a time; the live feed sends a snapshot,
then one delta per table change (never the whole list again), across processes."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.broker import open_broker
from app.config import Settings
from app.engine import Rules
from app.main import create_app
from app.tables import commands as cmd
from app.tables import lobby as lobby_module
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.support.clock import FakeClock
from tests.tables.actors import ALICE, BOB, play_moves, two_processes
from tests.tables.harness import create_table, signup


def parse(text: bytes) -> tuple[str, Any]:
    """(event name, data) of one server-sent event."""
    lines = dict(line.split(": ", 1) for line in text.decode().strip().splitlines())
    return lines["event"], json.loads(lines["data"])


async def next_event(feed: AsyncIterator[bytes], timeout: float = 3.0) -> tuple[str, Any]:
    return parse(await asyncio.wait_for(anext(feed), timeout))


async def test_the_feed_sends_a_snapshot_then_one_delta_per_table_change() -> None:
    import random

    name = f"memory://lobby-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker, MemoryHooks(), store=MemoryStore(name), supervise=False, transport=BrokerTransport
        )
        async with registry:
            old = await registry.create(TableSpec(rules=Rules(deck=36, seats=3), creator=BOB, name="old one"))
            async with registry.lobby_feed(keepalive_s=60) as feed:
                event, data = await next_event(feed)
                assert event == "snapshot" and [row["code"] for row in data["tables"]] == [old.code]
                spec = TableSpec(rules=Rules(deck=36, seats=2, timer=0), creator=ALICE, bot_delay_ms=0)
                actor = await registry.create(spec)
                event, row = await next_event(feed)
                assert (event, row["code"], row["status"], row["free_seats"]) == ("added", actor.code, "waiting", 2)
                assert "version" not in row and "player" not in row["seats"][0]  # nothing that moves, no ids
                await registry.call(actor.code, cmd.Join(), ALICE)
                event, row = await next_event(feed)
                assert (event, row["code"], row["free_seats"]) == ("changed", actor.code, 1)
                await registry.call(actor.code, cmd.Join(), BOB)  # the last seat: the match starts
                event, row = await next_event(feed)
                assert (event, row["status"], row["free_seats"]) == ("changed", "playing", 0)
                # Moves change the table but not its lobby row: no event at all. The join at the
                # other table is the marker: every change made before it is published no later than
                # the join's, so an event of the moves would arrive before or right after that one.
                assert await play_moves(registry, actor.code, 6, random.Random(3)) == 6
                await registry.call(old.code, cmd.Join(), BOB)  # the next event is this other table's
                event, row = await next_event(feed)
                assert (event, row["code"]) == ("changed", old.code)
                await registry.call(actor.code, cmd.Leave(), ALICE)  # a forfeit: the match is over
                assert actor.status == "finished"
                event, data = await next_event(feed)
                assert (event, data) == ("removed", {"code": actor.code})
            assert [row["code"] for row in await registry.lobby()] == [old.code]


async def let_run(turns: int = 20) -> None:
    """Let every task that can run do so (no real time passes, none is waited for)."""
    for _ in range(turns):
        await asyncio.sleep(0)


def fake_time_registry(broker: Any, name: str, clock: FakeClock) -> TableRegistry:
    """A registry whose loops (lobby flushes, sweeps, leases, the feeds' pacing) wait on ``clock``."""
    return TableRegistry(
        broker,
        MemoryHooks(),
        store=MemoryStore(name),
        supervise=False,
        clock=clock,
        sleep=clock.sleep,
        transport=BrokerTransport,
    )


async def test_a_move_costs_the_lobby_nothing_and_the_end_of_the_match_updates_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import random

    built: list[str] = []  # the tables whose lobby row was built (one per flush of a marked table)
    build_lobby_row = lobby_module.build_lobby_row

    def counting(**fields: Any) -> Any:
        built.append(fields["code"])
        return build_lobby_row(**fields)

    monkeypatch.setattr(lobby_module, "build_lobby_row", counting)
    name, clock = f"memory://lobby-{uuid.uuid4().hex}", FakeClock()
    async with open_broker(name) as broker:
        registry = fake_time_registry(broker, name, clock)
        async with registry:
            spec = TableSpec(rules=Rules(deck=36, seats=2, timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            await registry.call(actor.code, cmd.Join(), ALICE)
            await registry.call(actor.code, cmd.Join(), BOB)
            await registry.lobby()  # every change so far flushed
            assert registry.lobby_rows[actor.code]["status"] == "playing" and built
            built.clear()
            assert await play_moves(registry, actor.code, 8, random.Random(5)) == 8
            await let_run()
            await clock.advance(lobby_module.LOBBY_COALESCE_S)  # the next flush of the lobby's loop
            await let_run()
            assert await registry.lobby() == [registry.lobby_rows[actor.code]]  # a flush of anything marked
            assert built == []  # eight moves: no lobby row built, nothing compared, nothing sent
            await registry.call(actor.code, cmd.Leave(), ALICE)  # a forfeit ends the match: off the lobby
            await let_run()
            await clock.advance(lobby_module.LOBBY_COALESCE_S)
            await let_run()
            assert actor.code not in registry.lobby_rows  # removed by the loop's flush


async def test_a_joined_feed_sends_the_changes_of_one_flush_in_one_text() -> None:
    name, clock = f"memory://lobby-{uuid.uuid4().hex}", FakeClock()
    async with open_broker(name) as broker:
        registry = fake_time_registry(broker, name, clock)
        async with registry, registry.lobby_feed(keepalive_s=60, joined=True) as feed:
            assert await next_event(feed) == ("snapshot", {"tables": []})
            first = await registry.create(TableSpec(rules=Rules(deck=36, seats=2), creator=BOB))
            assert await next_event(feed) == ("added", registry.lobby_rows[first.code])  # flushed at once
            # The next flush comes LOBBY_COALESCE_S later, on the registry's clock: until then nothing.
            specs = [TableSpec(rules=Rules(deck=36, seats=2), creator=who) for who in (ALICE, BOB)]
            actors = [await registry.create(spec) for spec in specs]
            waiting = asyncio.ensure_future(anext(feed))
            await let_run()
            await clock.advance(lobby_module.LOBBY_COALESCE_S / 2)
            await let_run()
            assert not waiting.done()
            await clock.advance(lobby_module.LOBBY_COALESCE_S)  # both go out in this flush
            events = events_of(await asyncio.wait_for(waiting, 3))
            assert [(event, row["code"]) for event, row in events] == [("added", a.code) for a in actors]


def events_of(text: bytes) -> list[tuple[str, Any]]:
    return [parse(part + b"\n\n") for part in text.split(b"\n\n") if part]


async def test_a_paced_feed_writes_at_most_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lobby stream's pacing (``min_interval_s``): a wave of changes costs a feed one write per
    interval, and the first change after a quiet spell still goes out at once."""
    monkeypatch.setattr(lobby_module, "LOBBY_COALESCE_S", 0.0)  # every change is flushed at once
    name, clock, interval = f"memory://lobby-{uuid.uuid4().hex}", FakeClock(), 0.3
    async with open_broker(name) as broker:
        registry = fake_time_registry(broker, name, clock)
        async with registry, registry.lobby_feed(keepalive_s=60, joined=True, min_interval_s=interval) as feed:
            assert await next_event(feed) == ("snapshot", {"tables": []})
            await clock.advance(interval)  # a quiet spell
            first = await registry.create(TableSpec(rules=Rules(deck=36, seats=2), creator=BOB))
            assert await next_event(feed) == ("added", registry.lobby_rows[first.code])  # at once: time stood still
            # A wave: three tables, each flushed on its own, reach the feed as one text one interval on.
            specs = [TableSpec(rules=Rules(deck=36, seats=2), creator=who) for who in (ALICE, BOB, BOB)]
            actors = [await registry.create(spec) for spec in specs]
            waiting = asyncio.ensure_future(anext(feed))
            await let_run()
            await clock.advance(interval - 0.01)
            await let_run()
            assert not waiting.done()  # within the interval: no write
            await clock.advance(interval)
            text = await asyncio.wait_for(waiting, 3)
            assert [(event, row["code"]) for event, row in events_of(text)] == [("added", a.code) for a in actors]


async def test_a_quiet_feed_gets_a_keep_alive_after_the_interval_on_the_registrys_clock() -> None:
    name, clock = f"memory://lobby-{uuid.uuid4().hex}", FakeClock()
    async with open_broker(name) as broker:
        registry = fake_time_registry(broker, name, clock)
        async with registry, registry.lobby_feed(keepalive_s=15) as feed:
            assert (await next_event(feed))[0] == "snapshot"
            waiting = asyncio.ensure_future(anext(feed))
            await let_run()
            await clock.advance(14.5)
            await let_run()
            assert not waiting.done()  # quiet, but not for long enough
            await clock.advance(1)
            assert await asyncio.wait_for(waiting, 3) == b": keep-alive\n\n"
            waiting = asyncio.ensure_future(anext(feed))
            await let_run()
            await clock.advance(10)
            await let_run()
            actor = await registry.create(TableSpec(rules=Rules(deck=36, seats=2), creator=BOB))
            event, row = parse(await asyncio.wait_for(waiting, 3))  # a change, not a keep-alive
            assert (event, row["code"]) == ("added", actor.code)
            waiting = asyncio.ensure_future(anext(feed))
            await let_run()
            await clock.advance(14.5)  # 14.5 s since that change (24.5 s since the keep-alive)
            await let_run()
            assert not waiting.done()
            await clock.advance(1)
            assert await asyncio.wait_for(waiting, 3) == b": keep-alive\n\n"


async def test_private_tables_never_reach_the_feed() -> None:
    name = f"memory://lobby-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker, MemoryHooks(), store=MemoryStore(name), supervise=False, transport=BrokerTransport
        )
        async with registry, registry.lobby_feed(keepalive_s=60) as feed:
            assert await next_event(feed) == ("snapshot", {"tables": []})
            await registry.create(TableSpec(rules=Rules(deck=36, seats=2), creator=ALICE, private=True))
            public = await registry.create(TableSpec(rules=Rules(deck=36, seats=2), creator=BOB))
            event, row = await next_event(feed)
            assert (event, row["code"]) == ("added", public.code)


async def test_another_process_lists_the_table_and_forwards_its_deltas() -> None:
    async with two_processes() as (first, second), second.lobby_feed(keepalive_s=60) as feed:
        assert (await next_event(feed))[0] == "snapshot"
        actor = await first.create(TableSpec(rules=Rules(deck=36, seats=2), creator=ALICE))
        event, row = await next_event(feed)
        assert (event, row["code"]) == ("added", actor.code)
        await first.call(actor.code, cmd.Join(), BOB)
        event, row = await next_event(feed)
        assert (event, row["free_seats"]) == ("changed", 1)
        assert [row["code"] for row in await second.lobby()] == [actor.code]
        await first.close_table(actor.code, "test")
        assert await next_event(feed) == ("removed", {"code": actor.code})
        assert await second.lobby() == []


async def test_a_viewer_that_falls_far_behind_gets_a_fresh_snapshot() -> None:
    name = f"memory://lobby-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker, MemoryHooks(), store=MemoryStore(name), supervise=False, transport=BrokerTransport
        )
        async with registry, registry.lobby_feed(keepalive_s=60) as feed:
            viewer = next(iter(registry.listing.viewers))
            for index in range(viewer.MAX_QUEUED + 5):
                viewer.push(f"event: changed\ndata: {index}\n\n".encode())
            assert len(viewer.queue) <= 6
            event, data = parse(viewer.queue[0])
            assert event == "snapshot" and data == {"tables": []}
            del feed


def test_the_list_holds_open_and_running_tables_only_a_page_at_a_time(client: TestClient) -> None:
    people = [signup(client, f"p{i}") for i in range(4)]
    codes = [create_table(client, people[i // 3], timer=0)["code"] for i in range(12)]  # newest last
    running, finished = codes[0], codes[1]
    for code in (running, finished):
        assert client.post(f"/api/tables/{code}/join", json={}, headers=people[0]).status_code == 200
        assert client.post(f"/api/tables/{code}/join", json={}, headers=people[3]).status_code == 200
    assert client.post(f"/api/tables/{finished}/leave", headers=people[3]).status_code == 200  # a forfeit
    assert client.get(f"/api/tables/{finished}").json()["status"] == "finished"

    page = client.get("/api/tables?limit=5").json()
    assert (page["total"], page["offset"], page["limit"]) == (11, 0, 5)
    listed = list(reversed(codes))
    listed.remove(finished)
    assert [row["code"] for row in page["tables"]] == listed[:5]
    rest = client.get("/api/tables?limit=5&offset=5").json()["tables"]
    last = client.get("/api/tables?limit=5&offset=10").json()["tables"]
    assert [row["code"] for row in rest + last] == listed[5:]
    statuses = {row["code"]: row["status"] for row in client.get("/api/tables?limit=100").json()["tables"]}
    assert statuses[running] == "playing" and finished not in statuses
    assert client.get("/api/tables?limit=101").status_code == 422
    assert client.get("/api/tables?offset=-1").status_code == 422
    assert client.get("/api/tables?seats=2&limit=1").json()["total"] == 11


@pytest.fixture
async def lobby_app(migrated_template: Path, tmp_path: Path) -> AsyncIterator[Any]:
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret_key="test-secret-key-0123456789abcdef-32",
        max_lobby_streams_per_ip=2,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


class Stream:
    """``GET /api/lobby/stream`` straight through the ASGI app, read as it comes."""

    def __init__(self, app: Any, address: str) -> None:
        self.messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/api/lobby/stream",
            "raw_path": b"/api/lobby/stream",
            "root_path": "",
            "query_string": b"",
            "headers": [(b"host", b"testserver")],
            "client": (address, 40000),
            "server": ("testserver", 80),
        }
        self.task = asyncio.create_task(app(scope, self._receive, self.messages.put))

    async def _receive(self) -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def status(self) -> int:
        start = await asyncio.wait_for(self.messages.get(), 3)
        return int(start["status"])

    async def event(self) -> tuple[str, Any]:
        body = await asyncio.wait_for(self.messages.get(), 3)
        return parse(body["body"])

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def test_lobby_feeds_per_address_are_limited(lobby_app: Any) -> None:
    first, second = Stream(lobby_app, "10.0.0.1"), Stream(lobby_app, "10.0.0.1")
    assert await first.status() == 200 and await second.status() == 200
    assert (await first.event())[0] == "snapshot"
    third = Stream(lobby_app, "10.0.0.1")
    assert await third.status() == 429
    body = await asyncio.wait_for(third.messages.get(), 3)
    assert json.loads(body["body"])["detail"].startswith("too_many_streams:")
    other = Stream(lobby_app, "10.0.0.2")  # another address has its own allowance
    assert await other.status() == 200
    await first.close()
    await asyncio.sleep(0)
    again = Stream(lobby_app, "10.0.0.1")  # a closed feed gives its place back
    assert await again.status() == 200
    for stream in (second, third, other, again):
        await stream.close()
    assert dict(lobby_app.state.lobby_streams.open) == {}


async def test_lobby_feeds_are_counted_per_ipv6_64(lobby_app: Any) -> None:
    """Every address of one /64 counts as one: a host holds the whole network."""
    first, second = Stream(lobby_app, "2001:db8:3:4::1"), Stream(lobby_app, "2001:db8:3:4:ffff::2")
    assert await first.status() == 200 and await second.status() == 200
    third = Stream(lobby_app, "2001:db8:3:4:1234:5678:9abc:def0")
    assert await third.status() == 429
    other = Stream(lobby_app, "2001:db8:3:5::1")  # the next /64
    assert await other.status() == 200
    for stream in (first, second, third, other):
        await stream.close()
    assert dict(lobby_app.state.lobby_streams.open) == {}


async def test_the_stream_carries_deltas_on_the_wire(lobby_app: Any) -> None:
    stream = Stream(lobby_app, "10.0.0.3")
    assert await stream.status() == 200
    assert await stream.event() == ("snapshot", {"tables": []})
    registry: TableRegistry = lobby_app.state.tables
    actor = await registry.create(TableSpec(rules=Rules(deck=36, seats=2), creator=Principal("g:x", "x")))
    event, row = await stream.event()
    assert (event, row["code"]) == ("added", actor.code)
    await stream.close()


async def test_a_stored_table_that_cannot_be_read_stays_out_of_the_lobby_and_the_others_are_listed() -> None:
    async with two_processes() as (first, second):
        actor = await first.create(TableSpec(rules=Rules(deck=36, seats=2), creator=ALICE))
        store = second.store
        assert isinstance(store, MemoryStore)
        # Records no version of the server wrote (the store's own data, as only a test may touch it).
        records = store._data.records
        records["nameless"] = {"spec": {"code": "nameless", "private": False}, "info": {"status": "playing"}}
        records["lost"] = {"spec": {"code": "lost", "private": False}, "info": {"status": "lost"}}
        await second.listing.reload()
        assert list(second.listing.rows) == [actor.code]
