"""Reachability of the external services the suite talks to.

Without them a test skips with a visible reason; with ``DURAK_REQUIRE_SERVICES=1`` (set by
``.ci/run``) a missing service fails the test instead.
"""

from __future__ import annotations

import os
import socket

import pytest

POSTGRES_URL = os.environ.get("DURAK_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("DURAK_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _missing(name: str, host: str, port: int) -> None:
    reason = f"{name} is not reachable at {host}:{port}"
    if os.environ.get("DURAK_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} and DURAK_REQUIRE_SERVICES=1", pytrace=False)
    pytest.skip(reason)


def require_postgres() -> str:
    if not _reachable("127.0.0.1", 5432):
        _missing("PostgreSQL", "127.0.0.1", 5432)
    return POSTGRES_URL


def require_redis() -> str:
    if not _reachable("127.0.0.1", 6379):
        _missing("Redis", "127.0.0.1", 6379)
    return REDIS_URL
