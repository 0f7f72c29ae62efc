"""The websocket protocol: every message is a pydantic model in a union keyed on ``type``.

``docs/protocol.md`` is generated from these models (``python -m app.api.protocol_docs``) and a test
checks that it is current, so the document cannot drift from the code.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

CardText = Annotated[str, Field(pattern=r"^(10|[2-9JQKAjqka])[cdhsCDHS]$", examples=["10h"])]
CommandId = Annotated[str, Field(min_length=1, max_length=64, description="Client-chosen; echoed in the ack/error.")]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: CommandId
    version: int | None = Field(
        default=None,
        description="The table version the client acted on; a stale illegal command is "
        "refused with code stale_version.",
    )


class Hello(BaseModel):
    """First message after connecting; ``last_version`` resumes from a version already seen."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["hello"]
    last_version: int | None = None


class LeadCmd(_Command):
    """The main attacker opens the bout (several cards of a rank only under Durac 1993)."""

    type: Literal["lead"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")


class ThrowInCmd(_Command):
    type: Literal["throw_in"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")


class CoverCmd(_Command):
    type: Literal["cover"]
    attack: int = Field(ge=0, le=51, description="Index of the attack card in view.table.")
    card: CardText = Field(description="The covering card, e.g. 9h.")


class TransferCmd(_Command):
    type: Literal["transfer"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")


class TakeCmd(_Command):
    type: Literal["take"]


class PassCmd(_Command):
    """An attacker has nothing (more) to add: "bito" when all is covered."""

    type: Literal["pass"]


class ChallengeCmd(_Command):
    """Cheating tables: claim that move number ``move`` of the current bout broke a rule."""

    type: Literal["challenge"]
    move: int = Field(ge=0, le=255, description="Index of the move in view.moves.")


class ExchangeTrumpCmd(_Command):
    """Durac 1993: swap the lowest trump for the turned card before the first attack."""

    type: Literal["exchange_trump"]


class LeaveCmd(_Command):
    """Leave the seat; during a match this forfeits it (§8)."""

    type: Literal["leave"]


class RematchCmd(_Command):
    """After a match: propose a rematch, or agree to the one proposed. It starts when every seat is
    taken by a player who agreed (bots agree by themselves; sitting down in a free seat is agreeing),
    and only then are the stakes taken. ``table.rematch`` shows who agreed and the time left; whoever
    has not agreed when it runs out (60 s) gives up his seat, and the table waits for players again.
    To decline, ``leave``."""

    type: Literal["rematch"]


class ClientSeedCmd(_Command):
    """A seated player's own randomness for the next deal (docs/fairness.md): 128 bits made in the
    browser (``crypto.getRandomValues``), sent only after the table's commitment and naming it.
    Accepted between matches only (refused with ``match_running`` during one, ``stale_commitment``
    when it names another commitment); sending again replaces it. The deal reveals every seed when
    the match ends."""

    type: Literal["client_seed"]
    seed: str = Field(pattern=r"^[0-9a-fA-F]{32}$", description="32 hex digits (128 bits).")
    commitment: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="The table's current commitment (`table.fairness.commitment`)."
    )


class Ping(BaseModel):
    model_config = ConfigDict(extra="forbid")
    type: Literal["ping"]
    id: str | None = Field(default=None, max_length=64)


ClientMessage = Annotated[
    Hello
    | LeadCmd
    | ThrowInCmd
    | CoverCmd
    | TransferCmd
    | TakeCmd
    | PassCmd
    | ChallengeCmd
    | ExchangeTrumpCmd
    | LeaveCmd
    | RematchCmd
    | ClientSeedCmd
    | Ping,
    Field(discriminator="type"),
]
client_message = TypeAdapter(ClientMessage)
PLAY_COMMANDS = ("lead", "throw_in", "cover", "transfer", "take", "pass", "challenge", "exchange_trump")


class Welcome(BaseModel):
    """The answer to ``hello``: a full snapshot, plus the missed events when resuming. Also sent
    unasked to a player's connections when it leaves its seat: from then on they watch."""

    type: Literal["welcome"]
    version: int
    seat: int | None = Field(description="Your seat, or null when you are watching.")
    view: dict[str, Any] | None = Field(description="The engine view for your seat (null before a match).")
    table: dict[str, Any]
    events: list[dict[str, Any]] | None = None
    resumed_from: int | None = None


class Update(BaseModel):
    """Pushed after every change: the events since the previous version and the new view."""

    type: Literal["update"]
    version: int
    seat: int | None
    events: list[dict[str, Any]]
    view: dict[str, Any] | None
    table: dict[str, Any]


class Ack(BaseModel):
    type: Literal["ack"]
    id: str | None
    version: int
    duplicate: bool | None = Field(default=None, description="True when this id was already applied.")


class Error(BaseModel):
    """A refused message. ``code`` is stable (see the table below); ``message`` is for people."""

    type: Literal["error"]
    id: str | None
    code: str
    message: str


class Pong(BaseModel):
    type: Literal["pong"]
    id: str | None


class Bye(BaseModel):
    """The server is about to close the connection (shutdown, rate limit, signed out)."""

    type: Literal["bye"]
    code: str
    message: str


ServerMessage = Annotated[Welcome | Update | Ack | Error | Pong | Bye, Field(discriminator="type")]
server_message = TypeAdapter(ServerMessage)

ERROR_CODES: dict[str, str] = {
    "bad_json": "The frame is not valid JSON.",
    "bad_message": "Valid JSON, but not a valid message (wrong fields or field types).",
    "unknown_type": "The message type is not one of the documented types.",
    "not_seated": "You have no seat at this table (spectators cannot play).",
    "not_your_turn": "The action is not yours to make now.",
    "card_not_in_hand": "You do not hold that card.",
    "does_not_beat": "That card does not beat the attack.",
    "rank_not_on_table": "That rank is not on the table.",
    "limit_exceeded": "The bout's attack limit would be exceeded.",
    "transfer_not_allowed": "A transfer is not possible now.",
    "bad_play": "The play has the wrong shape (card count, group, index).",
    "not_allowed_here": "The table's parameters do not offer this action.",
    "illegal_action": "The rules do not allow this action.",
    "match_over": "The match is over.",
    "match_not_running": "There is no match running.",
    "stale_version": "Your view was out of date and the action is not legal any more.",
    "stale_commitment": "The client seed names a commitment that is not the table's current one.",
    "rate_limited": "Too many messages; the connection is closed (close code 4008).",
    "timeout": "The table did not answer in time.",
    "unavailable": "The table is unreachable right now (server restarting or broker down).",
}

CLOSE_CODES: dict[int, str] = {
    1000: "Normal close.",
    1009: "Frame larger than 64 KiB.",
    1012: "Server restarting: reconnect.",
    4004: "No table with that code.",
    4008: "Rate limit exceeded (more than 20 commands in a burst, 10/s sustained).",
}

EXAMPLES: list[BaseModel] = [
    Hello(type="hello", last_version=41),
    LeadCmd(type="lead", id="c1", version=42, cards=["7h"]),
    ThrowInCmd(type="throw_in", id="c2", version=43, cards=["7s"]),
    CoverCmd(type="cover", id="c3", version=43, attack=0, card="9h"),
    TransferCmd(type="transfer", id="c4", version=42, cards=["7d"]),
    TakeCmd(type="take", id="c5", version=44),
    PassCmd(type="pass", id="c6", version=45),
    ChallengeCmd(type="challenge", id="c7", version=46, move=1),
    ExchangeTrumpCmd(type="exchange_trump", id="c8", version=2),
    LeaveCmd(type="leave", id="c9"),
    RematchCmd(type="rematch", id="c10"),
    ClientSeedCmd(
        type="client_seed",
        id="c11",
        seed="00112233445566778899aabbccddeeff",
        commitment="a9babd21d05c3a31290c122008237a1db7781f673874966d7ccae30e7b79ca48",
    ),
    Ping(type="ping", id="p1"),
    Welcome(
        type="welcome",
        version=42,
        seat=0,
        view={"phase": "lead", "hand": ["6h", "7h", "Qs", "As", "8d", "Kd"], "stock": 24, "trump_card": "9d"},
        table={"code": "Xy…", "status": "playing", "spectators": 1, "deadline_ms": 29000},
    ),
    Update(
        type="update",
        version=43,
        seat=1,
        events=[{"type": "move", "seat": 0, "action": {"type": "lead", "seat": 0, "cards": ["7h"]}, "version": 43}],
        view={"phase": "bout", "table": [{"attack": "7h", "cover": None}], "allowance": 4},
        table={"status": "playing", "deadline_ms": 30000},
    ),
    Ack(type="ack", id="c3", version=44),
    Error(
        type="error",
        id="c3",
        code="does_not_beat",
        message="cover attack #0 with 8s by seat 1 refused: 8s does not beat 7h",
    ),
    Pong(type="pong", id="p1"),
    Bye(type="bye", code="shutdown", message="server restarting, reconnect in a moment"),
]
