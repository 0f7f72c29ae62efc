"""Arena tournaments (docs/tournaments.md, docs/api.md "Tournaments"): the list, scheduling one (an
admin: any entry fee; a player: free ones), entering and leaving, cancelling (every fee back), the
page's state and its live event stream, and a player's tournaments for his profile."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Path, Request, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field, field_validator
from sqlalchemy import func, select

from app import push
from app.api.deps import CurrentAccount, CurrentUser, DatabaseDep, OptionalUser, SettingsDep
from app.api.errors import responses
from app.api.event_stream import event_stream
from app.api.limits import PerAddress, address_of
from app.api.schemas import RequestBody
from app.db import integrity
from app.db import tournaments as store
from app.db.errors import InsufficientFunds, NoWallet
from app.db.models import Account, Tournament
from app.engine import Rules, RulesError
from app.tables.registry import TableRegistry
from app.tournaments.runner import ArenaHooks, ArenaRunner, describe

router = APIRouter(prefix="/api/tournaments", tags=["tournaments"])


def get_runner(request: Request) -> ArenaRunner:
    runner: ArenaRunner = request.app.state.arena
    return runner


RunnerDep = Annotated[ArenaRunner, Depends(get_runner)]


def _now(request: Request) -> datetime:
    clock = getattr(request.app.state, "clock", None)
    now: datetime = clock() if clock is not None else datetime.now(UTC)
    return now


@asynccontextmanager
async def arena_running(app: FastAPI, registry: TableRegistry, hooks: ArenaHooks) -> AsyncIterator[ArenaRunner]:
    """The arena runner for the life of the app (entered by its lifespan)."""
    state = app.state
    settings = state.settings

    def clock() -> datetime:
        now: datetime = state.clock() if hasattr(state, "clock") else datetime.now(UTC)
        return now

    def notify(account_id: int, tournament: Tournament, minutes: int) -> None:
        sender = getattr(state, "push", None)
        if sender is not None:
            sender.notify_soon(
                account_id, push.tournament_notice(tournament.name, minutes, f"/#/tournaments/{tournament.id}")
            )

    runner = ArenaRunner(
        state.db,
        registry,
        settings.tournaments,
        integrity_rules=settings.integrity,
        clock=clock,
        notify=notify,
    )
    hooks.on_finished.append(runner.match_finished)
    state.arena = runner
    task = asyncio.create_task(runner.run_forever())
    try:
        yield runner
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class TournamentCreate(RequestBody):
    """A tournament: its tables' rules (a preset and the usual choices), its time and its fee."""

    name: str = Field(min_length=1, max_length=64)
    preset: Literal["durak_peak", "classic36", "durac1993"] = "durak_peak"
    seats: int = Field(default=2, ge=2, le=6, description="The table size (2-6 seats).")
    deck: Literal[24, 36, 52] = 36
    transfer: bool | None = None
    timer: int = Field(default=30, ge=5, le=600, description="Seconds per decision.")
    starts_at: str = Field(
        min_length=10,
        max_length=40,
        description="When pairing starts: an ISO 8601 time with its offset (`2026-12-24T18:00:00Z`).",
    )
    duration_min: int = Field(default=30, ge=1, le=24 * 60, description="How long players are paired, in minutes.")
    entry_fee: int = Field(
        default=0, ge=0, le=1_000_000, description="Coins; 0 = free. Only admins schedule paid ones."
    )
    bot_after_s: float | None = Field(
        default=None, ge=0, le=3600, description="Bots fill a table that would wait longer (default: the server's)."
    )

    @field_validator("starts_at")
    @classmethod
    def _aware_time(cls, value: str) -> str:
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("an ISO 8601 time, such as 2026-12-24T18:00:00Z") from None
        if when.tzinfo is None:
            raise ValueError("give the time's offset (Z for UTC)")
        return value

    def start(self) -> datetime:
        return datetime.fromisoformat(self.starts_at).astimezone(UTC)


TournamentId = Annotated[int, Path(ge=1, le=2**31 - 1, description="A tournament's id.")]


class TournamentOut(BaseModel):
    id: int
    name: str
    status: Literal["scheduled", "running", "finished", "cancelled"]
    official: bool
    rules: dict[str, Any]
    seats: int
    deck: int | None
    entry_fee: int
    starts_at: str
    ends_at: str
    duration_s: int
    bot_after_s: float
    pool: int = Field(description="The prize pool paid out (once finished).")
    players: int | None
    reason: str | None = Field(description="Why it was cancelled.")


class StandingOut(BaseModel):
    rank: int
    name: str
    points: int
    matches: int
    firsts: int = Field(description="Matches he went out first in (the first tie-break).")
    status: Literal["active", "paused", "withdrawn"]
    prize: int
    playing: bool = Field(description="At an arena table right now.")


class ArenaTableOut(BaseModel):
    watch_code: str = Field(description="Watch it: `/w/<watch_code>`.")
    players: list[str]
    bots: int


class MeOut(BaseModel):
    entered: bool
    status: str | None = None
    table: str | None = Field(default=None, description="Your table's invite code while you are seated: `/t/<code>`.")


class TournamentPage(BaseModel):
    tournament: TournamentOut
    standings: list[StandingOut]
    tables: list[ArenaTableOut]
    matches: int = Field(description="Matches counted so far.")
    server_time: str = Field(description="The server's clock, for the countdown.")
    me: MeOut | None = None


class TournamentList(BaseModel):
    tournaments: list[TournamentOut]
    server_time: str


def _not_found(exc: store.TournamentError) -> HTTPException:
    """What reading a tournament can fail with: it does not exist."""
    return HTTPException(404, detail=f"{exc.code}: {exc.message}")


def _refuse(exc: store.TournamentError) -> HTTPException:
    """404 for a tournament that does not exist, else 409 (closed, not entered...)."""
    if exc.status == 404:
        return HTTPException(404, detail=f"{exc.code}: {exc.message}")
    return HTTPException(409, detail=f"{exc.code}: {exc.message}")


@router.get("", responses={200: {"description": "Scheduled and running ones (soonest first), then past ones."}})
async def list_tournaments(request: Request, db: DatabaseDep) -> TournamentList:
    async with db.session() as session:
        rows = await store.listing(session)
        counts = await store.entrant_counts(session, [t.id for t in rows])
    return TournamentList(
        tournaments=[TournamentOut.model_validate(describe(t, counts.get(t.id, 0))) for t in rows],
        server_time=_now(request).isoformat(),
    )


@router.post(
    "",
    status_code=201,
    responses={
        201: {"description": "Scheduled."},
        **responses(401, 403, 422, r403="`admins_only`: a paid tournament is scheduled by an admin."),
        429: {"description": "`too_many_tournaments`: you have the limit of free tournaments scheduled or running."},
    },
)
async def create_tournament(
    body: TournamentCreate, request: Request, user: CurrentAccount, db: DatabaseDep, settings: SettingsDep
) -> TournamentOut:
    if body.entry_fee > 0 and not user.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="admins_only: only an admin schedules a paid tournament")
    if body.start() < _now(request):
        raise HTTPException(422, detail=[{"loc": ["body", "starts_at"], "msg": "in the past", "type": "value_error"}])
    choices: dict[str, Any] = {"deck": body.deck, "seats": body.seats, "stake": 0, "timer": body.timer}
    if body.transfer is not None:
        choices["transfer"] = body.transfer
    try:
        rules = Rules.for_preset(body.preset, **choices)
    except RulesError as exc:
        raise HTTPException(
            422, detail=[{"loc": ["body", exc.field], "msg": exc.reason, "type": "value_error"}]
        ) from exc
    new = store.NewTournament(
        name=body.name.strip(),
        rules=rules.to_json(),
        entry_fee=body.entry_fee,
        starts_at=body.start(),
        duration_s=body.duration_min * 60,
        bot_after_s=settings.tournaments.default_bot_after_s if body.bot_after_s is None else body.bot_after_s,
        created_by=user.account_id,
        official=user.is_admin,
    )

    async def create(session: Any) -> Tournament:
        if not user.is_admin:
            mine = await session.scalar(
                select(func.count())
                .select_from(Tournament)
                .where(Tournament.created_by == user.account_id, Tournament.status.in_(("scheduled", "running")))
            )
            if int(mine or 0) >= settings.tournaments.tournaments_per_player:
                raise store.TournamentError(
                    "too_many_tournaments",
                    f"you have {mine} tournaments scheduled or running; "
                    f"at most {settings.tournaments.tournaments_per_player}",
                    429,
                )
        return await store.create(session, new)

    try:
        row = await db.write(create)
    except store.TournamentError as exc:
        if exc.status == 429:
            raise HTTPException(429, detail=f"{exc.code}: {exc.message}") from None
        raise HTTPException(422, detail=f"{exc.code}: {exc.message}") from None
    return TournamentOut.model_validate(describe(row, 0))


class PlayerTournamentOut(BaseModel):
    id: int
    name: str
    status: Literal["scheduled", "running", "finished", "cancelled"]
    starts_at: str
    place: int | None = Field(description="His final place (once finished).")
    points: int
    prize: int


PlayerName = Annotated[str, Path(min_length=1, max_length=64)]


@router.get("/player/{name}", responses={200: {"description": "His tournaments, latest first."}, **responses(404)})
async def player_tournaments(name: PlayerName, db: DatabaseDep) -> list[PlayerTournamentOut]:
    async with db.session() as session:
        account_id = await session.scalar(select(Account.id).where(func.lower(Account.name) == name.lower()))
        if account_id is None:
            raise HTTPException(404, detail="not_found: no such player")
        rows = await store.player_history(session, int(account_id))
    return [PlayerTournamentOut.model_validate({**row, "starts_at": row["starts_at"].isoformat()}) for row in rows]


@router.get("/{tournament_id}", responses={200: {"description": "The tournament's page."}, **responses(404)})
async def tournament_page(
    tournament_id: TournamentId, user: OptionalUser, runner: RunnerDep, db: DatabaseDep
) -> TournamentPage:
    try:
        state = await runner.state(tournament_id)
    except store.TournamentError as exc:
        raise _not_found(exc) from None
    me = None
    if user is not None and user.account_id is not None:
        async with db.session() as session:
            entry = await store.entry_of(session, tournament_id, user.account_id)
        entered = entry is not None and entry.status != "withdrawn"
        me = MeOut(
            entered=entered,
            status=entry.status if entry else None,
            table=runner.table_of(tournament_id, user.account_id),
        )
    return TournamentPage.model_validate({**state, "me": me})


@router.post(
    "/{tournament_id}/join",
    responses={
        200: {"description": "You are in (a paid one took the fee), or back from a pause."},
        **responses(
            401,
            402,
            403,
            404,
            409,
            r402="`insufficient_funds`: you cannot pay the entry fee.",
            r403="At a paid one, a staked-play refusal (`staked_play_frozen`, `new_account`: docs/integrity.md).",
            r409="`tournament_closed`.",
        ),
    },
)
async def join_tournament(
    tournament_id: TournamentId,
    request: Request,
    user: CurrentAccount,
    runner: RunnerDep,
    db: DatabaseDep,
    settings: SettingsDep,
) -> MeOut:
    assert user.account_id is not None
    account_id = user.account_id
    now = _now(request)
    async with db.session() as session:
        try:
            tournament = await store.get(session, tournament_id)
        except store.TournamentError as exc:
            raise _refuse(exc) from None
        if tournament.entry_fee > 0:  # the staked-play rules (docs/integrity.md)
            refusal = await integrity.staked_seat_refusal(
                session,
                account_id=account_id,
                others=[],
                stake=tournament.entry_fee,
                rules=settings.integrity,
                now=now,
            )
            if refusal is not None:
                raise HTTPException(status.HTTP_403_FORBIDDEN, detail=f"{refusal.code}: {refusal.message}")
    try:
        entry = await db.write(lambda s: store.enter(s, tournament_id, account_id, now))
    except store.TournamentError as exc:
        raise _refuse(exc) from None
    except (InsufficientFunds, NoWallet) as exc:
        raise HTTPException(status.HTTP_402_PAYMENT_REQUIRED, detail=f"insufficient_funds: {exc}") from None
    runner.wake.set()
    await runner.publish(tournament_id)
    return MeOut(entered=True, status=entry.status, table=runner.table_of(tournament_id, account_id))


@router.post(
    "/{tournament_id}/leave",
    responses={
        200: {"description": "Before the start: out, the fee back. Running: paused (join again to come back)."},
        **responses(401, 404, 409),
    },
)
async def leave_tournament(
    tournament_id: TournamentId, user: CurrentAccount, runner: RunnerDep, db: DatabaseDep
) -> MeOut:
    assert user.account_id is not None
    account_id = user.account_id
    try:
        entry = await db.write(lambda s: store.withdraw(s, tournament_id, account_id))
    except store.TournamentError as exc:
        raise _refuse(exc) from None
    await runner.publish(tournament_id)
    return MeOut(
        entered=entry.status != "withdrawn", status=entry.status, table=runner.table_of(tournament_id, account_id)
    )


class CancelBody(RequestBody):
    reason: str = Field(default="cancelled by its organiser", max_length=300)


@router.post(
    "/{tournament_id}/cancel",
    responses={
        200: {"description": "Cancelled: every entry fee went back."},
        **responses(401, 403, 404, 409, r403="Only an admin, or the player who created a free one before it starts."),
    },
)
async def cancel_tournament(
    tournament_id: TournamentId,
    request: Request,
    user: CurrentUser,
    runner: RunnerDep,
    db: DatabaseDep,
    body: CancelBody | None = None,
) -> TournamentOut:
    reason = (body or CancelBody()).reason
    now = _now(request)
    async with db.session() as session:
        try:
            tournament = await store.get(session, tournament_id)
        except store.TournamentError as exc:
            raise _refuse(exc) from None
    mine = tournament.created_by is not None and tournament.created_by == user.account_id
    if not user.is_admin and not (mine and tournament.entry_fee == 0 and tournament.status == "scheduled"):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, detail="forbidden: only an admin or its creator (before it starts)"
        )
    try:
        row = await db.write(lambda s: store.cancel(s, tournament_id, reason, now))
    except store.TournamentError as exc:
        raise _refuse(exc) from None
    await runner.publish(tournament_id)
    return TournamentOut.model_validate(describe(row))


@router.get(
    "/{tournament_id}/events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-sent events: `standings` (the page's state, as GET /api/tournaments/{id} without "
            "`me`) at once and at every change; `table` (`{code}`) to you when your next table is ready.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/TournamentPage"}}},
        },
        429: {"description": "`too_many_streams`."},
        **responses(404),
    },
)
async def tournament_events(
    tournament_id: TournamentId, request: Request, user: OptionalUser, runner: RunnerDep
) -> StreamingResponse:
    streams: PerAddress = request.app.state.lobby_streams
    address = address_of(request.client)
    try:
        await runner.state(tournament_id)
    except store.TournamentError as exc:
        raise _not_found(exc) from None
    if not streams.take(address):
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, detail="too_many_streams: close a feed first")
    account_id = user.account_id if user is not None else None
    return event_stream(lambda: runner.feed(tournament_id, account_id), streams, address)


class ArenaMatchOut(BaseModel):
    match_id: str | None = Field(description="The match in the history (`GET /api/matches/{id}`); null while open.")
    status: Literal["open", "finished", "aborted"] = Field(description="Aborted ones count no points.")
    seats: list[dict[str, Any]] = Field(description="`{seat, account_id, name, bot_level}` as seated by the arena.")
    finished_at: str | None


@router.get(
    "/{tournament_id}/matches",
    responses={200: {"description": "Every table the arena opened, oldest first."}, **responses(404)},
)
async def tournament_matches(tournament_id: TournamentId, db: DatabaseDep) -> list[ArenaMatchOut]:
    async with db.session() as session:
        try:
            await store.get(session, tournament_id)
        except store.TournamentError as exc:
            raise _not_found(exc) from None
        rows = await store.games(session, tournament_id)
    return [
        ArenaMatchOut(
            match_id=g.match_id,
            status=g.status,  # type: ignore[arg-type]
            seats=g.seats,
            finished_at=g.finished_at.isoformat() if g.finished_at else None,
        )
        for g in rows
    ]
