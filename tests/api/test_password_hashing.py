"""The cost of password hashing is a setting (``DURAK_PASSWORD_HASHING``, app/db/passwords.py):
strong by default, cheap for test suites only, and a cheap hash becomes a strong one at the next
log-in on a strong server. The suite itself runs with ``test`` (tests/conftest.py)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from argon2 import extract_parameters, profiles

from app.config import PasswordHashing, Settings, get_settings
from app.db import accounts, passwords
from bench._server import durak_server
from tests.api.support import PASSWORD, Api

UseHashing = Callable[[PasswordHashing | None], None]


@pytest.fixture
def use_hashing(monkeypatch: pytest.MonkeyPatch) -> Iterator[UseHashing]:
    """Switch the process's setting (``None``: the variable unset, the default) for the rest of the test."""

    def use(value: PasswordHashing | None) -> None:
        if value is None:
            monkeypatch.delenv("DURAK_PASSWORD_HASHING", raising=False)
        else:
            monkeypatch.setenv("DURAK_PASSWORD_HASHING", value)
        get_settings.cache_clear()

    yield use
    get_settings.cache_clear()  # before monkeypatch puts the suite's variable back: read afresh next time


async def _stored_hash(api: Api, name: str) -> str:
    async with api.db.session() as session:
        account = await accounts.get_by_name(session, name)
    assert account is not None
    return account.password_hash


def test_the_default_is_the_strong_cost(use_hashing: UseHashing) -> None:
    use_hashing(None)
    assert Settings(_env_file=None).security.password_hashing == "strong"
    assert get_settings().security.password_hashing == "strong"
    strong = passwords.hasher_for("strong")
    assert (strong.memory_cost, strong.time_cost, strong.parallelism) == (64 * 1024, 3, 4)
    assert extract_parameters(strong.hash("x" * 8)) == profiles.RFC_9106_LOW_MEMORY


async def test_without_the_variable_passwords_are_hashed_strongly(use_hashing: UseHashing) -> None:
    use_hashing(None)
    password_hash = await passwords.hash_password(PASSWORD)
    assert "$m=65536,t=3,p=4$" in password_hash
    assert await passwords.verify_password(password_hash, PASSWORD)
    assert not passwords.needs_rehash(password_hash)


async def test_the_test_cost_is_cheap_and_logs_a_warning(
    use_hashing: UseHashing, caplog: pytest.LogCaptureFixture
) -> None:
    use_hashing("test")
    passwords.hasher_for.cache_clear()  # the warning comes once per process, when the cheap hasher is made
    with caplog.at_level(logging.WARNING, logger="durak.security"):
        password_hash = await passwords.hash_password(PASSWORD)
    assert extract_parameters(password_hash) == profiles.CHEAPEST
    assert any("for test suites only" in record.getMessage() for record in caplog.records)
    assert await passwords.verify_password(password_hash, PASSWORD)
    assert not await passwords.verify_password(password_hash, "not the password")


async def test_an_unknown_name_is_checked_against_a_dummy_hash_of_the_same_cost(use_hashing: UseHashing) -> None:
    for hashing, parameters in (("test", profiles.CHEAPEST), ("strong", profiles.RFC_9106_LOW_MEMORY)):
        use_hashing(hashing)
        assert not await passwords.verify_password(None, "not-a-real-password")
        assert extract_parameters(passwords._dummy_hash(hashing)) == parameters


async def test_a_strong_server_rehashes_a_cheap_hash_at_the_next_log_in(api: Api, use_hashing: UseHashing) -> None:
    await api.signed_up("cheapo")  # under the suite's setting: a cheap hash
    cheap = await _stored_hash(api, "cheapo")
    assert extract_parameters(cheap) == profiles.CHEAPEST

    use_hashing("strong")  # the same database, now served strongly
    wrong = await api.client().post("/api/auth/login", json={"name": "cheapo", "password": "not the password"})
    assert wrong.status_code == 401
    assert await _stored_hash(api, "cheapo") == cheap  # a wrong password changes nothing
    right = await api.client().post("/api/auth/login", json={"name": "cheapo", "password": PASSWORD})
    assert right.status_code == 200, right.text
    strong = await _stored_hash(api, "cheapo")
    assert extract_parameters(strong) == profiles.RFC_9106_LOW_MEMORY

    again = await api.client().post("/api/auth/login", json={"name": "cheapo", "password": PASSWORD})
    assert again.status_code == 200, again.text
    assert await _stored_hash(api, "cheapo") == strong  # hashed once: the strong hash stays


def test_the_suite_runs_cheap_but_benchmarks_do_not_inherit_it(tmp_path: Path) -> None:
    assert get_settings().security.password_hashing == "test"  # tests/conftest.py
    server = durak_server(tmp_path)  # not started: only its environment is looked at
    assert "DURAK_PASSWORD_HASHING" not in server.env
    asked = durak_server(tmp_path, extra_env={"DURAK_PASSWORD_HASHING": "test"})
    assert asked.env["DURAK_PASSWORD_HASHING"] == "test"
