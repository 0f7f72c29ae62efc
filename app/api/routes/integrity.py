"""Integrity (docs/integrity.md): the admins' review of flags (dismiss, warn), freezing an account's
staked play, reversing a match's coin movements; and a player's own warnings and freeze."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, status
from pydantic import BaseModel, Field, field_validator
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.deps import AdminAccount, CurrentUser, DatabaseDep, SessionDep
from app.api.errors import responses
from app.api.schemas import RequestBody
from app.db import integrity, integrity_admin
from app.db.integrity_admin import AlreadyReversed, NotFound, NothingToReverse

router = APIRouter(prefix="/api", tags=["integrity"])

AccountId = Annotated[int, Path(ge=1, le=2**31 - 1, description="Account id.")]
FlagId = Annotated[int, Path(ge=1, le=2**62, description="Flag id.")]
MatchId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
FLAG_PAGE_MAX = 100


# ---------------------------------------------------------------------- bodies


class NoteIn(RequestBody):
    note: str = Field(default="", max_length=2000, description="The admin's note, kept with the flag and audited.")


class FreezeIn(RequestBody):
    reason: str = Field(min_length=1, max_length=500, description="Why; the player sees it. Must not be blank.")

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("reason must not be blank")
        return value


class FlagAccount(BaseModel):
    id: int
    name: str
    frozen: bool = Field(description="Whether an admin froze this account's staked play.")


class FlagMatch(BaseModel):
    id: str
    finished_at: datetime
    url: str = Field(description="The replay page (`/#/replay/<id>`).")
    coins: int = Field(description="Coins the match moved (the winners' gains).")
    winner: str | None = Field(description="The first out's name; null for a draw.")
    reversed: bool = Field(description="An admin reversed its coin movements.")


class FlowDay(BaseModel):
    day: str = Field(description="YYYY-MM-DD (UTC).")
    a_to_b: int
    b_to_a: int
    quick_wins_a: int = Field(description="Quick wins of the first account over the second that day.")
    quick_wins_b: int


class CoinFlow(BaseModel):
    a_to_b: int = Field(description="Coins from the first account to the second over the days listed.")
    b_to_a: int
    days: list[FlowDay] = Field(
        description="The days on which the pair moved coins or won quickly, from 30 days before the flag until today."
    )


class Flag(BaseModel):
    id: int
    kind: Literal["quick_wins", "soft_play", "private_staked", "pair_cap"]
    status: Literal["open", "dismissed", "warned"]
    created_at: datetime
    summary: str
    accounts: list[FlagAccount] = Field(description="The two accounts: the winner / soft player first.")
    matches: list[FlagMatch] = Field(description="The matches behind the flag, newest first.")
    coin_flow: CoinFlow
    note: str | None = Field(description="The reviewing admin's note.")


class FlagPage(BaseModel):
    flags: list[Flag]
    total: int
    offset: int
    limit: int


class FreezeOut(BaseModel):
    id: int
    frozen: bool
    reason: str | None


class ReversalTransfer(BaseModel):
    account: str = Field(description="The account's name.")
    amount: int = Field(description="Coins it received (positive) or paid back (negative).")


class ReversalOut(BaseModel):
    match_id: str
    transfers: list[ReversalTransfer]
    reversed: bool
    shortfall: int = Field(
        description="Coins the winners had won but no longer held (their balances never go below zero)."
    )


class FrozenOut(BaseModel):
    reason: str
    since: datetime


class WarningOut(BaseModel):
    id: int
    text: str = Field(description="The warning in English.")
    kind: str | None = Field(
        default=None,
        description="`quick_wins` (automatic, after repeated quick wins) or `admin_warned` (an admin's review); "
        "null for warnings older than these kinds.",
    )
    params: dict[str, Any] | None = Field(
        default=None,
        description="The facts the warning words, for a client that puts it in the player's language: "
        "quick_wins: winner, loser, count, day, bouts, seconds, report_at; admin_warned: a, b, note.",
    )
    at: datetime


class MyIntegrity(BaseModel):
    frozen: FrozenOut | None = Field(description="Set while an admin has frozen your staked play, with the reason.")
    warnings: list[WarningOut] = Field(description="Warnings about your matches, newest first (the last 50).")


# ---------------------------------------------------------------------- admin: flags


@router.get(
    "/admin/integrity/flags",
    responses={200: {"description": "Flags, newest first."}, **responses(401, 403)},
)
async def list_flags(
    _admin: AdminAccount,
    session: SessionDep,
    status_: Annotated[Literal["open", "dismissed", "warned", "all"], Query(alias="status")] = "open",
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=FLAG_PAGE_MAX)] = 20,
) -> FlagPage:
    """Reports and signals for the admins: quick wins, soft play, private staked tables, the pair cap."""
    rows, total = await integrity_admin.flag_page(session, status=status_, offset=offset, limit=limit)
    return FlagPage(flags=[Flag.model_validate(row) for row in rows], total=total, offset=offset, limit=limit)


@router.get(
    "/admin/integrity/flags/{flag_id}",
    responses={200: {"description": "One flag."}, **responses(401, 403, 404)},
)
async def get_flag(_admin: AdminAccount, session: SessionDep, flag_id: FlagId) -> Flag:
    try:
        return Flag.model_validate(await integrity_admin.get_flag(session, flag_id))
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=str(exc)) from exc


async def _review(db: DatabaseDep, admin: AdminAccount, flag_id: int, verdict: str, note: str) -> Flag:
    async def run(session: AsyncSession) -> dict[str, object]:
        return await integrity_admin.review_flag(
            session, flag_id=flag_id, admin_id=admin.account_id, verdict=verdict, note=note
        )

    try:
        return Flag.model_validate(await db.write(run))
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=str(exc)) from exc


@router.post(
    "/admin/integrity/flags/{flag_id}/dismiss",
    responses={200: {"description": "The flag, dismissed."}, **responses(400, 401, 403, 404)},
)
async def dismiss_flag(admin: AdminAccount, db: DatabaseDep, flag_id: FlagId, body: NoteIn) -> Flag:
    """Nothing wrong: the flag is closed with the note (audited)."""
    return await _review(db, admin, flag_id, "dismissed", body.note)


@router.post(
    "/admin/integrity/flags/{flag_id}/warn",
    responses={200: {"description": "The flag, with both accounts warned."}, **responses(400, 401, 403, 404)},
)
async def warn_flag(admin: AdminAccount, db: DatabaseDep, flag_id: FlagId, body: NoteIn) -> Flag:
    """Both accounts get a warning they read in `GET /api/me/integrity` (audited)."""
    return await _review(db, admin, flag_id, "warned", body.note)


# ---------------------------------------------------------------------- admin: freeze, reverse


@router.post(
    "/admin/accounts/{account_id}/freeze",
    responses={200: {"description": "The account's staked play is frozen."}, **responses(400, 401, 403, 404)},
)
async def freeze_account(admin: AdminAccount, db: DatabaseDep, account_id: AccountId, body: FreezeIn) -> FreezeOut:
    """The account may not sit at staked tables (`staked_play_frozen`, with the reason) until unfrozen.
    Free tables stay open to it. Audited."""

    async def run(session: AsyncSession) -> dict[str, object]:
        return await integrity_admin.freeze(
            session, account_id=account_id, admin_id=admin.account_id, reason=body.reason
        )

    try:
        return FreezeOut.model_validate(await db.write(run))
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=str(exc)) from exc


@router.post(
    "/admin/accounts/{account_id}/unfreeze",
    responses={200: {"description": "The account may play for coins again."}, **responses(401, 403, 404)},
)
async def unfreeze_account(admin: AdminAccount, db: DatabaseDep, account_id: AccountId) -> FreezeOut:
    async def run(session: AsyncSession) -> dict[str, object]:
        return await integrity_admin.unfreeze(session, account_id=account_id, admin_id=admin.account_id)

    try:
        return FreezeOut.model_validate(await db.write(run))
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=str(exc)) from exc


@router.post(
    "/admin/matches/{match_id}/reverse",
    responses={
        200: {"description": "The match's coin movements are reversed by a new ledger transfer."},
        **responses(
            400,
            401,
            403,
            404,
            409,
            r409="`already_reversed`: reversed before; `nothing_to_reverse`: the match moved no coins.",
        ),
    },
)
async def reverse_match(admin: AdminAccount, db: DatabaseDep, match_id: MatchId, body: NoteIn) -> ReversalOut:
    """Each winner pays back what he won, down to a balance of zero at most; the losers get back what
    was paid, in proportion to their losses; the rest is the `shortfall`. One ledger transfer
    (reason `match_reversal`), an audit row per account; the match's own rows are never changed."""

    async def run(session: AsyncSession) -> dict[str, object]:
        return await integrity_admin.reverse_match(
            session, match_id=match_id, admin_id=admin.account_id, note=body.note
        )

    try:
        return ReversalOut.model_validate(await db.write(run))
    except NotFound as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=str(exc)) from exc
    except (AlreadyReversed, NothingToReverse) as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, detail=str(exc)) from exc


# ---------------------------------------------------------------------- a player's own


@router.get(
    "/me/integrity",
    responses={200: {"description": "Your staked-play freeze, if any, and your warnings."}, **responses(401)},
)
async def my_integrity(user: CurrentUser, session: SessionDep) -> MyIntegrity:
    """What the integrity rules say about you (guests: nothing)."""
    if user.account_id is None:
        return MyIntegrity(frozen=None, warnings=[])
    return MyIntegrity.model_validate(await integrity.player_view(session, user.account_id))
