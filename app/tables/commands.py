"""What a table actor is asked to do: one type per command, whoever sends it.

A command is a :class:`Command` envelope (who sent it, from which connection, its id and the table
version it acted on, where its answer goes) around its *body*, a frozen dataclass of its own type:
the play commands (:class:`LeadMove` ... :class:`ExchangeTrumpMove`, each the move without a seat:
the actor seats it from the sender's seating), the seat and match commands (:class:`Join`,
:class:`Leave`, :class:`AddBot`, ...), a connection's :class:`Hello` and :class:`Bye`, and the
table's own (:class:`BotMove`, :class:`Wake`, :class:`Rated`). The actor handles each body type with
its own handler (a table keyed by type, ``actor.py``).

A websocket frame is parsed once at the edge (``app/api/protocol.py``: each client message model
makes its body); a REST call (``registry.call``) builds its body itself. In the same process the
value goes straight onto the actor's queue; across processes :func:`command_to_json` /
:func:`command_from_json` are the one wire codec (the command's JSON on ``t:<code>:in``, decoded
once by the receiving actor).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Required, TypedDict

import orjson

from app.engine import (
    Action,
    ActionJson,
    Card,
    Challenge,
    Cover,
    ExchangeTrump,
    IllegalAction,
    Lead,
    Pass,
    Take,
    ThrowIn,
    Transfer,
    action_from_json,
    action_to_json,
)
from app.engine.actions import ActionParseError
from app.engine.cards import CARD_TEXT, CardParseError
from app.tables.hooks import RatingChange
from app.tables.spec import Principal, PrincipalJson, SeatRating

_PROCESS_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")


class Refused(Exception):
    """A command the table does not carry out: answered with an ``error`` of this code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class BadCommand(ValueError):
    """Wire JSON that is no command."""


# ---------------------------------------------------------------------------- play commands


@dataclass(frozen=True, slots=True)
class LeadMove:
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "lead"

    def action(self, seat: int) -> Action:
        return Lead(seat, self.cards)


@dataclass(frozen=True, slots=True)
class ThrowInMove:
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "throw_in"

    def action(self, seat: int) -> Action:
        return ThrowIn(seat, self.cards)


@dataclass(frozen=True, slots=True)
class CoverMove:
    attack: int
    card: Card
    kind: ClassVar[str] = "cover"

    def action(self, seat: int) -> Action:
        return Cover(seat, self.attack, self.card)


@dataclass(frozen=True, slots=True)
class TransferMove:
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "transfer"

    def action(self, seat: int) -> Action:
        return Transfer(seat, self.cards)


@dataclass(frozen=True, slots=True)
class TakeMove:
    kind: ClassVar[str] = "take"

    def action(self, seat: int) -> Action:
        return Take(seat)


@dataclass(frozen=True, slots=True)
class PassMove:
    kind: ClassVar[str] = "pass"

    def action(self, seat: int) -> Action:
        return Pass(seat)


@dataclass(frozen=True, slots=True)
class ChallengeMove:
    move: int
    kind: ClassVar[str] = "challenge"

    def action(self, seat: int) -> Action:
        return Challenge(seat, self.move)


@dataclass(frozen=True, slots=True)
class ExchangeTrumpMove:
    kind: ClassVar[str] = "exchange_trump"

    def action(self, seat: int) -> Action:
        return ExchangeTrump(seat)


Move = LeadMove | ThrowInMove | CoverMove | TransferMove | TakeMove | PassMove | ChallengeMove | ExchangeTrumpMove
MOVES: tuple[type[Move], ...] = (
    LeadMove, ThrowInMove, CoverMove, TransferMove, TakeMove, PassMove, ChallengeMove, ExchangeTrumpMove,
)  # fmt: skip
# The commands a player's connection may send that become an engine action (docs/protocol.md).
PLAY_COMMANDS = tuple(move.kind for move in MOVES)


def move_of(action: Action) -> Move:
    """The play command that makes ``action`` (its seat is the sender's): a bot's or a test's choice
    sent as a player would send it."""
    if isinstance(action, Lead):
        return LeadMove(action.cards)
    if isinstance(action, ThrowIn):
        return ThrowInMove(action.cards)
    if isinstance(action, Transfer):
        return TransferMove(action.cards)
    if isinstance(action, Cover):
        return CoverMove(action.attack, action.card)
    if isinstance(action, Challenge):
        return ChallengeMove(action.move)
    if isinstance(action, Take):
        return TakeMove()
    if isinstance(action, Pass):
        return PassMove()
    if isinstance(action, ExchangeTrump):
        return ExchangeTrumpMove()
    raise ValueError(f"no player sends a {action.kind}")


# ---------------------------------------------------------------------------- seat and match commands


@dataclass(frozen=True, slots=True)
class Join:
    """Take ``seat`` (None: the first free one); ``rating``: the account's (None: a guest's);
    a ``client_seed`` for the next deal answering the table's ``commitment`` (docs/fairness.md)."""

    seat: int | None = None
    rating: SeatRating | None = None
    client_seed: str | None = None
    commitment: str | None = None
    kind: ClassVar[str] = "join"


@dataclass(frozen=True, slots=True)
class Leave:
    kind: ClassVar[str] = "leave"


@dataclass(frozen=True, slots=True)
class ClientSeed:
    seed: str
    commitment: str
    kind: ClassVar[str] = "client_seed"


@dataclass(frozen=True, slots=True)
class AddBot:
    level: str | None = None
    seat: int | None = None
    kind: ClassVar[str] = "add_bot"


@dataclass(frozen=True, slots=True)
class RemoveBot:
    seat: int | None = None
    kind: ClassVar[str] = "remove_bot"


@dataclass(frozen=True, slots=True)
class Rematch:
    kind: ClassVar[str] = "rematch"


@dataclass(frozen=True, slots=True)
class Ready:
    kind: ClassVar[str] = "ready"


@dataclass(frozen=True, slots=True)
class Start:
    kind: ClassVar[str] = "start"


@dataclass(frozen=True, slots=True)
class Info:
    kind: ClassVar[str] = "info"


SeatBody = Join | Leave | ClientSeed | AddBot | RemoveBot | Rematch | Ready
Request = Move | SeatBody | Start | Info  # what a player asks, answered with an ack, an error or info


# ---------------------------------------------------------------------------- a connection's and the table's own


@dataclass(frozen=True, slots=True)
class Hello:
    """A connection says hello (``last_version``: the last version it saw): answered by a welcome."""

    last_version: int | None = None
    kind: ClassVar[str] = "hello"


@dataclass(frozen=True, slots=True)
class Bye:
    kind: ClassVar[str] = "bye"


@dataclass(frozen=True, slots=True)
class BotMove:
    """A bot's decision (``action``; None: it chose nothing) for ``seat`` at table version ``at_version``."""

    seat: int
    at_version: int
    action: Action | None
    kind: ClassVar[str] = "bot"


@dataclass(frozen=True, slots=True)
class Wake:
    """Let the bots think again."""

    kind: ClassVar[str] = "wake"


@dataclass(frozen=True, slots=True)
class Rated:
    """What the ledger says match ``match_id`` did to the ratings: seat -> its change."""

    match_id: str
    ratings: dict[int, RatingChange]
    kind: ClassVar[str] = "rated"


@dataclass(frozen=True, slots=True)
class Handover:
    """Its process is stopping: the commands queued before this one are handled, the rest refused."""

    kind: ClassVar[str] = "_handover"


Internal = Hello | Bye | BotMove | Wake | Rated | Handover
Body = Request | Internal
SEAT_BODIES = (Join, Leave, ClientSeed, AddBot, RemoveBot, Rematch, Ready)
BODIES: dict[str, type[Body]] = {
    body.kind: body for body in (*MOVES, *SEAT_BODIES, Start, Info, Hello, Bye, BotMove, Wake, Rated)
}


@dataclass(frozen=True, slots=True)
class Command:
    """One command for a table actor: its ``body`` and who sent it from where."""

    body: Body
    principal: Principal | None = None
    conn: str | None = None  # the websocket connection it came from (its answer goes only there)
    reply: str | None = None  # a REST call's reply channel
    id: str | None = None  # the client's command id, echoed in the answer
    version: int | None = None  # the table version the client acted on
    remote: bool = False  # came through the broker (its connection lives in another process)
    via: str | None = None  # the process of the websocket connection that sent it (its fan channel)

    @property
    def kind(self) -> str:
        return self.body.kind


def refused_move(exc: IllegalAction, seen: int | None, version: int) -> Refused:
    """Why the engine did not take a play command: ``stale_version`` when its sender had not seen
    the table's ``version`` (he saw ``seen``), else the engine's own code."""
    if seen is not None and seen < version:
        return Refused("stale_version", f"the table moved on (version {version}, you saw {seen}): {exc}")
    return Refused(exc.code, str(exc))


def unavailable() -> Refused:
    """A change the table could not save: the store is unreachable, nothing happened."""
    return Refused("unavailable", "the table cannot save moves right now (storage unreachable); try again shortly")


# ---------------------------------------------------------------------------- the broker wire


class CommandJson(TypedDict, total=False):
    """A command as it goes through the broker (:func:`command_to_json`): its body's fields that are
    set, beside ``type``, and the envelope's."""

    type: Required[str]  # the body's kind
    cards: list[str]  # lead, throw_in, transfer
    attack: int  # cover
    card: str  # cover
    move: int  # challenge
    seat: int  # join, add_bot, remove_bot (none: the first that fits); bot
    rating: SeatRating  # join
    client_seed: str  # join
    commitment: str  # join, client_seed
    seed: str  # client_seed
    level: str  # add_bot
    last_version: int  # hello
    at_version: int  # bot
    action: ActionJson  # bot (none: it chose nothing)
    match_id: str  # rated
    ratings: dict[int, RatingChange]  # rated (the seats as text on the wire)
    principal: PrincipalJson
    conn: str
    reply: str
    id: str
    version: int
    via: str


def _body_json(body: Body) -> CommandJson:
    """The body's fields that are set, beside its ``type``, in their declared order."""
    data: CommandJson = {"type": body.kind}
    if not body.__slots__:  # take, pass, leave, ...: nothing beside the type
        return data
    if isinstance(body, (LeadMove, ThrowInMove, TransferMove)):
        data["cards"] = [CARD_TEXT[card] for card in body.cards]
    elif isinstance(body, CoverMove):
        data["attack"], data["card"] = body.attack, CARD_TEXT[body.card]
    elif isinstance(body, ChallengeMove):
        data["move"] = body.move
    elif isinstance(body, Join):
        if body.seat is not None:
            data["seat"] = body.seat
        if body.rating is not None:
            data["rating"] = body.rating
        if body.client_seed is not None:
            data["client_seed"] = body.client_seed
        if body.commitment is not None:
            data["commitment"] = body.commitment
    elif isinstance(body, ClientSeed):
        data["seed"], data["commitment"] = body.seed, body.commitment
    elif isinstance(body, AddBot):
        if body.level is not None:
            data["level"] = body.level
        if body.seat is not None:
            data["seat"] = body.seat
    elif isinstance(body, RemoveBot):
        if body.seat is not None:
            data["seat"] = body.seat
    elif isinstance(body, Hello):
        if body.last_version is not None:
            data["last_version"] = body.last_version
    elif isinstance(body, BotMove):
        data["seat"], data["at_version"] = body.seat, body.at_version
        if body.action is not None:
            data["action"] = action_to_json(body.action)
    elif isinstance(body, Rated):
        data["match_id"], data["ratings"] = body.match_id, body.ratings
    return data


def command_to_json(command: Command, *, via: str | None = None) -> bytes:
    """The command as JSON for the broker: its body's fields beside ``type`` and the envelope's that
    are set; ``via``, when given, in place of the command's own (the sending process: no copy of the
    command made for it)."""
    data = _body_json(command.body)
    if command.principal is not None:
        data["principal"] = command.principal.to_json()
    for name in ("conn", "reply", "id", "version"):
        value = getattr(command, name)
        if value is not None:
            data[name] = value
    via = via or command.via
    if via is not None:
        data["via"] = via
    return orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS)


def _int(value: Any, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise BadCommand(f"an integer, not {value!r}")
    return value


def _str(value: Any, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise BadCommand(f"a string, not {value!r}")
    return value


def _cards(value: Any) -> tuple[Card, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(text, str) for text in value):
        raise BadCommand(f"cards: a non-empty list of card strings, not {value!r}")
    return tuple(Card.parse(text) for text in value)


def _rating(value: Any) -> SeatRating | None:
    """A seat's rating as the join carried it (anything else: none)."""
    if not isinstance(value, dict) or not isinstance(value.get("rating"), int) or isinstance(value["rating"], bool):
        return None
    rating: SeatRating = {"rating": value["rating"]}
    if "provisional" in value:
        rating["provisional"] = bool(value["provisional"])
    return rating


_FIELDS: dict[str, Callable[[Any], Any]] = {
    "cards": _cards,
    "card": lambda value: Card.parse(_str(value) or ""),
    "attack": _int,
    "move": _int,
    "seat": lambda value: _int(value, optional=True),
    "at_version": _int,
    "last_version": lambda value: _int(value, optional=True),
    "level": lambda value: _str(value, optional=True),
    "seed": _str,
    "commitment": lambda value: _str(value, optional=True),
    "client_seed": lambda value: _str(value, optional=True),
    "match_id": _str,
    "rating": _rating,
    "ratings": lambda value: {int(seat): change for seat, change in value.items()},
    "action": lambda value: None if value is None else action_from_json(value),
}


def body_from_json(data: Mapping[str, object]) -> Body:
    """A body from its wire fields, each checked here (raises :class:`BadCommand`)."""
    kind = data.get("type")
    cls = BODIES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise BadCommand(f"unknown command {kind!r}")
    action = data.get("action")
    if cls in MOVES and isinstance(action, dict):  # the form of older processes
        data = {**action, **{k: v for k, v in data.items() if k != "action"}}
    try:
        values = {field.name: _FIELDS[field.name](data.get(field.name)) for field in dataclasses.fields(cls)}
        return cls(**values)
    except (ActionParseError, CardParseError, AttributeError, TypeError, ValueError) as exc:
        raise BadCommand(f"{kind}: {exc}") from exc


def command_from_json(raw: bytes | str) -> Command:
    """Decode a command that came through the broker (raises :class:`BadCommand`)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadCommand(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise BadCommand("a command is a JSON object with a string type")
    body = body_from_json(data)
    try:
        principal = Principal.from_json(data["principal"]) if data.get("principal") is not None else None
    except (KeyError, TypeError, ValueError) as exc:
        raise BadCommand(str(exc)) from exc
    return Command(
        body,
        principal=principal,
        conn=_text(data.get("conn")),
        reply=_text(data.get("reply")),
        id=_text(data.get("id")),
        version=data["version"] if isinstance(data.get("version"), int) else None,
        remote=True,
        via=_process(data.get("via")),
    )


def _process(value: Any) -> str | None:
    """A process id fit for a channel name, or None."""
    return value if isinstance(value, str) and _PROCESS_ID.fullmatch(value) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
