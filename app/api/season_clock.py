"""The server's clock for seasons (and the times of challenges and notices), and the seasons'
rollover: shared by the season, player and friend routes and the background rollover
(app/api/social.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import seasons
from app.db.session import Database


def utc_now() -> datetime:
    return datetime.now(UTC)


def clock_of(request: Request) -> Callable[[], datetime]:
    """The server's clock for seasons (``app.state.clock``; tests set their own)."""
    clock: Callable[[], datetime] = getattr(request.app.state, "clock", utc_now)
    return clock


def season_rules(request: Request) -> seasons.SeasonRules:
    rules: seasons.SeasonRules = request.app.state.settings.seasons
    return rules


async def rolled_over(db: Database, now: datetime, rules: seasons.SeasonRules) -> None:
    """Open the current season and archive the ended ones when that is due (a read when not)."""
    async with db.session() as session:
        due = await seasons.needs_roll_over(session, now)
    if due:

        async def roll(session: AsyncSession) -> None:
            await seasons.roll_over(session, now, rules)

        await db.write(roll)
