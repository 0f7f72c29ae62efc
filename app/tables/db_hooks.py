"""``MatchHooks`` on the ledger and match history (app.db): escrow at start, settle or refund at the
end, each idempotent by match id so a restart at the wrong moment never pays twice."""

from __future__ import annotations

from datetime import UTC, datetime

from app.db import stakes
from app.db.errors import EscrowClosed, InsufficientFunds, NoWallet
from app.db.matches import table_ref
from app.db.session import Database
from app.tables.hooks import CannotStart, FinishedMatch


class DbHooks:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._started: dict[str, datetime] = {}

    async def match_started(self, *, match_id: str, stake: int, account_ids: list[int]) -> None:
        self._started[match_id] = datetime.now(UTC)
        if stake <= 0:
            return
        try:
            await stakes.open_escrow(self.db, match_id=match_id, stake=stake, account_ids=account_ids)
        except (InsufficientFunds, NoWallet) as exc:
            raise CannotStart("insufficient_funds", str(exc)) from exc

    async def match_finished(self, match: FinishedMatch) -> None:
        record = stakes.MatchRecord(
            match_id=match.match_id,
            table_id=table_ref(match.table_code),  # never the invite code itself
            rules=match.rules,
            seed=match.seed,
            dealer=match.dealer,
            seats=match.seats,
            actions=match.actions,
            result=match.outcome,
            created_at=self._started.pop(match.match_id, datetime.now(UTC)),
            finished_at=datetime.now(UTC),
            coin_changes=match.coin_changes,
            fairness=match.fairness,
            private=match.private,
        )
        if match.stake <= 0:
            await self.db.write(lambda session: stakes.record_finished(session, record, match.coin_changes))
            return
        try:
            if match.outcome.get("draw"):
                await stakes.refund_escrow(self.db, match_id=match.match_id, record=record)
            else:
                await stakes.settle_escrow(self.db, match_id=match.match_id, payouts=match.payouts, record=record)
        except EscrowClosed:
            return  # already settled (a retry after a restart): nothing more to do

    async def match_abandoned(self, *, match_id: str) -> None:
        try:
            await stakes.refund_escrow(self.db, match_id=match_id)
        except EscrowClosed:
            return
