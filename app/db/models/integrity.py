"""Integrity (docs/integrity.md, app/db/integrity.py): devices, sign-up addresses, frozen staked play,
the farming watch's counts, flags, warnings and match reversals."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, BigId, Json, UTCDateTime, in_list, utcnow

FLAG_KINDS = ("quick_wins", "soft_play", "private_staked", "pair_cap", "new_inflow")
FLAG_OPEN = "open"
FLAG_DISMISSED = "dismissed"
FLAG_WARNED = "warned"
FLAG_STATUSES = (FLAG_OPEN, FLAG_DISMISSED, FLAG_WARNED)


class DeviceAccount(Base):
    """An account seen on a browser's device cookie (``durak_device``): at sign-up, log-in and when it
    sits down at a table. Two accounts seen on one device are related."""

    __tablename__ = "device_accounts"
    __table_args__ = (Index("ix_device_accounts_account_id", "account_id"),)

    device: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    first_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SignupAddress(Base):
    """The client address an account signed up from (behind a trusted proxy, its X-Forwarded-For)."""

    __tablename__ = "signup_addresses"
    __table_args__ = (Index("ix_signup_addresses_address_created_at", "address", "created_at"),)

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    address: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class StakedPlayFreeze(Base):
    """An admin froze this account's staked play: it may not sit at a staked table (a row while frozen;
    freezing and unfreezing are in ``admin_actions``)."""

    __tablename__ = "staked_play_freezes"

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    reason: Mapped[str] = mapped_column(Text)
    admin_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"), default=None)
    since: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class PairDay(Base):
    """One ordered pair of accounts on one UTC day: the quick wins of ``winner`` over ``loser`` (and
    those matches) and the coins that went from ``loser`` to ``winner``."""

    __tablename__ = "pair_days"

    winner_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    loser_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    quick_wins: Mapped[int] = mapped_column(Integer, default=0)
    coins: Mapped[int] = mapped_column(BigInteger, default=0)
    quick_matches: Mapped[list[str]] = mapped_column(Json, default=list)


class CountedMatches(Base):
    """How many matches counted for an account (docs/integrity.md, "New accounts"): recorded, and at
    least the rated minimum of bouts and seconds long. Until it has enough, the account may not play
    for coins. No row: none yet."""

    __tablename__ = "counted_matches"

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    matches: Mapped[int] = mapped_column(Integer, default=0)


class InflowDay(Base):
    """One account on one UTC day: what it took from new accounts (docs/integrity.md, "New
    accounts"), whoever they were: the coins, the wins, which new accounts and in which matches."""

    __tablename__ = "inflow_days"

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # YYYY-MM-DD, UTC
    coins: Mapped[int] = mapped_column(BigInteger, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    losers: Mapped[list[int]] = mapped_column(Json, default=list)  # the new accounts, each once
    matches: Mapped[list[str]] = mapped_column(Json, default=list)


class ThrowInCount(Base):
    """How often ``player`` could throw in against ``defender`` and passed instead (soft-play signal)."""

    __tablename__ = "throw_in_counts"

    player_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    defender_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    chances: Mapped[int] = mapped_column(Integer, default=0)
    passes: Mapped[int] = mapped_column(Integer, default=0)


class IntegrityFlag(Base):
    """Something for the admins to review about two accounts (``account_a`` the one the flag is
    about first: the winner, the soft player). ``dedupe`` files each flag once per kind, pair and
    period."""

    __tablename__ = "integrity_flags"
    __table_args__ = (
        CheckConstraint(f"kind IN ({in_list(FLAG_KINDS)})", name="kind"),
        CheckConstraint(f"status IN ({in_list(FLAG_STATUSES)})", name="status"),
        Index("ix_integrity_flags_status_id", "status", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), default=FLAG_OPEN)
    dedupe: Mapped[str] = mapped_column(String(200), unique=True)
    account_a: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"))
    account_b: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"))
    summary: Mapped[str] = mapped_column(Text)
    match_ids: Mapped[list[str]] = mapped_column(Json, default=list)
    note: Mapped[str | None] = mapped_column(Text, default=None)
    reviewed_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"), default=None)
    reviewed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class IntegrityWarning(Base):
    """A warning a player reads (``GET /api/me/integrity``): automatic after repeated quick wins, or
    from an admin's review of a flag. ``dedupe`` keeps automatic ones to one per pair and day."""

    __tablename__ = "integrity_warnings"
    __table_args__ = (Index("ix_integrity_warnings_account_id_id", "account_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    text: Mapped[str] = mapped_column(Text)  # in English; ``kind`` and ``params`` let a client word it
    kind: Mapped[str | None] = mapped_column(String(40), default=None)  # quick_wins | admin_warned
    params: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    flag_id: Mapped[int | None] = mapped_column(ForeignKey("integrity_flags.id", ondelete="CASCADE"), default=None)
    dedupe: Mapped[str | None] = mapped_column(String(200), unique=True, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class MatchReversal(Base):
    """An admin reversed this match's coin movements with ``transfer_id`` (new ledger entries; the
    match's own are never touched). ``shortfall``: coins the winners no longer held."""

    __tablename__ = "match_reversals"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="RESTRICT"), primary_key=True)
    admin_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"), default=None)
    note: Mapped[str] = mapped_column(Text)
    transfer_id: Mapped[int | None] = mapped_column(
        ForeignKey("ledger_transfers.id", ondelete="RESTRICT"), default=None
    )
    returned: Mapped[int] = mapped_column(BigInteger, default=0)
    shortfall: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
