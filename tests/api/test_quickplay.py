"""POST /api/quickplay and /api/quickplay/bot, GET /api/leaderboard and GET /api/players/{name}."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import matches
from app.db.stakes import MatchRecord
from tests.api.support import Api
from tests.support.wait import eventually

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


async def quickplay(client: httpx.AsyncClient, **prefs: Any) -> dict[str, Any]:
    response = await client.post("/api/quickplay", json=prefs)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def table(api: Api, code: str) -> dict[str, Any]:
    async with api.client() as client:
        response = await client.get(f"/api/tables/{code}")
    assert response.status_code == 200, response.text
    info: dict[str, Any] = response.json()
    return info


async def test_two_players_with_the_same_preferences_meet_and_the_match_starts(api: Api) -> None:
    alice = await api.signed_up("alice")
    bob = await api.signed_up("bob")
    first = await quickplay(alice, deck=36, seats=2)
    assert first["created"] is True and first["table"]["status"] == "waiting"
    assert first["table"]["rules"]["deck"] == 36 and first["table"]["rules"]["seats"] == 2
    again = await quickplay(alice, deck=36, seats=2)  # a second tap: the same seat, not another
    assert again["code"] == first["code"] and again["seat"] == first["seat"] and again["created"] is False
    second = await quickplay(bob, deck=36, seats=2)
    assert second["code"] == first["code"] and second["created"] is False and second["seat"] != first["seat"]
    info = await table(api, first["code"])
    assert info["status"] == "playing"
    assert sorted(seat["name"] for seat in info["seats"]) == ["alice", "bob"]


async def test_the_oldest_matching_table_is_filled_first_and_other_preferences_get_their_own(api: Api) -> None:
    ann = await api.signed_up("ann")
    ben = await api.signed_up("ben")
    cat = await api.signed_up("cat")
    dan = await api.signed_up("dan")
    older = await quickplay(ann, seats=3, deck=36)
    created = api.app.state.tables.tables[older["code"]].created  # wall-clock seconds
    await eventually(lambda: time.time() > created, what="the next table is created later")
    newer = await quickplay(ben, seats=3, deck=52)
    assert newer["code"] != older["code"] and newer["created"]
    anything_for_three = await quickplay(cat, seats=3)  # no deck preference: the oldest 3-seat table
    assert anything_for_three["code"] == older["code"]
    no_transfer = await quickplay(dan, seats=3, deck=36, transfer=not older["table"]["rules"]["transfer"])
    assert no_transfer["code"] not in (older["code"], newer["code"])
    timed = await quickplay(dan, seats=3, deck=36, timer=0)
    assert timed["created"] and timed["table"]["rules"]["timer"] == 0


async def test_guests_play_free_tables_only(api: Api) -> None:
    guest = await api.guest("visitor")
    rich = await api.signed_up("rich")
    free = await quickplay(guest)
    assert free["table"]["rules"]["stake"] == 0
    assert free["table"]["seats"][free["seat"]]["rating"] is None  # guests are not rated
    refused = await guest.post("/api/quickplay", json={"stake": 10})
    assert refused.status_code == 403 and "guests" in refused.json()["detail"]
    staked = await quickplay(rich, stake=10)
    assert staked["code"] != free["code"] and staked["table"]["rules"]["stake"] == 10
    seat = staked["table"]["seats"][staked["seat"]]
    assert seat["rating"] == {"rating": 1500, "provisional": True}
    broke = await rich.post("/api/quickplay", json={"stake": 5000})
    assert broke.status_code == 409 and broke.json()["detail"].startswith("insufficient_funds")
    assert (await rich.post("/api/quickplay", json={"deck": 40})).status_code == 422
    assert (await rich.post("/api/quickplay", json={"seats": 7})).status_code == 422
    async with api.client() as nobody:  # signed out: a guest made on the spot (tests/api/test_quickplay_guests.py)
        assert (await nobody.post("/api/quickplay", json={"stake": 10})).status_code == 403


async def test_fifty_concurrent_callers_fill_tables_without_overfilling_or_double_seating(api: Api) -> None:
    clients = [await api.guest(f"g{i}") for i in range(50)]
    try:
        answers = await asyncio.gather(*(quickplay(client, seats=3, deck=24, timer=0) for client in clients))
        per_table = Counter(answer["code"] for answer in answers)
        assert len(per_table) == 17  # 16 full tables of 3 and one with 2
        assert sorted(per_table.values()) == [2] + [3] * 16
        players: list[str] = []
        for code in per_table:
            info = await table(api, code)
            seated = [seat["player"] for seat in info["seats"] if seat["kind"] == "human"]
            assert len(seated) == per_table[code] and len(set(seated)) == len(seated)
            assert info["status"] == ("playing" if per_table[code] == 3 else "waiting")
            players += seated
        assert len(players) == len(set(players)) == 50
        # Everyone taps again, all at once: each keeps his seat (waiting or playing), no table opens.
        repeats = await asyncio.gather(*(quickplay(client, seats=3, deck=24, timer=0) for client in clients))
        assert [again["code"] for again in repeats] == [answer["code"] for answer in answers]
        assert [again["seat"] for again in repeats] == [answer["seat"] for answer in answers]
        assert not any(again["created"] for again in repeats)
        # and one more player fills the table that waits
        waiting = next(code for code, count in per_table.items() if count == 2)
        latecomer = await api.guest("late")
        assert (await quickplay(latecomer, seats=3, deck=24, timer=0))["code"] == waiting
        await latecomer.aclose()
    finally:
        await asyncio.gather(*(client.aclose() for client in clients))
    info = await table(api, waiting)
    assert len({seat["player"] for seat in info["seats"]}) == 3 and info["status"] == "playing"


async def test_play_a_bot_opens_a_private_match_dealt_once_its_player_is_ready(api: Api) -> None:
    solo = await api.signed_up("solo")
    response = await solo.post("/api/quickplay/bot", json={"level": "easy", "deck": 24})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["table"]["private"] is True and body["table"]["rules"]["seats"] == 2
    # It deals on its player's seed for its commitment (tests/api/test_quickplay_seeds.py), or on start.
    assert (await table(api, body["code"]))["status"] == "waiting"
    assert (await solo.post(f"/api/tables/{body['code']}/start")).status_code == 200
    info = await table(api, body["code"])
    assert info["status"] == "playing"
    assert [seat["kind"] for seat in info["seats"]] == ["human", "bot"] and info["seats"][1]["level"] == "easy"
    lobby = (await solo.get("/api/tables")).json()["tables"]
    assert body["code"] not in {row["code"] for row in lobby}
    assert (await solo.post("/api/quickplay/bot", json={"level": "godlike"})).status_code == 422


async def _record(api: Api, match_id: str, winner: tuple[int, str], loser: tuple[int, str], *, minute: int) -> None:
    async def write(session: AsyncSession) -> None:
        await matches.record_match(
            session,
            MatchRecord(
                match_id=match_id,
                table_id="t",
                rules={"deck": 36, "seats": 2, "stake": 0},
                seed=1,
                dealer=0,
                seats=[
                    {"seat": 0, "account_id": winner[0], "display_name": winner[1]},
                    {"seat": 1, "account_id": loser[0], "display_name": loser[1]},
                ],
                actions=[],
                result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
                created_at=T0,
                finished_at=T0 + timedelta(minutes=minute),
            ),
        )

    await api.db.write(write)


async def test_leaderboard_and_profiles(api: Api) -> None:
    champ = await api.signed_up("Champ")
    rookie = await api.signed_up("rookie")
    champ_id = (await champ.get("/api/me")).json()["id"]
    rookie_id = (await rookie.get("/api/me")).json()["id"]
    board = (await champ.get("/api/leaderboard")).json()
    assert board == {"items": [], "page": 1, "page_size": 25, "total": 0}
    for i in range(4):
        await _record(api, f"m{i}", (champ_id, "Champ"), (rookie_id, "rookie"), minute=i)
    assert (await champ.get("/api/leaderboard")).json()["total"] == 0  # still provisional
    await _record(api, "m4", (champ_id, "Champ"), (rookie_id, "rookie"), minute=4)
    board = (await rookie.get("/api/leaderboard")).json()
    assert [(row["rank"], row["name"], row["matches"]) for row in board["items"]] == [
        (1, "Champ", 5),
        (2, "rookie", 5),
    ]
    assert board["items"][0]["rating"] > 1500 > board["items"][1]["rating"]
    page2 = (await rookie.get("/api/leaderboard", params={"page": 2, "page_size": 1})).json()
    assert [row["name"] for row in page2["items"]] == ["rookie"] and page2["total"] == 2
    assert (await rookie.get("/api/leaderboard", params={"page_size": 500})).status_code == 422

    profile = (await rookie.get("/api/players/champ")).json()  # names are case-insensitive
    assert profile["name"] == "Champ"
    assert profile["rating"] == {"rating": board["items"][0]["rating"], "provisional": False, "matches": 5}
    assert [point["match_id"] for point in profile["rating_history"]] == ["m0", "m1", "m2", "m3", "m4"]
    assert profile["rating_history"][-1]["rating"] == profile["rating"]["rating"]
    assert profile["matches_played"] == 5
    assert profile["by_table_type"] == {"2p-36": {"played": 5, "wins": 5, "durak": 0, "draws": 0}}
    recent = profile["recent_matches"]
    assert [row["match_id"] for row in recent] == ["m4", "m3", "m2", "m1", "m0"]
    assert recent[0]["place"] == 1 and not recent[0]["durak"] and recent[0]["rating_change"] > 0
    assert recent[0]["players"] == ["Champ", "rookie"]
    assert profile["member_since"]

    listed = (await champ.get("/api/matches", params={"account": "me"})).json()["items"]
    assert [item["id"] for item in listed] == ["m4", "m3", "m2", "m1", "m0"]
    newest = {seat["display_name"]: seat for seat in listed[0]["seats"]}
    assert newest["Champ"]["rating"] == profile["rating"]["rating"] and newest["Champ"]["rating_change"] > 0
    assert newest["rookie"]["rating"] < 1500 and newest["rookie"]["rating_change"] < 0
    detail = (await champ.get("/api/matches/m0")).json()
    assert detail["seats"][0]["rating"] == profile["rating_history"][0]["rating"]

    loser = (await champ.get("/api/players/rookie")).json()
    assert loser["by_table_type"]["2p-36"]["durak"] == 5 and loser["recent_matches"][0]["rating_change"] < 0
    assert (await champ.get("/api/players/nobody-here")).status_code == 404
    guest = await api.guest("wanderer")
    assert (await guest.get("/api/players/wanderer")).status_code == 404  # guests have no profile
