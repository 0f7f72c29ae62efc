"""Friends, blocks and challenges, and the notice feed that brings them to an open page.

A challenge opens a private table with the challenger's rules through the table routes' own path
(``open_table`` and ``take_seat`` of app/api/table_entry.py: their limits, stake and integrity checks
apply unchanged), seats the challenger, and tells the friend (his notice feed; Web Push when he
allowed it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, HTTPException, Path, Request, Response, status
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from app.api import blocks, notices
from app.api.deps import CurrentAccount, DatabaseDep, SessionInfo
from app.api.errors import responses
from app.api.event_stream import event_stream
from app.api.limits import PerAddress, address_of
from app.api.season_clock import clock_of
from app.api.table_entry import TableCreate, open_table, take_seat
from app.api.throttle import Throttle
from app.broker import Broker, BrokerError, Event, Gap
from app.db import accounts, friends
from app.db.models import Challenge
from app.db.session import Database
from app.event_feed import EventFeed
from app.tables.answers import facts_of
from app.tables.commands import Info, Leave
from app.tables.registry import TableGone, TableRegistry
from app.tables.spec import Principal, TableStatus

router = APIRouter(prefix="/api", tags=["friends"])

PRESENCE_EVERY_S = 30.0

PlayerName = Annotated[
    str,
    Path(min_length=2, max_length=24, pattern=r"^[A-Za-z0-9_-]+$", description="An account name (case-insensitive)."),
]
ChallengeId = Annotated[int, Path(ge=1, le=2**53, description="A challenge's id.")]


# ---------------------------------------------------------------------- models


class TableWhere(BaseModel):
    code: str | None = Field(description="The invite code; null for a private table you may not see.")
    name: str | None = Field(description="The table's name; null for a private table you may not see.")
    private: bool
    status: Literal["waiting", "playing", "finished"]


class FriendOut(BaseModel):
    name: str
    since: datetime = Field(description="Friends since.")
    online: bool = Field(description="Has a page of the web client open (seen within 75 s).")
    table: TableWhere | None = Field(description="Where he sits now, when online and seated at a live table.")


class PersonOut(BaseModel):
    name: str
    since: datetime


class FriendsOut(BaseModel):
    friends: list[FriendOut] = Field(description="By name.")
    incoming: list[PersonOut] = Field(description="Friend requests to you: accept with POST, decline with DELETE.")
    outgoing: list[PersonOut] = Field(description="Your requests waiting for an answer.")
    blocked: list[PersonOut] = Field(description="Players you blocked.")


class FriendStatus(BaseModel):
    name: str
    status: Literal["requested", "friends"]


class BlockOut(BaseModel):
    name: str
    blocked: bool


class ChallengeOut(BaseModel):
    id: int
    from_name: str = Field(alias="from", description="The challenger.")
    to: str = Field(description="The challenged friend.")
    code: str = Field(description="The private table's invite code (/t/<code>).")
    table_name: str
    rules: dict[str, Any] = Field(description="The table's rules (as in docs/protocol.md, view.rules).")
    status: Literal["pending", "accepted", "declined", "cancelled", "expired"]
    created_at: datetime
    expires_at: datetime

    model_config = {"populate_by_name": True}


class ChallengesOut(BaseModel):
    incoming: list[ChallengeOut]
    outgoing: list[ChallengeOut]


class ChallengeAccepted(BaseModel):
    challenge: ChallengeOut
    code: str
    seat: int


class ChallengeCreate(TableCreate):
    """The table's rules, as for ``POST /api/tables``; the table is always private."""


# ---------------------------------------------------------------------- helpers


def _refused(exc: friends.FriendError) -> HTTPException:
    http = {403: 403, 404: 404, 422: 422}.get(exc.status, 409)  # the answers FriendError gives
    return HTTPException(http, detail=f"{exc.code}: {exc.message}")


async def _other(db: Database, name: str, me: SessionInfo) -> tuple[int, str]:
    async with db.session() as session:
        account = await accounts.get_by_name(session, name)
    if account is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no player with that name")
    if account.id == me.account_id:
        raise HTTPException(
            422,
            detail=[{"loc": ["path", "name"], "msg": "that is you", "type": "value_error"}],
        )
    return account.id, account.name


def _throttle(request: Request, kind: str) -> Throttle:
    settings = request.app.state.settings
    if kind == "friend":
        return Throttle("friend-request", settings.friends.friend_requests_per_hour, 3600.0)
    return Throttle("challenge", settings.friends.challenges_per_hour, 3600.0)


async def _admit(request: Request, db: Database, kind: str, me: SessionInfo) -> None:
    wait = await _throttle(request, kind).admit(db, str(me.account_id))
    if wait is not None:
        retry = max(1, int(wait + 0.999))
        what = "friend requests" if kind == "friend" else "challenges"
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            detail=f"too_many: too many {what} this hour; try again in {retry} s",
            headers={"Retry-After": str(retry)},
        )


def _registry(request: Request) -> TableRegistry:
    registry: TableRegistry = request.app.state.tables
    return registry


def _broker(request: Request) -> Broker:
    return _registry(request).broker


def challenge_json(row: Challenge, names: dict[int, str], now: datetime) -> ChallengeOut:
    state = "expired" if row.status == "pending" and row.expires_at <= now else row.status
    return ChallengeOut.model_validate(
        {
            "id": row.id,
            "from": names.get(row.from_id, "?"),
            "to": names.get(row.to_id, "?"),
            "code": row.table_code,
            "table_name": row.table_name,
            "rules": row.rules,
            "status": state,
            "created_at": row.created_at,
            "expires_at": row.expires_at,
        }
    )


async def _challenge_out(db: Database, row: Challenge, now: datetime) -> ChallengeOut:
    async with db.session() as session:
        names = await friends.names_of(session, {row.from_id, row.to_id})
    return challenge_json(row, names, now)


async def where_is(registry: TableRegistry, code: str, friend_id: int, viewer: SessionInfo) -> TableWhere | None:
    """The live table the friend sits at, as the viewer may see it: a private table's code and name
    only for those seated there and its creator."""
    try:
        async with asyncio.timeout(2):
            reply = await registry.call(
                code, Info(), Principal(key=viewer.key, name=viewer.name, account_id=viewer.account_id)
            )
    except (TableGone, TimeoutError, BrokerError):
        return None
    table = facts_of(reply)
    if table is None:
        return None
    players = {seat["player"] for seat in table["seats"]}
    if f"a:{friend_id}" not in players:
        return None
    private = table["private"]
    visible = not private or viewer.key in players or table["creator"] == viewer.key
    return TableWhere.model_validate(
        {
            "code": code if visible else None,
            "name": table["name"] if visible else None,
            "private": private,
            "status": table["status"],
        }
    )


async def close_challenge_table(registry: TableRegistry, row: Challenge) -> None:
    """A challenge declined or withdrawn: its table is of no more use. The challenger leaves it, and
    it closes when nobody else sat down (a table of this process; elsewhere it is swept when idle)."""
    challenger = Principal(key=f"a:{row.from_id}", name="", account_id=row.from_id)
    with contextlib.suppress(TableGone, TimeoutError, BrokerError):
        await registry.call(row.table_code, Leave(), challenger)
    actor = registry.tables.get(row.table_code)
    if actor is not None and actor.status == TableStatus.WAITING and all(seat.kind == "empty" for seat in actor.seats):
        await registry.close_table(row.table_code, "its challenge was declined or withdrawn")


# ---------------------------------------------------------------------- friends and blocks


@router.get("/friends", responses={200: {"description": "Your friends, requests and blocks."}, **responses(401, 403)})
async def list_friends(request: Request, user: CurrentAccount, db: DatabaseDep) -> FriendsOut:
    """Friends with who is online and at which table; requests both ways; whom you blocked."""
    assert user.account_id is not None
    now = clock_of(request)()
    async with db.session() as session:
        mine = await friends.circle(session, user.account_id)
        here = await friends.presence_of(session, [person.account_id for person in mine.friends])
    registry = _registry(request)

    async def one(person: friends.Person) -> FriendOut:
        presence = here.get(person.account_id)
        online = friends.is_online(presence, now)
        table = None
        if online and presence is not None and presence.table_code:
            table = await where_is(registry, presence.table_code, person.account_id, user)
        return FriendOut(name=person.name, since=person.since, online=online, table=table)

    return FriendsOut(
        friends=list(await asyncio.gather(*(one(person) for person in mine.friends))),
        incoming=[PersonOut(name=p.name, since=p.since) for p in mine.incoming],
        outgoing=[PersonOut(name=p.name, since=p.since) for p in mine.outgoing],
        blocked=[PersonOut(name=p.name, since=p.since) for p in mine.blocked],
    )


@router.post(
    "/friends/{name}",
    responses={
        200: {"description": "Requested (waiting for him), or friends (he had asked you: accepted)."},
        **responses(401, 403, 404, 409, 429),
        422: {"description": "A bad name, or yourself."},
    },
)
async def befriend(name: PlayerName, request: Request, user: CurrentAccount, db: DatabaseDep) -> FriendStatus:
    """Send a friend request, or accept the one he sent you."""
    assert user.account_id is not None
    me = user.account_id
    other, other_name = await _other(db, name, user)
    async with db.session() as session:
        row = await friends.friendship(session, me, other)
    if row is None:  # only new requests count toward the limit
        await _admit(request, db, "friend", user)
    now = clock_of(request)()
    try:
        result = await db.write(lambda session: friends.request(session, me, other, now))
    except friends.FriendError as exc:
        raise _refused(exc) from None
    event = "friend_request" if result == "requested" else "friend_accepted"
    await notices.tell(_broker(request), other, event, {"name": user.name})
    return FriendStatus(name=other_name, status="requested" if result == "requested" else "friends")


@router.delete(
    "/friends/{name}",
    status_code=204,
    responses={**responses(401, 403, 404), 422: {"description": "A bad name, or yourself."}},
)
async def unfriend(name: PlayerName, user: CurrentAccount, db: DatabaseDep) -> Response:
    """End a friendship, withdraw your request or decline his; 404 when there is none."""
    assert user.account_id is not None
    me = user.account_id
    other, _ = await _other(db, name, user)
    if not await db.write(lambda session: friends.remove(session, me, other)):
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no friendship or request with that player")
    return Response(status_code=204)


@router.post(
    "/blocks/{name}",
    responses={
        200: {"description": "Blocked: no friendship, challenges or chat lines from him."},
        **responses(401, 403, 404),
        422: {"description": "A bad name, or yourself."},
    },
)
async def block(name: PlayerName, request: Request, user: CurrentAccount, db: DatabaseDep) -> BlockOut:
    """Block a player: ends the friendship and pending requests and challenges between you, refuses
    new ones both ways, and his lines never reach you in any table's chat."""
    assert user.account_id is not None
    me = user.account_id
    other, other_name = await _other(db, name, user)
    now = clock_of(request)()
    await db.write(lambda session: friends.block(session, me, other, now))
    lists = blocks.of(_registry(request))
    if lists is not None:
        await lists.changed(me)
    return BlockOut(name=other_name, blocked=True)


@router.delete(
    "/blocks/{name}",
    status_code=204,
    responses={**responses(401, 403, 404), 422: {"description": "A bad name, or yourself."}},
)
async def unblock(name: PlayerName, request: Request, user: CurrentAccount, db: DatabaseDep) -> Response:
    assert user.account_id is not None
    me = user.account_id
    other, _ = await _other(db, name, user)
    if not await db.write(lambda session: friends.unblock(session, me, other)):
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="you have not blocked that player")
    lists = blocks.of(_registry(request))
    if lists is not None:
        await lists.changed(me)
    return Response(status_code=204)


# ---------------------------------------------------------------------- challenges


@router.post(
    "/friends/{name}/challenge",
    status_code=201,
    responses={
        201: {"description": "The private table is open, you are seated, and your friend is told."},
        **responses(400, 401, 403, 404, 409, 410, 429, 503),
        422: {"description": "A bad name or rule; yourself."},
    },
)
async def challenge(
    name: PlayerName, body: ChallengeCreate, request: Request, user: CurrentAccount, db: DatabaseDep
) -> ChallengeOut:
    """Challenge a friend: a private table with these rules, you seated, your friend told."""
    assert user.account_id is not None
    me = user.account_id
    other, _ = await _other(db, name, user)
    now = clock_of(request)()
    async with db.session() as session:
        if await friends.blocked_between(session, me, other):
            raise HTTPException(status.HTTP_409_CONFLICT, detail="blocked: you cannot challenge this player")
        if not await friends.are_friends(session, me, other):
            raise HTTPException(status.HTTP_409_CONFLICT, detail="not_friends: you can challenge friends only")
        if await friends.pending_challenge(session, me, other, now) is not None:
            raise HTTPException(
                status.HTTP_409_CONFLICT, detail="challenge_pending: your last challenge to this friend is still open"
            )
    await _admit(request, db, "challenge", user)
    registry = _registry(request)
    spec = body.model_copy(update={"private": True})
    created = await open_table(spec, request, user, registry, db)  # checks the balance first
    await take_seat(created.code, request, user, registry, db, None)
    ttl = timedelta(seconds=request.app.state.settings.friends.challenge_ttl_s)
    row = Challenge(
        from_id=me,
        to_id=other,
        table_code=created.code,
        table_name=created.table.name or "",
        rules=created.table.rules.model_dump(),
        status="pending",
        created_at=now,
        expires_at=now + ttl,
    )

    async def store(session: Any) -> Challenge:
        session.add(row)
        await friends.seen(session, me, None, table_code=created.code)
        await session.flush()
        return row

    await db.write(store)
    out = await _challenge_out(db, row, now)
    await notices.tell(registry.broker, other, "challenge", out.model_dump(by_alias=True, mode="json"))
    pushing: Callable[..., Any] | None = getattr(request.app.state, "push_challenge", None)
    if pushing is not None:
        pushing(other, out)
    return out


@router.get("/challenges", responses={200: {"description": "Open challenges."}, **responses(401, 403)})
async def list_challenges(request: Request, user: CurrentAccount, db: DatabaseDep) -> ChallengesOut:
    """Your open challenges, to you and from you, newest first."""
    assert user.account_id is not None
    now = clock_of(request)()
    async with db.session() as session:
        incoming, outgoing = await friends.challenges_of(session, user.account_id, now)
        names = await friends.names_of(session, {r.from_id for r in incoming} | {r.to_id for r in outgoing})
    names[user.account_id] = user.name
    return ChallengesOut(
        incoming=[challenge_json(row, names, now) for row in incoming],
        outgoing=[challenge_json(row, names, now) for row in outgoing],
    )


async def _answer(request: Request, user: SessionInfo, db: Database, challenge_id: int, state: str) -> Challenge:
    assert user.account_id is not None
    me = user.account_id
    now = clock_of(request)()
    try:
        return await db.write(lambda session: friends.answer(session, challenge_id, me, state, now))
    except friends.FriendError as exc:
        raise _refused(exc) from None


@router.post(
    "/challenges/{challenge_id}/accept",
    responses={
        200: {"description": "You are seated at the challenge's table; the match starts when the seats are full."},
        **responses(401, 403, 404, 409, 410, 503),
        422: {"description": "A bad id."},
    },
)
async def accept(
    challenge_id: ChallengeId, request: Request, user: CurrentAccount, db: DatabaseDep
) -> ChallengeAccepted:
    """Accept a challenge: you sit down at its table (its stake and fair-play rules apply as to any
    join); the challenger is told."""
    assert user.account_id is not None
    now = clock_of(request)()
    async with db.session() as session:
        try:
            row = await friends.challenge_for(session, challenge_id, user.account_id)
            friends.still_open(row, now)
        except friends.FriendError as exc:
            raise _refused(exc) from None
    if row.to_id != user.account_id:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="not_yours: only the challenged friend accepts")
    registry = _registry(request)
    try:
        ack = await take_seat(row.table_code, request, user, registry, db, None)
    except HTTPException as exc:
        if exc.status_code in (404, 410):  # the table is gone: so is the challenge
            await db.write(lambda session: friends.answer(session, challenge_id, row.to_id, "expired", now))
        raise
    accepted = await _answer(request, user, db, challenge_id, "accepted")
    await db.write(lambda session: friends.seen(session, row.to_id, None, table_code=row.table_code))
    out = await _challenge_out(db, accepted, now)
    await notices.tell(registry.broker, row.from_id, "challenge_answered", out.model_dump(by_alias=True, mode="json"))
    return ChallengeAccepted(challenge=out, code=row.table_code, seat=ack.get("seat", 0) if ack["type"] == "ack" else 0)


@router.post(
    "/challenges/{challenge_id}/decline",
    responses={
        200: {"description": "Declined; the challenger is told."},
        **responses(401, 403, 404, 409),
        422: {"description": "A bad id."},
    },
)
async def decline(challenge_id: ChallengeId, request: Request, user: CurrentAccount, db: DatabaseDep) -> ChallengeOut:
    now = clock_of(request)()
    row = await _answer(request, user, db, challenge_id, "declined")
    await close_challenge_table(_registry(request), row)
    out = await _challenge_out(db, row, now)
    await notices.tell(_broker(request), row.from_id, "challenge_answered", out.model_dump(by_alias=True, mode="json"))
    return out


@router.delete(
    "/challenges/{challenge_id}",
    status_code=204,
    responses={**responses(401, 403, 404, 409), 422: {"description": "A bad id."}},
)
async def cancel(challenge_id: ChallengeId, request: Request, user: CurrentAccount, db: DatabaseDep) -> Response:
    """Withdraw your challenge: you leave its table, the friend's notice goes."""
    now = clock_of(request)()
    row = await _answer(request, user, db, challenge_id, "cancelled")
    await close_challenge_table(_registry(request), row)
    out = await _challenge_out(db, row, now)
    await notices.tell(_broker(request), row.to_id, "challenge_answered", out.model_dump(by_alias=True, mode="json"))
    return Response(status_code=204)


# ---------------------------------------------------------------------- the notice feed


class NoticeSnapshot(BaseModel):
    challenges: list[ChallengeOut] = Field(description="Open challenges to you.")
    requests: list[PersonOut] = Field(description="Friend requests to you.")


async def notice_snapshot(db: Database, me: SessionInfo, now: datetime) -> NoticeSnapshot:
    assert me.account_id is not None
    async with db.session() as session:
        incoming, _ = await friends.challenges_of(session, me.account_id, now)
        names = await friends.names_of(session, {row.from_id for row in incoming})
        mine = await friends.circle(session, me.account_id)
    names[me.account_id] = me.name
    return NoticeSnapshot(
        challenges=[challenge_json(row, names, now) for row in incoming],
        requests=[PersonOut(name=p.name, since=p.since) for p in mine.incoming],
    )


@router.get("/notices", responses={200: {"description": "What waits for you."}, **responses(401, 403)})
async def notices_now(request: Request, user: CurrentAccount, db: DatabaseDep) -> NoticeSnapshot:
    """Open challenges and friend requests to you (the notice feed's snapshot)."""
    return await notice_snapshot(db, user, clock_of(request)())


@router.get(
    "/notices/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-sent events for your open page: `snapshot` (open challenges and friend requests "
            "to you) when it connects, then `challenge`, `challenge_answered` (a challenge as in /api/challenges), "
            "`friend_request`, `friend_accepted` (`{name}`). While it is open you are online to your friends.",
            "content": {"text/event-stream": {"schema": {"$ref": "#/components/schemas/NoticeSnapshot"}}},
        },
        **responses(401, 403),
        429: {"description": "`too_many_streams`: this address has the limit of feeds open."},
    },
)
async def notice_stream(request: Request, user: CurrentAccount, db: DatabaseDep) -> StreamingResponse:
    assert user.account_id is not None
    me = user.account_id
    state = request.app.state
    if not hasattr(state, "notice_streams"):
        state.notice_streams = PerAddress(state.settings.throttle.max_lobby_streams_per_ip)
    streams: PerAddress = state.notice_streams
    address = address_of(request.client)
    if not streams.take(address):
        raise HTTPException(
            status.HTTP_429_TOO_MANY_REQUESTS,
            detail=f"too_many_streams: your address has {streams.limit} feeds open already; close one",
        )
    clock = clock_of(request)
    broker = _broker(request)

    async def snapshot() -> bytes:
        data = await notice_snapshot(db, user, clock())
        return notices.sse("snapshot", data.model_dump(by_alias=True, mode="json"))

    @contextlib.asynccontextmanager
    async def feed() -> AsyncIterator[AsyncIterator[bytes]]:
        reader: EventFeed[bytes | None] = EventFeed()  # None: a fresh snapshot (the broker lost some)

        def heard(item: Event) -> None:
            if isinstance(item, Gap):
                reader.push(None)
                return
            with contextlib.suppress(ValueError, KeyError):
                message = orjson.loads(item.data)
                reader.push(notices.sse(message["event"], message["data"]))

        async def texts() -> AsyncIterator[bytes]:
            await db.write(lambda session: friends.seen(session, me, clock()))
            yield await snapshot()
            last_seen = asyncio.get_running_loop().time()
            async for text in reader.texts():
                yield await snapshot() if text is None else text
                loop_now = asyncio.get_running_loop().time()
                if loop_now - last_seen >= PRESENCE_EVERY_S:
                    last_seen = loop_now
                    await db.write(lambda session: friends.seen(session, me, clock()))

        try:
            async with broker.subscribe(notices.channel(me)) as sub:
                sub.set_sink(heard)
                yield texts()
        finally:
            reader.close()
            with contextlib.suppress(Exception):
                await asyncio.shield(db.write(lambda session: friends.seen(session, me, None)))

    return event_stream(feed, streams, address)
