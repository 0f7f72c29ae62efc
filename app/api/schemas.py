"""Request and response bodies of the REST routes (accounts, matches, admin, tables).

Every JSON request body derives from ``RequestBody``: strict types, unknown fields refused, text
that is valid Unicode. Response models of the table routes allow extra fields, so that a field the
table adds later is passed on (and should then be declared here).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator
from pydantic.config import JsonDict

from app.api import protocol
from app.db.accounts import NAME_MAX, NAME_MIN, name_problem

PASSWORD_MIN, PASSWORD_MAX = 8, 128
NAME_PATTERN = r"^[A-Za-z0-9_-]+$"
# The rules are enforced by validators (for clear messages) and stated in the schema for clients.
NAME_SCHEMA: JsonDict = {"minLength": NAME_MIN, "maxLength": NAME_MAX, "pattern": NAME_PATTERN}


class RequestBody(BaseModel):
    """The base of every JSON request body.

    Strict types: ``"2"`` is not 2, ``10.0`` is not 10, ``"yes"`` and ``1`` are not true; so ``NaN``,
    ``Infinity`` and ``1e400`` are never a valid value either. Unknown fields are refused. Text must be
    valid Unicode without NUL: a lone surrogate (``"\\ud800"``, which no encoder accepts) or a NUL
    (``"\\u0000"``, which PostgreSQL text refuses) anywhere in a field, lists and objects included,
    is refused before any other check sees it.
    """

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra=lambda schema: _no_nul(schema))

    @field_validator("*", mode="before")
    @classmethod
    def _valid_text(cls, value: Any) -> Any:
        problem = text_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


NO_NUL = "^[^\\u0000]*$"  # what every text field of a body must match (the schema says so)


def _no_nul(schema: dict[str, Any]) -> None:
    """The OpenAPI schema says what ``_valid_text`` refuses: a text field holds no NUL."""
    for field in schema.get("properties", {}).values():
        for option in [field, *field.get("anyOf", [])]:
            if option.get("type") == "string" and "pattern" not in option:
                option["pattern"] = NO_NUL


def text_problem(value: Any) -> str | None:
    """Why ``value`` (a JSON value: text, or lists and objects holding text) cannot be stored, or None."""
    if isinstance(value, str):
        if "\x00" in value:
            return "text must not contain NUL characters (\\u0000)"
        if not is_valid_unicode(value):
            return "text must be valid Unicode (it contains a lone surrogate)"
        return None
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list | tuple):
        return next((problem for item in value if (problem := text_problem(item)) is not None), None)
    return None


def is_valid_unicode(text: str) -> bool:
    """False for text with a lone surrogate, which no UTF-8 encoder (nor the database) accepts."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_name(value: str) -> str:
    problem = name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _check_password(value: str) -> str:
    if not PASSWORD_MIN <= len(value) <= PASSWORD_MAX:
        raise ValueError(f"password must be {PASSWORD_MIN}-{PASSWORD_MAX} characters long")
    return value


class SignupIn(RequestBody):
    name: str = Field(
        description=f"{NAME_MIN}-{NAME_MAX} characters: letters A-Z/a-z, digits, '_' and '-'. "
        "Unique regardless of case.",
        examples=["alice"],
        json_schema_extra=NAME_SCHEMA,
    )
    password: str = Field(
        description=f"{PASSWORD_MIN}-{PASSWORD_MAX} characters.",
        examples=["correct horse"],
        json_schema_extra={"minLength": PASSWORD_MIN, "maxLength": PASSWORD_MAX},
    )

    _name = field_validator("name")(_check_name)

    _password = field_validator("password")(_check_password)


class PasswordChangeIn(RequestBody):
    current_password: str = Field(max_length=PASSWORD_MAX, description="The password you signed in with.")
    new_password: str = Field(
        description=f"{PASSWORD_MIN}-{PASSWORD_MAX} characters.",
        json_schema_extra={"minLength": PASSWORD_MIN, "maxLength": PASSWORD_MAX},
    )

    _new_password = field_validator("new_password")(_check_password)


class PasswordResetIn(RequestBody):
    reason: str = Field(
        min_length=1, max_length=500, description="Why; recorded in the audit trail. Must not be blank."
    )

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("reason must not be blank")
        return value


class PasswordResetOut(BaseModel):
    account_id: int
    name: str
    temporary_password: str = Field(
        description="The account's new password, shown this once: hand it to the player, who signs in with it "
        "and changes it (every session of the account was signed out)."
    )


class LoginIn(RequestBody):
    name: str = Field(max_length=64, examples=["alice"])
    password: str = Field(max_length=PASSWORD_MAX, examples=["correct horse"])


class GuestIn(RequestBody):
    name: str = Field(
        description="Display name, same rules as account names (need not be unique).",
        examples=["visitor"],
        json_schema_extra=NAME_SCHEMA,
    )

    _name = field_validator("name")(_check_name)


class MeOut(BaseModel):
    id: int | None = Field(description="Account id; null for a guest.")
    name: str
    kind: Literal["account", "guest"]
    balance: int | None = Field(description="Coins; null for a guest, who holds none.")
    is_admin: bool

    @computed_field(description="True for a guest (no account): clients badge the name.")  # type: ignore[prop-decorator]
    @property
    def guest(self) -> bool:
        return self.kind == "guest"


class SeatOut(BaseModel):
    seat: int
    account_id: int | None
    guest_name: str | None
    guest: bool = Field(default=False, description="True for a guest (no account): clients badge the name.")
    bot_level: str | None
    display_name: str
    place: int | None = None
    coin_change: int | None = Field(
        default=0, description="Coins won (+) or lost (-); null unless it is the caller's seat (admins see all)."
    )
    rating: int | None = Field(
        default=None, description="The player's rating after this match; null if it was not rated."
    )
    rating_change: int | None = Field(default=None, description="How much this match moved it; null if not rated.")


class MatchSummary(BaseModel):
    id: str
    table_id: str
    created_at: datetime
    finished_at: datetime
    stake: int
    cheating: bool
    draw: bool
    durak: int | None
    aborted: bool = Field(
        default=False,
        description="Stopped without an outcome (its table closed, or its server stopped, mid-match): no durak, "
        "no places, no coins won or lost; its deal is revealed like any other (`result.reason` says why).",
    )
    seats: list[SeatOut]
    rules: dict[str, Any] = Field(description="The table parameters of the match (rule book §1).")


class FairnessOut(BaseModel):
    """A provably fair deal, revealed (docs/fairness.md): recompute ``commitment`` from
    ``server_seed`` and the deck from everything, e.g. ``python -m app.cli verify-deal --file``."""

    algorithm: str = Field(description="`durak-peak/v1`.")
    table: str = Field(description="The table code that went into the commitment and the deal.")
    match_number: int = Field(description="The table's match number (from 1).")
    deck_size: int
    commitment: str = Field(description="SHA-256 hex, sent to the table before any client seed.")
    server_seed: str = Field(description="The server's 256-bit secret, hex; revealed when the match ended.")
    client_seeds: list[str] = Field(
        description="Each seat's seed in seat order, hex; empty for bots and silent players."
    )
    deck: list[str] = Field(description="The dealt deck, first card dealt first.")


class MatchDetail(MatchSummary):
    dealer: int
    result: dict[str, Any]
    coin_changes: dict[str, int] = Field(description="Seat -> coins won or lost: the caller's seat only (admins: all).")
    actions: int = Field(description="Number of actions in the log; the replay shows them.")
    fairness: FairnessOut | None = Field(
        default=None, description="The revealed deal; null for matches dealt before provably fair deals."
    )


class MatchPage(BaseModel):
    items: list[MatchSummary]
    page: int
    page_size: int
    total: int


class AccountOut(BaseModel):
    id: int
    name: str
    role: Literal["player", "admin"]
    balance: int | None
    created_at: datetime
    frozen: str | None = None  # staked play frozen by an admin: the reason (docs/integrity.md)


class AccountPage(BaseModel):
    items: list[AccountOut]
    page: int
    page_size: int
    total: int


class LedgerEntryOut(BaseModel):
    entry_id: int
    transfer_id: int
    key: str
    reason: str
    memo: str | None
    amount: int = Field(description="Coins added to the account (negative: taken).")
    balance_after: int
    match_id: str | None
    actor_id: int | None
    created_at: datetime


class LedgerPage(BaseModel):
    account_id: int
    balance: int
    items: list[LedgerEntryOut]
    page: int
    page_size: int
    total: int


MAX_ADJUST = 1_000_000_000


class AdjustIn(RequestBody):
    amount: int = Field(
        ge=-MAX_ADJUST,
        le=MAX_ADJUST,
        description="Coins to add (positive) or take away (negative); not 0.",
        json_schema_extra={"not": {"const": 0}},
    )
    reason: str = Field(
        min_length=1,
        max_length=500,
        description="Why; recorded in the audit trail. Must not be blank.",
        json_schema_extra={"pattern": r"^[^\x00]*[^\s\x00][^\x00]*$"},
    )

    @field_validator("amount")
    @classmethod
    def _non_zero(cls, value: int) -> int:
        if value == 0:
            raise ValueError("amount must not be zero")
        return value

    @field_validator("reason")
    @classmethod
    def _reason(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("reason must not be blank")
        return value


class AdjustOut(BaseModel):
    transfer_id: int
    account_id: int
    admin_id: int | None
    amount: int
    reason: str
    balance: int
    created_at: datetime
    replayed: bool = Field(description="True when this Idempotency-Key had already been applied.")


# --- tables -----------------------------------------------------------------------------------------


class RulesOut(BaseModel):
    """The table parameters of a match (rule book §1)."""

    model_config = ConfigDict(extra="allow")
    deck: int = Field(description="24, 36 or 52 cards.")
    seats: int
    circle: str = Field(description="Who may throw in: `neighbours` of the defender, or `all`.")
    transfer: bool
    draws: bool
    timer: int = Field(description="Seconds per decision; 0 = no move timer.")
    stake: int = Field(description="Coins each player stakes; 0 = a free table.")
    cheating: bool
    preset: str = Field(description="`durak_peak`, `classic36` or `durac1993` (GET /api/presets).")


class TableOut(protocol.TableInfo):
    """A table: its seats, status and rules. The same object as ``table`` in the websocket messages
    (one model, ``protocol.TableInfo``, documented field by field in docs/protocol.md)."""


class TableWithLinks(TableOut):
    """GET /api/tables/{code}: the table, and whether the code was a spectator link."""

    watch_only: bool = Field(description="True when the code in the path is a spectator link.")
    watch_code: str | None = Field(
        default=None, description="The spectator link's code; only for those who hold the invite code."
    )


class TableCreated(BaseModel):
    code: str = Field(description="The invite code: `/t/<code>` seats whoever opens it.")
    watch_code: str = Field(description="The spectator code: `/w/<watch_code>` only lets one watch.")
    invite_url: str
    watch_url: str
    table: TableOut


class LobbySeat(BaseModel):
    seat: int
    kind: Literal["empty", "human", "bot"]
    name: str | None = Field(description="The player's or bot's display name; null for an empty seat.")
    level: str | None = Field(description="A bot's level; null otherwise.")
    guest: bool = Field(default=False, description="The seated person is a guest (clients show a badge).")
    rating: protocol.SeatRating | None = Field(default=None, description="An account's rating when it sat down.")


class LobbyRow(BaseModel):
    """A table as the lobby shows it (also the `data` of the feed's `added` and `changed` events)."""

    code: str
    name: str
    status: Literal["waiting", "playing"]
    rules: dict[str, Any]
    seats: list[LobbySeat]
    free_seats: int
    spectators: int
    created: float = Field(description="When the table was opened (Unix time, seconds).")


class MyTable(LobbyRow):
    """One of your tables (GET /api/me/tables): its lobby row, plus what is yours in it."""

    private: bool = Field(description="Not listed in the lobby (only its links lead there).")
    creator: bool = Field(description="You opened it (you may close it while it waits).")
    seat: int | None = Field(description="Your seat; null when you opened it but do not sit there.")


class MyTables(BaseModel):
    tables: list[MyTable]
    waiting_limit: int = Field(
        description="How many tables waiting for players you may have open (`DURAK_MAX_WAITING_TABLES_PER_ACCOUNT`)."
    )


class LobbyPage(BaseModel):
    """One page of the lobby: ``total`` tables match the filters, ``tables`` are those from
    ``offset`` on (at most ``limit``), newest first."""

    tables: list[LobbyRow]
    total: int
    offset: int
    limit: int


class TableAck(BaseModel):
    """A table command was applied; the websocket `update` with this `version` shows its effect."""

    model_config = ConfigDict(extra="allow")
    type: Literal["ack"]
    version: int = Field(description="The table's version after the change.")


class SeatAck(TableAck):
    seat: int = Field(description="The seat taken (by you, or by the bot).")


class StartAck(TableAck):
    match_id: str | None = Field(description="The match that started.")


class Preset(BaseModel):
    name: str = Field(description="The value for `preset` in POST /api/tables.")
    label: str


# --- replays ----------------------------------------------------------------------------------------


class ReplayPlayer(BaseModel):
    model_config = ConfigDict(extra="allow")
    seat: int
    cards: int = Field(description="Cards in hand.")
    out: bool
    place: int | None
    role: str | None = Field(description="`attacker`, `defender`, `thrower` or null.")
    passed: bool


class ReplayPair(BaseModel):
    attack: str
    cover: str | None


class RevealedHands(BaseModel):
    dealt: list[list[str]] = Field(description="Every hand as dealt, by seat.")
    final: list[list[str]] = Field(description="Every hand as left at the end, by seat.")


class ReplayDecision(BaseModel):
    model_config = ConfigDict(extra="allow")
    kind: str = Field(description="`lead`, `defend`, `throw_in`, `throw_in_after_take` or `none`.")
    seats: list[int] = Field(description="The seats the game waits for.")
    forfeits: bool = Field(description="Whether running out of time forfeits the match (§8).")


class ReplayView(BaseModel):
    """A spectator's view of the match after the deal and after each action: the websocket's `view`
    without a hand and legal actions (docs/protocol.md)."""

    model_config = ConfigDict(extra="allow")
    phase: str = Field(description="`lead`, `bout` or `over`.")
    ply: int = Field(description="Actions applied so far.")
    seat: int | None = Field(description="Always null: a spectator's view.")
    rules: RulesOut
    dealer: int
    trump: str = Field(description="The trump suit: `c`, `d`, `h` or `s`.")
    trump_card: str
    trump_card_in_stock: bool
    stock: int = Field(description="Cards left in the stock.")
    discard: int = Field(description="Cards in the discard pile.")
    players: list[ReplayPlayer]
    table: list[ReplayPair] = Field(description="The bout's attack cards and their covers.")
    attacker: int | None
    defender: int | None
    taking: bool = Field(description="The defender has said he takes; attackers may still throw in.")
    cap: int = Field(description="The most attack cards this bout may hold.")
    allowance: int = Field(description="Attack cards that may still be added to this bout.")
    decision: ReplayDecision
    moves: list[dict[str, Any]] = Field(description="The card moves of the current bout (as actions).")
    order: list[int] = Field(description="Seats in the order they went out.")
    exchange_open: bool = Field(description="Durac 1993: the trump exchange is still possible.")
    outcome: dict[str, Any] | None = Field(description="How the match ended (as in the table's `results`).")
    revealed_hands: RevealedHands | None = Field(
        default=None, description="Only on the last view: the hands as dealt and as left at the end."
    )
    hands: list[list[str]] | None = Field(
        default=None,
        description="Every seat's hand at this step, face up (the match is over); `hands[i]` is seat i's.",
    )


class ReportIn(RequestBody):
    """POST /api/tables/{code}/report: report a player at the table (the table's recent chat lines
    are kept with the report)."""

    player: str = Field(min_length=1, max_length=64, description="The reported person's key (chat from.player).")
    reason: str = Field(min_length=1, max_length=500, description="Why, in the reporter's words.")


class ReportCreated(BaseModel):
    id: int


class ReportPerson(BaseModel):
    key: str
    name: str


class ReportOut(BaseModel):
    id: int
    table_code: str
    match_id: str | None = Field(description="The table's current or last match when reported: /api/matches/{id}.")
    reporter: ReportPerson
    reported: ReportPerson
    reason: str
    lines: list[dict[str, Any]] = Field(description="The table's last chat lines (as chat messages), oldest first.")
    created_at: datetime


class ReportPage(BaseModel):
    items: list[ReportOut]
    page: int
    page_size: int
    total: int
