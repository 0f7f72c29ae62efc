"""Reporting a player at a table: stored with the table's recent chat lines, listed for admins only."""

from __future__ import annotations

import httpx
import orjson
from sqlalchemy import func, select

from app.config import Settings
from app.db.models import ChatReport
from app.main import create_app
from app.tables import chat
from tests.api.support import SECRET, Api
from tests.limits import RELAXED_LIMITS


def _line(player: str, name: str, text: str, seat: int | None = None) -> bytes:
    return orjson.dumps(
        {
            "type": "chat",
            "id": f"id-{text}",
            "from": {"name": name, "seat": seat, "guest": player.startswith("g:"), "player": player},
            "channel": "players" if seat is not None else "spectators",
            "at": 1,
            "text": text,
            "players_hidden": False,
        }
    )


async def test_a_report_keeps_the_reason_and_the_recent_lines_and_admins_list_it(api: Api) -> None:
    admin = await api.admin("root")
    alice = await api.signed_up("alice")
    troll = await api.guest("troll")
    created = await alice.post("/api/tables", json={"timer": 0})
    assert created.status_code == 201, created.text
    code = created.json()["code"]
    assert (await alice.post(f"/api/tables/{code}/join", json={"seat": 0})).status_code == 200
    assert (await troll.post(f"/api/tables/{code}/join", json={"seat": 1})).status_code == 200
    seats = (await alice.get(f"/api/tables/{code}")).json()["seats"]
    alice_key, troll_key = seats[0]["player"], seats[1]["player"]
    broker = api.app.state.tables.broker
    await chat.remember(broker, code, _line(troll_key, "troll", "<b>you are bad</b>", 1))
    await chat.remember(broker, code, _line(alice_key, "alice", "please stop", 0))

    response = await alice.post(f"/api/tables/{code}/report", json={"player": troll_key, "reason": "insults"})
    assert response.status_code == 201, response.text
    report_id = response.json()["id"]

    assert (await alice.get("/api/admin/reports")).status_code == 403
    listed = (await admin.get("/api/admin/reports")).json()
    assert listed["total"] == 1
    item = listed["items"][0]
    assert item["id"] == report_id and item["table_code"] == code and item["reason"] == "insults"
    assert item["reporter"] == {"key": alice_key, "name": "alice"}
    assert item["reported"] == {"key": troll_key, "name": "troll"}
    assert [line["text"] for line in item["lines"]] == ["<b>you are bad</b>", "please stop"]
    assert all("players_hidden" not in line for line in item["lines"])
    match_id = (await alice.get(f"/api/tables/{code}")).json()["match_id"]
    assert match_id is not None and item["match_id"] == match_id  # both seats filled: the match started


async def test_bad_reports_are_refused_and_nothing_is_stored(api: Api) -> None:
    admin = await api.admin("root")
    alice = await api.signed_up("alice")
    code = (await alice.post("/api/tables", json={"timer": 0})).json()["code"]
    await alice.post(f"/api/tables/{code}/join", json={"seat": 0})
    alice_key = (await alice.get(f"/api/tables/{code}")).json()["seats"][0]["player"]

    async def report(client: httpx.AsyncClient, table: str, player: str, reason: str) -> int:
        response = await client.post(f"/api/tables/{table}/report", json={"player": player, "reason": reason})
        return int(response.status_code)

    assert await report(alice, code, alice_key, "x") == 422  # oneself
    assert await report(alice, code, "a:999999", "x") == 404  # nobody there
    assert await report(alice, code, "a:1", "") == 422
    assert await report(alice, code, "a:1", "x" * 501) == 422
    assert await report(alice, "no-such-table", "a:1", "x") == 404
    assert await report(api.client(), code, "a:1", "x") in (401, 403)
    assert (await admin.get("/api/admin/reports")).json() == {"items": [], "page": 1, "page_size": 20, "total": 0}


# --- limits (issue 35.15): each report stores the table's last chat lines ----------------------------


async def _chatty_table(api: Api, chatters: int) -> tuple[str, list[str]]:
    """A table whose recent chat holds lines from ``chatters`` different people; their keys."""
    host = await api.signed_up("host")
    code = (await host.post("/api/tables", json={"timer": 0})).json()["code"]
    keys = [f"g:chatter{i}" for i in range(chatters)]
    for i, key in enumerate(keys):
        await chat.remember(api.app.state.tables.broker, code, _line(key, f"chatter{i}", f"line {i}"))
    return code, keys


async def _reports(api: Api) -> int:
    async with api.db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(ChatReport)) or 0)


async def test_a_player_is_reported_once_per_table(api: Api) -> None:
    code, [key] = await _chatty_table(api, 1)
    reporter = await api.guest("Gus")
    first = await reporter.post(f"/api/tables/{code}/report", json={"player": key, "reason": "spam"})
    assert first.status_code == 201, first.text

    again = await reporter.post(f"/api/tables/{code}/report", json={"player": key, "reason": "spam again"})

    assert again.status_code == 409 and again.json()["detail"].startswith("already_reported"), again.text
    assert await _reports(api) == 1


async def test_reports_are_limited_per_person_and_per_address(database_url: str, cheap_hashing: None) -> None:
    """Before: 30 reports in a row from one guest, each storing 50 chat lines."""
    settings = Settings(
        database_url=database_url, secret_key=SECRET, **{**RELAXED_LIMITS, "reports_per_ip": 8}
    )
    assert (settings.throttle.reports_per_person, settings.throttle.report_window_s) == (5, 3600)  # the defaults
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        api = Api(app=app, settings=settings)
        code, keys = await _chatty_table(api, 12)
        one = await api.guest("Gus")
        answers = [
            (await one.post(f"/api/tables/{code}/report", json={"player": key, "reason": "spam"})).status_code
            for key in keys[:6]
        ]
        assert answers == [201] * 5 + [429]
        refused = await one.post(f"/api/tables/{code}/report", json={"player": keys[6], "reason": "spam"})
        assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 3600
        assert "too many reports from you" in refused.json()["detail"]

        # Another guest from the same address: the address has 3 reports left of its 8.
        two = await api.guest("Gas")
        answers = [
            (await two.post(f"/api/tables/{code}/report", json={"player": key, "reason": "spam"})).status_code
            for key in keys[6:10]
        ]
        assert answers == [201] * 3 + [429]
        # Someone elsewhere is not held back by them.
        elsewhere = api.client("198.51.100.7")
        await elsewhere.post("/api/auth/guest", json={"name": "Gil"})
        other = await elsewhere.post(f"/api/tables/{code}/report", json={"player": keys[10], "reason": "spam"})
        assert other.status_code == 201, other.text
        assert await _reports(api) == 9
