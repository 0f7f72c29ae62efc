"""Failed log-ins per account name: after ``limit`` failures within ``window_s`` the name is locked
until enough of them are ``window_s`` old. A success clears the name's failures.

The failures are rows of ``login_failures`` in the database, so every server process (and machine)
counts the same ones: a guesser gets ``limit`` attempts per window in all, however many processes
serve. Names are compared case-insensitively, as accounts are; each failure also deletes every
failure that has aged out, so made-up names cannot grow the table without bound.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import LoginFailure
from app.db.session import Database


class LoginThrottle:
    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock  # Unix seconds: the rows are compared across processes

    async def retry_after(self, db: Database, name: str) -> float | None:
        """Seconds until ``name`` may try again, or None when it may try now."""
        now = self.clock()
        async with db.session() as session:
            times = list(
                await session.scalars(
                    select(LoginFailure.at)
                    .where(LoginFailure.name_key == _key(name), LoginFailure.at > now - self.window_s)
                    .order_by(LoginFailure.at)
                )
            )
        if len(times) < self.limit:
            return None
        # Locked until all but limit - 1 of them have aged out.
        return max(0.0, times[len(times) - self.limit] + self.window_s - now)

    async def failed(self, db: Database, name: str) -> None:
        now, key = self.clock(), _key(name)

        async def record(session: AsyncSession) -> None:
            await session.execute(delete(LoginFailure).where(LoginFailure.at <= now - self.window_s))
            session.add(LoginFailure(name_key=key, at=now))

        await db.write(record)

    async def succeeded(self, db: Database, name: str) -> None:
        key = _key(name)

        async def clear(session: AsyncSession) -> None:
            await session.execute(delete(LoginFailure).where(LoginFailure.name_key == key))

        await db.write(clear)


def _key(name: str) -> str:
    """The name case-folded, cut to the column, NUL (which PostgreSQL text refuses) replaced."""
    return name.casefold().replace("\x00", "\ufffd")[:255]
