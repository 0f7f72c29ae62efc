"""Tournaments over HTTP, with the arena runner driven by a clock of the test's: scheduling (paid
ones by admins only), entry fees through the ledger, pairing at the start through the table
registry (related accounts never together at a paid one), points counted when a match ends, the
prizes paid exactly, cancelling with refunds, bots filling a table and marked as bots."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.db.models import DeviceAccount
from app.main import create_app
from app.tournaments.runner import ArenaRunner
from tests.api.support import SECRET, Api
from tests.db.helpers import assert_ledger_sound
from tests.limits import RELAXED_LIMITS
from tests.support.wait import eventually


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def arena(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    settings = Settings(
        database_url=database_url,
        secret_key=SECRET,
        starting_balance=1000,
        tournament_tick_s=60.0,  # the test drives the runner itself (runner.step)
        **RELAXED_LIMITS,
    )
    app = create_app(settings)
    app.state.clock = Clock()
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


def runner_of(arena: Api) -> ArenaRunner:
    runner: ArenaRunner = arena.app.state.arena
    return runner


async def me(client: httpx.AsyncClient) -> dict[str, Any]:
    answer: dict[str, Any] = (await client.get("/api/me")).json()
    return answer


def body(clock: Clock, **changes: Any) -> dict[str, Any]:
    start = clock.now + timedelta(minutes=5)
    return {"name": "Cup", "seats": 2, "deck": 24, "starts_at": start.isoformat(), "duration_min": 10, **changes}


async def test_a_paid_tournament_from_entry_to_prizes(arena: Api) -> None:
    clock: Clock = arena.app.state.clock
    admin = await arena.admin()
    players = [await arena.signed_up(f"arena{i}") for i in range(4)]
    ids = [(await me(p))["id"] for p in players]
    # A player may not schedule a paid one; the admin may.
    refused = await players[0].post("/api/tournaments", json=body(clock, entry_fee=100))
    assert refused.status_code == 403 and refused.json()["detail"].startswith("admins_only")
    made = await admin.post("/api/tournaments", json=body(clock, entry_fee=100))
    assert made.status_code == 201, made.text
    tid = made.json()["id"]
    # Players 0 and 1 are related (one device saw both): never at one table of a paid tournament.
    for account in ids[:2]:
        await arena.db.write(lambda s, a=account: _add(s, DeviceAccount(device="shared-device", account_id=a)))
    for player in players:
        answer = await player.post(f"/api/tournaments/{tid}/join")
        assert answer.status_code == 200, answer.text
    assert [(await me(p))["balance"] for p in players] == [900] * 4
    listed = (await players[0].get("/api/tournaments")).json()["tournaments"]
    assert listed[0]["id"] == tid and listed[0]["players"] == 4 and listed[0]["status"] == "scheduled"

    clock.now += timedelta(minutes=5)
    runner = runner_of(arena)
    await runner.step()
    page = (await players[0].get(f"/api/tournaments/{tid}")).json()
    assert page["tournament"]["status"] == "running" and len(page["tables"]) == 2
    assert all(t["bots"] == 0 for t in page["tables"])
    tables = {p: (await players[p].get(f"/api/tournaments/{tid}")).json()["me"]["table"] for p in range(4)}
    assert all(tables.values()) and tables[0] != tables[1], "related accounts were seated together"
    # Each table: the first of its two players (by id) leaves, a forfeit: the other wins, 1 point.
    # He pauses first: a player whose match ends is paired again at once, so two losers who paused
    # only after leaving could meet again, and one of them would win a point.
    losers = []
    for code in set(tables.values()):
        seated = sorted(p for p, c in tables.items() if c == code)
        loser = seated[0]
        losers.append(loser)
        assert (await players[loser].post(f"/api/tournaments/{tid}/leave")).status_code == 200  # paused
        assert (await players[loser].post(f"/api/tables/{code}/leave")).status_code == 200

    async def counted() -> bool:
        page = (await admin.get(f"/api/tournaments/{tid}")).json()
        return bool(page["matches"] >= 2)

    await eventually(counted, timeout=10, what="both matches are counted")
    # Time is up: no more pairing. The two winners may have been paired again the moment their
    # matches ended: that table is played out (its first player leaves), then the prizes are paid.
    clock.now += timedelta(minutes=11)

    async def finished() -> bool:
        for game in (await admin.get(f"/api/tournaments/{tid}/matches")).json():
            if game["status"] == "open":
                leaver = players[ids.index(game["seats"][0]["account_id"])]
                code = (await leaver.get(f"/api/tournaments/{tid}")).json()["me"]["table"]
                if code is not None:
                    await leaver.post(f"/api/tables/{code}/leave")
        await runner.step()
        return bool((await admin.get(f"/api/tournaments/{tid}")).json()["tournament"]["status"] == "finished")

    await eventually(finished, timeout=15, what="the tournament is finished", every=0.1)
    page = (await admin.get(f"/api/tournaments/{tid}")).json()
    assert page["tournament"]["pool"] == 400
    standings = page["standings"]
    points = [row["points"] for row in standings]
    assert points == sorted(points, reverse=True) and points[0] >= 1 and points[-1] == 0
    assert [row["rank"] for row in standings] == [1, 2, 3, 4]
    # 400: 200, 120, 80 to the first three.
    assert [row["prize"] for row in standings] == [200, 120, 80, 0]
    balances = {row["name"]: row["prize"] + 900 for row in standings}
    for p in players:
        mine = await me(p)
        assert mine["balance"] == balances[mine["name"]]
    assert sum([(await me(p))["balance"] for p in players]) == 4000
    await assert_ledger_sound(arena.db)
    # The history and the profile.
    matches = (await admin.get(f"/api/tournaments/{tid}/matches")).json()
    assert {m["status"] for m in matches} == {"finished"}
    played = next(m for m in matches if ids[0] in [s["account_id"] for s in m["seats"]])
    detail = await players[0].get(f"/api/matches/{played['match_id']}")  # in his history (a private table's)
    assert detail.status_code == 200 and detail.json()["result"]["durak"] is not None
    mine = (await players[0].get("/api/tournaments/player/arena0")).json()
    assert mine[0]["id"] == tid and mine[0]["place"] in (1, 2, 3, 4)


async def _add(session: Any, row: Any) -> None:
    session.add(row)
    await session.flush()


async def test_cancel_refunds_and_only_admins_or_the_creator_cancel(arena: Api) -> None:
    clock: Clock = arena.app.state.clock
    admin = await arena.admin()
    a, b = await arena.signed_up("cana"), await arena.signed_up("canb")
    tid = (await admin.post("/api/tournaments", json=body(clock, entry_fee=30))).json()["id"]
    for player in (a, b):
        assert (await player.post(f"/api/tournaments/{tid}/join")).status_code == 200
    assert (await a.post(f"/api/tournaments/{tid}/cancel", json={"reason": "no"})).status_code == 403
    answer = await admin.post(f"/api/tournaments/{tid}/cancel", json={"reason": "the venue flooded"})
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    assert [(await me(p))["balance"] for p in (a, b)] == [1000, 1000]
    assert (await a.post(f"/api/tournaments/{tid}/join")).json()["detail"].startswith("tournament_closed")
    # A player's own free one: he may cancel it before it starts.
    own = (await a.post("/api/tournaments", json=body(clock))).json()["id"]
    assert (await b.post(f"/api/tournaments/{own}/cancel")).status_code == 403
    assert (await a.post(f"/api/tournaments/{own}/cancel")).status_code == 200
    await assert_ledger_sound(arena.db)


async def test_bots_fill_a_table_that_would_wait_and_are_marked(arena: Api) -> None:
    clock: Clock = arena.app.state.clock
    a, b = await arena.signed_up("bota"), await arena.signed_up("botb")
    made = await a.post("/api/tournaments", json=body(clock, seats=3, bot_after_s=0))
    tid = made.json()["id"]
    for player in (a, b):
        assert (await player.post(f"/api/tournaments/{tid}/join")).status_code == 200
    clock.now += timedelta(minutes=5)
    await runner_of(arena).step()
    page = (await a.get(f"/api/tournaments/{tid}")).json()
    assert len(page["tables"]) == 1 and page["tables"][0]["bots"] == 1
    seats = (await a.get(f"/api/tournaments/{tid}/matches")).json()[0]["seats"]
    assert [s["bot_level"] is not None for s in seats] == [False, False, True]
    code = page["me"]["table"]
    table = (await a.get(f"/api/tables/{code}")).json()
    assert [s["kind"] for s in table["seats"]] == ["human", "human", "bot"]


async def test_bad_input_is_refused_clearly(arena: Api) -> None:
    clock: Clock = arena.app.state.clock
    a = await arena.signed_up("bad")
    past = body(clock, starts_at=(clock.now - timedelta(minutes=1)).isoformat())
    assert (await a.post("/api/tournaments", json=past)).status_code == 422
    assert (await a.post("/api/tournaments", json=body(clock, seats=7))).status_code == 422
    assert (await a.get("/api/tournaments/999999")).status_code == 404
    assert (await a.post("/api/tournaments/999999/join")).status_code == 404
    guest = await arena.guest("visitor")
    tid = (await a.post("/api/tournaments", json=body(clock))).json()["id"]
    assert (await guest.post(f"/api/tournaments/{tid}/join")).status_code in (401, 403)


async def test_entrants_are_told_once_that_it_is_about_to_start(arena: Api) -> None:
    clock: Clock = arena.app.state.clock
    a, b = await arena.signed_up("soona"), await arena.signed_up("soonb")
    tid = (await a.post("/api/tournaments", json=body(clock))).json()["id"]  # starts in 5 minutes
    assert (await a.post(f"/api/tournaments/{tid}/join")).status_code == 200
    told: list[tuple[int, int, int]] = []
    runner = runner_of(arena)
    runner.notify = lambda account, tournament, minutes: told.append((account, tournament.id, minutes))
    clock.now += timedelta(seconds=30)  # 4.5 minutes before: inside DURAK_TOURNAMENT_NOTICE_S (300 s)
    await runner.step()
    await runner.step()
    assert told == [((await me(a))["id"], tid, 4)]
    del b
