"""Rate limits on log-in, sign-up and guest sessions, counted in the database (so across server
processes): wrong passwords lock a name at one address only; each address has a budget of log-ins,
sign-ups and guest sessions; X-Forwarded-For counts only from a trusted proxy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy import func, select
from starlette.requests import Request
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.api.throttle import Throttle, client_address
from app.config import Settings
from app.db.models import ThrottleHit
from app.db.session import Database
from app.main import create_app
from tests.api.support import PASSWORD, SECRET, Api


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def strict(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    """An app with the default limits (the ``api`` fixture raises them for the other tests)."""
    settings = Settings(database_url=database_url, secret_key=SECRET, starting_balance=250)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


async def _hits(db: Database) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(ThrottleHit)) or 0)


async def test_a_bucket_fills_until_its_oldest_hit_ages_out(api: Api) -> None:
    clock, db = Clock(), api.db
    throttle = Throttle("wrong-password", 3, 60, clock)
    for step in range(3):
        assert await throttle.retry_after(db, "10.0.0.1:Bob") is None
        await throttle.hit(db, "10.0.0.1:bob")
        clock.now += 10 if step < 2 else 0
    assert await throttle.retry_after(db, "10.0.0.1:BOB") == 40  # the first hit was 20 s ago
    assert await throttle.retry_after(db, "10.0.0.1:alice") is None
    assert await throttle.retry_after(db, "10.0.0.2:bob") is None
    clock.now += 40
    assert await throttle.retry_after(db, "10.0.0.1:bob") is None  # one hit aged out: two remain
    await throttle.hit(db, "10.0.0.1:bob")
    assert await throttle.retry_after(db, "10.0.0.1:bob") == 10


async def test_admit_counts_only_what_it_lets_through(api: Api) -> None:
    clock, db = Clock(), api.db
    throttle = Throttle("signup", 2, 100, clock)
    assert [await throttle.admit(db, "10.0.0.1") for _ in range(4)] == [None, None, 100, 100]
    assert await _hits(db) == 2  # the refused ones were not counted
    clock.now += 100
    assert await throttle.admit(db, "10.0.0.1") is None


async def test_a_burst_of_concurrent_hits_from_two_processes_admits_exactly_the_limit(api: Api) -> None:
    second = create_app(api.settings)
    async with second.router.lifespan_context(second):
        dbs: list[Database] = [api.db, second.state.db]
        throttle = Throttle("signup", 5, 100, Clock())
        waits = await asyncio.gather(*(throttle.admit(dbs[i % 2], "10.0.0.9") for i in range(16)))
    assert sum(wait is None for wait in waits) == 5
    assert await _hits(api.db) == 5


async def test_clearing_and_sweeping(api: Api) -> None:
    clock, db = Clock(), api.db
    short, long = Throttle("short", 2, 60, clock), Throttle("long", 2, 3600, clock)
    await short.hit(db, "a")
    await short.clear(db, "A")
    await short.hit(db, "a")
    assert await short.retry_after(db, "a") is None
    await long.hit(db, "x")
    for i in range(50):  # a flood of made-up names
        await short.hit(db, f"nobody-{i}")
    clock.now += 61
    await short.hit(db, "carol")  # every hit sweeps the ones whose window has passed...
    assert await _hits(db) == 2  # ...but not the long window's
    await long.hit(db, "x")
    assert await long.retry_after(db, "x") == 3600 - 61


async def test_wrong_passwords_lock_a_name_at_one_address_only(api: Api) -> None:
    """Before: five wrong passwords from anywhere locked the name for everyone."""
    await (await api.signed_up("carol")).aclose()
    limit = api.settings.throttle.login_failures
    async with api.client("198.51.100.7") as stranger, api.client("203.0.113.20") as carol:
        for _ in range(limit):
            wrong = await stranger.post("/api/auth/login", json={"name": "carol", "password": "guess"})
            assert wrong.status_code == 401
        locked = await stranger.post("/api/auth/login", json={"name": "Carol", "password": PASSWORD})
        assert locked.status_code == 429  # even the right password waits, at that address
        assert 0 < int(locked.headers["retry-after"]) <= api.settings.throttle.login_window_s
        assert "too many wrong passwords" in locked.json()["detail"]
        assert (await stranger.get("/api/me")).status_code == 401
        other = await stranger.post("/api/auth/login", json={"name": "nobody", "password": "guess"})
        assert other.status_code == 401  # other names are not affected

        # Carol, at her own address, is not locked out by the stranger.
        assert (await carol.post("/api/auth/login", json={"name": "carol", "password": PASSWORD})).status_code == 200

        api.app.state.auth_throttles.clock = lambda: 1e12  # long after the window
        ok = await stranger.post("/api/auth/login", json={"name": "carol", "password": PASSWORD})
        assert ok.status_code == 200


async def test_every_server_process_counts_the_same_failures(api: Api) -> None:
    """Two apps on one database (two processes, or two machines): failures spread over both lock
    the name (at that address) on both."""
    await (await api.signed_up("dora")).aclose()
    second = create_app(api.settings)
    async with second.router.lifespan_context(second):
        other = Api(app=second, settings=api.settings)
        apps = [api, other]
        for attempt in range(api.settings.throttle.login_failures):
            async with apps[attempt % 2].client() as client:
                wrong = await client.post("/api/auth/login", json={"name": "dora", "password": "guess"})
                assert wrong.status_code == 401
        for each in apps:
            async with each.client() as client:
                locked = await client.post("/api/auth/login", json={"name": "dora", "password": PASSWORD})
                assert locked.status_code == 429
        db: Database = second.state.db
        async with db.session() as session:
            count = await session.scalar(
                select(func.count()).where(ThrottleHit.bucket == "wrong-password:127.0.0.1:dora")
            )
        assert count == api.settings.throttle.login_failures


async def test_names_postgres_cannot_store_are_refused_before_the_throttle_or_database(api: Api) -> None:
    """A NUL in the name (PostgreSQL text refuses it) is a 422 naming the field, never a 500, and
    neither reaches the database nor counts as a log-in attempt."""
    async with api.client() as client:
        for _ in range(api.settings.throttle.login_failures + 1):
            refused = await client.post("/api/auth/login", json={"name": "eve\x00", "password": "guess"})
            assert refused.status_code == 422, refused.text
            assert [error["loc"] for error in refused.json()["detail"]] == [["body", "name"]]
    async with api.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(ThrottleHit)) == 0


async def test_sign_ups_per_address_are_limited_and_grant_the_configured_coins(strict: Api) -> None:
    """Before: any number of sign-ups, each granting 1,000 coins."""
    limit, window = strict.settings.throttle.signups_per_ip, strict.settings.throttle.signup_window_s
    assert (limit, window) == (5, 3600)  # the defaults
    async with strict.client("192.0.2.1") as farm, strict.client("192.0.2.2") as neighbour:
        for i in range(limit):
            made = await farm.post("/api/auth/signup", json={"name": f"farm{i}", "password": PASSWORD})
            assert made.status_code == 201 and made.json()["balance"] == 250  # DURAK_STARTING_BALANCE
        refused = await farm.post("/api/auth/signup", json={"name": "farm-more", "password": PASSWORD})
        assert refused.status_code == 429
        assert refused.json()["detail"].startswith("too many sign-ups from this address")
        assert 3500 < int(refused.headers["retry-after"]) <= 3600
        elsewhere = await neighbour.post("/api/auth/signup", json={"name": "farm-more", "password": PASSWORD})
        assert elsewhere.status_code == 201
        strict.app.state.auth_throttles.clock = lambda: 1e12  # after the window
        later = await farm.post("/api/auth/signup", json={"name": "farm-later", "password": PASSWORD})
        assert later.status_code == 201


async def test_guest_sessions_per_address_are_limited(strict: Api) -> None:
    limit = strict.settings.throttle.guests_per_ip
    assert (limit, strict.settings.throttle.guest_window_s) == (30, 3600)
    async with strict.client("192.0.2.3") as client, strict.client("192.0.2.4") as other:
        for i in range(limit):
            assert (await client.post("/api/auth/guest", json={"name": f"g{i}"})).status_code == 200
        refused = await client.post("/api/auth/guest", json={"name": "g-more"})
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
        assert "too many guest sessions" in refused.json()["detail"]
        assert (await other.post("/api/auth/guest", json={"name": "g-more"})).status_code == 200
        # Probing for registered names through the guest form spends the same budget.
        await (await strict.signed_up("known")).aclose()
        for _ in range(limit - 1):
            assert (await other.post("/api/auth/guest", json={"name": "known"})).status_code == 409
        assert (await other.post("/api/auth/guest", json={"name": "known"})).status_code == 429


async def test_log_ins_per_address_are_limited(strict: Api) -> None:
    """Guessing many names' passwords from one address: the address runs out of attempts."""
    await (await strict.signed_up("gina")).aclose()
    limit = strict.settings.throttle.logins_per_ip
    assert (limit, strict.settings.throttle.login_ip_window_s) == (20, 60)
    async with strict.client("192.0.2.5") as sprayer, strict.client("192.0.2.6") as gina:
        for i in range(limit):
            wrong = await sprayer.post("/api/auth/login", json={"name": f"name{i}", "password": "guess"})
            assert wrong.status_code == 401
        refused = await sprayer.post("/api/auth/login", json={"name": "gina", "password": PASSWORD})
        assert refused.status_code == 429 and 0 < int(refused.headers["retry-after"]) <= 60
        assert "too many log-ins from this address" in refused.json()["detail"]
        assert (await gina.post("/api/auth/login", json={"name": "gina", "password": PASSWORD})).status_code == 200


async def test_x_forwarded_for_counts_only_from_a_trusted_proxy(strict: Api) -> None:
    """As served (uvicorn's proxy headers, FORWARDED_ALLOW_IPS): behind the trusted proxy each
    client has its own budget; anyone else's X-Forwarded-For is ignored."""
    proxied = ProxyHeadersMiddleware(strict.app, trusted_hosts="10.0.0.1")  # type: ignore[arg-type]
    limit = strict.settings.throttle.signups_per_ip

    async def sign_ups(peer: str) -> list[int]:
        transport = httpx.ASGITransport(app=proxied, client=(peer, 50000))  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            codes = []
            for i in range(limit + 1):
                response = await client.post(
                    "/api/auth/signup",
                    json={"name": f"x{peer.replace('.', '')}n{i}", "password": PASSWORD},
                    headers={"x-forwarded-for": f"198.51.100.{i + 1}"},
                )
                codes.append(response.status_code)
            return codes

    assert await sign_ups("10.0.0.1") == [201] * (limit + 1)  # the proxy: per forwarded client
    assert await sign_ups("10.0.0.2") == [201] * limit + [429]  # not a proxy: per peer


def _request(host: str) -> Request:
    return Request({"type": "http", "client": (host, 1), "headers": []})


def test_client_addresses() -> None:
    assert client_address(_request("203.0.113.9")) == "203.0.113.9"
    assert client_address(_request("::ffff:203.0.113.9")) == "203.0.113.9"
    # One IPv6 host usually has a whole /64: it counts as one address.
    assert client_address(_request("2001:db8:1:2:aaaa::1")) == client_address(_request("2001:db8:1:2:bbbb::9"))
    assert client_address(_request("2001:db8:1:2::1")) == "2001:db8:1:2::/64"
    assert client_address(_request("2001:db8:1:3::1")) != "2001:db8:1:2::/64"
    assert client_address(_request("testclient")) == "testclient"
