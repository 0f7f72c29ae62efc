"""The embedded default (one process, the in-process table store) survives a restart: at a
graceful stop every live table is kept in the database (``live_tables``: its record and its
match's moves), and at the next start it is served again where it was (the same deal and hands,
the same version; the move timer gets what it had left plus the takeover's grace, idle limits and
disconnect graces start again), before the sweep of abandoned deals. A table that cannot be
resumed is dropped, and its match, no longer live, is then recorded as aborted by that sweep:
stakes refunded, deal revealed (``app.tables.recovery``)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import LiveTable
from app.db.session import Database
from app.tables.record import stored_table
from app.tables.registry import TableRegistry

log = logging.getLogger("durak.resume")


async def keep_tables(db: Database, registry: TableRegistry) -> int:
    """Write every table of ``registry`` (stopped already: ``hand_over``) to ``live_tables``, in one
    transaction that replaces what was kept before. Returns how many."""
    now = datetime.now(UTC)
    kept = [(code, actor.record(), list(actor.log)) for code, actor in registry.tables.items()]

    async def write(session: AsyncSession) -> None:  # may run again: builds its rows each time
        await session.execute(delete(LiveTable))
        session.add_all(LiveTable(code=code, record=record, log=moves, saved_at=now) for code, record, moves in kept)

    await db.write(write)
    log.info("kept %d live tables for the next start", len(kept))
    return len(kept)


async def resume_tables(db: Database, registry: TableRegistry) -> list[str]:
    """Serve again the tables kept at the last stop, then forget them (a table that fails to resume
    is logged and dropped: its match is recorded as aborted by the sweep that follows). Returns the
    codes resumed."""
    async with db.session() as session:
        kept = list((await session.scalars(select(LiveTable))).all())
    resumed = []
    for row in kept:
        try:
            await registry.restore(stored_table(row.record), list(row.log))
        except Exception:
            log.exception("table %s: could not be resumed; its match is settled as aborted", row.code[:8])
            continue
        resumed.append(row.code)

    async def forget(session: AsyncSession) -> None:
        await session.execute(delete(LiveTable))

    if kept:
        await db.write(forget)
        log.info("resumed %d of %d tables kept at the last stop", len(resumed), len(kept))
    return resumed
