"""Request and response bodies of the accounts, matches and admin routes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field, field_validator
from pydantic.config import JsonDict

from app.db.accounts import NAME_MAX, NAME_MIN, name_problem

PASSWORD_MIN, PASSWORD_MAX = 8, 128
NAME_PATTERN = r"^[A-Za-z0-9_-]+$"
# The rules are enforced by validators (for clear messages) and stated in the schema for clients.
NAME_SCHEMA: JsonDict = {"minLength": NAME_MIN, "maxLength": NAME_MAX, "pattern": NAME_PATTERN}


def _check_name(value: str) -> str:
    problem = name_problem(value)
    if problem:
        raise ValueError(problem)
    return value


class SignupIn(BaseModel):
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

    @field_validator("password")
    @classmethod
    def _password(cls, value: str) -> str:
        if not PASSWORD_MIN <= len(value) <= PASSWORD_MAX:
            raise ValueError(f"password must be {PASSWORD_MIN}-{PASSWORD_MAX} characters long")
        return value


class LoginIn(BaseModel):
    name: str = Field(max_length=64, examples=["alice"])
    password: str = Field(max_length=PASSWORD_MAX, examples=["correct horse"])


class GuestIn(BaseModel):
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


class MatchSummary(BaseModel):
    id: str
    table_id: str
    created_at: datetime
    finished_at: datetime
    stake: int
    cheating: bool
    draw: bool
    durak: int | None
    seats: list[SeatOut]
    rules: dict[str, Any] = Field(description="The table parameters of the match (rule book §1).")


class MatchDetail(MatchSummary):
    dealer: int
    result: dict[str, Any]
    coin_changes: dict[str, int] = Field(description="Seat -> coins won or lost: the caller's seat only (admins: all).")
    actions: int = Field(description="Number of actions in the log; the replay shows them.")


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


class AdjustIn(BaseModel):
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
        if "\x00" in value:
            raise ValueError("reason must not contain NUL characters")
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
