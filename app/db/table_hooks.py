"""``MatchHooks`` on the ledger and match history (app.db): escrow at start, settle or refund at the
end, each idempotent by match id so a restart at the wrong moment never pays twice; and the integrity
rules (docs/integrity.md) at staked seats, at a staked match's start and in the recorded match."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime

from sqlalchemy.exc import SQLAlchemyError

from app.db import integrity, seasons, stakes
from app.db import matches as history
from app.db.errors import EscrowClosed, EscrowNotFound, InsufficientFunds, NoWallet
from app.db.matches import table_ref
from app.db.session import Database
from app.integrity_policy import REASON_PAIR_CAP, IntegrityRules, MatchFacts, Refusal
from app.tables.hooks import CannotStart, DealtMatch, FinishedMatch, RatingChange
from app.tables.integrity import bouts_of, dealt_deck, forfeit_after_acting, throw_in_chances

log = logging.getLogger("durak.table")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class DbHooks:
    def __init__(
        self,
        db: Database,
        rules: IntegrityRules | None = None,
        now: Callable[[], datetime] = _utc_now,
        season_rules: seasons.SeasonRules | None = None,
        *,
        secret: str = "",
    ) -> None:
        self.db = db
        self.rules = rules or IntegrityRules()
        self.now = now
        self.season_rules = season_rules or seasons.SeasonRules()
        self.secret = secret  # seals the server seed of a running match kept in the database
        self._started: dict[str, datetime] = {}

    async def may_sit(self, *, account_id: int | None, others: list[int], stake: int) -> tuple[str, str] | None:
        if stake <= 0 or account_id is None:
            return None
        now = self.now()
        try:
            async with self.db.session() as session:
                refusal = await integrity.staked_seat_refusal(
                    session, account_id=account_id, others=others, stake=stake, rules=self.rules, now=now
                )
            if refusal is not None:
                await self._flag_pair_cap(refusal, stake, now)
        except (SQLAlchemyError, OSError) as exc:
            log.warning("staked seat: the database cannot be reached (%s)", exc)
            return "unavailable", "the coin ledger cannot be reached right now; try again shortly"
        return None if refusal is None else (refusal.code, refusal.message)

    async def _flag_pair_cap(self, refusal: Refusal, stake: int, now: datetime) -> None:
        pair = refusal.pair
        if refusal.code != REASON_PAIR_CAP or pair is None:
            return
        await self.db.write(
            lambda session: integrity.file_pair_cap_flag(
                session, pair=pair, moved=refusal.moved, stake=stake, rules=self.rules, now=now
            )
        )

    async def match_started(self, *, match_id: str, stake: int, account_ids: list[int]) -> None:
        now = self.now()
        self._started[match_id] = now
        if stake <= 0:
            return
        async with self.db.session() as session:
            refusal = await integrity.staked_match_refusal(
                session, account_ids=account_ids, stake=stake, rules=self.rules, now=now
            )
        if refusal is not None:
            self._started.pop(match_id, None)
            await self._flag_pair_cap(refusal, stake, now)
            raise CannotStart(refusal.code, refusal.message)
        try:
            await stakes.open_escrow(self.db, match_id=match_id, stake=stake, account_ids=account_ids)
        except (InsufficientFunds, NoWallet) as exc:
            raise CannotStart("insufficient_funds", str(exc)) from exc

    async def _started_at(self, match: FinishedMatch) -> datetime | None:
        """When the match was dealt: remembered here, else (a match taken over from another process)
        as the table's record kept it, else when its escrow was opened; None when nothing knows."""
        started = self._started.get(match.match_id)
        if started is None and match.started_at is not None:
            started = datetime.fromtimestamp(match.started_at, UTC)
        if started is None and match.stake > 0:
            escrow = await stakes.get_escrow(self.db, match_id=match.match_id)
            started = escrow.opened_at if escrow is not None else None
        return started

    async def match_dealt(self, deal: DealtMatch) -> None:
        """The deal is kept (``live_matches``) before anyone sees a card: a match whose deal cannot
        be kept is not dealt, so that none goes unrevealed (docs/fairness.md)."""
        record = history.DealRecord(
            match_id=deal.match_id,
            table_id=table_ref(deal.table_code),
            private=deal.private,
            started_at=self._started.get(deal.match_id) or self.now(),
            rules=dict(deal.rules),
            seats=[dict(seat) for seat in deal.seats],
            dealer=deal.dealer,
            fairness=history.seal_deal(deal.fairness, deal.match_id, self.secret),
        )
        await self.db.write(lambda session: history.record_deal(session, record))

    async def _aborted(self, match: FinishedMatch) -> None:
        """A match stopped without an outcome: every stake back, and recorded with its deal."""
        started = await self._started_at(match)
        finished = self.now()
        record = _record(match, started, finished, dict.fromkeys(match.coin_changes, 0))
        if match.stake > 0:  # settled or refunded already: recorded below if it is not yet
            with contextlib.suppress(EscrowClosed, EscrowNotFound):
                await stakes.refund_escrow(self.db, match_id=match.match_id, record=record)
        await self.db.write(lambda session: history.record_if_missing(session, record))
        self._started.pop(match.match_id, None)

    async def match_finished(self, match: FinishedMatch) -> dict[int, RatingChange] | None:
        if match.outcome.get("aborted"):
            await self._aborted(match)
            return None
        started = await self._started_at(match)
        finished = self.now()
        seconds = None if started is None else (finished - started).total_seconds()
        facts = MatchFacts(
            bouts=bouts_of(match.actions),
            seconds=seconds,
            rules=self.rules,
            forfeit_after_acting=forfeit_after_acting(match.actions, match.outcome),
        )
        if len({seat.get("account_id") for seat in match.seats} - {None}) >= 2:  # bots, guests: no signal
            try:
                throw_ins = await asyncio.to_thread(
                    throw_in_chances, match.rules, match.seed, match.dealer, match.actions, dealt_deck(match.fairness)
                )
                facts = replace(facts, throw_ins=throw_ins)
            except Exception:  # the settlement never waits on the signals: it goes on without them
                log.exception("match %s: could not replay its log for the soft-play signal", match.match_id)
        record = _record(match, started, finished, match.coin_changes, facts)
        if match.stake <= 0:
            await self.db.write(lambda session: stakes.record_finished(session, record, match.coin_changes))
        else:
            try:
                if match.outcome.get("draw"):
                    await stakes.refund_escrow(self.db, match_id=match.match_id, record=record)
                else:
                    await stakes.settle_escrow(self.db, match_id=match.match_id, payouts=match.payouts, record=record)
            except EscrowClosed:
                pass  # already settled (a retry after a restart): nothing more to do
        self._started.pop(match.match_id, None)
        return await self._rated(match)

    async def _rated(self, match: FinishedMatch) -> dict[int, RatingChange] | None:
        """Rate the recorded match in its season (its own transaction, once per match: a retry after a
        crash in between rates it then) and say what it did to each seat's ratings (None: unrated)."""
        rules = self.season_rules
        await self.db.write(lambda session: seasons.rate_match(session, match_id=match.match_id, rules=rules))
        async with self.db.session() as session:
            changes = await seasons.match_rating_changes(session, match.match_id)
        by_seat = {
            seat["seat"]: changes[account]
            for seat in match.seats
            if (account := seat["account_id"]) is not None and account in changes
        }
        return by_seat or None

    async def match_abandoned(self, *, match_id: str) -> None:
        try:
            await stakes.refund_escrow(self.db, match_id=match_id)
        except EscrowClosed:
            return


def _record(
    match: FinishedMatch,
    started: datetime | None,
    finished: datetime,
    coin_changes: Mapping[int, int],
    integrity: MatchFacts | None = None,
) -> stakes.MatchRecord:
    """The history record of a match that ended at ``finished`` (aborted ones win and lose nothing)."""
    return stakes.MatchRecord(
        match_id=match.match_id,
        table_id=table_ref(match.table_code),  # never the invite code itself
        rules=dict(match.rules),
        seed=match.seed,
        dealer=match.dealer,
        seats=match.seats,
        actions=match.actions,
        result=match.outcome,
        created_at=started or finished,
        finished_at=finished,
        coin_changes=coin_changes,
        fairness=match.fairness,
        private=match.private,
        integrity=integrity,
    )
