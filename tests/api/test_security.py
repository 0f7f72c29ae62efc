"""Cross-site request refusal, JSON-only bodies, security headers and the session cookie's flags
(app/api/security.py, app/api/deps.py; docs/security.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.api.deps import COOKIE_NAME, SECURE_COOKIE_NAME
from app.api.security import normalize_origin
from app.config import Settings
from app.main import create_app
from tests.api.support import PASSWORD, SECRET, Api
from tests.tables.harness import Player, create_table, guest

OWN = "http://testserver"  # the origin httpx's test clients address


async def _waiting_table(api: Api) -> tuple[str, httpx.AsyncClient, httpx.AsyncClient]:
    """A staked two-seat table made by alice, and bob, a signed-up would-be victim."""
    alice = await api.signed_up("alice")
    created = await alice.post("/api/tables", json={"stake": 100, "timer": 0})
    assert created.status_code == 201, created.text
    return created.json()["code"], alice, await api.signed_up("bob")


async def _seated(client: httpx.AsyncClient, code: str) -> list[str | None]:
    table = (await client.get(f"/api/tables/{code}")).json()
    return [seat["player"] for seat in table["seats"]]


def _refused(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    assert response.json()["code"] == code
    assert response.json()["detail"].startswith(f"{code}: ")


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://testserver:8081"},  # a same-site sibling: another port on the same host
        {"Origin": "https://testserver"},  # another scheme is another origin
        {"Origin": "null"},  # sandboxed frames, data: URLs
        {"Sec-Fetch-Site": "same-site"},  # a sibling subdomain whose Origin a proxy dropped
        {"Sec-Fetch-Site": "cross-site"},
        {"Origin": OWN, "Sec-Fetch-Site": "same-site"},
    ],
)
async def test_a_cross_site_join_is_refused_and_seats_nobody(api: Api, headers: dict[str, str]) -> None:
    code, alice, bob = await _waiting_table(api)
    me = (await bob.get("/api/me")).json()

    refused = await bob.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=headers)

    _refused(refused, 403, "cross_site_request")
    assert await _seated(alice, code) == [None, None]
    assert (await bob.get("/api/me")).json()["balance"] == me["balance"]


@pytest.mark.parametrize(
    "headers",
    [
        {},  # a non-browser client: no Origin, no Sec-Fetch-Site
        {"Origin": OWN, "Sec-Fetch-Site": "same-origin"},  # the site's own pages
        {"Origin": "HTTP://TESTSERVER:80"},  # ... compared as origins, not as strings
        {"Sec-Fetch-Site": "none"},  # typed into the address bar
    ],
)
async def test_same_origin_allowed_and_non_browser_requests_pass(api: Api, headers: dict[str, str]) -> None:
    code, alice, bob = await _waiting_table(api)

    joined = await bob.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=headers)

    assert joined.status_code == 200, joined.text
    bob_id = (await bob.get("/api/me")).json()["id"]
    assert await _seated(alice, code) == [None, f"a:{bob_id}"]


def test_no_other_origin_is_allowed_by_default() -> None:
    """The server's own origin is the only one a default server trusts: a page on 127.0.0.1:8000 is
    a stranger to a server on any other address or port."""
    assert Settings().security.allowed_origins == []


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000", "http://localhost:8000"])
async def test_a_default_server_refuses_the_old_default_origins(api: Api, origin: str) -> None:
    code, alice, bob = await _waiting_table(api)

    refused = await bob.post(f"/api/tables/{code}/join", json={"seat": 0}, headers={"Origin": origin})

    _refused(refused, 403, "cross_site_request")
    assert await _seated(alice, code) == [None, None]


async def test_a_listed_origin_may_send_state_changing_requests_unless_marked_cross_site(
    database_url: str, cheap_hashing: None
) -> None:
    """``DURAK_ALLOWED_ORIGINS`` names the server's public origin when a proxy passes another Host:
    a page there may join; a request the browser marks same-site or cross-site may not, whatever
    its Origin says (the list is compared as origins, not as strings)."""
    settings = Settings(
        database_url=database_url,
        secret_key=SECRET,
        allowed_origins=["https://Durak.Example:443"],
        new_account_matches=0,
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        api = Api(app=app, settings=settings)
        code, alice, bob = await _waiting_table(api)
        listed = {"Origin": "https://durak.example"}
        _refused(
            await bob.post(
                f"/api/tables/{code}/join", json={"seat": 0}, headers={**listed, "Sec-Fetch-Site": "same-site"}
            ),
            403,
            "cross_site_request",
        )
        assert await _seated(alice, code) == [None, None]
        joined = await bob.post(
            f"/api/tables/{code}/join", json={"seat": 0}, headers={**listed, "Sec-Fetch-Site": "same-origin"}
        )
        assert joined.status_code == 200, joined.text


async def test_sign_up_log_in_and_log_out_refuse_a_foreign_origin(api: Api) -> None:
    evil = {"Origin": "http://evil.example"}
    stranger = api.client()
    signup = await stranger.post("/api/auth/signup", json={"name": "carol", "password": PASSWORD}, headers=evil)
    _refused(signup, 403, "cross_site_request")
    assert COOKIE_NAME not in signup.cookies
    # Nothing was created: the name is still free.
    assert (await stranger.post("/api/auth/signup", json={"name": "carol", "password": PASSWORD})).status_code == 201

    login = await api.client().post("/api/auth/login", json={"name": "carol", "password": PASSWORD}, headers=evil)
    _refused(login, 403, "cross_site_request")
    assert COOKIE_NAME not in login.cookies
    guest = await api.client().post("/api/auth/guest", json={"name": "Gus"}, headers=evil)
    _refused(guest, 403, "cross_site_request")

    logout = await stranger.post("/api/auth/logout?everywhere=true", headers=evil)
    _refused(logout, 403, "cross_site_request")
    assert (await stranger.get("/api/me")).status_code == 200  # still signed in, on the server too


async def test_reads_are_not_refused_for_a_foreign_origin(api: Api) -> None:
    bob = await api.signed_up("bob")
    me = await bob.get("/api/me", headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"})
    assert me.status_code == 200
    assert me.json()["name"] == "bob"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", b'{"seat": 0, "pad": "="}'),  # <form enctype=text/plain>: JSON-looking, no preflight
        ("application/x-www-form-urlencoded", b"seat=0"),
        ("multipart/form-data; boundary=x", b'--x\r\nContent-Disposition: form-data; name="seat"\r\n\r\n0\r\n--x--'),
        ("application/jsonp", b'{"seat": 0}'),
        (None, b'{"seat": 0}'),  # a body without a Content-Type
    ],
)
async def test_a_body_that_is_not_json_is_refused(api: Api, content_type: str | None, body: bytes) -> None:
    code, alice, bob = await _waiting_table(api)
    headers = {"Content-Type": content_type} if content_type else {}
    refused = await bob.post(f"/api/tables/{code}/join", content=body, headers=headers)

    _refused(refused, 415, "unsupported_media_type")
    assert await _seated(alice, code) == [None, None]


async def test_json_with_a_charset_and_requests_without_a_body_pass(api: Api) -> None:
    code, alice, bob = await _waiting_table(api)
    joined = await bob.post(
        f"/api/tables/{code}/join", content=b'{"seat": 0}', headers={"Content-Type": "application/json; charset=utf-8"}
    )
    assert joined.status_code == 200, joined.text
    left = await bob.post(f"/api/tables/{code}/leave")  # no body, no Content-Type
    assert left.status_code == 200, left.text
    assert await _seated(alice, code) == [None, None]


def test_origins_compare_by_scheme_host_and_port() -> None:
    assert normalize_origin("https://Example.org:443") == "https://example.org"
    assert normalize_origin("http://example.org:8080/") == "http://example.org:8080"
    assert normalize_origin("http://[::1]:8000") == "http://[::1]:8000"
    for bad in ("null", "file://", "http://example.org/path", "javascript:alert(1)", "http://a:b@example.org", ""):
        assert normalize_origin(bad) is None, bad


# --- security headers ---------------------------------------------------------------------------


async def test_every_answer_carries_the_security_headers(api: Api) -> None:
    bob = await api.signed_up("bob")
    answers = [
        await bob.get("/"),  # the page
        await bob.get("/js/main.js"),  # static files
        await bob.get("/api/me"),
        await api.client().get("/api/me"),  # a 401
        await bob.post("/api/tables/nope/join", json={}, headers={"Origin": "http://evil.example"}),  # a refusal
    ]
    for answer in answers:
        csp = answer.headers["content-security-policy"]
        directives = dict(part.strip().partition(" ")[::2] for part in csp.split(";"))
        assert directives["default-src"] == "'self'"
        assert directives["script-src"] == "'self'"  # no 'unsafe-inline', no 'unsafe-eval'
        assert directives["frame-ancestors"] == "'none'"
        assert directives["connect-src"] == "'self' ws://testserver"
        assert "unsafe" not in csp
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"


async def test_no_page_loads_code_from_elsewhere_and_the_schema_stays_public(api: Api) -> None:
    """Issue 35.18: /docs loaded an unpinned Swagger UI from a CDN, without SRI, under a policy that
    allowed it and inline scripts, on the game's own origin. There are no such pages now: every
    answer has the strict policy, and the OpenAPI schema is still public."""
    for path in ("/docs", "/docs/oauth2-redirect", "/redoc"):
        response = await api.client().get(path)
        assert response.status_code == 404, path
        policy = response.headers["content-security-policy"]
        assert "jsdelivr" not in policy and "unsafe-inline" not in policy and "https:" not in policy, path
    schema = await api.client().get("/openapi.json")
    assert schema.status_code == 200 and schema.json()["info"]["title"] == "Durak Peak"


async def test_personal_answers_are_not_stored_by_caches(api: Api) -> None:
    bob = await api.signed_up("bob")
    for path in ("/api/me", "/api/matches", "/api/tables", "/api/health"):
        response = await bob.get(path)
        assert response.headers["cache-control"] == "no-store", path
    assert (await bob.get("/js/main.js")).headers["cache-control"] == "no-cache"  # static files: revalidated


def test_the_page_has_no_inline_script_or_style() -> None:
    from app.main import WEB_DIR

    for page in ("index.html",):  # the one shell of every page (app/web_pages.py)
        html = (WEB_DIR / page).read_text()
        assert "<style" not in html
        assert " style=" not in html
        assert not re.search(r"\son[a-z]+\s*=", html)  # no onload= and friends
        for tag in html.split("<script")[1:]:
            assert 'src="' in tag.split(">")[0], "an inline <script>"


# --- the session cookie -----------------------------------------------------------------------------


def _set_cookie(response: httpx.Response) -> dict[str, Any]:
    """The session cookie's Set-Cookie (the device cookie of docs/integrity.md may come along)."""
    [header] = [h for h in response.headers.get_list("set-cookie") if "durak_session=" in h.split(";", 1)[0]]
    name_value, *attributes = (part.strip() for part in header.split(";"))
    name = name_value.split("=", 1)[0]
    flags: dict[str, Any] = {"name": name}
    for attribute in attributes:
        key, _, value = attribute.partition("=")
        flags[key.lower()] = value or True
    return flags


def _client(app: Any, scheme: str = "http", client: tuple[str, int] = ("127.0.0.1", 5000)) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=client), base_url=f"{scheme}://testserver")


async def test_over_http_the_cookie_is_plain_and_not_secure(api: Api) -> None:
    response = await api.client().post("/api/auth/guest", json={"name": "Gus"})
    flags = _set_cookie(response)
    assert flags["name"] == COOKIE_NAME
    assert "secure" not in flags
    assert flags["httponly"] is True
    assert flags["samesite"] == "lax"


async def test_over_https_the_cookie_is_a_secure_host_cookie(api: Api) -> None:
    client = _client(api.app, "https")
    signup = await client.post("/api/auth/signup", json={"name": "dora", "password": PASSWORD})
    flags = _set_cookie(signup)
    assert flags["name"] == SECURE_COOKIE_NAME
    assert flags["secure"] is True
    assert flags["path"] == "/"
    assert "domain" not in flags  # required of a __Host- cookie
    assert flags["httponly"] is True
    assert (await client.get("/api/me")).json()["name"] == "dora"

    # Only the __Host- cookie counts over HTTPS: a plain one (settable by a sibling subdomain) is ignored.
    value = signup.cookies[SECURE_COOKIE_NAME]
    planted = _client(api.app, "https")
    planted.cookies.set(COOKIE_NAME, value)
    assert (await planted.get("/api/me")).status_code == 401

    logout = await client.post("/api/auth/logout")
    assert logout.status_code == 204
    cleared = _set_cookie(logout)
    assert cleared["name"] == SECURE_COOKIE_NAME
    assert cleared["secure"] is True
    assert cleared["max-age"] == "0"


@pytest.mark.parametrize(("setting", "scheme", "secure"), [("true", "http", True), ("false", "https", False)])
async def test_cookie_secure_setting_overrides_the_scheme(
    database_url: str, cheap_hashing: None, setting: str, scheme: str, secure: bool
) -> None:
    settings = Settings(database_url=database_url, secret_key=SECRET, cookie_secure=setting)  # type: ignore[arg-type]
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        response = await _client(app, scheme).post("/api/auth/guest", json={"name": "Gus"})
    flags = _set_cookie(response)
    assert flags["name"] == (SECURE_COOKIE_NAME if secure else COOKIE_NAME)
    assert ("secure" in flags) is secure


def test_cookie_secure_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DURAK_COOKIE_SECURE", "True")
    assert Settings().security.cookie_secure == "true"
    monkeypatch.setenv("DURAK_COOKIE_SECURE", "sometimes")
    with pytest.raises(ValueError, match="cookie_secure"):
        Settings()


@pytest.mark.parametrize(("peer", "secure"), [("10.0.0.2", True), ("10.0.0.66", False)])
async def test_x_forwarded_proto_counts_only_from_the_trusted_proxy(api: Api, peer: str, secure: bool) -> None:
    """Behind uvicorn's proxy-headers handling (what ``python -m app`` runs, trusting
    DURAK_FORWARDED_ALLOW_IPS): only the proxy at 10.0.0.2 can say the browser came over HTTPS."""
    app = ProxyHeadersMiddleware(api.app, trusted_hosts="10.0.0.2")
    client = _client(app, "http", client=(peer, 40000))
    response = await client.post("/api/auth/guest", json={"name": "Gus"}, headers={"X-Forwarded-Proto": "https"})
    flags = _set_cookie(response)
    assert ("secure" in flags) is secure
    assert flags["name"] == (SECURE_COOKIE_NAME if secure else COOKIE_NAME)


def test_the_table_socket_reads_the_host_cookie_over_https(client: TestClient) -> None:
    site = "https://127.0.0.1:8000"
    signup = client.post(f"{site}/api/auth/signup", json={"name": "erin", "password": PASSWORD})
    value = signup.cookies[SECURE_COOKIE_NAME]
    client.cookies.clear()
    headers = {"cookie": f"{SECURE_COOKIE_NAME}={value}", "origin": site}
    code = client.post(f"{site}/api/tables", json={"timer": 0}, headers=headers).json()["code"]
    assert client.post(f"{site}/api/tables/{code}/join", json={"seat": 0}, headers=headers).status_code == 200

    with client.websocket_connect(f"wss://127.0.0.1:8000/ws/tables/{code}", headers=headers) as ws:
        assert Player(ws, "erin").hello()["seat"] == 0
    # The plain cookie name means nothing over HTTPS: the same value makes an anonymous spectator.
    plain = {"cookie": f"{COOKIE_NAME}={value}", "origin": site}
    with client.websocket_connect(f"wss://127.0.0.1:8000/ws/tables/{code}", headers=plain) as ws:
        assert Player(ws, "anon").hello()["seat"] is None


def test_the_table_socket_accepts_the_servers_own_origin(client: TestClient) -> None:
    """Served as https://durak.example behind the proxy, the site's own pages may open sockets even
    when DURAK_ALLOWED_ORIGINS was left at its default; a foreign origin may not."""
    headers = guest(client, "Gus")
    code = create_table(client, headers)["code"]
    own = {**headers, "origin": "https://durak.example", "host": "durak.example"}
    with client.websocket_connect(f"wss://durak.example/ws/tables/{code}", headers=own) as ws:
        assert Player(ws, "gus").hello()["type"] == "welcome"
    foreign = {**headers, "origin": "https://evil.example", "host": "durak.example"}
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(f"wss://durak.example/ws/tables/{code}", headers=foreign),
    ):
        pass
    assert refused.value.code == 1008


# --- the table socket's handshake follows the REST guard's rule -------------------------------------


def _handshake_refused(client: TestClient, url: str, headers: dict[str, str]) -> int:
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(url, headers=headers):
        pass
    return refused.value.code


@pytest.mark.parametrize(
    "extra",
    [
        {"origin": "http://127.0.0.1:8000"},  # the old default list, on a server at another port
        {"origin": "http://localhost:8000"},
        {"origin": "http://127.0.0.1:8000", "sec-fetch-site": "same-origin"},  # the Origin decides
        {"sec-fetch-site": "same-site"},  # a sibling port or subdomain whose Origin went missing
        {"sec-fetch-site": "cross-site"},
        {"origin": "http://127.0.0.1:8001", "sec-fetch-site": "same-site"},  # a contradiction: refused
    ],
)
def test_another_origins_page_cannot_open_the_players_socket(
    migrated_template: Path, tmp_path: Path, extra: dict[str, str]
) -> None:
    """Served on port 8001 with the default settings, a page anywhere else, 127.0.0.1:8000 included,
    cannot open the player's socket with his cookie (and so cannot send ``leave`` or chat as him)."""
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    settings = Settings(database_url=f"sqlite+aiosqlite:///{path}", secret_key=SECRET)
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8001") as client:
        _cannot_open_the_players_socket(client, extra)


def _cannot_open_the_players_socket(client: TestClient, extra: dict[str, str]) -> None:
    headers = guest(client, "Gus")
    headers["origin"] = "http://127.0.0.1:8001"
    code = create_table(client, headers)["code"]
    assert client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=headers).status_code == 200
    cookie = {"cookie": headers["cookie"], "host": "127.0.0.1:8001"}

    assert _handshake_refused(client, f"ws://127.0.0.1:8001/ws/tables/{code}", {**cookie, **extra}) == 1008

    seats = client.get(f"/api/tables/{code}").json()["seats"]
    assert seats[0]["player"] is not None and seats[0]["name"] == "Gus"  # still seated
    own = {**cookie, "origin": "http://127.0.0.1:8001", "sec-fetch-site": "same-origin"}
    with client.websocket_connect(f"ws://127.0.0.1:8001/ws/tables/{code}", headers=own) as ws:
        assert Player(ws, "gus").hello()["seat"] == 0
