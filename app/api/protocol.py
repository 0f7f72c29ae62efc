"""The websocket protocol: every message is a pydantic model in a union keyed on ``type``. The
client's messages are defined here; the server's live with the tables, which send them, and are
re-exported here (``__all__`` names the whole protocol), with the error and close codes.

``docs/protocol.md`` is generated from these models and the examples of
``app/api/protocol_examples.py`` (``python -m app.api.protocol_docs``) and a test checks that it is
current, so the document cannot drift from the code.
"""

from __future__ import annotations

import typing
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from app.engine import Card as EngineCard
from app.tables import commands as tc
from app.tables.commands import PLAY_COMMANDS

# The server's messages (each model writes its message) live with the tables, which send them; they
# are re-exported here, so this module names the whole protocol.
from app.tables.messages import (
    Ack,
    ActionView,
    BoutEndEvent,
    BoutStartEvent,
    Bye,
    Card,
    ChallengeEvent,
    Chat,
    ChatFrom,
    ChatPhraseKey,
    ClientSeedEvent,
    CommitmentEvent,
    Decision,
    DrawEvent,
    Error,
    Event,
    ExchangeTrumpEvent,
    FairDeal,
    ForfeitEvent,
    MatchEndEvent,
    MatchStartEvent,
    MoveEvent,
    OutcomeView,
    OutEvent,
    PassEvent,
    PlayerView,
    Pong,
    Presence,
    RatingChangeView,
    RatingsEvent,
    ReadyCheckEvent,
    ReadyCheckInfo,
    ReadyEvent,
    RematchEvent,
    RematchProposalInfo,
    Results,
    ResultsEvent,
    RulesInfo,
    Seat,
    SeatEvent,
    SeatInfo,
    SeatRating,
    ServerMessage,
    TableFairness,
    TableInfo,
    TablePair,
    TakeEvent,
    TransferredEvent,
    Update,
    View,
    Welcome,
    _Event,
    _Shape,
    event_adapter,
    server_message,
)

MAX_VERSION = 2**53 - 1  # the largest integer every JSON client reads exactly
Version = Annotated[int, Field(ge=0, le=MAX_VERSION)]
CardText = Annotated[str, Field(pattern=r"^(10|[2-9JQKAjqka])[cdhsCDHS]$", examples=["10h"])]
CommandId = Annotated[str, Field(min_length=1, max_length=64, description="Client-chosen; echoed in the ack/error.")]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: CommandId
    version: Version | None = Field(
        default=None,
        description="The table version the client acted on; a stale illegal command is "
        "refused with code stale_version.",
    )


class Hello(BaseModel):
    """Required: the first message after connecting, answered by ``welcome``; until then the
    connection receives no ``update`` or ``presence``. ``last_version`` resumes from a version
    already seen. Send it again at any time for a fresh snapshot."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["hello"]
    last_version: int | None = Field(
        default=None,
        ge=-MAX_VERSION,
        le=MAX_VERSION,
        description="The last version you saw (negative: none). When the table still has the events "
        "after it they come along; a version the table never had (beyond its own) or too old to "
        "replay gets the snapshot alone, without resumed_from.",
    )

    def to_body(self) -> tc.Hello:
        return tc.Hello(self.last_version)


class LeadCmd(_Command):
    """The main attacker opens the bout (several cards of a rank only under Durac 1993)."""

    type: Literal["lead"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")

    def to_body(self) -> tc.LeadMove:
        """The table's command: parsed once, here."""
        return tc.LeadMove(tuple(EngineCard.parse(card) for card in self.cards))


class ThrowInCmd(_Command):
    type: Literal["throw_in"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")

    def to_body(self) -> tc.ThrowInMove:
        """The table's command: parsed once, here."""
        return tc.ThrowInMove(tuple(EngineCard.parse(card) for card in self.cards))


class CoverCmd(_Command):
    type: Literal["cover"]
    attack: int = Field(ge=0, le=51, description="Index of the attack card in view.table.")
    card: CardText = Field(description="The covering card, e.g. 9h.")

    def to_body(self) -> tc.CoverMove:
        return tc.CoverMove(self.attack, EngineCard.parse(self.card))


class TransferCmd(_Command):
    type: Literal["transfer"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")

    def to_body(self) -> tc.TransferMove:
        """The table's command: parsed once, here."""
        return tc.TransferMove(tuple(EngineCard.parse(card) for card in self.cards))


class TakeCmd(_Command):
    type: Literal["take"]

    def to_body(self) -> tc.TakeMove:
        return tc.TakeMove()


class PassCmd(_Command):
    """An attacker has nothing (more) to add: "bito" when all is covered."""

    type: Literal["pass"]

    def to_body(self) -> tc.PassMove:
        return tc.PassMove()


class ChallengeCmd(_Command):
    """Cheating tables: claim that move number ``move`` of the current bout broke a rule."""

    type: Literal["challenge"]
    move: int = Field(ge=0, le=255, description="Index of the move in view.moves.")

    def to_body(self) -> tc.ChallengeMove:
        return tc.ChallengeMove(self.move)


class ExchangeTrumpCmd(_Command):
    """Durac 1993: swap the lowest trump for the turned card before the first attack."""

    type: Literal["exchange_trump"]

    def to_body(self) -> tc.ExchangeTrumpMove:
        return tc.ExchangeTrumpMove()


class LeaveCmd(_Command):
    """Leave the seat; during a match this forfeits it (§8)."""

    type: Literal["leave"]

    def to_body(self) -> tc.Leave:
        return tc.Leave()


class RematchCmd(_Command):
    """After a match: propose a rematch, or agree to the one proposed. It starts when every seat is
    taken by a player who agreed (bots agree by themselves; sitting down in a free seat is agreeing),
    and only then are the stakes taken. ``table.rematch`` shows who agreed and the time left; whoever
    has not agreed when it runs out (60 s) gives up his seat, and the table waits for players again.
    To decline, ``leave``."""

    type: Literal["rematch"]

    def to_body(self) -> tc.Rematch:
        return tc.Rematch()


class ReadyCmd(_Command):
    """Before a staked match: confirm you are ready while ``table.ready_check`` is open (see Ready
    check). The match starts, and the stakes are taken, once every human seated is connected and has
    confirmed. Refused with ``no_ready_check`` when none is open."""

    type: Literal["ready"]

    def to_body(self) -> tc.Ready:
        return tc.Ready()


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

    def to_body(self) -> tc.ClientSeed:
        return tc.ClientSeed(self.seed, self.commitment)


class ChatCmd(BaseModel):
    """Say something at the table (plain text, shown as text). Seated players write in the players'
    chat, everyone else in the spectators' chat. At most 5 chat messages per 10 s per player (error
    chat_rate_limited with retry_after_ms); refused with chat_off where the creator turned chat off.
    Answered by an ack; the line itself comes back as a ``chat`` message like everyone else's."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["chat"]
    id: CommandId
    text: str = Field(min_length=1, max_length=200, description="At most 200 characters.")


class ChatPhraseCmd(BaseModel):
    """Send a quick phrase by its key; each client shows it in its own language. Limits as chat."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["chat_phrase"]
    id: CommandId
    key: ChatPhraseKey


class Ping(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["ping"]
    id: str | None = Field(default=None, max_length=64)


# The messages that are a table's command (each makes its body with ``to_body``).
CommandMessage = (
    LeadCmd
    | ThrowInCmd
    | CoverCmd
    | TransferCmd
    | TakeCmd
    | PassCmd
    | ChallengeCmd
    | ExchangeTrumpCmd
    | LeaveCmd
    | RematchCmd
    | ReadyCmd
    | ClientSeedCmd
)
ClientMessage = Annotated[Hello | CommandMessage | ChatCmd | ChatPhraseCmd | Ping, Field(discriminator="type")]
client_message = TypeAdapter(ClientMessage)
CLIENT_TYPES = frozenset(
    typing.get_args(model.model_fields["type"].annotation)[0]
    for model in typing.get_args(typing.get_args(ClientMessage)[0])
)
# The one list of play commands is the tables layer's (each becomes an engine action there).
PLAY_MODELS = {
    typing.get_args(model.model_fields["type"].annotation)[0]: model
    for model in (LeadCmd, ThrowInCmd, CoverCmd, TransferCmd, TakeCmd, PassCmd, ChallengeCmd, ExchangeTrumpCmd)
}
assert tuple(PLAY_MODELS) == PLAY_COMMANDS, "app/tables/commands.py PLAY_COMMANDS and these models differ"


# Every error code the server gives: on the socket (``error.code``) and, for the seat commands of
# the REST API (join, leave, bots, start, rematch), in the HTTP error's detail ("code: message").
# tests/api/test_protocol_docs.py derives the codes the code base can produce and fails when one
# is missing here (or listed here but produced nowhere).
ERROR_CODES: dict[str, str] = {
    # the frame itself
    "bad_json": "The frame is not valid JSON.",
    "bad_message": "Valid JSON, but not a message: not an object, no type, a missing or mistyped field, "
    "a version out of range.",
    "unknown_type": "The message type is not one of the documented types.",
    "rate_limited": "Too many messages: wait retry_after_ms, then send again. Still over the limit after "
    "10 s of refusals: bye and close code 4008.",
    # the command
    "not_seated": "You have no seat at this table (spectators cannot play).",
    "match_not_running": "There is no match running.",
    "match_running": "Not while a match runs (leave: you are out already and may leave when it ends).",
    "stale_version": "Your view was out of date and the action is not legal any more.",
    "chat_rate_limited": "Too many chat messages (5 per 10 s): wait retry_after_ms.",
    "chat_off": "The creator turned chat off at this table.",
    "chat_empty": "The chat message has no visible text.",
    "chat_forbidden": "Anonymous spectators cannot chat: sign in or play as a guest.",
    "unavailable": "The table is unreachable right now (broker or storage down), or no server answered for it "
    "within 20 s (its server restarting): try again, with the same id. A command relayed to the table's server "
    "as the broker went down may have been applied (its ack lost): the same id is then answered from the "
    "record, never applied twice.",
    "moved": "Nothing happened: the table is now served by another server process, or being handed to one (its "
    "server is stopping): send it again (same id), or reconnect.",
    # the rules (the engine's refusals; the message names the reason)
    "not_your_turn": "The action is not yours to make now (or not now at all: e.g. nothing has been led).",
    "card_not_in_hand": "You do not hold that card.",
    "does_not_beat": "That card does not beat the attack.",
    "rank_not_on_table": "That rank is not on the table.",
    "limit_exceeded": "The bout's attack limit would be exceeded.",
    "transfer_not_allowed": "A transfer is not possible now.",
    "bad_play": "The play has the wrong shape (card count, group, index).",
    "not_allowed_here": "The table's parameters do not offer this action.",
    "illegal_action": "The rules do not allow this action.",
    "match_over": "The match is over.",
    # seat commands (REST)
    "already_seated": "REST join: you already have a seat at this table.",
    "seat_taken": "REST join / bots: that seat is taken.",
    "table_full": "REST join / bots: every seat is taken.",
    "bad_seat": "REST join / bots: there is no such seat (or no bot in it).",
    "guests_free_tables_only": "REST join: guests sit only at free tables.",
    "insufficient_funds": "A staked match cannot start: a player's balance is below the stake.",
    "not_creator": "REST bots / start: only the table's creator may do that.",
    "bad_level": "REST bots: unknown bot level.",
    "bots_free_tables_only": "REST bots: bots sit only at free tables.",
    "not_enough_players": "REST start: a match needs at least 2 seated players.",
    "bad_rules": "REST start: the table's rules do not fit the seated players.",
    "no_match": "REST rematch: there is no finished match to rematch.",
    "no_ready_check": "ready: no ready check is open (the match is not about to start, or has started).",
    "not_connected": "ready: you have no connection to the table; open it, then confirm.",
    "stale_commitment": "client_seed / REST join: the client seed names a commitment that is not the table's "
    "current one.",
    # integrity (docs/integrity.md)
    "related_accounts": "REST join / quick play / a staked match's start: related accounts (one device, or "
    "signed up from one address within 24 h) may play each other at free tables only.",
    "pair_cap": "REST join / quick play / a staked match's start: the two accounts have moved the daily cap of "
    "coins between them (`DURAK_PAIR_DAILY_COIN_CAP`); staked tables between them open again at 00:00 UTC.",
    "staked_play_frozen": "REST join / quick play / a staked match's start: an admin froze this account's staked "
    "play; the message gives the reason.",
    "new_account": "REST join / quick play / a staked match's start: the account has not yet played the matches that "
    "count which an account plays before it plays for coins (`DURAK_NEW_ACCOUNT_MATCHES`); free tables are open.",
}

CLOSE_CODES: dict[int, str] = {
    1000: "Normal close.",
    1008: "Handshake refused (HTTP 403): Origin not allowed, or a forged, expired or logged-out cookie.",
    1009: "Frame larger than 64 KiB.",
    1012: "Server restarting: reconnect (after bye shutdown).",
    1013: "Try again later: the table store does not answer, so whether the table exists cannot be told now; "
    "reconnect with backoff.",
    4001: "The session was signed out (after bye signed_out): sign in again.",
    4004: "No table with that code.",
    4008: "Rate limit abused: still over the limit after 10 s of rate_limited refusals (after bye rate_limited).",
    4010: "The table was closed (idle, finished and left, or a match of bots nobody watched); "
    "its finished matches are in the match history.",
    4029: "Too many table connections from this IP address, or IPv6 /64 (`DURAK_MAX_TABLE_SOCKETS_PER_IP`).",
}

__all__ = [
    "CLIENT_TYPES",
    "CLOSE_CODES",
    "ERROR_CODES",
    "MAX_VERSION",
    "PLAY_MODELS",
    "Ack",
    "ActionView",
    "BoutEndEvent",
    "BoutStartEvent",
    "Bye",
    "Card",
    "CardText",
    "ChallengeCmd",
    "ChallengeEvent",
    "Chat",
    "ChatCmd",
    "ChatFrom",
    "ChatPhraseCmd",
    "ChatPhraseKey",
    "ClientMessage",
    "ClientSeedCmd",
    "ClientSeedEvent",
    "CommandId",
    "CommandMessage",
    "CommitmentEvent",
    "CoverCmd",
    "Decision",
    "DrawEvent",
    "Error",
    "Event",
    "ExchangeTrumpCmd",
    "ExchangeTrumpEvent",
    "FairDeal",
    "ForfeitEvent",
    "Hello",
    "LeadCmd",
    "LeaveCmd",
    "MatchEndEvent",
    "MatchStartEvent",
    "MoveEvent",
    "OutEvent",
    "OutcomeView",
    "PassCmd",
    "PassEvent",
    "Ping",
    "PlayerView",
    "Pong",
    "Presence",
    "RatingChangeView",
    "RatingsEvent",
    "ReadyCheckEvent",
    "ReadyCheckInfo",
    "ReadyCmd",
    "ReadyEvent",
    "RematchCmd",
    "RematchEvent",
    "RematchProposalInfo",
    "Results",
    "ResultsEvent",
    "RulesInfo",
    "Seat",
    "SeatEvent",
    "SeatInfo",
    "SeatRating",
    "ServerMessage",
    "TableFairness",
    "TableInfo",
    "TablePair",
    "TakeCmd",
    "TakeEvent",
    "ThrowInCmd",
    "TransferCmd",
    "TransferredEvent",
    "Update",
    "Version",
    "View",
    "Welcome",
    "_Command",
    "_Event",
    "_Shape",
    "client_message",
    "event_adapter",
    "server_message",
]
