"""Play now: a seat at the oldest open public table that matches the caller's preferences, or a new
one; and a 2-seat table against a bot, dealt as soon as its player's seed has come. A signed-out
caller becomes a guest on the spot (a generated name, the guest sign-up's limits), so one tap seats
a visitor. Nobody around: after ``DURAK_QUICKPLAY_BOT_OFFER_S`` the client offers to fill the empty
seats with bots.

Finding or opening a table is serialised per preference key in this process, so callers with the
same preferences fill one table before another opens. Another process may open its own table at
the same moment; joins are serialised by each table's actor, so a table that filled meanwhile
answers ``table_full`` and the caller tries the next one (or opens one).

Provably fair deals (docs/fairness.md, "Who contributed to a deal"): the browser's ``client_seed``
comes with the tap. It counts at a table the caller is seated at whose commitment was drawn before
the request (a waiting table he joins); a table opened by the request has a commitment drawn after
the seed arrived, so there the seed the table page sends for that commitment counts, and a table
against a bot deals only once it has come (``deal_on_seed``)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Request, Response, status
from pydantic import BaseModel, Field, field_validator

from app.api.deps import CurrentUser, DatabaseDep, OptionalUser, RegistryDep, SessionInfo, SettingsDep
from app.api.errors import responses
from app.api.guest_sessions import start_guest_session
from app.api.limits import address_of
from app.api.schemas import NAME_SCHEMA, RequestBody, TableAck, TableOut
from app.api.table_calls import principal_of, table_call, too_many
from app.api.table_entry import require_balance, saw_device
from app.db import friends, ratings
from app.db.accounts import name_problem
from app.db.session import Database
from app.engine import Rules, RulesError
from app.tables.actor import TableActor
from app.tables.answers import AckAnswer, Answer, facts_of
from app.tables.commands import AddBot, Info, Join
from app.tables.opening import LIVE
from app.tables.registry import TableGone, TableRegistry, TooMany
from app.tables.spec import Principal, SeatRating, TableSpec, TableStatus

router = APIRouter(prefix="/api/quickplay", tags=["quickplay"])

# Refusals that mean "this table, not you": try the next table (a related account or one the pair cap
# refuses sits there: docs/integrity.md).
NEXT_TABLE = {
    "table_full",
    "seat_taken",
    "match_running",
    "match_over",
    "related_accounts",
    "pair_cap",
    "stale_commitment",  # its match ended between our look and our join: its next deal is not the one looked at
}
ClientSeed = Field(
    default=None,
    pattern=r"^[0-9a-fA-F]{32}$",
    description="Your browser's seed (32 hex digits from crypto.getRandomValues): it goes into the deal of the "
    "waiting table you are seated at, whose commitment was drawn before this request (docs/fairness.md).",
)
PreferenceKey = tuple[Any, ...]


def _guest_name(value: str | None) -> str | None:
    problem = None if value is None else name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


GUEST_NAME_FIELD = Field(
    default=None,
    description="A signed-out caller's guest name (the account-name rules; default: a generated one). "
    "Ignored when signed in.",
    json_schema_extra=NAME_SCHEMA,
)


class QuickPlay(RequestBody):
    """What the caller wants; every field left out matches any table (and takes the default when a
    new table is opened: 36 cards, 2 seats, the preset's transfer rule, free, 30 s)."""

    deck: Literal[24, 36, 52] | None = None
    seats: int | None = Field(default=None, ge=2, le=6)
    transfer: bool | None = None
    stake: int = Field(default=0, ge=0, le=1_000_000, description="0 = a free table.")
    timer: int | None = Field(default=None, ge=0, le=600, description="Seconds per decision; 0 = no timer.")
    client_seed: str | None = ClientSeed
    guest_name: str | None = GUEST_NAME_FIELD

    _check_guest_name = field_validator("guest_name")(_guest_name)

    def key(self) -> PreferenceKey:
        return (self.deck, self.seats, self.transfer, self.stake, self.timer)

    def matches(self, rules: Mapping[str, Any]) -> bool:
        wanted = {"deck": self.deck, "seats": self.seats, "transfer": self.transfer, "timer": self.timer}
        if int(rules.get("stake", 0)) != self.stake:
            return False
        return all(value is None or rules.get(name) == value for name, value in wanted.items())


class BotGame(RequestBody):
    level: Literal["easy", "normal", "hard"] = "normal"
    deck: Literal[24, 36, 52] | None = None
    transfer: bool | None = None
    timer: int | None = Field(default=None, ge=0, le=600)
    guest_name: str | None = GUEST_NAME_FIELD

    _check_guest_name = field_validator("guest_name")(_guest_name)


class BotFill(RequestBody):
    level: Literal["easy", "normal", "hard"] = "normal"


class QuickPlaySettings(BaseModel):
    bot_offer_after_s: float = Field(
        description="Seconds the client searches for players before it offers bots for the empty seats "
        "(`DURAK_QUICKPLAY_BOT_OFFER_S`)."
    )


class QuickPlayOut(BaseModel):
    code: str = Field(description="The table's invite code: open `/t/<code>`.")
    seat: int = Field(description="Your seat.")
    created: bool = Field(description="True when no open table matched and this one was opened for you.")
    guest: bool = Field(
        default=False, description="True when you were signed out and are now a guest (a new session cookie)."
    )
    table: TableOut


# One lock per preference key and registry (one registry per app and event loop).
_locks: weakref.WeakKeyDictionary[TableRegistry, dict[PreferenceKey, asyncio.Lock]] = weakref.WeakKeyDictionary()


def _lock_for(registry: TableRegistry, key: PreferenceKey) -> asyncio.Lock:
    locks = _locks.setdefault(registry, {})
    lock = locks.get(key)
    if lock is None:
        lock = locks[key] = asyncio.Lock()
    return lock


async def _rating_of(db: Database, user: SessionInfo) -> SeatRating | None:
    if user.account_id is None:
        return None
    async with db.session() as session:
        return await ratings.seat_rating(session, user.account_id)


async def _check_stake(db: Database, registry: TableRegistry, user: SessionInfo | None, stake: int) -> None:
    if stake <= 0:
        return
    if user is None or user.account_id is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="guests can play only free tables; sign up")
    await require_balance(db, user.account_id, stake)
    # What refuses the player at any staked table (a new account, docs/integrity.md), before a table
    # is opened for him that would not seat him.
    if refusal := await registry.hooks.may_sit(account_id=user.account_id, others=[], stake=stake):
        raise HTTPException(status.HTTP_409_CONFLICT, detail=f"{refusal[0]}: {refusal[1]}")


async def _player(
    user: SessionInfo | None, request: Request, response: Response, db: Database, settings: Any, name: str | None
) -> SessionInfo:
    """The caller, or a guest made on the spot for a signed-out caller (the guest sign-up's code and
    limits: 429 past ``DURAK_GUESTS_PER_IP``; the cookie goes out with this answer)."""
    if user is not None:
        return user
    return await start_guest_session(request, response, db, settings, name, spare=True)


def _new_rules(body: QuickPlay | BotGame, seats: int, stake: int) -> Rules:
    choices: dict[str, Any] = {"deck": body.deck or 36, "seats": seats, "stake": stake, "timer": 30}
    if body.transfer is not None:
        choices["transfer"] = body.transfer
    if body.timer is not None:
        choices["timer"] = body.timer
    try:
        return Rules.for_preset("durak_peak", **choices)
    except RulesError as exc:
        raise HTTPException(
            422, detail=[{"loc": ["body", exc.field], "msg": exc.reason, "type": "value_error"}]
        ) from exc


async def _join(
    registry: TableRegistry,
    code: str,
    user: SessionInfo,
    rating: SeatRating | None,
    client_seed: str | None = None,
) -> Answer:
    """Sit down at ``code``; with ``client_seed``, as the seed for the table's current commitment
    (drawn before this request: the table was open and waiting already)."""
    try:
        if client_seed is None:
            return await registry.call(code, Join(seat=None, rating=rating), principal_of(user))
        facts = facts_of(await registry.call(code, Info(), principal_of(user)))
        commitment = facts["fairness"]["commitment"] if facts is not None else None
        join = Join(None, rating, client_seed=client_seed.lower(), commitment=commitment)
        return await registry.call(code, join, principal_of(user))
    except (TimeoutError, TableGone):
        return {"type": "error", "code": "table_full", "message": "the table did not answer"}


async def _answer(
    registry: TableRegistry, code: str, user: SessionInfo, created: bool, db: Database, guest: bool = False
) -> QuickPlayOut:
    try:
        reply = await registry.call(code, Info(), principal_of(user))
    except (TimeoutError, TableGone):
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the table did not answer in time") from None
    table = facts_of(reply)
    if table is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the table did not answer its info")
    seat = next((row["seat"] for row in table["seats"] if row["player"] == user.key), None)
    if seat is None:  # left again in the meantime
        raise HTTPException(status.HTTP_409_CONFLICT, detail="not_seated: you left the table meanwhile")
    if user.account_id is not None:  # where his friends see him (app/db/friends.py)
        await friends.note_table(db, user.account_id, code)
    return QuickPlayOut(code=code, seat=seat, created=created, guest=guest, table=TableOut.model_validate(table))


@router.post(
    "",
    responses={
        200: {"description": "You are seated; the match starts when the table's last seat fills."},
        **responses(401, 403, 409, 503),
        429: {"description": "`too_many_tables`: the limit of waiting tables."},
        422: {"description": "A preference is invalid; `loc` names it."},
    },
)
async def quickplay(
    request: Request,
    response: Response,
    signed_in: OptionalUser,
    registry: RegistryDep,
    db: DatabaseDep,
    settings: SettingsDep,
    body: QuickPlay | None = None,
) -> QuickPlayOut:
    body = body or QuickPlay()
    await _check_stake(db, registry, signed_in, body.stake)
    rules = _new_rules(body, body.seats or 2, body.stake)  # validates the preferences before any seat is taken
    user = await _player(signed_in, request, response, db, settings, body.guest_name)
    made_guest = signed_in is None
    await saw_device(db, request, user)
    rating = await _rating_of(db, user)
    me = principal_of(user)
    async with _lock_for(registry, body.key()):
        lobby = sorted(await registry.lobby(), key=lambda row: row["created"])  # oldest first
        # Already waiting or playing at a matching table of this process: that seat again. (Lobby rows
        # carry no player keys; at a waiting table of another process the join below answers
        # already_seated.)
        for actor in sorted(registry.tables.values(), key=lambda actor: actor.created):
            listed = not actor.spec.private and actor.status in LIVE
            if listed and actor.seating.seat_of(me) is not None and body.matches(actor.rules.to_json()):
                return await _answer(registry, actor.code, user, False, db, made_guest)
        for row in lobby:
            if row["status"] != TableStatus.WAITING or row["free_seats"] <= 0 or not body.matches(row["rules"]):
                continue
            reply = await _join(registry, row["code"], user, rating, body.client_seed)
            if reply.get("type") == "ack" or reply.get("code") == "already_seated":
                return await _answer(registry, row["code"], user, False, db, made_guest)
            if reply.get("code") not in NEXT_TABLE:
                raise HTTPException(status.HTTP_409_CONFLICT, detail=f"{reply.get('code')}: {reply.get('message')}")
        spec = TableSpec(rules=rules, creator=me, name="Quick game")
        actor = await _create(registry, spec, request)
        # Not with the tap's seed: this table's commitment was drawn after it arrived. The table page
        # sends a seed for it, and the match waits for other players anyway.
        reply = await _join(registry, actor.code, user, rating)
        if reply.get("type") != "ack":
            raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the new table did not seat you")
        return await _answer(registry, actor.code, user, True, db, made_guest)


async def _create(registry: TableRegistry, spec: TableSpec, request: Request) -> TableActor:
    """Open a table as POST /api/tables does, under the same limits (429 past them)."""
    try:
        return await registry.create(spec, address_of(request.client))
    except TooMany as refused:
        raise too_many(refused) from None


@router.post(
    "/bot",
    responses={
        200: {
            "description": "A private 2-seat table: you and a bot of that level. The match is dealt as soon as "
            "you send your client seed for the table's commitment (`client_seed` on the table's websocket, as "
            "the table page does on arrival), or when you start it (`POST /api/tables/{code}/start`)."
        },
        **responses(401, 409, 503, r409="`not_seated`: you left the new table before the answer."),
        429: {"description": "`too_many_tables` or `too_many_bot_tables`."},
        422: {"description": "A parameter is invalid; `loc` names it."},
    },
)
async def play_a_bot(
    request: Request,
    response: Response,
    signed_in: OptionalUser,
    registry: RegistryDep,
    db: DatabaseDep,
    settings: SettingsDep,
    body: BotGame | None = None,
) -> QuickPlayOut:
    body = body or BotGame()
    rules = _new_rules(body, 2, 0)
    user = await _player(signed_in, request, response, db, settings, body.guest_name)
    # The table is opened and filled by this one request, so its player has not seen its commitment:
    # it deals once his seed for that commitment has come (docs/fairness.md).
    spec = TableSpec(
        rules=rules,
        creator=principal_of(user),
        name=f"{user.name} vs bot ({body.level})",
        private=True,
        deal_on_seed=True,
    )
    actor = await _create(registry, spec, request)
    reply = await _join(registry, actor.code, user, await _rating_of(db, user))
    if reply.get("type") == "ack":
        reply = await registry.call(actor.code, AddBot(seat=None, level=body.level), principal_of(user))
    if reply.get("type") != "ack":
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the bot table could not be set up")
    return await _answer(registry, actor.code, user, True, db, signed_in is None)


@router.get("/settings", responses={200: {"description": "What the web client's searching state needs."}})
async def quickplay_settings(settings: SettingsDep) -> QuickPlaySettings:
    return QuickPlaySettings(bot_offer_after_s=settings.client.quickplay_bot_offer_s)


@router.post(
    "/{code}/bots",
    response_model=TableAck,
    responses={
        200: {
            "description": "Every empty seat has a bot now and the match has started (or a person took "
            "the last seat first)."
        },
        **responses(401, 403, 404, 409, 410, 503),
        422: {"description": "Bad level."},
    },
)
async def fill_with_bots(code: str, user: CurrentUser, registry: RegistryDep, body: BotFill | None = None) -> AckAnswer:
    """Nobody came: fill the empty seats of the table the caller waits at with bots. For a player
    seated at a waiting free table who opened it or sits there without another person (a table he
    found empty); bots join as the creator's (rule book: the creator seats bots). A person who sits
    down meanwhile keeps his seat: the bots take what is left."""
    body = body or BotFill()
    table = facts_of(await table_call(registry, code, Info(), user))
    if table is None:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the table did not answer its info")
    mine = [row for row in table["seats"] if row["player"] == user.key]
    if not mine:
        raise HTTPException(status.HTTP_409_CONFLICT, detail="not_seated: you are not seated at this table")
    if table["status"] != TableStatus.WAITING:
        raise HTTPException(status.HTTP_409_CONFLICT, detail="match_running: the table is not waiting for players")
    if int(table["rules"]["stake"]) > 0:
        raise HTTPException(status.HTTP_409_CONFLICT, detail="bots_free_tables_only: bots play free tables only")
    others = [row for row in table["seats"] if row["kind"] == "human" and row["player"] != user.key]
    if table["creator"] != user.key and others:
        raise HTTPException(
            status.HTTP_403_FORBIDDEN, detail="not_creator: other players sit here; only the creator seats bots"
        )
    creator = Principal(key=table["creator"], name=user.name)
    last: AckAnswer = {"type": "ack", "version": table["version"]}
    for row in table["seats"]:
        if row["kind"] != "empty":
            continue
        try:
            answer = await registry.call(table["code"] or code, AddBot(seat=row["seat"], level=body.level), creator)
        except (TimeoutError, TableGone):
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE, detail="the table did not answer in time"
            ) from None
        if answer["type"] == "ack":
            last = {"type": "ack", "version": answer["version"]}
        elif answer.get("code") not in ("seat_taken", "table_full", "match_running"):
            raise HTTPException(status.HTTP_409_CONFLICT, detail=f"{answer.get('code')}: {answer.get('message')}")
    return last
