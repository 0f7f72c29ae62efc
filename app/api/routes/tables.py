"""Lobby REST: open a table, list open tables, join, leave, bots, start, rematch, ready; a live lobby
feed."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request, status
from fastapi.responses import StreamingResponse
from pydantic import Field
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.deps import CurrentUser, DatabaseDep, RegistryDep
from app.api.errors import responses
from app.api.event_stream import event_stream
from app.api.limits import PerAddress, address_of
from app.api.schemas import (
    LobbyPage,
    LobbyRow,
    MyTable,
    MyTables,
    Preset,
    ReportCreated,
    ReportIn,
    RequestBody,
    SeatAck,
    StartAck,
    TableAck,
    TableCreated,
    TableWithLinks,
)
from app.api.table_calls import check_bot_table, gone, info_reply, principal_of, table_call
from app.api.table_entry import MAX_STAKE, SeatRequest, TableCreate, open_table, take_seat, validation_error
from app.api.throttle import AuthThrottles, client_address, retry_later
from app.broker import BrokerError
from app.db.models import ChatReport
from app.engine import PRESET_LABELS
from app.event_feed import KEEPALIVE_S
from app.tables import chat
from app.tables.answers import Answer
from app.tables.commands import AddBot, Leave, Ready, Rematch, RemoveBot, Start
from app.tables.opening import LIVE
from app.tables.registry import TableGone, lobby_row
from app.tables.spec import TableStatus

router = APIRouter(prefix="/api", tags=["tables"])

BOT_TABLES = "`too_many_bot_tables`: you have the limit of matches of bots only running."
LOBBY_PAGE_MAX = 100  # tables in one page of GET /api/tables
MAX_LIVE_TABLES = 10_000_000  # far more tables than one server holds: the lobby's largest offset
# At most two writes a second per lobby feed: the first change after a quiet spell goes out at once,
# a wave of changes (many matches ending) in one text per half second (docs/performance.md).
LOBBY_FEED_INTERVAL_S = 0.5


class BotRequest(RequestBody):
    level: Literal["easy", "normal", "hard"] = "normal"
    seat: int | None = Field(default=None, ge=0, le=5)


@router.get("/presets", responses={200: {"description": "The house-rule presets and their rules."}})
async def presets() -> list[Preset]:
    return [Preset(name=name, label=label) for name, label in PRESET_LABELS.items()]


@router.post(
    "/tables",
    status_code=201,
    responses={
        201: {"description": "The table is open. Its creator is not seated: he joins it like anyone else."},
        **responses(
            401,
            403,
            409,
            429,
            r403="Guests open free tables only; `staked_play_frozen`: your staked play is frozen.",
            r409="`insufficient_funds`: the stake is above your balance.",
            r429="`too_many_tables`: you, or your address, have the limit of tables waiting for players.",
        ),
        422: {"description": "A parameter is invalid; `loc` names it."},
    },
)
async def create_table(
    body: TableCreate, request: Request, user: CurrentUser, registry: RegistryDep, db: DatabaseDep
) -> TableCreated:
    return await open_table(body, request, user, registry, db)


@router.get(
    "/tables",
    response_model=LobbyPage,
    responses={200: {"description": "Open and running public tables, newest first, a page."}},
)
async def list_tables(
    registry: RegistryDep,
    offset: Annotated[int, Query(ge=0, le=MAX_LIVE_TABLES, description="Tables to skip.")] = 0,
    limit: Annotated[int, Query(ge=1, le=LOBBY_PAGE_MAX, description="Tables in the page.")] = 50,
    deck: Annotated[int | None, Query(ge=24, le=52, description="24, 36 or 52")] = None,
    seats: Annotated[int | None, Query(ge=2, le=6)] = None,
    stake_min: Annotated[int | None, Query(ge=0, le=MAX_STAKE)] = None,
    stake_max: Annotated[int | None, Query(ge=0, le=MAX_STAKE)] = None,
    transfer: Annotated[bool | None, Query()] = None,
    circle: Annotated[Literal["neighbours", "all"] | None, Query()] = None,
) -> LobbyPage:
    rows = []
    for row in await registry.lobby():
        rules = row["rules"]
        if deck is not None and rules["deck"] != deck:
            continue
        if seats is not None and rules["seats"] != seats:
            continue
        if stake_min is not None and rules["stake"] < stake_min:
            continue
        if stake_max is not None and rules["stake"] > stake_max:
            continue
        if transfer is not None and rules["transfer"] != transfer:
            continue
        if circle is not None and rules["circle"] != circle:
            continue
        rows.append(row)
    page = [LobbyRow.model_validate(row) for row in rows[offset : offset + limit]]
    return LobbyPage(tables=page, total=len(rows), offset=offset, limit=limit)


@router.get(
    "/me/tables",
    responses={200: {"description": "Your tables that wait for players or play, newest first."}, **responses(401)},
)
async def my_tables(user: CurrentUser, registry: RegistryDep) -> MyTables:
    """The tables you opened or sit at that wait for players or play (this server process's, as the
    limit of waiting tables counts them): to go back to one, or to close one you opened."""
    rows = []
    for actor in sorted(registry.tables.values(), key=lambda actor: -actor.created):
        seat = actor.seating.seat_of(principal_of(user))
        mine = actor.spec.creator.key == user.key
        if actor.status not in LIVE or (seat is None and not mine):
            continue
        row = lobby_row(actor)
        yours = {"private": actor.spec.private, "creator": mine, "seat": None if seat is None else seat.seat}
        rows.append(MyTable.model_validate({**row, **yours}))
    return MyTables(tables=rows, waiting_limit=registry.table_limits.waiting_per_account)


@router.post(
    "/tables/{code}/close",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={
        204: {"description": "The table is closed: its codes answer 410 table_closed from now on."},
        **responses(401, 403, 404, 409, 410),
    },
)
async def close_table(code: str, user: CurrentUser, registry: RegistryDep) -> None:
    """Close a table you opened that waits for players (players seated there are told it was
    closed). A table of another server process answers 409 ``not_here``."""
    try:
        table_code, watch_only = await registry.resolve(code)
    except TableGone as exc:
        raise gone(exc) from None
    actor = registry.tables.get(table_code)
    if watch_only:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="a spectator link can only watch")
    if actor is None:
        raise HTTPException(
            status.HTTP_409_CONFLICT, detail="not_here: another server process holds this table; try again"
        )
    if actor.spec.creator.key != user.key:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="not_creator: only the table's creator may close it")
    if actor.status != TableStatus.WAITING:
        raise HTTPException(
            status.HTTP_409_CONFLICT, detail="match_running: only a table waiting for players can be closed"
        )
    await registry.close_table(table_code, "its creator closed it")


@router.get(
    "/tables/{code}",
    response_model=TableWithLinks,
    response_model_exclude_unset=True,
    responses=responses(404, 410, 503),
)
async def table_info(code: str, registry: RegistryDep) -> dict[str, object]:
    reply = await info_reply(registry, code, None)
    _, watch_only = await registry.resolve(code)
    table: dict[str, object] = {**reply["table"], "watch_only": watch_only}  # as TableWithLinks
    if watch_only:
        table["code"] = None  # a spectator link never reveals the invite code
    else:
        table["watch_code"] = reply["watch_code"]
    return table


@router.post(
    "/tables/{code}/join",
    response_model=SeatAck,
    responses={
        200: {"description": "Seated; when this fills the last seat, the match starts."},
        **responses(401, 403, 404, 409, 410, 503),
        422: {"description": "Bad seat."},
    },
)
async def join_table(
    code: str,
    request: Request,
    user: CurrentUser,
    registry: RegistryDep,
    db: DatabaseDep,
    body: SeatRequest | None = None,
) -> Answer:
    return await take_seat(code, request, user, registry, db, body)


@router.post("/tables/{code}/leave", response_model=TableAck, responses=responses(401, 403, 404, 409, 410, 503))
async def leave_table(code: str, user: CurrentUser, registry: RegistryDep) -> Answer:
    return await table_call(registry, code, Leave(), user)


@router.post(
    "/tables/{code}/bots",
    response_model=SeatAck,
    responses={
        200: {"description": "The bot is seated; when it fills the last seat, the match starts."},
        **responses(401, 403, 404, 409, 410, 429, 503, r429=BOT_TABLES),
        422: {"description": "Bad seat or level."},
    },
)
async def add_bot(code: str, body: BotRequest, user: CurrentUser, registry: RegistryDep) -> Answer:
    check_bot_table(registry, code, user)
    return await table_call(registry, code, AddBot(body.level, body.seat), user)


@router.delete(
    "/tables/{code}/bots/{seat}",
    response_model=TableAck,
    responses={**responses(401, 403, 404, 409, 410, 503), 422: {"description": "No bot there."}},
)
async def remove_bot(
    code: str,
    seat: Annotated[int, Path(ge=0, le=5, description="The bot's seat.")],
    user: CurrentUser,
    registry: RegistryDep,
) -> Answer:
    return await table_call(registry, code, RemoveBot(seat), user)


@router.post(
    "/tables/{code}/start",
    response_model=StartAck,
    responses={
        200: {"description": "The match started with the players seated so far (at least 2)."},
        **responses(401, 403, 404, 409, 410, 429, 503, r429=BOT_TABLES),
    },
)
async def start_table(code: str, user: CurrentUser, registry: RegistryDep) -> Answer:
    check_bot_table(registry, code, user)
    return await table_call(registry, code, Start(), user)


@router.post(
    "/tables/{code}/rematch",
    response_model=TableAck,
    responses={
        200: {"description": "The table reopens for the next match."},
        **responses(401, 403, 404, 409, 410, 429, 503, r429=BOT_TABLES),
    },
)
async def rematch(code: str, user: CurrentUser, registry: RegistryDep) -> Answer:
    check_bot_table(registry, code, user)
    return await table_call(registry, code, Rematch(), user)


@router.post(
    "/tables/{code}/ready",
    response_model=TableAck,
    responses={
        200: {"description": "You confirmed you are ready for the staked match the ready check is about."},
        **responses(401, 403, 404, 409, 410, 503),
    },
)
async def ready(code: str, user: CurrentUser, registry: RegistryDep) -> Answer:
    """Before a staked match (docs/protocol.md, "Ready check"): the match starts once every human
    seated is connected to the table and has confirmed. 409 `no_ready_check`, `not_connected`
    (no open connection to the table), `not_seated`."""
    return await table_call(registry, code, Ready(), user)


@router.get(
    "/lobby/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-sent events: `snapshot` (every open and running public table) when it "
            "connects, then `added`, `changed` (a table's row) and `removed` (`{code}`), one table each.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/LobbyRow"}}},
        },
        429: {"description": "`too_many_streams`: this IP address has the limit of lobby feeds open."},
    },
)
async def lobby_stream(request: Request, registry: RegistryDep) -> StreamingResponse:
    streams: PerAddress = request.app.state.lobby_streams
    address = address_of(request.client)
    if not streams.take(address):
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            detail=f"too_many_streams: your address has {streams.limit} lobby feeds open already; close one",
        )

    # The events since the last write in one text: a viewer costs the server at most two writes a
    # second, not one per lobby flush (ten a second) or per table that changed.
    return event_stream(
        lambda: registry.lobby_feed(keepalive_s=KEEPALIVE_S, joined=True, min_interval_s=LOBBY_FEED_INTERVAL_S),
        streams,
        address,
    )


@router.post(
    "/tables/{code}/report",
    status_code=201,
    responses={
        201: {"description": "The report is stored with the table's recent chat lines, for the admins."},
        **responses(
            401,
            404,
            409,
            410,
            422,
            429,
            503,
            r409="`already_reported`: you reported this player at this table before.",
            r429="Too many reports from you, or from your address, lately; Retry-After says when to try again.",
        ),
    },
)
async def report_player(
    code: str, body: ReportIn, request: Request, user: CurrentUser, registry: RegistryDep, db: DatabaseDep
) -> ReportCreated:
    """Report a player at the table (by invite or spectator code): a seated player, or anyone whose
    line is among the table's recent chat lines."""
    reply = await info_reply(registry, code, user)
    table = reply["table"]
    table_code, _ = await registry.resolve(code)
    reporter = principal_of(user)
    if body.player == reporter.key:
        raise validation_error("player", "you cannot report yourself")
    try:
        lines = [chat.public(line) for line in await chat.history(registry.broker, table_code)]
    except (BrokerError, OSError):
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the chat is unreachable right now") from None
    names: dict[str, str | None] = {line["from"]["player"]: line["from"]["name"] for line in lines}
    names |= {player: seat["name"] for seat in table["seats"] if (player := seat["player"])}
    if body.player not in names:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="nobody with that key plays or chats at this table")
    reported = select(ChatReport.id).where(
        ChatReport.table_code == table_code,
        ChatReport.reporter_key == reporter.key,
        ChatReport.reported_key == body.player,
    )
    async with db.session() as session:
        if await session.scalar(reported.limit(1)) is not None:
            raise HTTPException(
                status.HTTP_409_CONFLICT, detail="already_reported: you reported this player at this table already"
            )
    # Each report keeps the table's last chat lines: a person, and an address, file only so many.
    # Both limits are looked at before either counts: a report one of them refuses costs nothing.
    throttles: AuthThrottles = request.app.state.auth_throttles
    limits = (
        (throttles.report, reporter.key, "too many reports from you"),
        (throttles.report_ip, client_address(request), "too many reports from this address"),
    )
    for throttle, who, what in limits:
        wait = await throttle.retry_after(db, who)
        if wait is not None:
            raise retry_later(wait, what)
    for throttle, who, what in limits:
        wait = await throttle.admit(db, who)
        if wait is not None:
            raise retry_later(wait, what)
    report = ChatReport(
        table_code=table_code,
        match_id=table.get("match_id"),
        reporter_key=reporter.key,
        reporter_name=reporter.name,
        reported_key=body.player,
        reported_name=names[body.player],
        reason=body.reason.strip() or body.reason,
        lines=lines,
    )

    async def store(session: AsyncSession) -> int:
        session.add(report)
        await session.flush()
        return report.id

    return ReportCreated(id=await db.write(store))
