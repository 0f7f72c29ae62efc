"""Wrong passwords lock a name for a while; other names and the right password after the wait work."""

from __future__ import annotations

from app.api.throttle import LoginThrottle
from tests.api.support import PASSWORD, Api


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_name_locks_after_the_limit_until_its_oldest_failure_ages_out() -> None:
    clock = Clock()
    throttle = LoginThrottle(3, 60, clock)
    for step in range(3):
        assert throttle.retry_after("Bob") is None
        throttle.failed("bob")
        clock.now += 10 if step < 2 else 0
    assert throttle.retry_after("BOB") == 40  # the first failure was 20 s ago
    assert throttle.retry_after("alice") is None
    clock.now += 40
    assert throttle.retry_after("bob") is None  # one failure aged out: two remain
    throttle.failed("bob")
    assert throttle.retry_after("bob") == 10


def test_a_success_clears_the_name() -> None:
    throttle = LoginThrottle(2, 60, Clock())
    throttle.failed("bob")
    throttle.succeeded("Bob")
    throttle.failed("bob")
    assert throttle.retry_after("bob") is None


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
