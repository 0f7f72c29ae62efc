"""Match stakes: escrow on start, settle or refund at the end, list what is still open.

The table actor calls these; each runs as one retried write transaction of its own:

* ``open_escrow``  — every seat's stake moves into the match's escrow account, all seats or none
  (``InsufficientFunds`` names the first player who cannot pay). Key ``match:<id>:stake``.
* ``settle_escrow`` — pays the engine's payouts out of escrow; they must add up to what is in it.
  Key ``match:<id>:settle``. Optionally records the finished match in the same transaction.
* ``refund_escrow`` — gives every stake back. Key ``match:<id>:refund``.

All three are idempotent: calling one again returns the original outcome. Settle and refund exclude
each other: whichever commits first closes the escrow and the other raises ``EscrowClosed``.
``open_escrows`` lists escrows still open, e.g. after a crash (see docs/ledger.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import ledger
from app.db.base import utcnow
from app.db.errors import EscrowClosed, EscrowNotFound, IdempotencyConflict, PayoutMismatch
from app.db.matches import MatchRecord, record_match
from app.db.models import (
    ESCROW_OPEN,
    ESCROW_REFUNDED,
    ESCROW_SETTLED,
    KIND_ESCROW,
    Escrow,
    LedgerAccount,
    LedgerEntry,
    LedgerTransfer,
)
from app.db.session import Database

if TYPE_CHECKING:
    pass

REASON_STAKE = "stake"
REASON_PAYOUT = "payout"
REASON_REFUND = "refund"


def stake_key(match_id: str) -> str:
    return f"match:{match_id}:stake"


def settle_key(match_id: str) -> str:
    return f"match:{match_id}:settle"


def refund_key(match_id: str) -> str:
    return f"match:{match_id}:refund"


@dataclass(frozen=True, slots=True)
class EscrowInfo:
    match_id: str
    stake: int
    status: str
    stakes: dict[int, int]  # player account id -> coins put in
    balance: int  # coins currently held
    opened_at: datetime
    closed_at: datetime | None


def _check_match_id(match_id: str) -> None:
    if not match_id or len(match_id) > 64:
        raise ValueError("match_id must be 1-64 characters")


async def _stakes_by_account(session: AsyncSession, escrow: Escrow) -> dict[int, int]:
    """Who put how much into this escrow, from the stake transfer's entries."""
    rows = (
        await session.execute(
            select(LedgerAccount.owner_id, LedgerEntry.amount)
            .join(LedgerTransfer, LedgerTransfer.id == LedgerEntry.transfer_id)
            .join(LedgerAccount, LedgerAccount.id == LedgerEntry.account_id)
            .where(LedgerTransfer.key == stake_key(escrow.match_id), LedgerEntry.amount < 0)
        )
    ).all()
    stakes: dict[int, int] = {}
    for owner, amount in rows:
        if owner is not None:
            stakes[int(owner)] = stakes.get(int(owner), 0) - int(amount)
    return dict(sorted(stakes.items()))


async def _info(session: AsyncSession, escrow: Escrow) -> EscrowInfo:
    balance = await session.scalar(
        select(LedgerAccount.balance).where(LedgerAccount.id == escrow.ledger_account_id)
    )
    return EscrowInfo(
        match_id=escrow.match_id,
        stake=escrow.stake,
        status=escrow.status,
        stakes=await _stakes_by_account(session, escrow),
        balance=int(balance or 0),
        opened_at=escrow.opened_at,
        closed_at=escrow.closed_at,
    )


async def _lock_escrow(session: AsyncSession, match_id: str) -> Escrow:
    escrow = await session.scalar(
        select(Escrow)
        .where(Escrow.match_id == match_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if escrow is None:
        raise EscrowNotFound(f"no escrow was opened for match {match_id}")
    return escrow


async def open_escrow_in(
    session: AsyncSession, *, match_id: str, stake: int, account_ids: Sequence[int]
) -> EscrowInfo:
    """``open_escrow`` inside the caller's transaction."""
    _check_match_id(match_id)
    if type(stake) is not int or stake <= 0 or stake > ledger.MAX_AMOUNT:
        raise ValueError("stake must be a positive whole number of coins")
    if len(account_ids) < 1 or len(set(account_ids)) != len(account_ids):
        raise ValueError("account_ids must name each staking player once")

    existing = await session.scalar(select(Escrow).where(Escrow.match_id == match_id))
    if existing is not None:
        info = await _info(session, existing)
        if info.stake != stake or set(info.stakes) != set(account_ids):
            raise IdempotencyConflict(
                f"match {match_id} already has an escrow with stake {info.stake} "
                f"from accounts {sorted(info.stakes)}"
            )
        return info

    wallets = await ledger.wallet_ids(session, account_ids)
    escrow_account = LedgerAccount(code=f"escrow:{match_id}", kind=KIND_ESCROW, balance=0)
    session.add(escrow_account)
    await session.flush()
    escrow = Escrow(match_id=match_id, ledger_account_id=escrow_account.id, stake=stake, status=ESCROW_OPEN)
    session.add(escrow)
    await session.flush()
    await ledger.transfer(
        session,
        key=stake_key(match_id),
        reason=REASON_STAKE,
        match_id=match_id,
        moves=[(wallets[a], escrow_account.id, stake) for a in account_ids],
    )
    return await _info(session, escrow)


async def _close(
    session: AsyncSession,
    *,
    match_id: str,
    status: str,
    payouts: Mapping[int, int] | None,
    record: MatchRecord | None,
) -> EscrowInfo:
    verb = "settle" if status == ESCROW_SETTLED else "refund"
    key = settle_key(match_id) if status == ESCROW_SETTLED else refund_key(match_id)
    escrow = await _lock_escrow(session, match_id)
    if escrow.status != ESCROW_OPEN:
        if escrow.status != status:
            raise EscrowClosed(match_id, escrow.status, verb)
        if payouts is not None:  # the same settle again must be the same settle
            previous = await ledger.find_transfer(session, key)
            wallets = await ledger.wallet_ids(session, payouts) if payouts else {}
            wanted = {wallets[a]: amount for a, amount in payouts.items() if amount}
            paid = previous.deltas if previous else {}
            got = {k: v for k, v in paid.items() if k != escrow.ledger_account_id}
            if wanted != got:
                raise IdempotencyConflict(f"match {match_id} was already settled with other payouts")
        return await _info(session, escrow)

    info = await _info(session, escrow)
    if payouts is None:  # refund
        amounts = info.stakes
    else:
        unknown = sorted(set(payouts) - set(info.stakes))
        if unknown:
            raise PayoutMismatch(f"account {unknown[0]} did not stake in match {match_id}")
        if any(type(v) is not int or v < 0 for v in payouts.values()):
            raise PayoutMismatch("payouts must be whole numbers of coins, zero or more")
        if sum(payouts.values()) != info.balance:
            raise PayoutMismatch(
                f"payouts add up to {sum(payouts.values())} but the escrow of match {match_id} "
                f"holds {info.balance}"
            )
        amounts = dict(payouts)
    wallets = await ledger.wallet_ids(session, amounts)
    source = escrow.ledger_account_id
    moves = [(source, wallets[a], amount) for a, amount in sorted(amounts.items()) if amount]
    if moves:
        await ledger.transfer(
            session,
            key=key,
            reason=REASON_PAYOUT if status == ESCROW_SETTLED else REASON_REFUND,
            match_id=match_id,
            moves=moves,
        )
    escrow.status = status
    escrow.closed_at = utcnow()
    await session.flush()
    if record is not None:
        changes = record.coin_changes
        if changes is None:
            by_account = {a: amounts.get(a, 0) - put for a, put in info.stakes.items()}
            changes = {
                int(seat["seat"]): by_account.get(int(seat["account_id"]), 0)
                for seat in record.seats
                if seat.get("account_id") is not None
            }
        await record_finished(session, record, changes)
    return await _info(session, escrow)


async def record_finished(session: AsyncSession, record: MatchRecord, coin_changes: Mapping[int, int]) -> None:
    """Store ``record`` in the match history (inside the caller's transaction)."""

    await record_match(session, replace(record, coin_changes=coin_changes))


async def open_escrow(db: Database, *, match_id: str, stake: int, account_ids: Sequence[int]) -> EscrowInfo:
    """Move ``stake`` from each account into the match's escrow, in one transaction: all or none."""
    return await db.write(
        lambda s: open_escrow_in(s, match_id=match_id, stake=stake, account_ids=list(account_ids))
    )


async def settle_escrow(
    db: Database,
    *,
    match_id: str,
    payouts: Mapping[int, int],
    record: MatchRecord | None = None,
) -> EscrowInfo:
    """Pay ``payouts`` (account id -> coins, summing to the escrow) out of escrow and close it.

    With ``record``, the finished match is recorded in the same transaction; its coin changes
    default to payout minus stake for each seated account.
    """
    _check_match_id(match_id)
    payouts = {int(a): v for a, v in payouts.items()}
    return await db.write(
        lambda s: _close(s, match_id=match_id, status=ESCROW_SETTLED, payouts=payouts, record=record)
    )


async def refund_escrow(db: Database, *, match_id: str, record: MatchRecord | None = None) -> EscrowInfo:
    """Give every stake back (a draw, or a match that cannot be recovered) and close the escrow."""
    _check_match_id(match_id)
    return await db.write(
        lambda s: _close(s, match_id=match_id, status=ESCROW_REFUNDED, payouts=None, record=record)
    )


async def get_escrow(db: Database, *, match_id: str) -> EscrowInfo | None:
    async with db.session() as session:
        escrow = await session.get(Escrow, match_id)
        return None if escrow is None else await _info(session, escrow)


async def open_escrows(db: Database) -> list[EscrowInfo]:
    """Escrows neither settled nor refunded, oldest first: the matches to recover or refund."""
    async with db.session() as session:
        rows = (
            await session.scalars(
                select(Escrow).where(Escrow.status == ESCROW_OPEN).order_by(Escrow.opened_at, Escrow.match_id)
            )
        ).all()
        return [await _info(session, row) for row in rows]


__all__ = [
    "ESCROW_OPEN",
    "ESCROW_REFUNDED",
    "ESCROW_SETTLED",
    "EscrowInfo",
    "MatchRecord",
    "get_escrow",
    "open_escrow",
    "open_escrow_in",
    "open_escrows",
    "refund_escrow",
    "settle_escrow",
]
