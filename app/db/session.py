"""Engine, sessions and write transactions with retry, for PostgreSQL and SQLite alike.

``Database`` is created in the FastAPI lifespan (``app.state.db``) or by any other process that needs
the database (the CLI, tests). Reads use ``db.session()``; every write goes through ``db.write(fn)``,
which runs ``fn(session)`` in one transaction and re-runs it, with backoff, when the database reports
a serialization failure, a deadlock, a lost race on an idempotency key, or (SQLite) a busy file.

SQLite: WAL journal, foreign keys on, a busy timeout, ``synchronous=FULL`` (a committed transfer
survives a power cut) and ``BEGIN IMMEDIATE`` for write transactions, so writers queue for the lock
up front instead of failing when a read transaction tries to upgrade.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

log = logging.getLogger(__name__)

T = TypeVar("T")

# Unique constraints whose violation means "another transaction did the same thing first":
# re-running the work then finds the row and takes the idempotent path.
RACE_CONSTRAINTS = frozenset(
    {"uq_ledger_transfers_key", "uq_ledger_accounts_code", "uq_ledger_accounts_owner_id", "pk_escrows"}
)
_PG_RETRY_SQLSTATES = frozenset({"40001", "40P01"})  # serialization_failure, deadlock_detected
_BEGIN_OPTION = "durak_sqlite_begin"


def _sqlstate(exc: DBAPIError) -> str | None:
    return getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)


def _constraint_name(exc: DBAPIError) -> str | None:
    diag = getattr(exc.orig, "diag", None)
    name = getattr(diag, "constraint_name", None)
    if name:
        return str(name)
    text = str(exc.orig)
    for candidate in RACE_CONSTRAINTS:
        if candidate in text:
            return candidate
    return None


def is_retryable(exc: BaseException) -> bool:
    """Whether re-running the whole transaction may succeed."""
    if not isinstance(exc, DBAPIError):
        return False
    if _sqlstate(exc) in _PG_RETRY_SQLSTATES:
        return True
    if isinstance(exc, IntegrityError):
        return _constraint_name(exc) in RACE_CONSTRAINTS
    if isinstance(exc, OperationalError):
        text = str(exc.orig).lower()
        return "database is locked" in text or "database table is locked" in text
    return False


def _install_sqlite_hooks(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take over transaction control from the driver so that BEGIN is ours to emit.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=15000")
            cursor.execute("PRAGMA synchronous=FULL")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


class Database:
    """One engine plus a read and a write session factory."""

    def __init__(self, url: str, *, echo: bool = False, pool_size: int = 10, max_overflow: int = 20) -> None:
        self.url = url
        self.backend = make_url(url).get_backend_name()
        kwargs: dict[str, Any] = {"echo": echo, "pool_pre_ping": True}
        if self.backend == "postgresql":
            kwargs.update(pool_size=pool_size, max_overflow=max_overflow)
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        write_bind = self.engine
        if self.is_sqlite:
            _install_sqlite_hooks(self.engine)
            write_bind = self.engine.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
        self._reads = async_sessionmaker(self.engine, expire_on_commit=False, autoflush=False)
        self._writes = async_sessionmaker(write_bind, expire_on_commit=False, autoflush=False)

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session for reading (on SQLite a deferred, shared-lock transaction)."""
        async with self._reads() as session:
            yield session

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """One write transaction, committed on exit, without retry (prefer ``write``)."""
        async with self._writes() as session, session.begin():
            yield session

    async def write(
        self,
        fn: Callable[[AsyncSession], Awaitable[T]],
        *,
        attempts: int = 12,
        base_delay: float = 0.005,
        max_delay: float = 0.5,
    ) -> T:
        """Run ``fn`` in a write transaction and commit; retry transient failures with backoff.

        ``fn`` may run more than once, so it must do all its work through the session it is given.
        Domain errors raised by ``fn`` roll the transaction back and propagate unchanged.
        """
        for attempt in range(1, attempts + 1):
            try:
                async with self._writes() as session, session.begin():
                    return await fn(session)
            except DBAPIError as exc:
                if attempt == attempts or not is_retryable(exc):
                    raise
                delay = min(max_delay, base_delay * 2 ** (attempt - 1))
                delay *= 0.5 + random.random()  # jitter, so that colliding writers spread out
                log.debug("retrying write after %s (attempt %d): %s", type(exc).__name__, attempt, exc)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    async def dispose(self) -> None:
        await self.engine.dispose()
