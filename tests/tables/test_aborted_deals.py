"""Every dealt match is recorded with its deal revealed, however it ends (docs/fairness.md): a match
of bots only whose table is closed mid-match, a match whose server stopped and came back without it
(its stakes refunded), and a match whose deal could not be kept is not dealt at all."""

from __future__ import annotations

import json
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
from tests.limits import RELAXED_LIMITS
from tests.support.wait import eventually, wait_until
from tests.tables.actors import ALICE, BOB
from tests.tables.harness import ORIGIN, Player, create_table, signup
from tests.tables.test_limits import Clock

RULES = Rules(deck=36, seats=2, timer=0)


def _checks_out(revealed: dict[str, Any], replay: list[dict[str, Any]]) -> None:
    problems, order = fairness.verify(revealed)
    assert problems == [] and order is not None
    assert fairness.check_replay([str(card) for card in order], replay) == []


async def test_a_match_of_bots_closed_midway_is_recorded_aborted_with_its_deal_revealed() -> None:
    clock, hooks = Clock(), MemoryHooks()
    name = f"memory://aborted-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker,
            hooks,
            store=MemoryStore(name),
            supervise=False,
            table_limits=TableLimits(bot_table_unwatched_s=60),
            clock=clock,
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
        secret_key="test-secret-key-0123456789abcdef-32",
        allowed_origins=[ORIGIN],  # the test client's websockets come from ws://testserver
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
        url = f"/ws/tables/{code}"
        with first.websocket_connect(url, headers=alice) as wa, first.websocket_connect(url, headers=bob) as wb:
            Player(wa, "a").hello()
            Player(wb, "b").hello()
            first.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
            first.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
            first.post(f"/api/tables/{code}/ready", headers=alice)  # both there and ready (§8)
        table = first.get(f"/api/tables/{code}").json()
        assert table["status"] == "playing"
        match_id, commitment = table["match_id"], table["fairness"]["commitment"]
        assert first.get("/api/me", headers=alice).json()["balance"] == 900  # the stake is in escrow
        kept = json.dumps(first.portal.call(_live_rows, first.app.state.db))  # type: ignore[union-attr, attr-defined]
        assert match_id in kept
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
        registry = TableRegistry(broker, hooks, store=MemoryStore(name), supervise=False)
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
