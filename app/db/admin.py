"""Admin coin adjustments (a ledger transfer against the house adjustments account, audited)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import ledger
from app.db.errors import IdempotencyConflict
from app.db.models import HOUSE_ADJUSTMENTS, AdminAction, LedgerEntry, LedgerTransfer

REASON_ADJUSTMENT = "admin_adjustment"


@dataclass(frozen=True, slots=True)
class Adjustment:
    transfer_id: int
    account_id: int
    admin_id: int | None
    amount: int
    reason: str
    balance: int
    created_at: datetime
    replayed: bool


async def adjust(
    session: AsyncSession,
    *,
    admin_id: int | None,
    account_id: int,
    amount: int,
    reason: str,
    key: str,
) -> Adjustment:
    """Credit (amount > 0) or debit (amount < 0) a player's wallet; idempotent by ``key``.

    Raises ``NoWallet``, ``InsufficientFunds`` (a debit larger than the balance) or
    ``IdempotencyConflict`` (the key was used for another adjustment).
    """
    if type(amount) is not int or amount == 0:
        raise ValueError("amount must be a non-zero whole number of coins")
    reason = reason.strip()
    if not reason:
        raise ValueError("an adjustment needs a reason")
    wallet = await ledger.wallet_id(session, account_id)
    house = await ledger.house_account_id(session, HOUSE_ADJUSTMENTS)
    move = (house, wallet, amount) if amount > 0 else (wallet, house, -amount)
    result = await ledger.transfer(
        session,
        key=f"admin:{key}",
        reason=REASON_ADJUSTMENT,
        moves=[move],
        actor_id=admin_id,
        memo=reason,
    )
    if result.replayed and (result.actor_id != admin_id or result.memo != reason):
        raise IdempotencyConflict(f"idempotency key {key!r} was already used for another adjustment")
    if not result.replayed:
        session.add(
            AdminAction(
                admin_id=admin_id,
                target_id=account_id,
                action="adjust",
                amount=amount,
                reason=reason,
                transfer_id=result.id,
            )
        )
        await session.flush()
    balance = await ledger.balance_of(session, account_id)
    return Adjustment(
        transfer_id=result.id,
        account_id=account_id,
        admin_id=admin_id,
        amount=amount,
        reason=reason,
        balance=int(balance or 0),
        created_at=result.created_at,
        replayed=result.replayed,
    )


async def ledger_page(
    session: AsyncSession, *, account_id: int, offset: int, limit: int
) -> tuple[list[tuple[LedgerEntry, LedgerTransfer]], int]:
    """A player's ledger entries with their transfers, newest first, and the total count."""
    wallet = await ledger.wallet_id(session, account_id)
    total = await session.scalar(
        select(func.count()).select_from(LedgerEntry).where(LedgerEntry.account_id == wallet)
    )
    rows = (
        await session.execute(
            select(LedgerEntry, LedgerTransfer)
            .join(LedgerTransfer, LedgerTransfer.id == LedgerEntry.transfer_id)
            .where(LedgerEntry.account_id == wallet)
            .order_by(LedgerEntry.id.desc())
            .offset(offset)
            .limit(limit)
        )
    ).all()
    return [(entry, transfer) for entry, transfer in rows], int(total or 0)
