"""Wrong passwords lock a name for a while, counted in the database (so across server processes);
other names and the right password after the wait work."""

from __future__ import annotations

from sqlalchemy import func, select

from app.api.throttle import LoginThrottle
from app.db.models import LoginFailure
from app.db.session import Database
from app.main import create_app
from tests.api.support import PASSWORD, Api


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_name_locks_after_the_limit_until_its_oldest_failure_ages_out(api: Api) -> None:
    clock, db = Clock(), api.db
    throttle = LoginThrottle(3, 60, clock)
    for step in range(3):
        assert await throttle.retry_after(db, "Bob") is None
        await throttle.failed(db, "bob")
        clock.now += 10 if step < 2 else 0
    assert await throttle.retry_after(db, "BOB") == 40  # the first failure was 20 s ago
    assert await throttle.retry_after(db, "alice") is None
    clock.now += 40
    assert await throttle.retry_after(db, "bob") is None  # one failure aged out: two remain
    await throttle.failed(db, "bob")
    assert await throttle.retry_after(db, "bob") == 10


async def test_a_success_clears_the_name_and_old_failures_are_deleted(api: Api) -> None:
    clock, db = Clock(), api.db
    throttle = LoginThrottle(2, 60, clock)
    await throttle.failed(db, "bob")
    await throttle.succeeded(db, "Bob")
    await throttle.failed(db, "bob")
    assert await throttle.retry_after(db, "bob") is None
    for i in range(50):  # a flood of made-up names
        await throttle.failed(db, f"nobody-{i}")
    clock.now += 61
    await throttle.failed(db, "carol")  # every failure sweeps the aged-out ones
    async with db.session() as session:
        assert await session.scalar(select(func.count()).select_from(LoginFailure)) == 1


async def test_login_answers_429_with_retry_after_once_a_name_is_locked(api: Api) -> None:
    await (await api.signed_up("carol")).aclose()
    limit = api.settings.login_failures
    async with api.client() as client:
        for _ in range(limit):
            wrong = await client.post("/api/auth/login", json={"name": "carol", "password": "guess"})
            assert wrong.status_code == 401
        locked = await client.post("/api/auth/login", json={"name": "Carol", "password": PASSWORD})
        assert locked.status_code == 429  # even the right password waits
        assert 0 < int(locked.headers["retry-after"]) <= api.settings.login_window_s
        assert "too many wrong passwords" in locked.json()["detail"]
        assert (await client.get("/api/me")).status_code == 401
        other = await client.post("/api/auth/login", json={"name": "nobody", "password": "guess"})
        assert other.status_code == 401  # other names are not affected

        api.app.state.login_throttle.clock = lambda: 1e12  # long after the window
        ok = await client.post("/api/auth/login", json={"name": "carol", "password": PASSWORD})
        assert ok.status_code == 200


async def test_every_server_process_counts_the_same_failures(api: Api) -> None:
    """Two apps on one database (two processes, or two machines): failures spread over both lock
    the name on both."""
    await (await api.signed_up("dora")).aclose()
    second = create_app(api.settings)
    async with second.router.lifespan_context(second):
        other = Api(app=second, settings=api.settings)
        apps = [api, other]
        for attempt in range(api.settings.login_failures):
            async with apps[attempt % 2].client() as client:
                wrong = await client.post("/api/auth/login", json={"name": "dora", "password": "guess"})
                assert wrong.status_code == 401
        for each in apps:
            async with each.client() as client:
                locked = await client.post("/api/auth/login", json={"name": "dora", "password": PASSWORD})
                assert locked.status_code == 429
        db: Database = second.state.db
        async with db.session() as session:
            count = await session.scalar(select(func.count()).where(LoginFailure.name_key == "dora"))
        assert count == api.settings.login_failures


async def test_names_postgres_cannot_store_are_throttled_too(api: Api) -> None:
    """A NUL in the name (PostgreSQL text refuses it) is still counted and locked, not a 500."""
    async with api.client() as client:
        for _ in range(api.settings.login_failures):
            wrong = await client.post("/api/auth/login", json={"name": "eve\x00", "password": "guess"})
            assert wrong.status_code == 401
        locked = await client.post("/api/auth/login", json={"name": "EVE\x00", "password": "guess"})
        assert locked.status_code == 429
