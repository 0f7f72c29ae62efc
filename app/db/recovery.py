"""Matches that can no longer finish: recorded as aborted with their deal revealed, and their stakes
given back.

A match stays live while its table lives in the store (any process may take the table over and
finish it). A match dealt (``live_matches``) that is not live anywhere — its process died and the
store lost it too, or the server ran with the in-process store and restarted — is recorded as
aborted, its deal revealed and its stakes refunded in the same transaction
(``record_abandoned_deals``). An escrow whose match is not live anywhere and was never dealt is
refunded in full (``refund_abandoned_escrows``).
"""

from __future__ import annotations

import contextlib
import logging
from datetime import UTC, datetime, timedelta

from app.broker import BrokerError
from app.db import matches as history
from app.db import stakes
from app.db.errors import EscrowClosed, EscrowNotFound
from app.db.session import Database
from app.tables.spec import TableStatus
from app.tables.store import MemoryStore, TableStore

log = logging.getLogger("durak.recovery")


async def live_match_ids(store: TableStore) -> set[str]:
    ids = set()
    for code in await store.codes():
        loaded = await store.load(code)
        if loaded is not None and loaded[0].get("match_id") and loaded[0].get("status") != TableStatus.WAITING:
            ids.add(loaded[0]["match_id"])
    return ids


async def _not_live_before(store: TableStore, min_age_s: float | None, sweep: str) -> tuple[set[str], datetime] | None:
    """What a sweep may touch: the match ids that some table is playing, and the cutoff before which
    a row counts as abandoned (``min_age_s``: default 30 s with a shared store, where other processes
    may be opening rows right now; 0 for the in-process store, which only this process uses). None
    when the store cannot be read: then nothing is touched."""
    if min_age_s is None:
        min_age_s = 0.0 if isinstance(store, MemoryStore) else 30.0
    try:
        live = await live_match_ids(store)
    except BrokerError as exc:
        log.warning("%s skipped: table store unreachable (%s)", sweep, exc)
        return None
    return live, datetime.now(UTC) - timedelta(seconds=min_age_s)


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


async def record_abandoned_deals(
    db: Database, store: TableStore, secret: str, min_age_s: float | None = None
) -> list[str]:
    """Record every dealt match that no table is playing as aborted (``server_restart``), its deal
    revealed (``secret``: the key it was sealed with), refunding its stakes. Returns their ids.
    ``min_age_s``: see ``_not_live_before``."""
    sweepable = await _not_live_before(store, min_age_s, "sweep of abandoned deals")
    if sweepable is None:
        return []
    live, cutoff = sweepable
    async with db.session() as session:
        deals = await history.live_deals(session)
    recorded = []
    for deal in deals:
        if deal.match_id in live or _aware(deal.started_at) > cutoff:
            continue
        try:
            await _record_aborted(db, history.aborted_record(deal, history.ABORT_RESTART, secret))
        except Exception:  # one bad row must not stop the others; it is tried again at the next start
            log.exception("could not record abandoned match %s", deal.match_id)
            continue
        recorded.append(deal.match_id)
        log.warning("recorded match %s as aborted (its server stopped mid-match), its deal revealed", deal.match_id)
    return recorded


async def _record_aborted(db: Database, record: stakes.MatchRecord) -> None:
    if int(record.rules.get("stake", 0) or 0) > 0:  # settled (then recorded) or refunded before: below
        with contextlib.suppress(EscrowClosed, EscrowNotFound):
            await stakes.refund_escrow(db, match_id=record.match_id, record=record)
    await db.write(lambda session: history.record_if_missing(session, record))


async def refund_abandoned_escrows(db: Database, store: TableStore, min_age_s: float | None = None) -> list[str]:
    """Refund open escrows of matches that no table is playing. Returns the refunded match ids.
    ``min_age_s``: see ``_not_live_before``."""
    sweepable = await _not_live_before(store, min_age_s, "escrow sweep")
    if sweepable is None:
        return []
    live, cutoff = sweepable
    refunded = []
    for escrow in await stakes.open_escrows(db):
        if escrow.match_id in live or _aware(escrow.opened_at) > cutoff:
            continue
        try:
            await stakes.refund_escrow(db, match_id=escrow.match_id)
        except Exception as exc:  # settled meanwhile by its table: nothing to refund
            log.info("escrow %s not refunded: %s", escrow.match_id, exc)
            continue
        refunded.append(escrow.match_id)
        log.warning("refunded the stakes of abandoned match %s", escrow.match_id)
    return refunded
