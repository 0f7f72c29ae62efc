"""Admin: search accounts, read a player's ledger, adjust a balance (audited, idempotent)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Path, Query, status
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.deps import AdminAccount, DatabaseDep, SessionDep
from app.api.errors import responses
from app.api.schemas import (
    AccountOut,
    AccountPage,
    AdjustIn,
    AdjustOut,
    LedgerEntryOut,
    LedgerPage,
    ReportOut,
    ReportPage,
    ReportPerson,
)
from app.db import accounts, admin, ledger
from app.db.errors import IdempotencyConflict, InsufficientFunds, NoWallet
from app.db.models import ChatReport, StakedPlayFreeze

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
