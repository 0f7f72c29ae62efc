"""Admin: search accounts, read a player's ledger, adjust a balance (audited, idempotent), reset a
player's password (audited), read player reports."""

from __future__ import annotations

import secrets
import uuid
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request, status
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.api import signouts
from app.api.deps import AdminAccount, DatabaseDep, SessionDep
from app.api.errors import responses
from app.api.schemas import (
    AccountOut,
    AccountPage,
    AdjustIn,
    AdjustOut,
    LedgerEntryOut,
    LedgerPage,
    PasswordResetIn,
    PasswordResetOut,
    ReportOut,
    ReportPage,
    ReportPerson,
)
from app.db import accounts, admin, ledger
from app.db.errors import IdempotencyConflict, InsufficientFunds, NoWallet
from app.db.models import ChatReport, StakedPlayFreeze
from app.db.passwords import hash_password

router = APIRouter(prefix="/api/admin", tags=["admin"])

AccountId = Annotated[int, Path(ge=1, le=2**31 - 1, description="Account id.")]
Page = Annotated[int, Query(ge=1, le=100_000)]
PageSize = Annotated[int, Query(ge=1, le=100)]


@router.get("/accounts", responses={200: {"description": "Matching accounts."}, **responses(401, 403)})
async def search_accounts(
    _admin: AdminAccount,
    session: SessionDep,
    q: Annotated[str | None, Query(max_length=24, pattern=r"^[A-Za-z0-9_-]*$", description="Part of a name.")] = None,
    page: Page = 1,
    page_size: PageSize = 20,
) -> AccountPage:
    rows, total = await accounts.search(session, q=q, offset=(page - 1) * page_size, limit=page_size)
    shown = [account.id for account, _ in rows]
    freezes = select(StakedPlayFreeze.account_id, StakedPlayFreeze.reason).where(StakedPlayFreeze.account_id.in_(shown))
    frozen: dict[int, str] = {account_id: reason for account_id, reason in (await session.execute(freezes)).tuples()}
    return AccountPage(
        items=[
            AccountOut(
                id=a.id,
                name=a.name,
                role=a.role,  # type: ignore[arg-type]
                balance=balance,
                created_at=a.created_at,
                frozen=frozen.get(a.id),
            )
            for a, balance in rows
        ],
        page=page,
        page_size=page_size,
        total=total,
    )


@router.get(
    "/accounts/{account_id}/ledger",
    responses={
        200: {"description": "The account's ledger entries, newest first."},
        **responses(401, 403, 404),
    },
)
async def account_ledger(
    _admin: AdminAccount, session: SessionDep, account_id: AccountId, page: Page = 1, page_size: PageSize = 50
) -> LedgerPage:
    try:
        rows, total = await admin.ledger_page(
            session, account_id=account_id, offset=(page - 1) * page_size, limit=page_size
        )
    except NoWallet as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no account {account_id}") from exc
    balance = await ledger.balance_of(session, account_id)
    return LedgerPage(
        account_id=account_id,
        balance=int(balance or 0),
        items=[
            LedgerEntryOut(
                entry_id=entry.id,
                transfer_id=transfer.id,
                key=transfer.key,
                reason=transfer.reason,
                memo=transfer.memo,
                amount=entry.amount,
                balance_after=entry.balance_after,
                match_id=transfer.match_id,
                actor_id=transfer.actor_id,
                created_at=transfer.created_at,
            )
            for entry, transfer in rows
        ],
        page=page,
        page_size=page_size,
        total=total,
    )


@router.post(
    "/accounts/{account_id}/adjust",
    responses={
        200: {"description": "Adjusted (or, for a repeated Idempotency-Key, the original adjustment)."},
        **responses(
            400,
            401,
            403,
            404,
            409,
            r409="The debit exceeds the balance, or the Idempotency-Key was used for another adjustment.",
        ),
    },
)
async def adjust_balance(
    body: AdjustIn,
    account_id: AccountId,
    admin_user: AdminAccount,
    db: DatabaseDep,
    idempotency_key: Annotated[
        str,
        Header(
            min_length=8,
            max_length=100,
            pattern=r"^[A-Za-z0-9_.:-]+$",
            description="Send the same key to retry safely; the adjustment is applied once. "
            "Without it every request is a new adjustment.",
        ),
    ] = "",
) -> AdjustOut:
    """Add or take coins, recorded as a ledger transfer against the house adjustments account."""
    key = idempotency_key or uuid.uuid4().hex

    async def run(session: AsyncSession) -> admin.Adjustment:
        return await admin.adjust(
            session,
            admin_id=admin_user.account_id,
            account_id=account_id,
            amount=body.amount,
            reason=body.reason,
            key=key,
        )

    try:
        result = await db.write(run)
    except NoWallet as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no account {account_id}") from exc
    except (InsufficientFunds, IdempotencyConflict) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, detail=str(exc)) from exc
    return AdjustOut(
        transfer_id=result.transfer_id,
        account_id=result.account_id,
        admin_id=result.admin_id,
        amount=result.amount,
        reason=result.reason,
        balance=result.balance,
        created_at=result.created_at,
        replayed=result.replayed,
    )


@router.post(
    "/accounts/{account_id}/password-reset",
    responses={
        200: {"description": "The account's password is replaced by a temporary one, shown this once."},
        **responses(
            400,
            401,
            403,
            404,
            r403="Admins only; and another admin's password is never reset here (he changes his own, or the "
            "operator runs `python -m app.cli reset-password`).",
        ),
    },
)
async def reset_password(
    body: PasswordResetIn, account_id: AccountId, admin_user: AdminAccount, request: Request, db: DatabaseDep
) -> PasswordResetOut:
    """For a player who lost his password: a random temporary password replaces it, every session of
    the account is signed out (its table sockets closed), and the reset is audited with the reason.
    Hand the password to the player; he signs in with it and changes it."""
    temporary = secrets.token_urlsafe(12)  # 16 characters, 96 random bits
    password_hash = await hash_password(temporary)

    async def run(session: AsyncSession) -> str | None:
        account = await accounts.reset_password(
            session,
            account_id=account_id,
            password_hash=password_hash,
            admin_id=admin_user.account_id,
            reason=body.reason,
        )
        return account.name if account is not None else None

    try:
        name = await db.write(run)
    except accounts.PasswordResetRefused as exc:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail=f"admin_account: {exc}") from exc
    if name is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no account {account_id}")
    await signouts.announce(request.app.state.broker, account_id=account_id, session_id=None)
    return PasswordResetOut(account_id=account_id, name=name, temporary_password=temporary)


@router.get("/reports", responses={200: {"description": "Player reports, newest first."}, **responses(401, 403)})
async def list_reports(
    _admin: AdminAccount, session: SessionDep, page: Page = 1, page_size: PageSize = 20
) -> ReportPage:
    total = await session.scalar(select(func.count()).select_from(ChatReport)) or 0
    rows = await session.scalars(
        select(ChatReport).order_by(ChatReport.id.desc()).offset((page - 1) * page_size).limit(page_size)
    )
    return ReportPage(
        items=[
            ReportOut(
                id=row.id,
                table_code=row.table_code,
                match_id=row.match_id,
                reporter=ReportPerson(key=row.reporter_key, name=row.reporter_name),
                reported=ReportPerson(key=row.reported_key, name=row.reported_name),
                reason=row.reason,
                lines=row.lines,
                created_at=row.created_at,
            )
            for row in rows
        ],
        page=page,
        page_size=page_size,
        total=total,
    )
