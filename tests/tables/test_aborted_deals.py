"""Every dealt match is recorded with its deal revealed, however it ends (docs/fairness.md): a match
of bots only whose table is closed mid-match, a match whose server stopped and came back without it
(its stakes refunded), and a match whose deal could not be kept is not dealt at all."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.broker import open_broker
from app.config import Settings
from app.db.models import LiveMatch
from app.engine import Rules, fairness
from app.main import create_app
from app.tables import commands as cmd
from app.tables.hooks import DealtMatch, MemoryHooks
from app.tables.registry import TableLimits, TableRegistry
from app.tables.spec import TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from tests.limits import RELAXED_LIMITS
from tests.support.clock import FakeClock
from tests.support.wait import eventually, wait_until
from tests.tables.actors import ALICE, BOB
from tests.tables.harness import ORIGIN, Player, create_table, signup

RULES = Rules(deck=36, seats=2, timer=0)


def _checks_out(revealed: dict[str, Any], replay: list[dict[str, Any]]) -> None:
    problems, order = fairness.verify(revealed)
    assert problems == [] and order is not None
    assert fairness.check_replay([str(card) for card in order], replay) == []


async def test_a_match_of_bots_closed_midway_is_recorded_aborted_with_its_deal_revealed() -> None:
    clock, hooks = FakeClock(), MemoryHooks()
    name = f"memory://aborted-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker,
            hooks,
            store=MemoryStore(name),
            supervise=False,
            table_limits=TableLimits(bot_table_unwatched_s=60),
            clock=clock,
            transport=BrokerTransport,
        )
        async with registry:
            actor = await registry.create(TableSpec(rules=RULES, creator=ALICE, bot_delay_ms=5000))
            for _ in range(2):
                assert (await registry.call(actor.code, cmd.AddBot(level="easy"), ALICE))["type"] == "ack"
            match_id = actor.match_id
            assert actor.status == "playing" and match_id in hooks.dealt  # kept from the deal on
            assert hooks.dealt[match_id].fairness["server_seed"] == actor.fair.server_seed.hex()
            clock.now += 61
            assert await registry.sweep() == [actor.code]  # nobody watched it: closed mid-match
            await eventually(lambda: match_id in hooks.finished, what="the aborted match is recorded")
    record = hooks.finished[match_id]
    assert record.outcome["aborted"] is True and record.outcome["reason"] == "table_closed"
    assert record.outcome["durak"] is None and record.coin_changes == {0: 0, 1: 0}
    assert record.fairness is not None and fairness.verify(record.fairness)[0] == []
    assert match_id not in hooks.dealt


def test_over_http_the_closed_tables_match_is_in_the_history_and_verifies(client: TestClient) -> None:
    alice = signup(client, "alice")
    table = create_table(client, alice, timer=0, bot_delay_ms=5000)
    code = table["code"]
    for _ in range(2):
        assert client.post(f"/api/tables/{code}/bots", json={"level": "easy"}, headers=alice).status_code == 200
    match_id = client.get(f"/api/tables/{code}").json()["match_id"]
    assert client.get(f"/api/matches/{match_id}").status_code == 404  # running: not in the history
    registry: TableRegistry = client.app.state.tables  # type: ignore[attr-defined]
    client.portal.call(registry.close_table, code, "test")  # type: ignore[union-attr]
    assert client.get(f"/api/tables/{code}").status_code == 410
    wait_until(lambda: client.get(f"/api/matches/{match_id}").status_code == 200, timeout=30, what="recorded")
    detail = client.get(f"/api/matches/{match_id}").json()
    assert detail["aborted"] is True and detail["result"]["reason"] == "table_closed"
    assert detail["durak"] is None and detail["draw"] is False
    replay = client.get(f"/api/matches/{match_id}/replay").json()
    _checks_out(detail["fairness"], replay)


def _server(path: Path) -> TestClient:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret_key="test-secret-key-0123456789abcdef-32",  # strong: websockets from "testserver" are served
        allowed_origins=[ORIGIN],  # websockets open at ws://testserver (tests/tables/harness.py)
        ws_rate_per_s=1000.0,
        **RELAXED_LIMITS,
    )
    return TestClient(create_app(settings), base_url="http://127.0.0.1:8000")


def test_a_staked_match_lost_to_a_restart_is_recorded_aborted_revealed_and_refunded(
    migrated_template: Path, tmp_path: Path
) -> None:
    """The default server (in-process broker and store) stops mid-match and starts again: the match
    cannot go on, so it is recorded as aborted with its deal revealed and every stake refunded."""
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    with _server(path) as first:
        alice, bob = signup(first, "alice"), signup(first, "bob")
        code = create_table(first, alice, timer=0, stake=100)["code"]
        _start_staked(first, code, alice, bob)
        table = first.get(f"/api/tables/{code}").json()
        assert table["status"] == "playing"
        match_id, commitment = table["match_id"], table["fairness"]["commitment"]
        assert first.get("/api/me", headers=alice).json()["balance"] == 900  # the stake is in escrow
        kept = json.dumps(first.portal.call(_live_rows, first.app.state.db))  # type: ignore[union-attr, attr-defined]
        assert match_id in kept
    _lose_kept_tables(path)  # the server died (no graceful stop kept its tables)
    with _server(path) as second:  # the server came back: the match did not
        assert second.get(f"/api/tables/{code}").status_code == 404
        detail = second.get(f"/api/matches/{match_id}", headers=alice)
        assert detail.status_code == 200, detail.text
        body = detail.json()
        assert body["aborted"] is True and body["result"]["reason"] == "server_restart"
        assert body["fairness"]["commitment"] == commitment and body["fairness"]["server_seed"]
        # While it ran, the database held its server seed sealed and not its deck.
        assert body["fairness"]["server_seed"] not in kept and " ".join(body["fairness"]["deck"][:6]) not in kept
        assert '"' + body["fairness"]["deck"][0] + '", "' + body["fairness"]["deck"][1] + '"' not in kept
        assert body["coin_changes"] == {"0": 0}  # hers, and nothing won or lost
        _checks_out(body["fairness"], second.get(f"/api/matches/{match_id}/replay", headers=alice).json())
        for player in (alice, bob):
            assert second.get("/api/me", headers=player).json()["balance"] == 1000
        assert second.get(f"/api/matches/{match_id}").status_code == 200  # a public table's match
        ratings = second.get("/api/players/alice").json()
        assert ratings["rating"]["matches"] == 0 and ratings["rating_history"] == []  # aborted: never rated
    with _server(path) as third:  # and only once
        assert len(third.get("/api/matches", headers=alice).json()["items"]) == 1


def _start_staked(client: TestClient, code: str, alice: dict[str, str], bob: dict[str, str]) -> None:
    """Seat alice and bob at a staked table and start its match: both connected, both ready (§8)."""
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as first,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as second,
    ):
        players = [Player(first, "alice"), Player(second, "bob")]
        for player in players:
            player.hello()
        for player in players:
            player.send({"type": "ready", "id": f"ready-{player.name}"})
            player.until(lambda m, p=player: m["type"] in ("ack", "error") and m.get("id") == f"ready-{p.name}")


def _lose_kept_tables(path: Path) -> None:
    """What a killed server leaves: no tables kept for the next start (``app.db.live_tables``)."""
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM live_tables")


async def _live_rows(db: Any) -> list[dict[str, Any]]:
    async with db.session() as session:
        rows = await session.scalars(select(LiveMatch))
        return [{"id": row.match_id, "fairness": row.fairness, "seats": row.seats} for row in rows]


class KeepsNoDeal(MemoryHooks):
    async def match_dealt(self, deal: DealtMatch) -> None:
        raise OSError("the database is down")


async def test_a_match_whose_deal_cannot_be_kept_is_not_dealt() -> None:
    hooks = KeepsNoDeal(balances={1: 500, 2: 500})
    name = f"memory://nodeal-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, hooks, store=MemoryStore(name), supervise=False, transport=BrokerTransport)
        async with registry:
            actor = await registry.create(TableSpec(rules=RULES.with_changes(stake=100), creator=ALICE))
            for who in (ALICE, BOB):  # both at the table: the ready check can pass (§8)
                await registry.call(actor.code, cmd.Hello(), who, conn=f"conn-{who.key}")
            assert (await registry.call(actor.code, cmd.Join(), ALICE))["type"] == "ack"
            assert (await registry.call(actor.code, cmd.Join(), BOB))["type"] == "ack"  # fills it: bob is ready
            await registry.call(actor.code, cmd.Ready(), ALICE)  # everyone ready: the deal is tried, and fails
            assert actor.status == "waiting" and actor.game is None and actor.match_id is None
            assert actor.fair.deal is None and actor.fair.revealed() is None  # its seed stays secret
            assert actor.seating.ready is None  # a new start opens a new ready check
    assert hooks.balances == {1: 500, 2: 500}  # the stakes taken for it went back
    assert not hooks.finished and hooks.refunded


class KeepsNoDealAtFirst(MemoryHooks):
    """Storage that is down for the first ``down`` deals, then answers."""

    def __init__(self, down: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.down = down

    async def match_dealt(self, deal: DealtMatch) -> None:
        if self.down > 0:
            self.down -= 1
            raise OSError("the database is restarting")
        await super().match_dealt(deal)


@pytest.mark.parametrize("stake", [0, 100])
async def test_a_full_table_whose_deal_was_not_kept_is_dealt_again_once_storage_answers(stake: int) -> None:
    """A deal refused by storage (a database restart) is tried again by the table itself every
    START_AGAIN_S: a table of bots, or of players who confirmed the ready check, does not stand
    still for ever waiting for someone to ask again."""
    clock = FakeClock()
    hooks = KeepsNoDealAtFirst(down=2, balances={1: 500, 2: 500})
    name = f"memory://dealagain-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, hooks, store=MemoryStore(name), supervise=False, transport=BrokerTransport)
        async with registry:
            actor = await registry.create(TableSpec(rules=RULES.with_changes(stake=stake), creator=ALICE))
            actor.clock = clock
            if stake:
                for who in (ALICE, BOB):  # both at the table and ready: the deal is tried, and fails
                    await registry.call(actor.code, cmd.Hello(), who, conn=f"conn-{who.key}")
                    await registry.call(actor.code, cmd.Join(), who)
                await registry.call(actor.code, cmd.Ready(), ALICE)
            else:
                for _ in range(2):
                    await registry.call(actor.code, cmd.AddBot(level="easy"), ALICE)
            assert actor.status == "waiting" and actor.match_id is None and hooks.down == 1
            clock.now += 1.0  # not yet
            await registry.call(actor.code, cmd.Info(), ALICE)
            assert actor.status == "waiting" and hooks.down == 1
            clock.now += 1.0  # tried again: storage still down
            await registry.call(actor.code, cmd.Info(), ALICE)
            assert actor.status == "waiting" and hooks.down == 0
            clock.now += 2.0  # and again: dealt
            await registry.call(actor.code, cmd.Info(), ALICE)
            assert actor.status == "playing" and actor.match_id in hooks.dealt
    if stake:
        assert hooks.balances == {1: 400, 2: 400}  # the failed deals' stakes went back; this one's are in escrow


def test_a_sealed_deal_opens_only_with_the_key_it_was_sealed_with() -> None:
    from app.db.matches import seal_deal, unseal_deal

    seed, seeds = bytes(range(32)), [bytes(16), b""]
    revealed = fairness.record(seed, "t-x", 3, 36, seeds, fairness.deck_order(seed, "t-x", 3, 36, seeds))
    sealed = seal_deal(revealed, "m1", "key-one")
    assert seed.hex() not in json.dumps(sealed) and "deck" not in sealed
    assert unseal_deal(sealed, "m1", "key-one") == revealed
    with pytest.raises(ValueError, match="another secret key"):
        unseal_deal(sealed, "m1", "key-two")
    with pytest.raises(ValueError, match="another secret key"):
        unseal_deal(sealed, "m2", "key-one")  # the pad is the match's own


def test_a_gracefully_stopped_embedded_server_resumes_its_match_and_settles_one_it_cannot(
    migrated_template: Path, tmp_path: Path
) -> None:
    """The default server stops gracefully mid-match: its tables are kept (``live_tables``) and the
    next start serves them again at the same version, with the same deal and hands. A kept table
    that cannot be rebuilt is dropped, and its match settled as aborted: stakes refunded, deal
    revealed."""
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    with _server(path) as first:
        alice, bob = signup(first, "alice"), signup(first, "bob")
        kept_code = create_table(first, alice, timer=30, stake=100)["code"]
        _start_staked(first, kept_code, alice, bob)
        carol, dave = signup(first, "carol"), signup(first, "dave")
        broken_code = create_table(first, carol, timer=0, stake=50)["code"]
        _start_staked(first, broken_code, carol, dave)
        before = first.get(f"/api/tables/{kept_code}").json()
        with first.websocket_connect(f"/ws/tables/{kept_code}", headers=alice) as ws:
            hand = Player(ws, "alice").hello()["view"]["hand"]
        broken_match = first.get(f"/api/tables/{broken_code}").json()["match_id"]
    with sqlite3.connect(path) as conn:  # one kept table's moves do not replay any more
        conn.execute("UPDATE live_tables SET log = ? WHERE code = ?", ('["not a move"]', broken_code))
    with _server(path) as second:
        after = second.get(f"/api/tables/{kept_code}").json()
        assert after["status"] == "playing" and after["version"] == before["version"]
        assert after["match_id"] == before["match_id"]
        assert after["fairness"]["commitment"] == before["fairness"]["commitment"]
        assert 0 < after["deadline_ms"] <= 30_000 + 3_000  # the move timer again, with the takeover's grace
        with second.websocket_connect(f"/ws/tables/{kept_code}", headers=alice) as ws:
            assert Player(ws, "alice").hello(before["version"])["view"]["hand"] == hand
        for player in (alice, bob):
            assert second.get("/api/me", headers=player).json()["balance"] == 900  # still in escrow
        assert second.get(f"/api/tables/{broken_code}").status_code == 404
        detail = second.get(f"/api/matches/{broken_match}", headers=carol).json()
        assert detail["aborted"] is True and detail["fairness"]["server_seed"]
        for player in (carol, dave):
            assert second.get("/api/me", headers=player).json()["balance"] == 1000
        with sqlite3.connect(path) as conn:
            assert conn.execute("SELECT count(*) FROM live_tables").fetchone() == (0,)  # read once
