"""The double-entry coin ledger: every balance change is a balanced, idempotent transfer.

``transfer`` works inside the caller's transaction (so that a signup, a stake or an admin adjustment
is one atomic unit with its other writes) and never commits; run it through ``Database.write`` to get
commit and retry. Invariants, kept by this module and checked by the tests:

* every transfer's entries sum to zero (coins are moved, never created or destroyed);
* a ledger account's cached ``balance`` equals the sum of its entries;
* player and escrow balances never go below zero (``CHECK`` in the schema, checked here first so
  the caller gets ``InsufficientFunds`` naming the account);
* a transfer key is applied at most once; re-applying it returns the original transfer.

Locking: the accounts a transfer touches are locked in ascending id order (``SELECT ... FOR UPDATE``
on PostgreSQL; SQLite write transactions hold the database write lock from ``BEGIN IMMEDIATE``), so
two transfers can never wait on each other in a cycle.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.errors import IdempotencyConflict, InsufficientFunds, NoWallet, UnknownLedgerAccount
from app.db.models import (
    KIND_HOUSE,
    KIND_PLAYER,
    Account,
    LedgerAccount,
    LedgerEntry,
    LedgerTransfer,
)

Move = tuple[int, int, int]  # (from ledger account id, to ledger account id, amount > 0)

MAX_AMOUNT = 10**12  # far above any sane balance; keeps arithmetic inside BIGINT


@dataclass(frozen=True, slots=True)
class Transfer:
    """A committed (or just written) transfer. ``replayed`` is true when the key already existed."""

    id: int
    key: str
    reason: str
    memo: str | None
    actor_id: int | None
    match_id: str | None
    created_at: datetime
    deltas: dict[int, int]  # ledger account id -> net change
    replayed: bool


def _net(moves: Iterable[Move]) -> dict[int, int]:
    net: Counter[int] = Counter()
    for source, target, amount in moves:
        net[source] -= amount
        net[target] += amount
    return {account: delta for account, delta in sorted(net.items()) if delta}


def _validate(key: str, reason: str, moves: Sequence[Move]) -> None:
    if not key or len(key) > 200:
        raise ValueError("a transfer key must be 1-200 characters")
    if not reason or len(reason) > 32:
        raise ValueError("a transfer reason must be 1-32 characters")
    if not moves:
        raise ValueError("a transfer needs at least one move")
    for move in moves:
        source, target, amount = move
        if type(amount) is not int or amount <= 0 or amount > MAX_AMOUNT:
            raise ValueError(f"move {move}: the amount must be a positive integer up to {MAX_AMOUNT}")
        if source == target:
            raise ValueError(f"move {move}: source and target are the same account")


async def lock_accounts(session: AsyncSession, ids: Iterable[int]) -> dict[int, LedgerAccount]:
    """Load and lock ledger accounts in ascending id order (the project-wide lock order)."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    rows = (
        await session.scalars(
            select(LedgerAccount)
            .where(LedgerAccount.id.in_(wanted))
            .order_by(LedgerAccount.id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).all()
    found = {row.id: row for row in rows}
    missing = [i for i in wanted if i not in found]
    if missing:
        raise UnknownLedgerAccount(f"no ledger account with id {missing[0]}")
    return found


async def _existing(session: AsyncSession, key: str) -> Transfer | None:
    row = await session.scalar(select(LedgerTransfer).where(LedgerTransfer.key == key))
    if row is None:
        return None
    entries = (
        await session.execute(
            select(LedgerEntry.account_id, func.sum(LedgerEntry.amount))
            .where(LedgerEntry.transfer_id == row.id)
            .group_by(LedgerEntry.account_id)
        )
    ).all()
    deltas = {int(account): int(total) for account, total in sorted(entries) if total}
    return _to_transfer(row, deltas, replayed=True)


def _to_transfer(row: LedgerTransfer, deltas: dict[int, int], *, replayed: bool) -> Transfer:
    return Transfer(
        id=row.id,
        key=row.key,
        reason=row.reason,
        memo=row.memo,
        actor_id=row.actor_id,
        match_id=row.match_id,
        created_at=row.created_at,
        deltas=deltas,
        replayed=replayed,
    )


async def find_transfer(session: AsyncSession, key: str) -> Transfer | None:
    """The transfer recorded under ``key``, if any."""
    return await _existing(session, key)


async def transfer(
    session: AsyncSession,
    *,
    key: str,
    reason: str,
    moves: Sequence[Move],
    actor_id: int | None = None,
    match_id: str | None = None,
    memo: str | None = None,
) -> Transfer:
    """Move coins between ledger accounts atomically, once per ``key``.

    Raises ``InsufficientFunds`` (naming the account) when a player or escrow balance would go
    negative, ``IdempotencyConflict`` when ``key`` was used for a different transfer, and
    ``UnknownLedgerAccount`` for an unknown id. Nothing is written when it raises.
    """
    moves = [(int(s), int(t), a) for s, t, a in moves]
    _validate(key, reason, moves)
    deltas = _net(moves)
    accounts = await lock_accounts(session, [a for move in moves for a in move[:2]])

    # Checked after taking the locks: a concurrent transfer with the same key that touched these
    # accounts has committed by now, and READ COMMITTED lets this statement see it.
    previous = await _existing(session, key)
    if previous is not None:
        if previous.reason != reason or previous.deltas != deltas:
            raise IdempotencyConflict(
                f"transfer key {key!r} was already used for a different transfer "
                f"({previous.reason}: {previous.deltas})"
            )
        return previous

    for account_id, delta in deltas.items():
        account = accounts[account_id]
        if account.kind != KIND_HOUSE and account.balance + delta < 0:
            owner_name = None
            if account.owner_id is not None:
                owner_name = await session.scalar(select(Account.name).where(Account.id == account.owner_id))
            raise InsufficientFunds(
                ledger_account_id=account.id,
                account_id=account.owner_id,
                name=owner_name,
                balance=account.balance,
                needed=-delta,
            )

    row = LedgerTransfer(key=key, reason=reason, memo=memo, actor_id=actor_id, match_id=match_id)
    session.add(row)
    await session.flush()
    for source, target, amount in moves:
        for account_id, amount_signed in ((source, -amount), (target, amount)):
            account = accounts[account_id]
            account.balance += amount_signed
            session.add(
                LedgerEntry(
                    transfer_id=row.id,
                    account_id=account_id,
                    amount=amount_signed,
                    balance_after=account.balance,
                )
            )
    await session.flush()
    return _to_transfer(row, deltas, replayed=False)


async def house_account_id(session: AsyncSession, code: str) -> int:
    account_id = await session.scalar(
        select(LedgerAccount.id).where(LedgerAccount.code == code, LedgerAccount.kind == KIND_HOUSE)
    )
    if account_id is None:
        raise UnknownLedgerAccount(f"no house account {code!r}; run the migrations")
    return account_id


async def wallet_id(session: AsyncSession, account_id: int) -> int:
    """The ledger account id of a player's wallet."""
    ledger_id = await session.scalar(
        select(LedgerAccount.id).where(
            LedgerAccount.owner_id == account_id, LedgerAccount.kind == KIND_PLAYER
        )
    )
    if ledger_id is None:
        raise NoWallet(f"account {account_id} has no coin wallet")
    return ledger_id


async def wallet_ids(session: AsyncSession, account_ids: Iterable[int]) -> dict[int, int]:
    """Map player account ids to their wallet ledger ids; raises ``NoWallet`` for any missing."""
    wanted = set(account_ids)
    rows = (
        await session.execute(
            select(LedgerAccount.owner_id, LedgerAccount.id).where(
                LedgerAccount.owner_id.in_(wanted), LedgerAccount.kind == KIND_PLAYER
            )
        )
    ).all()
    found = {int(owner): int(ledger) for owner, ledger in rows if owner is not None}
    for account_id in sorted(wanted):
        if account_id not in found:
            raise NoWallet(f"account {account_id} has no coin wallet")
    return found


async def balance_of(session: AsyncSession, account_id: int) -> int | None:
    """A player's cached balance, or ``None`` if the account has no wallet."""
    return await session.scalar(
        select(LedgerAccount.balance).where(
            LedgerAccount.owner_id == account_id, LedgerAccount.kind == KIND_PLAYER
        )
    )


@dataclass(frozen=True, slots=True)
class AuditReport:
    total: int  # sum of all balances; always 0
    unbalanced_transfers: list[int]
    drifted_accounts: list[int]  # cached balance != sum of entries
    negative_accounts: list[int]  # non-house accounts below zero

    @property
    def ok(self) -> bool:
        return self.total == 0 and not (
            self.unbalanced_transfers or self.drifted_accounts or self.negative_accounts
        )


async def audit(session: AsyncSession) -> AuditReport:
    """Check the ledger's invariants over the whole database (for tests and operators)."""
    total = int(await session.scalar(select(func.coalesce(func.sum(LedgerAccount.balance), 0))) or 0)
    unbalanced = (
        await session.scalars(
            select(LedgerEntry.transfer_id)
            .group_by(LedgerEntry.transfer_id)
            .having(func.sum(LedgerEntry.amount) != 0)
        )
    ).all()
    sums = (
        select(LedgerEntry.account_id, func.sum(LedgerEntry.amount).label("total"))
        .group_by(LedgerEntry.account_id)
        .subquery()
    )
    drifted = (
        await session.scalars(
            select(LedgerAccount.id)
            .outerjoin(sums, sums.c.account_id == LedgerAccount.id)
            .where(LedgerAccount.balance != func.coalesce(sums.c.total, 0))
        )
    ).all()
    negative = (
        await session.scalars(
            select(LedgerAccount.id).where(LedgerAccount.kind != KIND_HOUSE, LedgerAccount.balance < 0)
        )
    ).all()
    return AuditReport(
        total=total,
        unbalanced_transfers=list(unbalanced),
        drifted_accounts=list(drifted),
        negative_accounts=list(negative),
    )
