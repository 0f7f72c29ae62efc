"""The coach's analyses, cached per match and seat (``match_analyses``).

A row is "computing" while some server process works on it (``done`` of ``total`` decisions,
``updated_at`` refreshed as it goes) and "done" with the report once finished. A "computing" row
not refreshed for ``STALE_AFTER`` belongs to a process that died: the next request starts over.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import delete
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


async def claim(session: AsyncSession, match_id: str, seat: int, total: int) -> bool:
    """Mark the analysis as being computed here; False when it is done or another process is at it."""
    row = await session.get(MatchAnalysis, (match_id, seat), with_for_update=True)
    if row is None:
        session.add(MatchAnalysis(match_id=match_id, seat=seat, status=COMPUTING, done=0, total=total))
        await session.flush()
        return True
    if row.status == DONE or not is_stale(row):
        return False
    row.status, row.done, row.total, row.updated_at = COMPUTING, 0, total, utcnow()
    await session.flush()
    return True


async def progress(session: AsyncSession, match_id: str, seat: int, done: int) -> None:
    row = await session.get(MatchAnalysis, (match_id, seat))
    if row is not None and row.status == COMPUTING:
        row.done, row.updated_at = done, utcnow()
        await session.flush()


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
