"""Opening a table and sitting down at one, shared by the lobby routes (``POST /api/tables``,
``/join``), a friend's challenge and quick play: the request bodies, the checks before a seat is
taken (the balance covers the stake, staked play not frozen, the browser's device noted) and the
steps themselves."""

from __future__ import annotations

from typing import Literal

from fastapi import HTTPException, Request, status
from pydantic import Field

from app.api.deps import SessionInfo
from app.api.devices import device_of
from app.api.limits import address_of
from app.api.schemas import RequestBody, TableCreated, TableOut
from app.api.table_calls import gone, principal_of, table_call, too_many
from app.db import accounts, friends, integrity, ratings
from app.db.session import Database
from app.engine import Rules, RulesError
from app.tables.answers import Answer
from app.tables.commands import Join
from app.tables.registry import TableGone, TableRegistry, TooMany
from app.tables.spec import TableSpec

MAX_STAKE = 1_000_000


class TableCreate(RequestBody):
    """Every parameter of §1 of the rule book, or a preset (§11) plus the creator's choices."""

    preset: Literal["durak_peak", "classic36", "durac1993"] = "durak_peak"
    deck: Literal[24, 36, 52] | None = None
    seats: int = Field(default=2, ge=2, le=6)
    circle: Literal["neighbours", "all"] | None = None
    transfer: bool | None = None
    draws: bool | None = None
    timer: int = Field(default=30, ge=0, le=600, description="Seconds per decision; 0 = no timer.")
    stake: int = Field(default=0, ge=0, le=MAX_STAKE)
    cheating: bool = False
    private: bool = False
    chat: bool = Field(default=True, description="The table's chat; false turns it off for everyone.")
    name: str = Field(default="", max_length=40)
    bot_delay_ms: int = Field(default=600, ge=0, le=5000)


class SeatRequest(RequestBody):
    seat: int | None = Field(default=None, ge=0, le=5)
    client_seed: str | None = Field(
        default=None,
        pattern=r"^[0-9a-fA-F]{32}$",
        description="Sitting down with your client seed for the next deal (docs/fairness.md), as the "
        "websocket's `client_seed` does: the seat that fills a table starts the match at once.",
    )
    commitment: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{64}$", description="The table's commitment the client seed answers."
    )


def validation_error(field: str, message: str) -> HTTPException:
    """A 422 in FastAPI's own shape, naming the parameter at fault."""
    return HTTPException(422, detail=[{"loc": ["body", field], "msg": message, "type": "value_error"}])


async def require_balance(db: Database, account_id: int, stake: int) -> None:
    """409 ``insufficient_funds`` unless the account covers ``stake``, 403 ``staked_play_frozen`` when
    an admin froze its staked play (checked before a seat is taken; the escrow at the match's start
    is the binding check, and the table refuses related accounts and the pair cap, docs/integrity.md)."""
    async with db.session() as session:
        frozen = await integrity.freeze_of(session, account_id)
        found = await accounts.view(session, account_id)
    if frozen is not None:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            detail=f"staked_play_frozen: your staked play is frozen by an admin: {frozen.reason}",
        )
    balance = (found.balance or 0) if found is not None else 0
    if balance < stake:
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            detail=f"insufficient_funds: the stake is {stake} coins and your balance is {balance}",
        )


async def saw_device(db: Database, request: Request, user: SessionInfo) -> None:
    """An account sits down: note the browser's device (docs/integrity.md, related accounts)."""
    if user.account_id is None:
        return
    account_id, device = user.account_id, device_of(request)
    async with db.session() as session:
        if await integrity.knows_device(session, device=device, account_id=account_id):
            return  # the common case: no write
    await db.write(lambda session: integrity.saw_device(session, device=device, account_id=account_id))


def _urls(request: Request, code: str, watch_code: str) -> tuple[str, str]:
    base = str(request.base_url).rstrip("/")
    return f"{base}/t/{code}", f"{base}/w/{watch_code}"


async def open_table(
    body: TableCreate, request: Request, user: SessionInfo, registry: TableRegistry, db: Database
) -> TableCreated:
    """Open a table with ``body``'s rules (its creator is not seated: he joins it like anyone else)."""
    if body.stake > 0 and user.is_guest:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="guests can open only free tables; sign up")
    if body.stake > 0 and user.account_id is not None:
        # A stake the creator cannot cover would open a table he cannot sit at: refused before opening.
        await require_balance(db, user.account_id, body.stake)
    choices = body.model_dump(exclude={"preset", "private", "chat", "name", "bot_delay_ms"}, exclude_none=True)
    try:
        rules = Rules.for_preset(body.preset, **choices)
    except RulesError as exc:
        raise validation_error(exc.field, exc.reason) from exc
    spec = TableSpec(
        rules=rules,
        creator=principal_of(user),
        name=body.name.strip() or f"{user.name}'s table",
        private=body.private,
        chat=body.chat,
        bot_delay_ms=body.bot_delay_ms,
    )
    try:
        actor = await registry.create(spec, address_of(request.client))
    except TooMany as refused:
        raise too_many(refused) from None
    invite, watch = _urls(request, spec.code, spec.watch_code)
    return TableCreated(
        code=spec.code,
        watch_code=spec.watch_code,
        invite_url=invite,
        watch_url=watch,
        table=TableOut.model_validate(actor.info()),
    )


async def take_seat(
    code: str, request: Request, user: SessionInfo, registry: TableRegistry, db: Database, body: SeatRequest | None
) -> Answer:
    """Seat ``user`` at the table (``body``: which seat, and a client seed for the next deal), after
    the balance and device checks; where his friends see him."""
    try:
        table_code, _ = await registry.resolve(code)
        stake = int((await registry.rules_of(table_code))["stake"])
    except TableGone as exc:
        raise gone(exc) from None
    if stake > 0 and user.account_id is not None:
        await require_balance(db, user.account_id, stake)
    await saw_device(db, request, user)
    async with db.session() as session:
        rating = await ratings.seat_rating(session, user.account_id)  # shown next to the seat
    if body is not None and body.client_seed is not None:
        join = Join(body.seat, rating, client_seed=body.client_seed, commitment=body.commitment)
    else:
        join = Join(body.seat if body else None, rating)
    reply = await table_call(registry, code, join, user)
    if user.account_id is not None:  # where his friends see him (app/db/friends.py)
        await friends.note_table(db, user.account_id, table_code)
    return reply
