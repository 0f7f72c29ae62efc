"""Stakes of matches that can no longer finish go back to their players.

A match's escrow stays open while its table lives in the store (any process may take the table over
and finish it). An escrow whose match is not live anywhere — its process died and the store lost it
too, or the server ran with the in-process store and restarted — is refunded in full.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from app.broker import BrokerError
from app.db import stakes
from app.db.session import Database
from app.tables.store import MemoryStore, TableStore

log = logging.getLogger("durak.recovery")


async def live_match_ids(store: TableStore) -> set[str]:
    ids = set()
    for code in await store.codes():
        loaded = await store.load(code)
        if loaded is not None and loaded[0].get("match_id") and loaded[0].get("status") != "waiting":
            ids.add(loaded[0]["match_id"])
    return ids


async def refund_abandoned_escrows(db: Database, store: TableStore, min_age_s: float | None = None) -> list[str]:
    """Refund open escrows of matches that no table is playing. Returns the refunded match ids.

    With a shared store other processes may be opening escrows right now, so only escrows older than
    ``min_age_s`` (default 30 s; 0 for the in-process store, which only this process uses) count.
    """
    if min_age_s is None:
        min_age_s = 0.0 if isinstance(store, MemoryStore) else 30.0
    try:
        live = await live_match_ids(store)
    except BrokerError as exc:
        log.warning("escrow sweep skipped: table store unreachable (%s)", exc)
        return []
    refunded = []
    cutoff = datetime.now(UTC) - timedelta(seconds=min_age_s)
    for escrow in await stakes.open_escrows(db):
        opened = escrow.opened_at if escrow.opened_at.tzinfo else escrow.opened_at.replace(tzinfo=UTC)
        if escrow.match_id in live or opened > cutoff:
            continue
        try:
            await stakes.refund_escrow(db, match_id=escrow.match_id)
        except Exception as exc:  # settled meanwhile by its table: nothing to refund
            log.info("escrow %s not refunded: %s", escrow.match_id, exc)
            continue
        refunded.append(escrow.match_id)
        log.warning("refunded the stakes of abandoned match %s", escrow.match_id)
    return refunded
