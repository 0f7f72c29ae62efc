"""What the server sends a table's clients: every message is a pydantic model in a union keyed on
``type`` (``docs/protocol.md`` is generated from them, ``app/api/protocol_docs.py``), and each message
model is also the message's *writer*: :meth:`_Message.wire` / :meth:`_Message.wire_text` build what goes on
the wire from the model's own fields, in its field order, so nothing is sent that the model does not
describe (``extra="forbid"``; the conformance tests validate every message of real matches against
these models). The messages every recipient of a change gets (``update``, ``presence``) are written
by :meth:`Update.spliced` / :meth:`Presence.spliced`: the parts all recipients share (the table
facts, the public view, the events when nobody drew a card) are encoded once and spliced into each
recipient's text (docs/performance.md). The objects inside the messages are models of
``message_parts.py`` (the view, the table facts) and ``message_events.py`` (the events).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

import orjson
from pydantic import ConfigDict, Field, TypeAdapter

from app.engine import SeatViewJson
from app.tables.message_events import (
    BoutEndEvent,
    BoutStartEvent,
    ChallengeEvent,
    ClientSeedEvent,
    CommitmentEvent,
    DrawEvent,
    Event,
    EventShape,
    ExchangeTrumpEvent,
    ForfeitEvent,
    MatchEndEvent,
    MatchStartEvent,
    MoveEvent,
    OutEvent,
    PassEvent,
    RatingsEvent,
    ReadyCheckEvent,
    ReadyEvent,
    RematchEvent,
    ResultsEvent,
    SeatEvent,
    TakeEvent,
    TransferredEvent,
    event_adapter,
)
from app.tables.message_parts import (
    ActionView,
    Card,
    Decision,
    FairDeal,
    OutcomeView,
    PlayerView,
    RatingChangeView,
    ReadyCheckInfo,
    RematchProposalInfo,
    Results,
    RulesInfo,
    Seat,
    SeatInfo,
    SeatRating,
    Shape,
    TableFairness,
    TableInfo,
    TablePair,
    View,
)

ChatPhraseKey = Literal["gg", "hurry", "well_played", "oops", "hello", "thanks", "nice_move", "bad_luck"]


def dumps(value: Any) -> str:
    """Compact JSON text of a message or a part of one (integer keys become strings)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


class _Message(Shape):
    """A message the server sends, whose model writes it."""

    kind: ClassVar[str] = ""
    _order: ClassVar[tuple[tuple[str, str, bool], ...]] = ()  # (field, JSON key, left out when None)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = cls.model_fields
        cls.kind = get_args(fields["type"].annotation)[0]
        cls._order = tuple(
            (name, field.alias or name, not field.is_required() and field.default is None)
            for name, field in fields.items()
            if name != "type"
        )

    @classmethod
    def wire(cls, **values: object) -> dict[str, object]:
        """The message as JSON data, in the model's field order: its ``type``, then ``values`` (an
        optional field whose value is None is left out; a field the model lacks is an error). Its
        shape is the model's: answers.py names the shapes of the answers (``AckAnswer`` ...) and
        chat.py a chat line's (``ChatLine``)."""
        out: dict[str, object] = {"type": cls.kind}
        taken = 0
        for name, key, optional in cls._order:
            if name in values:
                taken += 1
                value = values[name]
                if value is not None or not optional:
                    out[key] = value
        if taken != len(values):
            unknown = set(values) - {name for name, _, _ in cls._order}
            raise TypeError(f"{cls.kind} has no field {', '.join(sorted(unknown))}")
        return out

    @classmethod
    def wire_text(cls, **values: object) -> str:
        """The message's JSON text (:meth:`wire`, encoded)."""
        return dumps(cls.wire(**values))


class Welcome(_Message):
    """The answer to ``hello``: a full snapshot, plus the missed events when resuming. Also sent
    unasked to a player's connections when it leaves its seat: from then on they watch."""

    type: Literal["welcome"]
    version: int
    seat: int | None = Field(description="Your seat, or null when you are watching.")
    view: View | None = Field(description="The match as you see it (null before the first match).")
    table: TableInfo
    events: list[Event] | None = Field(
        default=None, description="With resumed_from: every event after last_version, in order."
    )
    resumed_from: int | None = Field(default=None, description="Your last_version, when the events since it follow.")
    recent: list[Event] | None = Field(
        default=None,
        description="Without resumed_from: the current (or last) match's events the server still keeps, "
        "redacted for you, so that a fresh page can show what happened.",
    )


class Update(_Message):
    """Pushed after every change of the table's state: its new version, the events of that change
    and the new view. Each update is one version after the one before; a gap means messages were
    lost (the server then sends a fresh ``welcome`` on its own)."""

    type: Literal["update"]
    version: int
    seat: int | None = Field(description="Your seat, or null when you are watching.")
    events: list[Event] = Field(
        description="What happened, in order. Empty only when a table taken over by another server "
        "process re-announces a match that had just finished (same version, nothing new happened)."
    )
    view: View | None
    table: TableInfo

    @staticmethod
    def spliced(version: int, seat: int | None, events: str, view: str, table: str, you: str | None = None) -> str:
        """The update's text from parts encoded once for many recipients: ``events`` (the list),
        ``view`` (:meth:`joined_view`, or ``null``) and ``table`` (the facts without ``you``; a
        player's ``you`` is added to them here)."""
        facts = table if you is None else f'{table[:-1]},"you":{dumps(you)}}}'
        return (
            f'{{"type":"update","version":{version},"seat":{"null" if seat is None else seat},'
            f'"events":{events},"view":{view},"table":{facts}}}'
        )

    @staticmethod
    def joined_view(public: str, seat: int | None, private: SeatViewJson | None = None) -> str:
        """A view's text: the public part every recipient shares (``public``, an object's text without
        its closing brace), the seat, and that seat's own part (its hand, its legal actions)."""
        if seat is None:
            return public + ',"seat":null}'
        return public + "," + dumps({"seat": seat, **(private or {})})[1:]


class Presence(_Message):
    """Someone connected or left (a player's connections, a spectator): the table facts again
    (``seats[].connected``, ``spectators``, ``deadline_ms``). Nothing about the match changed, so
    ``version`` stays the version you already have."""

    type: Literal["presence"]
    version: int
    table: TableInfo

    @staticmethod
    def spliced(version: int, table: str, you: str | None = None) -> str:
        """The presence's text from the facts encoded once (``table``, without ``you``; a player's
        ``you`` is added to them here)."""
        facts = table if you is None else f'{table[:-1]},"you":{dumps(you)}}}'
        return f'{{"type":"presence","version":{version},"table":{facts}}}'


class Ack(_Message):
    type: Literal["ack"]
    id: str | None
    version: int = Field(description="The table's version after the command.")
    duplicate: bool | None = Field(default=None, description="True when this id was already applied.")


class Error(_Message):
    """A refused message. ``code`` is stable (see the table below); ``message`` is for people."""

    type: Literal["error"]
    id: str | None = Field(description="The id of the refused command, when it had one.")
    code: str
    message: str
    retry_after_ms: int | None = Field(
        default=None, description="With code rate_limited: the milliseconds to wait before sending again."
    )


class ChatFrom(Shape):
    name: str = Field(description="The writer's display name (show it as text).")
    seat: int | None = Field(description="The writer's seat; null for a spectator.")
    guest: bool
    player: str = Field(description="The writer's person key (as table.seats[].player): mute and report by it.")


class Chat(_Message):
    """One chat line, or a quick phrase (``key`` instead of ``text``). Right after the first welcome
    a connection gets the table's last 50 lines it may see, each with ``history: true``. The players
    of a staked match do not get the spectators' lines written while it runs (the table's state when
    the line is written decides), on any of their connections: a socket whose cookies are a seated
    player's (his session, or his browser's device, anonymous or through a watch link) counts as his."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)
    type: Literal["chat"]
    id: str = Field(description="The line's id (unique at the table).")
    from_: ChatFrom = Field(
        alias="from", description="Who wrote it: name, seat (null: a spectator), guest, player key."
    )
    channel: Literal["players", "spectators"]
    at: int = Field(description="When it was written: milliseconds since the Unix epoch.")
    text: str | None = Field(default=None, description="The text (at most 200 characters).")
    key: ChatPhraseKey | None = Field(default=None, description="A quick phrase's key.")
    history: bool | None = Field(default=None, description="True for the lines sent after the welcome.")


class Pong(_Message):
    type: Literal["pong"]
    id: str | None


class Bye(_Message):
    """The server is about to close the connection: ``shutdown`` (close 1012), ``rate_limited``
    (4008), ``signed_out`` (4001)."""

    type: Literal["bye"]
    code: Literal["shutdown", "rate_limited", "signed_out"]
    message: str
    reconnect_after_ms: int | None = Field(
        default=None,
        description="With code shutdown: reconnect after this many milliseconds (the same address: the "
        "stopping server takes no new connections), then hello with last_version and send your "
        "unanswered commands again with the same ids.",
    )


# What the server says besides the client's messages (not in ``ServerMessage``): to the connections
# of other processes, and the answers of the seat commands of the REST API (app/api/schemas.py).


class Rehello(_Message):
    """After a takeover: every connection, on any process, is asked to say ``hello`` again (it never
    reaches a client)."""

    type: Literal["_rehello"]


class SeatAck(_Message):
    """A seat command's answer (REST join and bots: with the seat taken)."""

    type: Literal["ack"]
    id: str | None = None
    seat: int | None = None
    version: int


class StartAck(_Message):
    """The answer to a REST start: the match that started (null: a ready check opened)."""

    type: Literal["ack"]
    id: str | None = None
    version: int
    match_id: str | None


class InfoReply(_Message):
    """The answer to ``info`` (REST and the server's own look at a table): the table facts."""

    type: Literal["info"]
    id: str | None = None
    table: TableInfo
    watch_code: str


ServerMessage = Annotated[
    Welcome | Update | Presence | Ack | Error | Chat | Pong | Bye,
    Field(discriminator="type"),
]
server_message = TypeAdapter(ServerMessage)


# The parts' and events' models are named here too: app/api/protocol.py takes the protocol's models
# from this one module (``_Shape``, ``_Event``: the bases it tells parts and events apart by).
_Shape = Shape
_Event = EventShape

__all__ = [
    "Ack",
    "ActionView",
    "BoutEndEvent",
    "BoutStartEvent",
    "Bye",
    "Card",
    "ChallengeEvent",
    "Chat",
    "ChatFrom",
    "ChatPhraseKey",
    "ClientSeedEvent",
    "CommitmentEvent",
    "Decision",
    "DrawEvent",
    "Error",
    "Event",
    "ExchangeTrumpEvent",
    "FairDeal",
    "ForfeitEvent",
    "InfoReply",
    "MatchEndEvent",
    "MatchStartEvent",
    "MoveEvent",
    "OutEvent",
    "OutcomeView",
    "PassEvent",
    "PlayerView",
    "Pong",
    "Presence",
    "RatingChangeView",
    "RatingsEvent",
    "ReadyCheckEvent",
    "ReadyCheckInfo",
    "ReadyEvent",
    "Rehello",
    "RematchEvent",
    "RematchProposalInfo",
    "Results",
    "ResultsEvent",
    "RulesInfo",
    "Seat",
    "SeatAck",
    "SeatEvent",
    "SeatInfo",
    "SeatRating",
    "ServerMessage",
    "StartAck",
    "TableFairness",
    "TableInfo",
    "TablePair",
    "TakeEvent",
    "TransferredEvent",
    "Update",
    "View",
    "Welcome",
    "_Event",
    "_Shape",
    "dumps",
    "event_adapter",
    "server_message",
]
