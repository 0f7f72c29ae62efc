"""The coach's analyses, cached per match and seat (``match_analyses``).

A row is "computing" while some server process works on it (``done`` of ``total`` decisions,
``updated_at`` refreshed as it goes) and "done" with the report once finished. A "computing" row
not refreshed for ``STALE_AFTER`` belongs to a process that died: the next request starts over.

The rows being computed are also what the coach's limits count (``claim``): how many one account
started (``requested_by``) and how many the whole server computes; ``polled_at`` says when anyone
last asked for the progress, and the process computing it gives up on one nobody asks about.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from sqlalchemy import delete, func, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import MatchAnalysis

COMPUTING = "computing"
DONE = "done"
STALE_AFTER = timedelta(seconds=120)


async def get(session: AsyncSession, match_id: str, seat: int) -> MatchAnalysis | None:
    return await session.get(MatchAnalysis, (match_id, seat))


def is_stale(row: MatchAnalysis) -> bool:
    return row.status == COMPUTING and utcnow() - row.updated_at > STALE_AFTER


@dataclass(frozen=True, slots=True)
class Limits:
    """At most ``per_account`` computations started by one account at once, ``running`` on the whole
    server (every process: they share the database)."""

    per_account: int
    running: int


Claim = Literal["claimed", "taken", "account_busy", "server_busy"]


async def claim(
    session: AsyncSession,
    match_id: str,
    seat: int,
    total: int,
    *,
    account_id: int | None = None,
    limits: Limits | None = None,
) -> Claim:
    """Mark the analysis as being computed here for ``account_id``: "claimed"; "taken" when it is
    done or another process is at it; "account_busy" or "server_busy" when ``limits`` refuse it.
    Concurrent claims take turns (an advisory lock on PostgreSQL, the one writer on SQLite), so a
    burst cannot start more than the limits allow."""
    if (await session.connection()).dialect.name == "postgresql":
        await session.execute(text("SELECT pg_advisory_xact_lock(:space, 0)"), {"space": 0x636F})
    row = await session.get(MatchAnalysis, (match_id, seat), with_for_update=True)
    if row is not None and (row.status == DONE or not is_stale(row)):
        return "taken"
    if limits is not None:
        if account_id is not None and await running(session, account_id=account_id) >= limits.per_account:
            return "account_busy"
        if await running(session) >= limits.running:
            return "server_busy"
    now = utcnow()
    if row is None:
        row = MatchAnalysis(match_id=match_id, seat=seat)
        session.add(row)
    row.status, row.done, row.total, row.updated_at = COMPUTING, 0, total, now
    row.requested_by, row.polled_at = account_id, now
    await session.flush()
    return "claimed"


async def running(session: AsyncSession, *, account_id: int | None = None) -> int:
    """Computations under way (not stale), all of them or those ``account_id`` started."""
    query = select(func.count()).select_from(MatchAnalysis).where(
        MatchAnalysis.status == COMPUTING, MatchAnalysis.updated_at > utcnow() - STALE_AFTER
    )
    if account_id is not None:
        query = query.where(MatchAnalysis.requested_by == account_id)
    return int(await session.scalar(query) or 0)


async def polled(session: AsyncSession, match_id: str, seat: int) -> None:
    """Someone asked for the progress of this computation."""
    row = await session.get(MatchAnalysis, (match_id, seat))
    if row is not None and row.status == COMPUTING:
        row.polled_at = utcnow()
        await session.flush()


async def progress(session: AsyncSession, match_id: str, seat: int, done: int) -> datetime | None:
    """Record the progress; returns when the computation was last asked about (None: not known)."""
    row = await session.get(MatchAnalysis, (match_id, seat))
    if row is not None and row.status == COMPUTING:
        row.done, row.updated_at = done, utcnow()
        await session.flush()
        return row.polled_at
    return None


async def finish(session: AsyncSession, match_id: str, seat: int, result: dict[str, Any]) -> None:
    row = await session.get(MatchAnalysis, (match_id, seat))
    if row is None:
        row = MatchAnalysis(match_id=match_id, seat=seat)
        session.add(row)
    row.status, row.result, row.updated_at = DONE, result, utcnow()
    row.total = row.done = len(result.get("decisions", []))
    await session.flush()


async def forget(session: AsyncSession, match_id: str, seat: int) -> None:
    """A failed computation: drop its row so that the next request starts over."""
    await session.execute(
        delete(MatchAnalysis).where(
            MatchAnalysis.match_id == match_id, MatchAnalysis.seat == seat, MatchAnalysis.status == COMPUTING
        )
    )
