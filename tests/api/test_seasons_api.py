"""Seasons over HTTP: the season list and archive, a season's board, the profile's season and past
places, and the rating change of a match in its results (table.results.ratings)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.db import matches, seasons
from app.db.stakes import MatchRecord
from app.main import create_app
from tests.api.support import SECRET, Api
from tests.limits import RELAXED_LIMITS
from tests.support.wait import eventually

DEC = datetime(2026, 12, 10, 20, 0, tzinfo=UTC)
JAN = datetime(2027, 1, 3, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def social(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    """The app, with every match rated however short it was, and a clock the test moves."""
    settings = Settings(
        database_url=database_url,
        secret_key=SECRET,
        rated_min_bouts=0,
        rated_min_seconds=0,
        **RELAXED_LIMITS,
    )
    app = create_app(settings)
    app.state.clock = Clock(DEC)
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


async def account_id(client: httpx.AsyncClient) -> int:
    me = (await client.get("/api/me")).json()
    return int(me["id"])


async def record(api: Api, match_id: str, winner: int, loser: int, at: datetime) -> None:
    rec = MatchRecord(
        match_id=match_id,
        table_id="t1",
        rules={"deck": 36, "seats": 2, "stake": 0},
        seed=7,
        dealer=0,
        seats=[
            {"seat": 0, "account_id": winner, "display_name": "w"},
            {"seat": 1, "account_id": loser, "display_name": "l"},
        ],
        actions=[],
        result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
        created_at=at - timedelta(minutes=5),
        finished_at=at,
    )
    await api.db.write(lambda s: matches.record_match(s, rec))
    await api.db.write(lambda s: seasons.rate_match(s, match_id=match_id, rules=seasons.SeasonRules()))


async def test_the_season_board_its_archive_and_the_profile(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    a, b = await account_id(alice), await account_id(bob)
    for i in range(5):
        await record(social, f"m{i}", a, b, DEC + timedelta(hours=i))

    listed = (await alice.get("/api/seasons")).json()
    assert listed["current"]["starts_at"].startswith("2026-12-01") and listed["current"]["current"] is True
    board = (await alice.get("/api/seasons/current/standings")).json()
    assert [(row["rank"], row["name"], row["matches"]) for row in board["items"]] == [(1, "alice", 5), (2, "bob", 5)]
    assert board["season"]["archived"] is False
    profile = (await alice.get("/api/players/alice")).json()
    assert profile["season"]["rank"] == 1 and profile["season"]["matches"] == 5
    assert profile["rating"]["matches"] == 5 and profile["past_seasons"] == []

    social.app.state.clock.now = JAN  # a new month: December is archived by the first look at it
    listed = (await bob.get("/api/seasons")).json()
    december = next(item for item in listed["items"] if item["starts_at"].startswith("2026-12-01"))
    assert december["archived"] is True and december["players"] == 2 and december["current"] is False
    assert listed["current"]["starts_at"].startswith("2027-01-01")
    final = (await bob.get(f"/api/seasons/{december['id']}/standings?page_size=1&page=2")).json()
    assert final["total"] == 2 and [(row["rank"], row["name"]) for row in final["items"]] == [(2, "bob")]
    assert (await bob.get("/api/seasons/current/standings")).json()["items"] == []
    profile = (await bob.get("/api/players/alice")).json()
    assert profile["season"] is None  # no match this season yet; all time stays
    assert profile["rating"]["matches"] == 5
    assert [(row["season_id"], row["rank"], row["players"]) for row in profile["past_seasons"]] == [
        (december["id"], 1, 2)
    ]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/seasons/999/standings", 404),
        ("/api/seasons/0/standings", 422),
        ("/api/seasons/last/standings", 422),
        ("/api/seasons/1%00/standings", 404),  # NUL in any path: BrowserGuard
        ("/api/seasons/current/standings?page_size=101", 422),
        ("/api/seasons/current/standings?page=0", 422),
        ("/api/seasons?page=-1", 422),
    ],
)
async def test_bad_season_requests_are_refused_clearly(social: Api, path: str, status: int) -> None:
    client = social.client()
    response = await client.get(path)
    assert response.status_code == status, response.text
    assert "detail" in response.json()


async def table_state(client: httpx.AsyncClient, code: str) -> dict[str, Any]:
    response = await client.get(f"/api/tables/{code}")
    assert response.status_code == 200, response.text
    table: dict[str, Any] = response.json()
    return table


async def test_the_results_of_a_rated_match_carry_its_rating_change(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    created = await alice.post("/api/tables", json={"timer": 60, "bot_delay_ms": 0})
    code = created.json()["code"]
    for client in (alice, bob):
        assert (await client.post(f"/api/tables/{code}/join", json={})).status_code == 200
    await eventually(lambda: _status(alice, code, "playing"), what="the match started", every=0.02)
    assert (await bob.post(f"/api/tables/{code}/leave")).status_code == 200  # a forfeit: alice wins

    async def rated() -> bool:
        results = (await table_state(alice, code)).get("results") or {}
        return bool(results.get("ratings"))

    await eventually(rated, timeout=10, what="the results carry the rating change", every=0.05)
    table = await table_state(alice, code)
    ratings = table["results"]["ratings"]
    seat_of = {seat["name"]: str(seat["seat"]) for seat in table["seats"]}
    won, lost = ratings[seat_of["alice"]], ratings[seat_of["bob"]]
    assert won["change"] > 0 > lost["change"] and won["provisional"] is True
    assert won["season_change"] > 0 > lost["season_change"]
    # the same numbers as the profile's history and the season board
    profile = (await alice.get("/api/players/alice")).json()
    assert profile["rating_history"][-1]["change"] == won["change"]
    assert profile["season"]["rating"] == won["season_rating"]


async def _status(client: httpx.AsyncClient, code: str, wanted: str) -> bool:
    return (await table_state(client, code))["status"] == wanted


async def test_an_unrated_match_has_no_rating_change_in_its_results(social: Api) -> None:
    alice = await social.signed_up("alice")
    code = (await alice.post("/api/tables", json={"timer": 60, "bot_delay_ms": 0})).json()["code"]
    assert (await alice.post(f"/api/tables/{code}/join", json={})).status_code == 200
    assert (await alice.post(f"/api/tables/{code}/bots", json={"level": "easy"})).status_code == 200
    await eventually(lambda: _status(alice, code, "playing"), what="the match started", every=0.02)
    assert (await alice.post(f"/api/tables/{code}/leave")).status_code == 200

    async def in_history() -> bool:
        return (await alice.get("/api/matches?account=me")).json()["total"] == 1

    await eventually(in_history, timeout=10, what="the match is recorded", every=0.05)
    table = await table_state(alice, code)
    assert table["results"] is not None and table["results"].get("ratings") is None
