"""What a table is before and between matches: its parameters, seats and who sits where."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal, NotRequired, TypedDict

from app.config import DecisionLimits as DecisionLimits  # the settings group (DURAK_IDLE_LIMIT_S, ...)
from app.engine import Rules, RulesJson

SeatKind = Literal["empty", "human", "bot"]
BOT_LEVELS = ("easy", "normal", "hard")


def table_ref(code: str) -> str:
    """The opaque id match history stores for the table with invite code ``code``: a hash of the
    128-bit random code, so it cannot be turned back into the code (migration 0003 has a copy)."""
    return "t-" + hashlib.sha256(f"durak-table:{code}".encode()).hexdigest()[:32]


class AbortReason(StrEnum):
    """Why a match ended without an outcome (its record's ``result.reason``)."""

    TABLE_CLOSED = "table_closed"  # its table was closed mid-match (a match of bots only nobody watched...)
    SERVER_RESTART = "server_restart"  # its server stopped mid-match and the match could not go on


class TableStatus(StrEnum):
    """Where a table is: seats filling, a match running, the last match over (until a rematch)."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


class DeadlineKind(StrEnum):
    """Why a seat's decision is due when it is (``table.seats[].deadline_kind``, §8)."""

    TIMER = "timer"  # the move timer
    IDLE = "idle"  # a connected player's idle limit
    GRACE = "grace"  # the disconnect grace of a player who is not connected


def new_code() -> str:
    """An unguessable code: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


class PrincipalJson(TypedDict):
    key: str
    name: str
    account_id: int | None
    is_admin: NotRequired[bool]


class SeatRating(TypedDict):
    """An account's rating when it sat down, as its seat shows it."""

    rating: int
    provisional: NotRequired[bool]  # still few matches (the database always says)


class PublicSeat(TypedDict):
    """A seat in the table facts (``table.seats``)."""

    seat: int
    kind: SeatKind
    name: str | None
    level: str | None
    player: str | None  # the principal's key
    guest: bool
    connected: bool
    rating: SeatRating | None
    deadline_ms: NotRequired[int | None]  # the table facts add when its decision is due...
    deadline_kind: NotRequired[DeadlineKind | None]  # ... and why


class TableSpecJson(TypedDict):
    rules: RulesJson
    creator: PrincipalJson
    name: NotRequired[str]
    private: NotRequired[bool]
    chat: NotRequired[bool]
    bot_delay_ms: NotRequired[int]
    deal_on_seed: NotRequired[bool]
    code: str
    watch_code: str


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is behind a connection or request: an account, a guest, or an anonymous spectator."""

    key: str  # "a:<account id>", "g:<guest id>", "anon:<random>"
    name: str
    account_id: int | None = None
    is_admin: bool = False

    @property
    def is_guest(self) -> bool:
        return self.account_id is None

    def to_json(self) -> PrincipalJson:
        return {"key": self.key, "name": self.name, "account_id": self.account_id, "is_admin": self.is_admin}

    @classmethod
    def from_json(cls, data: PrincipalJson) -> Principal:
        return cls(str(data["key"]), str(data["name"]), data.get("account_id"), bool(data.get("is_admin", False)))


@dataclass(slots=True)
class Seat:
    seat: int
    kind: SeatKind = "empty"
    principal: Principal | None = None
    level: str | None = None  # bot level
    connections: set[str] = field(default_factory=set)
    rating: SeatRating | None = None  # an account's rating when it sat down

    @property
    def name(self) -> str | None:
        if self.kind == "bot":
            return f"Bot ({self.level})"
        return self.principal.name if self.principal else None

    def public(self) -> PublicSeat:
        return {
            "seat": self.seat,
            "kind": self.kind,
            "name": self.name,
            "level": self.level,
            "player": self.principal.key if self.principal else None,
            "guest": self.principal is not None and self.principal.is_guest,  # clients badge guests
            "connected": self.kind == "bot" or bool(self.connections),
            "rating": self.rating,
        }


@dataclass(slots=True)
class RematchProposal:
    """A rematch someone asked for after a match (RULES §8): it starts when every seat is taken by
    a player who agreed (bots agree by themselves); at ``deadline`` the seats of those who have not
    agreed are freed and the table reopens."""

    deadline: float  # on the actor's clock
    agreed: set[int] = field(default_factory=set)  # seat numbers


@dataclass(slots=True)
class ReadyCheck:
    """Before a staked match (RULES §8): it starts only when every human seated is connected and
    has confirmed (``ready``, seat numbers); at ``deadline`` the seats of those who have not are
    freed and the table waits for players again."""

    deadline: float  # on the actor's clock
    ready: set[int] = field(default_factory=set)


@dataclass(slots=True)
class TableSpec:
    """The creator's choices. ``code`` invites to a seat, ``watch_code`` only lets one watch."""

    rules: Rules
    creator: Principal
    name: str = ""
    private: bool = False
    chat: bool = True  # the table's chat; the creator may turn it off
    bot_delay_ms: int = 600
    # Deal only once every seated player has sent a client seed for the table's commitment (or the
    # creator says start): a table opened and filled in one request, whose player could not have
    # seen its commitment before (play a bot: docs/fairness.md, "Who contributed to a deal").
    deal_on_seed: bool = False
    code: str = field(default_factory=new_code)
    watch_code: str = field(default_factory=new_code)

    def to_json(self) -> TableSpecJson:
        return {
            "rules": self.rules.to_json(),
            "creator": self.creator.to_json(),
            "name": self.name,
            "private": self.private,
            "chat": self.chat,
            "bot_delay_ms": self.bot_delay_ms,
            "deal_on_seed": self.deal_on_seed,
            "code": self.code,
            "watch_code": self.watch_code,
        }

    @classmethod
    def from_json(cls, data: TableSpecJson) -> TableSpec:
        return cls(
            rules=Rules.from_json(data["rules"]),
            creator=Principal.from_json(data["creator"]),
            name=data.get("name", ""),
            private=bool(data.get("private", False)),
            chat=bool(data.get("chat", True)),
            bot_delay_ms=int(data.get("bot_delay_ms", 600)),
            deal_on_seed=bool(data.get("deal_on_seed", False)),
            code=data["code"],
            watch_code=data["watch_code"],
        )
