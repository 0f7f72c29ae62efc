"""Issue 33: one tap to a game signed out (quick play makes a guest on the spot), the searching
state's bot offer (its setting, filling the empty seats with bots), "my tables" with Close, and a
stake the creator cannot cover refused before the table opens."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.config import Settings
from app.main import create_app
from tests.api.support import SECRET, Api
from tests.limits import RELAXED_LIMITS


async def info(api: Api, code: str) -> dict[str, Any]:
    async with api.client() as client:
        response = await client.get(f"/api/tables/{code}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


# ------------------------------------------------------------------ signed out: a guest on the spot


async def test_a_signed_out_visitor_taps_play_a_bot_and_is_a_seated_guest_in_a_running_match(api: Api) -> None:
    async with api.client() as visitor:
        assert (await visitor.get("/api/session")).json() == {"user": None}
        response = await visitor.post("/api/quickplay/bot", json={"level": "easy"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["guest"] is True and body["created"] is True
        me = (await visitor.get("/api/session")).json()["user"]  # the answer's cookie signs him in
        assert me["kind"] == "guest" and me["name"].startswith("Guest") and len(me["name"]) == 9
        table = await info(api, body["code"])
        # seated beside the bot; the table deals once his browser's seed has come (docs/fairness.md)
        assert table["status"] == "waiting" and [s["kind"] for s in table["seats"]] == ["human", "bot"]
        assert table["seats"][body["seat"]]["name"] == me["name"] and table["seats"][body["seat"]]["guest"] is True
        assert (await visitor.post(f"/api/tables/{body['code']}/start")).status_code == 200
        assert (await info(api, body["code"]))["status"] == "playing"
        # Tapping again reuses the guest: no second guest session.
        again = await visitor.post("/api/quickplay/bot", json={"level": "easy"})
        assert again.status_code == 200 and again.json()["guest"] is False
        assert (await visitor.get("/api/session")).json()["user"]["name"] == me["name"]


async def test_a_signed_out_visitor_taps_play_now_and_waits_seated_as_a_guest_with_his_name(api: Api) -> None:
    async with api.client() as visitor, api.client() as other:
        response = await visitor.post("/api/quickplay", json={"seats": 2, "guest_name": "Gost1234"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["guest"] is True and body["table"]["status"] == "waiting"
        assert body["table"]["seats"][body["seat"]]["name"] == "Gost1234"
        second = await other.post("/api/quickplay", json={"seats": 2})  # another visitor: they meet
        assert second.status_code == 200 and second.json()["code"] == body["code"]
        assert (await info(api, body["code"]))["status"] == "playing"


async def test_a_signed_out_visitor_asking_for_a_stake_or_a_bad_name_gets_no_session(api: Api) -> None:
    async with api.client() as visitor:
        staked = await visitor.post("/api/quickplay", json={"stake": 10})
        assert staked.status_code == 403 and "guests" in staked.json()["detail"]
        bad = await visitor.post("/api/quickplay/bot", json={"guest_name": "no spaces here"})
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "guest_name"]
        wrong = await visitor.post("/api/quickplay", json={"deck": 24, "seats": 5})
        assert wrong.status_code == 422
        assert (await visitor.get("/api/session")).json() == {"user": None}
        assert "durak_session" not in visitor.cookies


async def test_a_registered_name_is_not_given_to_a_guest_made_on_the_spot(api: Api) -> None:
    await (await api.signed_up("Taken")).aclose()
    async with api.client() as visitor:
        response = await visitor.post("/api/quickplay/bot", json={"guest_name": "taken"})
        assert response.status_code == 200, response.text
        name = (await visitor.get("/api/session")).json()["user"]["name"]
        assert name.lower() != "taken" and name.startswith("Guest")


async def test_a_cross_site_page_cannot_make_a_guest_and_seat_him(api: Api) -> None:
    async with api.client() as visitor:
        response = await visitor.post(
            "/api/quickplay/bot", json={}, headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
        )
        assert response.status_code == 403 and "cross_site_request" in response.text
        assert "durak_session" not in visitor.cookies
    assert not api.app.state.tables.tables


@pytest.fixture
async def few_guests(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    limits = {**RELAXED_LIMITS, "guests_per_ip": 2}
    settings = Settings(database_url=database_url, secret_key=SECRET, **limits)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


async def test_guests_made_on_the_spot_count_against_the_guest_limit_per_address(few_guests: Api) -> None:
    api = few_guests
    for _ in range(2):
        async with api.client("192.0.2.40") as visitor:
            assert (await visitor.post("/api/quickplay/bot", json={})).status_code == 200
    async with api.client("192.0.2.40") as visitor:
        refused = await visitor.post("/api/quickplay", json={})
        assert refused.status_code == 429 and "too many guest sessions" in refused.json()["detail"]
        assert int(refused.headers["retry-after"]) > 0
        assert (await visitor.post("/api/auth/guest", json={"name": "late"})).status_code == 429
    async with api.client("192.0.2.41") as elsewhere:
        assert (await elsewhere.post("/api/quickplay", json={})).status_code == 200


async def test_a_guest_changes_his_generated_name_and_stays_the_same_guest(api: Api) -> None:
    await (await api.signed_up("Owner")).aclose()
    async with api.client() as visitor:
        body = (await visitor.post("/api/quickplay", json={"seats": 3})).json()
        key = body["table"]["seats"][body["seat"]]["player"]
        renamed = await visitor.post("/api/auth/guest/name", json={"name": "Vasya"})
        assert renamed.status_code == 200 and renamed.json()["name"] == "Vasya" and renamed.json()["guest"] is True
        assert (await visitor.get("/api/session")).json()["user"]["name"] == "Vasya"
        again = (await visitor.post("/api/quickplay", json={"seats": 3})).json()
        assert again["code"] == body["code"] and again["table"]["seats"][again["seat"]]["player"] == key
        assert (await visitor.post("/api/auth/guest/name", json={"name": "owner"})).status_code == 409
        assert (await visitor.post("/api/auth/guest/name", json={"name": "x"})).status_code == 422
    async with api.client() as nobody:
        assert (await nobody.post("/api/auth/guest/name", json={"name": "Vasya"})).status_code == 401
    account = await api.signed_up("Someone")
    assert (await account.post("/api/auth/guest/name", json={"name": "Other"})).status_code == 403


# ------------------------------------------------------------------ searching: the bot offer


async def test_the_bot_offer_delay_is_a_setting_the_client_reads(api: Api) -> None:
    async with api.client() as anyone:
        response = await anyone.get("/api/quickplay/settings")
    assert response.status_code == 200 and response.json() == {"bot_offer_after_s": 20.0}
    api.settings.client = api.settings.client.model_copy(update={"quickplay_bot_offer_s": 7.5})
    async with api.client() as anyone:
        assert (await anyone.get("/api/quickplay/settings")).json() == {"bot_offer_after_s": 7.5}


async def test_nobody_came_the_empty_seats_fill_with_bots_and_the_match_starts(api: Api) -> None:
    alone = await api.guest("alone")
    body = (await alone.post("/api/quickplay", json={"seats": 3, "deck": 36})).json()
    assert body["table"]["status"] == "waiting"
    filled = await alone.post(f"/api/quickplay/{body['code']}/bots", json={"level": "easy"})
    assert filled.status_code == 200, filled.text
    table = await info(api, body["code"])
    assert table["status"] == "playing" and filled.json()["version"] <= table["version"]
    assert sorted(seat["kind"] for seat in table["seats"]) == ["bot", "bot", "human"]
    assert {seat["level"] for seat in table["seats"] if seat["kind"] == "bot"} == {"easy"}
    again = await alone.post(f"/api/quickplay/{body['code']}/bots", json={})
    assert again.status_code == 409 and again.json()["detail"].startswith("match_running")


async def test_a_person_who_came_first_keeps_his_seat_and_bots_take_the_rest(api: Api) -> None:
    first = await api.guest("first")
    body = (await first.post("/api/quickplay", json={"seats": 3, "deck": 52})).json()
    second = await api.guest("second")
    assert (await second.post("/api/quickplay", json={"seats": 3, "deck": 52})).json()["code"] == body["code"]
    # The one who found the table waiting is not its creator, and a person sits there: not his to fill.
    refused = await second.post(f"/api/quickplay/{body['code']}/bots", json={})
    assert refused.status_code == 403 and refused.json()["detail"].startswith("not_creator")
    assert (await first.post(f"/api/quickplay/{body['code']}/bots", json={})).status_code == 200
    table = await info(api, body["code"])
    assert table["status"] == "playing"
    assert sorted(seat["name"] for seat in table["seats"] if seat["kind"] == "human") == ["first", "second"]
    assert [seat["kind"] for seat in table["seats"]].count("bot") == 1


async def test_a_player_who_found_a_table_empty_may_fill_it_and_strangers_and_stakes_may_not(api: Api) -> None:
    opener = await api.guest("opener")
    body = (await opener.post("/api/quickplay", json={"seats": 2, "deck": 24})).json()
    outsider = await api.guest("outsider")
    not_seated = await outsider.post(f"/api/quickplay/{body['code']}/bots", json={})
    assert not_seated.status_code == 409 and not_seated.json()["detail"].startswith("not_seated")
    assert (await opener.post(f"/api/tables/{body['code']}/leave")).status_code == 200  # cancels, table stays
    finder = await api.guest("finder")
    found = (await finder.post("/api/quickplay", json={"seats": 2, "deck": 24})).json()
    assert found["code"] == body["code"] and found["created"] is False
    assert (await finder.post(f"/api/quickplay/{body['code']}/bots", json={})).status_code == 200
    assert (await info(api, body["code"]))["status"] == "playing"
    rich = await api.signed_up("rich")
    staked = (await rich.post("/api/quickplay", json={"stake": 5})).json()
    refused = await rich.post(f"/api/quickplay/{staked['code']}/bots", json={})
    assert refused.status_code == 409 and refused.json()["detail"].startswith("bots_free_tables_only")
    assert (await rich.post("/api/quickplay/nope/bots", json={})).status_code == 404
    assert (await rich.post(f"/api/quickplay/{staked['code']}/bots", json={"level": "god"})).status_code == 422


# ------------------------------------------------------------------ dead ends: stakes, my tables, Close


async def test_a_stake_above_the_balance_is_refused_before_any_table_opens(api: Api) -> None:
    poor = await api.signed_up("poor")  # 1000 coins
    response = await poor.post("/api/tables", json={"stake": 1001, "timer": 30})
    assert response.status_code == 409 and response.json()["detail"].startswith("insufficient_funds")
    assert not api.app.state.tables.tables
    assert (await poor.post("/api/tables", json={"stake": 1000, "timer": 30})).status_code == 201


async def test_my_tables_lists_waiting_and_playing_tables_and_close_frees_a_waiting_slot(api: Api) -> None:
    me = await api.signed_up("busy")
    other = await api.signed_up("other")
    assert (await me.get("/api/me/tables")).json() == {"tables": [], "waiting_limit": 3}
    playing = (await me.post("/api/quickplay/bot", json={})).json()["code"]  # a match I play, not mine to close
    assert (await me.post(f"/api/tables/{playing}/start")).status_code == 200  # dealt without waiting for a seed
    opened = []
    for index in range(3):
        created = await me.post("/api/tables", json={"name": f"T{index}", "private": index == 2})
        assert created.status_code == 201, created.text
        opened.append(created.json()["code"])
    assert (await me.post(f"/api/tables/{opened[0]}/join", json={})).status_code == 200
    refused = await me.post("/api/tables", json={"name": "T3"})
    assert refused.status_code == 429 and refused.json()["detail"].startswith("too_many_tables")
    theirs = (await other.post("/api/tables", json={"name": "theirs"})).json()["code"]
    assert (await me.post(f"/api/tables/{theirs}/join", json={})).status_code == 200

    listed = (await me.get("/api/me/tables")).json()["tables"]
    by_code = {row["code"]: row for row in listed}
    assert set(by_code) == {*opened, playing, theirs}
    assert [row["code"] for row in listed][:1] == [theirs]  # newest first
    assert by_code[opened[0]]["seat"] == 0 and by_code[opened[1]]["seat"] is None
    assert by_code[opened[2]]["private"] is True and by_code[opened[1]]["creator"] is True
    assert by_code[playing]["status"] == "playing" and by_code[theirs]["creator"] is False

    assert (await other.post(f"/api/tables/{opened[1]}/close")).status_code == 403
    assert (await me.post(f"/api/tables/{theirs}/close")).status_code == 403
    running = await me.post(f"/api/tables/{playing}/close")
    assert running.status_code == 409 and running.json()["detail"].startswith("match_running")
    watch = (await info(api, opened[1]))["watch_code"]
    assert (await me.post(f"/api/tables/{watch}/close")).status_code == 403

    assert (await me.post(f"/api/tables/{opened[0]}/close")).status_code == 204
    gone = await me.get(f"/api/tables/{opened[0]}")
    assert gone.status_code == 410 and "its creator closed it" in gone.json()["detail"]
    assert opened[0] not in {row["code"] for row in (await me.get("/api/me/tables")).json()["tables"]}
    assert (await me.post("/api/tables", json={"name": "T3"})).status_code == 201  # a slot is free again
    assert (await me.post(f"/api/tables/{opened[0]}/close")).status_code == 410
    async with api.client() as nobody:
        assert (await nobody.get("/api/me/tables")).status_code == 401
