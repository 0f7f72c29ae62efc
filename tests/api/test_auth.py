"""Sign-up, log-in, guests, log-out and the session cookie; who may reach the admin endpoints."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from itsdangerous import URLSafeTimedSerializer

from app.api.deps import COOKIE_NAME, account_from_cookie, make_cookie
from app.config import Settings
from app.db import login_sessions
from tests.api.support import PASSWORD, Api


async def test_signup_signs_in_with_a_starting_balance_and_a_safe_cookie(api: Api) -> None:
    async with api.client() as client:
        response = await client.post("/api/auth/signup", json={"name": "Alice", "password": PASSWORD})
        assert response.status_code == 201
        body = response.json()
        assert body == {
            "id": body["id"],
            "name": "Alice",
            "kind": "account",
            "balance": 1000,
            "is_admin": False,
            "guest": False,
        }
        [cookie] = [h for h in response.headers.get_list("set-cookie") if h.startswith(f"{COOKIE_NAME}=")]
        assert cookie.startswith(f"{COOKIE_NAME}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
        assert (await client.get("/api/me")).json() == body
        # The cookie carries the account id and is usable outside a request.
        info = account_from_cookie(client.cookies[COOKIE_NAME], api.settings)
        assert info is not None and info.account_id == body["id"] and info.kind == "account"
        assert info.key == f"a:{body['id']}"


async def test_login_logout_and_wrong_password(api: Api) -> None:
    await (await api.signed_up("bob")).aclose()
    async with api.client() as client:
        wrong = await client.post("/api/auth/login", json={"name": "bob", "password": "not the password"})
        assert wrong.status_code == 401 and wrong.json() == {"detail": "unknown name or wrong password"}
        unknown = await client.post("/api/auth/login", json={"name": "nobody", "password": PASSWORD})
        assert unknown.status_code == 401 and unknown.json() == wrong.json()
        assert (await client.get("/api/me")).status_code == 401

        ok = await client.post("/api/auth/login", json={"name": "BOB", "password": PASSWORD})
        assert ok.status_code == 200 and ok.json()["name"] == "bob"
        assert (await client.get("/api/me")).json()["balance"] == 1000

        out = await client.post("/api/auth/logout")
        assert out.status_code == 204 and COOKIE_NAME in out.headers["set-cookie"]
        assert (await client.get("/api/me")).status_code == 401


async def test_names_are_unique_regardless_of_case(api: Api) -> None:
    await api.signed_up("Carol")
    async with api.client() as client:
        for name in ("carol", "CAROL", "Carol"):
            response = await client.post("/api/auth/signup", json={"name": name, "password": PASSWORD})
            assert response.status_code == 409
            assert response.json() == {"detail": f"the name {name!r} is taken"}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"name": "x", "password": PASSWORD}, "name must be 2-24 characters long"),
        ({"name": "x" * 25, "password": PASSWORD}, "name must be 2-24 characters long"),
        ({"name": "no spaces", "password": PASSWORD}, "name may contain only the letters"),
        ({"name": "Ёжик", "password": PASSWORD}, "name may contain only the letters"),
        ({"name": "dave", "password": "short"}, "password must be 8-128 characters long"),
    ],
)
async def test_signup_validation_explains_itself(api: Api, body: dict[str, str], message: str) -> None:
    async with api.client() as client:
        response = await client.post("/api/auth/signup", json=body)
    assert response.status_code == 422
    assert message in response.json()["detail"][0]["msg"]


async def test_guest_session_holds_no_coins(api: Api) -> None:
    client = await api.guest("visitor")
    try:
        me = (await client.get("/api/me")).json()
        assert me == {
            "id": None,
            "name": "visitor",
            "kind": "guest",
            "balance": None,
            "is_admin": False,
            "guest": True,
        }
        info = account_from_cookie(client.cookies[COOKIE_NAME], api.settings)
        assert info is not None and info.is_guest and info.guest_id and info.key == f"g:{info.guest_id}"
        assert (await client.get("/api/matches?account=me")).status_code == 404
    finally:
        await client.aclose()


async def test_forged_expired_and_foreign_cookies_are_rejected(api: Api) -> None:
    erin = await api.signed_up("erin")
    good = erin.cookies[COOKIE_NAME]
    account_id = (await erin.get("/api/me")).json()["id"]
    await erin.aclose()
    session_id = account_from_cookie(good, api.settings).session_id  # type: ignore[union-attr]
    expired, _ = make_cookie(
        api.settings, account_id=account_id, session_id=session_id, name="erin", now=time.time() - 15 * 24 * 3600
    )
    other_key = Settings(database_url=api.settings.storage.database_url, secret_key="another-secret-key-0123456789")
    foreign, _ = make_cookie(other_key, account_id=account_id, session_id=session_id, name="erin")
    tampered = good[:-2] + ("AA" if not good.endswith("AA") else "BB")
    for value in (expired, foreign, tampered, "garbage", good.replace(".", "", 1)):
        assert account_from_cookie(value, api.settings) is None
        async with api.client() as client:
            client.cookies.set(COOKIE_NAME, value)
            assert (await client.get("/api/me")).status_code == 401
    assert account_from_cookie(good, api.settings) is not None
    # A cookie for an account that does not exist (signed with the right key) is no session either.
    ghost, _ = make_cookie(api.settings, account_id=987654, session_id=session_id, name="ghost")
    # Nor is a well-signed cookie naming a login session that was never started, or erin's session
    # under another account's id, or an account cookie from before login sessions (no session id).
    made_up, _ = make_cookie(api.settings, account_id=account_id, session_id="0" * 32, name="erin")
    borrowed, _ = make_cookie(api.settings, account_id=account_id + 1, session_id=session_id, name="erin")
    legacy = URLSafeTimedSerializer(api.settings.security.secret_key, salt="durak-session-v1").dumps(
        {"n": "erin", "exp": int(time.time()) + 3600, "a": account_id}
    )
    await (await api.signed_up("frank")).aclose()  # account_id + 1 exists
    assert account_from_cookie(legacy, api.settings) is None
    for value in (ghost, made_up, borrowed, legacy):
        async with api.client() as client:
            client.cookies.set(COOKIE_NAME, value)
            assert (await client.get("/api/me")).status_code == 401
    with pytest.raises(ValueError, match="login session"):
        make_cookie(api.settings, account_id=account_id, name="erin")


async def test_logout_revokes_the_session_on_the_server(api: Api) -> None:
    """A copy of the cookie taken before log-out is refused afterwards; other sessions go on."""
    laptop = await api.signed_up("gina")
    stolen = laptop.cookies[COOKIE_NAME]
    async with api.client() as phone:
        assert (await phone.post("/api/auth/login", json={"name": "gina", "password": PASSWORD})).status_code == 200
        assert (await laptop.post("/api/auth/logout")).status_code == 204
        async with api.client() as thief:
            thief.cookies.set(COOKIE_NAME, stolen)
            assert (await thief.get("/api/me")).status_code == 401
            assert (await thief.post("/api/tables", json={"preset": "classic36"})).status_code == 401
        assert (await phone.get("/api/me")).json()["name"] == "gina"  # the other session is untouched
        # Logging out twice, or with a cookie already revoked, is harmless: even "everywhere" from a
        # revoked copy signs nobody out.
        laptop.cookies.set(COOKIE_NAME, stolen)
        assert (await laptop.post("/api/auth/logout")).status_code == 204
        async with api.client() as thief:
            thief.cookies.set(COOKIE_NAME, stolen)
            assert (await thief.post("/api/auth/logout", params={"everywhere": "true"})).status_code == 204
        assert (await phone.get("/api/me")).json()["name"] == "gina"
    await laptop.aclose()


async def test_logout_everywhere_revokes_every_session_of_the_account(api: Api) -> None:
    first = await api.signed_up("hana")
    others = [api.client() for _ in range(2)]
    for client in others:
        assert (await client.post("/api/auth/login", json={"name": "hana", "password": PASSWORD})).status_code == 200
    async with api.client() as someone_else:
        assert (await someone_else.post("/api/auth/signup", json={"name": "ivan", "password": PASSWORD})).is_success
        assert (await first.post("/api/auth/logout", params={"everywhere": "true"})).status_code == 204
        for client in [first, *others]:
            assert (await client.get("/api/me")).status_code == 401
        assert (await someone_else.get("/api/me")).json()["name"] == "ivan"
    # Signing in again starts a fresh session.
    assert (await first.post("/api/auth/login", json={"name": "hana", "password": PASSWORD})).status_code == 200
    assert (await first.get("/api/me")).json()["name"] == "hana"
    for client in [first, *others]:
        await client.aclose()


async def test_guest_logout_revokes_the_guest_session_on_the_server(api: Api) -> None:
    guest = await api.guest("visitor")
    cookie = guest.cookies[COOKIE_NAME]
    out = await guest.post("/api/auth/logout")
    assert out.status_code == 204 and COOKIE_NAME in out.headers["set-cookie"]
    assert (await guest.get("/api/me")).status_code == 401
    await guest.aclose()
    # Issue 35.16: a copy of the old cookie no longer works either.
    async with api.client() as client:
        client.cookies.set(COOKIE_NAME, cookie)
        assert (await client.get("/api/me")).status_code == 401


async def test_a_signed_out_guest_cookie_cannot_mint_a_new_one(api: Api) -> None:
    """A copy of a guest's cookie taken before he signed out does not get a fresh cookie from the
    rename route (which would work again once the sign-out lapsed): it is refused like everywhere."""
    guest = await api.guest("visitor")
    copy = guest.cookies[COOKIE_NAME]
    assert (await guest.post("/api/auth/logout")).status_code == 204
    await guest.aclose()
    async with api.client() as thief:
        thief.cookies.set(COOKIE_NAME, copy)
        renamed = await thief.post("/api/auth/guest/name", json={"name": "visitor2"})
        assert renamed.status_code == 401
        assert not [h for h in renamed.headers.get_list("set-cookie") if h.startswith(f"{COOKIE_NAME}=")]


async def test_a_guest_sign_out_outlasts_every_cookie_of_the_guest(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guest signs out with an old cookie (a day left) while a newer cookie of his (a rename's,
    fourteen days left) is in other hands: the sign-out holds for as long as the newer one lives."""
    guest = await api.guest("visitor")
    newer = guest.cookies[COOKIE_NAME]
    info = account_from_cookie(newer, api.settings)
    assert info is not None and info.guest_id is not None
    older, _ = make_cookie(
        api.settings,
        name="visitor",
        guest_id=info.guest_id,
        now=time.time() - api.settings.security.session_max_age_s + 86400,
    )
    async with api.client() as old_browser, api.client() as thief:
        old_browser.cookies.set(COOKIE_NAME, older)
        thief.cookies.set(COOKIE_NAME, newer)
        assert (await old_browser.post("/api/auth/logout")).status_code == 204
        assert (await thief.get("/api/me")).status_code == 401
        # Two days on, the older cookie has expired; someone else's sign-out sweeps lapsed ones.
        later = datetime.now(UTC) + timedelta(days=2)
        monkeypatch.setattr(login_sessions, "utcnow", lambda: later)
        other = await api.guest("other")
        assert (await other.post("/api/auth/logout")).status_code == 204
        await other.aclose()
        assert (await thief.get("/api/me")).status_code == 401
    await guest.aclose()


ADMIN_CALLS = [
    ("GET", "/api/admin/accounts", None),
    ("GET", "/api/admin/accounts/1/ledger", None),
    ("POST", "/api/admin/accounts/1/adjust", {"amount": 5, "reason": "because"}),
]


async def test_admin_endpoints_need_an_admin(api: Api) -> None:
    player = await api.signed_up("frank")
    guest = await api.guest("gina")
    admin = await api.admin("root")
    anonymous = api.client()
    for method, path, body in ADMIN_CALLS:
        assert (await anonymous.request(method, path, json=body)).status_code == 401
        forbidden = await player.request(method, path, json=body)
        assert forbidden.status_code == 403 and forbidden.json() == {"detail": "admins only"}
        assert (await guest.request(method, path, json=body)).status_code == 403
        assert (await admin.request(method, path, json=body)).status_code == 200
    for client in (player, guest, admin, anonymous):
        await client.aclose()


async def test_a_guest_cannot_take_a_registered_players_name(api: Api) -> None:
    """Before: a guest could call himself after anyone, an admin included."""
    root = await api.admin("Boss")
    async with api.client() as client:
        for name in ("Boss", "boss", "BOSS"):
            refused = await client.post("/api/auth/guest", json={"name": name})
            assert refused.status_code == 409
            assert refused.json()["detail"] == f"name_registered: {name} is a registered player's name"
            assert COOKIE_NAME not in client.cookies
        made = await client.post("/api/auth/guest", json={"name": "Bossy"})
        assert made.status_code == 200 and made.json()["guest"] is True
    me = (await root.get("/api/me")).json()
    assert me["name"] == "Boss" and me["guest"] is False and me["kind"] == "account"
    await root.aclose()


async def test_guests_are_marked_in_the_answers_that_carry_names(api: Api) -> None:
    host = await api.signed_up("hostess")
    visitor = await api.guest("visitor")
    code = (await host.post("/api/tables", json={"bot_delay_ms": 0})).json()["code"]
    for client in (host, visitor):
        assert (await client.post(f"/api/tables/{code}/join", json={})).status_code == 200
    info = (await host.get(f"/api/tables/{code}")).json()
    seats = {seat["name"]: seat["guest"] for seat in info["seats"] if seat["kind"] == "human"}
    assert seats == {"hostess": False, "visitor": True}
    lobby = (await host.get("/api/tables")).json()["tables"]
    listed = [seat for row in lobby if row["code"] == code for seat in row["seats"] if seat["kind"] == "human"]
    assert {seat["name"]: seat["guest"] for seat in listed} == {"hostess": False, "visitor": True}
    for client in (host, visitor):
        await client.aclose()
