"""Integrity end to end over the REST API (docs/integrity.md): the device cookie, related accounts at
staked tables (one device; one address within a day), quick-win warnings and reports, the pair's
daily coin cap (joins, quick play, rematch), unrated short matches, the admins' review (dismiss,
warn, freeze) and a ledger-correct reversal."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.config import Settings
from app.db import ledger
from app.db.models import AdminAction, CountedMatches, LedgerAccount, LedgerTransfer, Match, RatingChange
from app.engine import decision, legal_actions
from app.main import create_app
from app.tables import commands as cmd
from tests.api.support import PASSWORD, SECRET, Api, at_table
from tests.limits import RELAXED_LIMITS
from tests.support.clock import FakeClock
from tests.support.wait import eventually

DEVICE = "durak_device"
MakeApi = Callable[..., Awaitable[Api]]


@pytest.fixture
async def make_api(database_url: str, cheap_hashing: None) -> AsyncIterator[MakeApi]:
    """An app with some settings changed (one per test)."""
    apps: list[Any] = []

    async def make(**settings: Any) -> Api:
        values = {**RELAXED_LIMITS, **settings}
        config = Settings(database_url=database_url, secret_key=SECRET, starting_balance=1000, **values)
        app = create_app(config)
        context = app.router.lifespan_context(app)
        await context.__aenter__()
        apps.append(context)
        return Api(app=app, settings=config)

    yield make
    for context in reversed(apps):
        await context.__aexit__(None, None, None)


async def me(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/api/me")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def open_table(client: httpx.AsyncClient, **params: Any) -> str:
    response = await client.post("/api/tables", json={"timer": 0, "bot_delay_ms": 0, **params})
    assert response.status_code == 201, response.text
    return str(response.json()["code"])


async def join(client: httpx.AsyncClient, code: str) -> httpx.Response:
    return await client.post(f"/api/tables/{code}/join", json={})


async def signup(api: Api, name: str, client: httpx.AsyncClient | None = None) -> httpx.AsyncClient:
    client = client or api.client()
    response = await client.post("/api/auth/signup", json={"name": name, "password": PASSWORD})
    assert response.status_code == 201, response.text
    return client


async def recorded(api: Api, match_id: str) -> None:
    async def found() -> bool:
        async with api.db.session() as session:
            return await session.get(Match, match_id) is not None

    await eventually(found, 10, f"match {match_id} is recorded")


async def quick_win(api: Api, winner: httpx.AsyncClient, loser: httpx.AsyncClient, *, stake: int = 0) -> str:
    """A match the loser leaves at once (a quick win: by leaving, and short). Its id, once recorded.
    At a staked table both have it open and the winner confirms (the loser did, by filling it)."""
    code = await open_table(winner, stake=stake)
    for client in (winner, loser) if stake > 0 else ():
        await at_table(api, client, code)
    assert (await join(winner, code)).status_code == 200
    assert (await join(loser, code)).status_code == 200
    if stake > 0:
        assert (await winner.post(f"/api/tables/{code}/ready")).status_code == 200
    info = (await winner.get(f"/api/tables/{code}")).json()
    assert info["status"] == "playing", info
    assert (await loser.post(f"/api/tables/{code}/leave")).status_code == 200
    match_id = str(info["match_id"])
    await recorded(api, match_id)
    return match_id


async def rating_rows(api: Api) -> int:
    async with api.db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(RatingChange)) or 0)


def set_cookies(response: httpx.Response) -> dict[str, str]:
    return {h.split("=", 1)[0]: h for h in response.headers.get_list("set-cookie")}


# ---------------------------------------------------------------------- the device cookie


async def test_every_browser_gets_a_long_lived_device_cookie_once(api: Api) -> None:
    client = api.client()
    first = await client.get("/api/health")
    header = set_cookies(first)[DEVICE]
    flags = {part.strip().split("=", 1)[0].lower(): part for part in header.split(";")}
    assert "httponly" in flags and flags["samesite"].strip().lower() == "samesite=lax"
    assert flags["max-age"].strip() == f"Max-Age={2 * 365 * 24 * 3600}" and flags["path"].strip() == "Path=/"
    assert "secure" not in flags
    device = client.cookies[DEVICE]
    again = await client.get("/api/health")
    assert DEVICE not in set_cookies(again) and client.cookies[DEVICE] == device
    forged = api.client()
    forged.cookies.set(DEVICE, "not a device id!")  # not one the server makes: replaced
    assert DEVICE in set_cookies(await forged.get("/api/health"))
    https = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=api.app, client=("127.0.0.1", 5000)), base_url="https://testserver"
    )
    secure = set_cookies(await https.get("/api/health"))
    assert "__Host-durak_device" in secure and "Secure" in secure["__Host-durak_device"]


# ---------------------------------------------------------------------- related accounts


async def test_accounts_of_one_device_may_not_share_a_staked_table(make_api: MakeApi) -> None:
    api = await make_api(rated_min_bouts=0, rated_min_seconds=0)  # any match would be rated but theirs
    alice = await api.signed_up("alice")
    twin = api.client()
    twin.cookies.set(DEVICE, alice.cookies[DEVICE])  # the same browser, a second account
    await signup(api, "alice2", twin)
    stranger = await api.signed_up("stranger")
    code = await open_table(alice, stake=100)
    for client in (alice, stranger):
        await at_table(api, client, code)
    assert (await join(alice, code)).status_code == 200
    refused = await join(twin, code)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert detail.startswith("related_accounts: ") and "alice2" in detail and "same device" in detail
    assert (await join(stranger, code)).status_code == 200  # the seat went to someone unrelated
    assert (await alice.post(f"/api/tables/{code}/ready")).status_code == 200
    assert (await alice.get(f"/api/tables/{code}")).json()["status"] == "playing"
    # free tables: allowed, and never rated between them
    await quick_win(api, alice, twin)
    assert await rating_rows(api) == 0
    await quick_win(api, alice, stranger)
    assert await rating_rows(api) == 2  # the same match against an unrelated account is rated


async def test_logging_in_on_a_device_relates_the_accounts(api: Api) -> None:
    alice, bob = await api.signed_up("alice"), await api.signed_up("bob")
    code = await open_table(alice, stake=50)
    assert (await join(alice, code)).status_code == 200
    shared = api.client()
    shared.cookies.set(DEVICE, alice.cookies[DEVICE])
    response = await shared.post("/api/auth/login", json={"name": "bob", "password": PASSWORD})
    assert response.status_code == 200
    assert (await join(bob, code)).json()["detail"].startswith("related_accounts")
    # sitting down is noted too: carol's session used once in alice's browser relates them
    carol = await api.signed_up("carol")
    borrowed = api.client()
    borrowed.cookies.set(DEVICE, alice.cookies[DEVICE])
    borrowed.cookies.set("durak_session", carol.cookies["durak_session"])
    assert (await join(borrowed, await open_table(carol))).status_code == 200
    assert (await join(carol, code)).json()["detail"].startswith("related_accounts")


async def test_accounts_made_from_one_address_within_a_day_are_related_when_the_rule_is_on(make_api: MakeApi) -> None:
    api = await make_api(related_same_ip=True)
    home = await signup(api, "home1", api.client("203.0.113.9"))
    sibling = await signup(api, "home2", api.client("203.0.113.9"))
    elsewhere = await signup(api, "away", api.client("198.51.100.20"))
    code = await open_table(home, stake=10)
    assert (await join(home, code)).status_code == 200
    refused = await join(sibling, code)
    assert refused.status_code == 409 and "same network address" in refused.json()["detail"]
    assert (await join(elsewhere, code)).status_code == 200
    free = await open_table(home)
    assert (await join(home, free)).status_code == 200 and (await join(sibling, free)).status_code == 200


@pytest.mark.parametrize(("peer", "related"), [("10.0.0.2", False), ("10.0.0.66", True)])
async def test_the_sign_up_address_comes_from_x_forwarded_for_only_behind_a_trusted_proxy(
    make_api: MakeApi, peer: str, related: bool
) -> None:
    """Behind the trusted proxy 10.0.0.2 two different client addresses are unrelated; an untrusted
    peer's X-Forwarded-For is ignored, so both sign-ups come from the peer's one address."""
    api = await make_api(related_same_ip=True)
    proxied = ProxyHeadersMiddleware(api.app, trusted_hosts="10.0.0.2")

    def client(forwarded: str) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=proxied, client=(peer, 40000))
        return httpx.AsyncClient(
            transport=transport, base_url="http://testserver", headers={"X-Forwarded-For": forwarded}
        )

    first = await signup(api, "first", client("198.51.100.1"))
    second = await signup(api, "second", client("198.51.100.2"))
    code = await open_table(first, stake=10)
    assert (await join(first, code)).status_code == 200
    answer = await join(second, code)
    assert (answer.status_code == 409) is related, answer.text


# ---------------------------------------------------------------------- matches that count


async def test_a_short_match_moves_no_rating_unless_a_player_who_had_moved_ran_out_of_time(api: Api) -> None:
    alice, bob = await api.signed_up("alice"), await api.signed_up("bob")
    await quick_win(api, alice, bob)  # left at once: too short, and by leaving
    assert await rating_rows(api) == 0
    code = await open_table(alice, timer=5)
    assert (await join(alice, code)).status_code == 200 and (await join(bob, code)).status_code == 200
    registry = api.app.state.tables
    actor = registry.tables[code]
    clock = FakeClock(time.monotonic())
    actor.clock = clock  # the table's timers on a clock the test moves
    for _ in range(2):  # the lead, and the defender's answer: both players have moved
        seat = decision(actor.game)["seats"][0]
        action = legal_actions(actor.game, seat)[-1]  # a lead, or a take
        reply = await registry.call(code, cmd.move_of(action), actor.seats[seat].principal, id=uuid.uuid4().hex)
        assert reply["type"] == "ack", reply
    for _ in range(20):  # nobody moves again: the timer decides, pass by pass, until someone forfeits
        if actor.status != "playing":
            break
        await clock.advance(6)
        await registry.call(code, cmd.Info(), actor.seats[0].principal)
    assert actor.status == "finished" and actor.results is not None
    outcome = actor.results["outcome"]
    assert outcome["reason"] == "timeout" and outcome["forfeit"] is not None
    await recorded(api, actor.match_id)
    assert await rating_rows(api) == 2  # a few seconds, one or two bouts: rated all the same


# ---------------------------------------------------------------------- the farming watch


async def test_quick_wins_by_leaving_warn_the_quitter_at_three_and_report_to_the_admins_at_four(api: Api) -> None:
    root = await api.admin()
    winner, loser = await api.signed_up("winner"), await api.signed_up("loser")
    ids = [await quick_win(api, winner, loser, stake=10) for _ in range(2)]
    assert (await winner.get("/api/me/integrity")).json() == {"frozen": None, "warnings": []}
    ids.append(await quick_win(api, winner, loser, stake=10))
    # The loser left every one of them: only he is warned; the winner's fair-play banner stays empty.
    assert (await winner.get("/api/me/integrity")).json()["warnings"] == []
    for client in (loser,):
        warnings = (await client.get("/api/me/integrity")).json()["warnings"]
        assert len(warnings) == 1 and "winner has won 3 matches quickly against loser" in warnings[0]["text"]
        # What the web client words in the player's language.
        assert warnings[0]["kind"] == "quick_wins"
        params = warnings[0]["params"]
        assert {k: params[k] for k in ("winner", "loser", "count", "bouts", "report_at")} == {
            "winner": "winner",
            "loser": "loser",
            "count": 3,
            "bouts": 3,
            "report_at": 4,
        }
    assert (await root.get("/api/admin/integrity/flags")).json()["total"] == 0
    ids.append(await quick_win(api, winner, loser, stake=10))
    page = (await root.get("/api/admin/integrity/flags", params={"status": "open"})).json()
    assert page["total"] == 1 and page["offset"] == 0 and page["limit"] == 20
    flag = page["flags"][0]
    assert flag["kind"] == "quick_wins" and flag["status"] == "open" and flag["note"] is None
    assert [(a["name"], a["frozen"]) for a in flag["accounts"]] == [("winner", False), ("loser", False)]
    assert [m["id"] for m in flag["matches"]] == list(reversed(ids))
    assert all(m["coins"] == 10 and m["winner"] == "winner" and not m["reversed"] for m in flag["matches"])
    assert flag["matches"][0]["url"] == f"/#/replay/{ids[-1]}"
    assert flag["coin_flow"]["b_to_a"] == 40 and flag["coin_flow"]["a_to_b"] == 0
    [day] = flag["coin_flow"]["days"]
    assert day["quick_wins_a"] == 4 and day["quick_wins_b"] == 0 and day["b_to_a"] == 40
    assert (await root.get(f"/api/admin/integrity/flags/{flag['id']}")).json() == flag
    assert (await root.get("/api/admin/integrity/flags/999")).status_code == 404
    assert (await winner.get("/api/admin/integrity/flags")).status_code == 403
    assert (await api.client().get("/api/admin/integrity/flags")).status_code == 401
    assert await rating_rows(api) == 0  # quick matches move no rating


async def test_the_pair_cap_refuses_joins_quick_play_and_the_rematch(make_api: MakeApi) -> None:
    api = await make_api(pair_daily_coin_cap=150)
    a, b, c = await api.signed_up("anna"), await api.signed_up("boris"), await api.signed_up("carl")
    await quick_win(api, a, b, stake=100)
    # a rematch at the same table would pass the cap (100 moved + 100): refused, no stake taken
    tables = api.app.state.tables
    code = next(code for code, actor in tables.tables.items() if actor.status == "finished")
    assert (await a.post(f"/api/tables/{code}/rematch")).status_code == 200
    refused = await b.post(f"/api/tables/{code}/rematch")
    assert refused.status_code == 409 and refused.json()["detail"].startswith("pair_cap: ")
    assert (await me(a))["balance"] == 1100 and (await me(b))["balance"] == 900
    # a new table between them, too
    fresh = await open_table(a, stake=150)
    assert (await join(a, fresh)).status_code == 200
    assert (await join(b, fresh)).json()["detail"].startswith("pair_cap")
    assert (await join(c, fresh)).status_code == 200  # anyone else may sit
    # the refused rematch left both seated at a table that waits: they leave it
    assert (await a.post(f"/api/tables/{code}/leave")).status_code == 200
    assert (await b.post(f"/api/tables/{code}/leave")).status_code == 200
    # quick play passes over the table a waits at and opens another for b
    waiting = (await a.post("/api/quickplay", json={"stake": 100, "timer": 0})).json()
    answer = (await b.post("/api/quickplay", json={"stake": 100, "timer": 0})).json()
    assert answer["code"] != waiting["code"] and answer["created"] is True
    assert (await me(b))["balance"] == 900  # nothing staked: nobody joined him yet
    root = await api.admin()
    flags = (await root.get("/api/admin/integrity/flags")).json()["flags"]
    assert [f["kind"] for f in flags] == ["pair_cap"] and len(flags[0]["matches"]) == 1


# ---------------------------------------------------------------------- the admins' actions


async def test_admins_dismiss_warn_and_freeze(api: Api) -> None:
    root = await api.admin()
    winner, loser = await api.signed_up("winner"), await api.signed_up("loser")
    for _ in range(4):
        await quick_win(api, winner, loser)
    flag = (await root.get("/api/admin/integrity/flags")).json()["flags"][0]
    dismissed = await root.post(f"/api/admin/integrity/flags/{flag['id']}/dismiss", json={"note": "brothers"})
    assert dismissed.status_code == 200 and dismissed.json()["status"] == "dismissed"
    assert dismissed.json()["note"] == "brothers"
    assert (await root.get("/api/admin/integrity/flags")).json()["total"] == 0
    assert (await root.get("/api/admin/integrity/flags", params={"status": "dismissed"})).json()["total"] == 1
    warned = await root.post(f"/api/admin/integrity/flags/{flag['id']}/warn", json={"note": "no more farming"})
    assert warned.json()["status"] == "warned"
    assert (await root.get("/api/admin/integrity/flags", params={"status": "all"})).json()["total"] == 1
    # both get the admin's warning; the automatic fair-play one went to the quitter only (docs/integrity.md)
    for client, count in ((winner, 1), (loser, 2)):
        warnings = (await client.get("/api/me/integrity")).json()["warnings"]
        assert len(warnings) == count and "no more farming" in warnings[0]["text"]
        assert warnings[0]["kind"] == "admin_warned"
        assert warnings[0]["params"] == {"a": "winner", "b": "loser", "note": "no more farming"}
    assert (await winner.post(f"/api/admin/integrity/flags/{flag['id']}/warn", json={"note": ""})).status_code == 403

    winner_id = flag["accounts"][0]["id"]
    frozen = await root.post(f"/api/admin/accounts/{winner_id}/freeze", json={"reason": "farming coins"})
    assert frozen.json() == {"id": winner_id, "frozen": True, "reason": "farming coins"}
    assert (await root.post(f"/api/admin/accounts/{winner_id}/freeze", json={"reason": "  "})).status_code == 422
    assert (await root.post("/api/admin/accounts/99999/freeze", json={"reason": "x"})).status_code == 404
    mine = (await winner.get("/api/me/integrity")).json()
    assert mine["frozen"]["reason"] == "farming coins" and mine["frozen"]["since"]
    flag_now = (await root.get(f"/api/admin/integrity/flags/{flag['id']}")).json()
    assert flag_now["accounts"][0]["frozen"] is True
    listed = (await root.get("/api/admin/accounts", params={"page_size": 100})).json()["items"]
    assert {a["id"]: a["frozen"] for a in listed if a["frozen"]} == {winner_id: "farming coins"}  # the admin's list
    staked = await open_table(loser, stake=10)
    refused = await join(winner, staked)
    assert refused.status_code == 403
    assert refused.json()["detail"] == "staked_play_frozen: your staked play is frozen by an admin: farming coins"
    quick = await winner.post("/api/quickplay", json={"stake": 10})
    assert quick.status_code == 403 and "farming coins" in quick.json()["detail"]
    assert (await join(winner, await open_table(loser))).status_code == 200  # free tables stay open
    thawed = await root.post(f"/api/admin/accounts/{winner_id}/unfreeze")
    assert thawed.json() == {"id": winner_id, "frozen": False, "reason": None}
    listed = (await root.get("/api/admin/accounts", params={"page_size": 100})).json()["items"]
    assert [a for a in listed if a["frozen"]] == []
    assert (await join(winner, staked)).status_code == 200
    async with api.db.session() as session:
        actions = (await session.scalars(select(AdminAction.action).order_by(AdminAction.id))).all()
    assert [a for a in actions if a != "set_role:admin"] == [
        "flag_dismiss",
        "flag_dismiss",
        "flag_warn",
        "flag_warn",
        "freeze_staked",
        "unfreeze_staked",
    ]


async def test_a_reversal_is_ledger_correct_audited_and_happens_once(api: Api) -> None:
    root = await api.admin()
    winner, loser = await api.signed_up("winner"), await api.signed_up("loser")
    match_id = await quick_win(api, winner, loser, stake=250)
    assert ((await me(winner))["balance"], (await me(loser))["balance"]) == (1250, 750)
    answer = await root.post(f"/api/admin/matches/{match_id}/reverse", json={"note": "farmed"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "match_id": match_id,
        "transfers": [{"account": "winner", "amount": -250}, {"account": "loser", "amount": 250}],
        "reversed": True,
        "shortfall": 0,
    }
    assert ((await me(winner))["balance"], (await me(loser))["balance"]) == (1000, 1000)
    again = await root.post(f"/api/admin/matches/{match_id}/reverse", json={"note": "farmed"})
    assert again.status_code == 409 and again.json()["detail"].startswith("already_reversed")
    assert ((await me(winner))["balance"], (await me(loser))["balance"]) == (1000, 1000)
    free = await quick_win(api, winner, loser)
    nothing = await root.post(f"/api/admin/matches/{free}/reverse", json={"note": ""})
    assert nothing.status_code == 409 and nothing.json()["detail"].startswith("nothing_to_reverse")
    assert (await root.post("/api/admin/matches/nope/reverse", json={"note": ""})).status_code == 404
    assert (await winner.post(f"/api/admin/matches/{match_id}/reverse", json={"note": ""})).status_code == 403
    async with api.db.session() as session:
        report = await ledger.audit(session)
        total = await session.scalar(select(func.sum(LedgerAccount.balance)))
        reversal = await session.scalar(select(LedgerTransfer).where(LedgerTransfer.key == f"reverse:{match_id}"))
        audit = (
            await session.execute(
                select(AdminAction.target_id, AdminAction.amount).where(AdminAction.action == "reverse_match")
            )
        ).all()
    assert report.ok and total == 0
    assert reversal is not None and reversal.reason == "match_reversal" and reversal.memo == "farmed"
    ids = {(await me(c))["id"]: c for c in (winner, loser)}
    assert sorted(audit) == sorted([(min(ids), -250), (max(ids), 250)])
    # the admin's ledger view shows the new entries next to the match's own
    winner_id = (await me(winner))["id"]
    entries = (await root.get(f"/api/admin/accounts/{winner_id}/ledger")).json()["items"]
    assert [e["reason"] for e in entries[:2]] == ["match_reversal", "payout"]


async def test_bots_sit_only_at_free_tables(api: Api) -> None:
    alice = await api.signed_up("alice")
    staked = await open_table(alice, stake=10)
    refused = await alice.post(f"/api/tables/{staked}/bots", json={"level": "easy"})
    assert refused.status_code == 409 and refused.json()["detail"].startswith("bots_free_tables_only")
    free = await open_table(alice)
    assert (await alice.post(f"/api/tables/{free}/bots", json={"level": "easy"})).status_code == 200
    info = (await alice.get(f"/api/tables/{free}")).json()
    assert [(s["kind"], s["name"], s["level"]) for s in info["seats"] if s["kind"] == "bot"] == [
        ("bot", "Bot (easy)", "easy")
    ]
    async with api.db.session() as session:
        wallets = await session.scalar(
            select(func.count()).select_from(LedgerAccount).where(LedgerAccount.kind == "player")
        )
    assert wallets == 1  # alice's: a bot has none
    # a match against a bot: labelled in the history and on the profile, never rated
    game = (await alice.post("/api/quickplay/bot", json={"level": "hard"})).json()
    assert (await alice.post(f"/api/tables/{game['code']}/start")).status_code == 200  # no seed from this client
    match_id = (await alice.get(f"/api/tables/{game['code']}")).json()["match_id"]
    assert (await alice.post(f"/api/tables/{game['code']}/leave")).status_code == 200
    await recorded(api, match_id)
    seats = (await alice.get(f"/api/matches/{match_id}")).json()["seats"]
    assert [(s["display_name"], s["bot_level"]) for s in seats] == [("alice", None), ("Bot (hard)", "hard")]
    recent = (await alice.get("/api/players/alice")).json()["recent_matches"][0]
    assert recent["bots"] == ["Bot (hard)"] and recent["rating_change"] is None
    assert await rating_rows(api) == 0


# ---------------------------------------------------------------------- new accounts (issue 35.3)


async def test_new_accounts_from_one_ipv6_56_cannot_feed_a_staked_table(make_api: MakeApi) -> None:
    """Six fresh accounts, each from its own /64 of one /56 and its own cookie jar, try to join a
    private table at stake 1000 to lose it to the main account: their coins are held until they
    have played enough matches that count, so nothing moves; and sign-ups per /56 are limited."""
    api = await make_api(new_account_matches=5, signups_per_56=5, signups_per_48=100_000)
    main = await signup(api, "main", api.client("2001:db8:aa:100::1"))
    async with api.db.session() as session:  # the main account is an old hand
        session.add(CountedMatches(account_id=(await me(main))["id"], matches=50))
        await session.commit()
    code = await open_table(main, stake=1000, private=True, seats=6)
    assert (await join(main, code)).status_code == 200
    alts = [await signup(api, f"alt{n}", api.client(f"2001:db8:aa:1{n:02x}::1")) for n in range(1, 5)]
    refused = await api.client("2001:db8:aa:1ff::1").post(
        "/api/auth/signup", json={"name": "alt5", "password": PASSWORD}
    )
    assert refused.status_code == 429 and "Retry-After" in refused.headers  # the /56 had its 5 (main's too)
    assert (await signup(api, "elsewhere", api.client("2001:db8:bb:100::1"))).cookies  # another /56
    for alt in alts:
        response = await join(alt, code)
        assert response.status_code == 409, response.text
        assert response.json()["detail"].startswith("new_account: your account may play for coins once")
    assert (await me(main))["balance"] == 1000
    assert [(await me(alt))["balance"] for alt in alts] == [1000] * len(alts)
    tables = len(api.app.state.tables.tables)
    quick = await alts[0].post("/api/quickplay", json={"stake": 100})
    assert quick.status_code == 409 and quick.json()["detail"].startswith("new_account: ")
    assert len(api.app.state.tables.tables) == tables  # no table was opened that would not seat him
    assert (await alts[0].post("/api/quickplay", json={})).status_code == 200  # free tables are open


async def test_sign_ups_are_counted_per_ipv6_48_too(make_api: MakeApi) -> None:
    api = await make_api(signups_per_ip=2, signups_per_56=3, signups_per_48=4)
    for n, address in enumerate(["2001:db8:cc:100::1", "2001:db8:cc:100::2", "2001:db8:cc:200::1"]):
        await signup(api, f"site{n}", api.client(address))
    same_64 = await api.client("2001:db8:cc:100:ffff::9").post(
        "/api/auth/signup", json={"name": "site3", "password": PASSWORD}
    )
    assert same_64.status_code == 429  # that /64 had its 2
    await signup(api, "site4", api.client("2001:db8:cc:300::1"))  # the 4th of the /48, another /56
    over = await api.client("2001:db8:cc:400::1").post("/api/auth/signup", json={"name": "site5", "password": PASSWORD})
    assert over.status_code == 429  # the /48 had its 4
    await signup(api, "v4", api.client("203.0.113.50"))  # IPv4: its own address only
