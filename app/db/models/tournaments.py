"""Tournaments (app/db/tournaments.py): tournaments, entries, games and points."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, CheckConstraint, Float, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, BigId, Json, UTCDateTime, in_list, utcnow

TOURNAMENT_STATUSES = ("scheduled", "running", "finished", "cancelled")
ENTRY_STATUSES = ("active", "paused", "withdrawn")
GAME_STATUSES = ("open", "finished", "aborted")


class Tournament(Base):
    """An arena tournament (docs/tournaments.md): ``rules`` of its tables (``seats`` 2-6), from
    ``starts_at`` to ``ends_at``; a paid one holds the entry fees in its own escrow ledger account
    (``ledger_account_id``, code ``tournament:<id>``) until the prizes are paid or the fees refunded."""

    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(f"status IN ({in_list(TOURNAMENT_STATUSES)})", name="status"),
        CheckConstraint("entry_fee >= 0", name="entry_fee_not_negative"),
        CheckConstraint("starts_at < ends_at", name="starts_before_end"),
        Index("ix_tournaments_status_starts_at", "status", "starts_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="SET NULL"), default=None)
    official: Mapped[bool] = mapped_column(Boolean, default=False)  # scheduled by an admin
    status: Mapped[str] = mapped_column(String(16), default="scheduled")
    rules: Mapped[dict[str, Any]] = mapped_column(Json)
    entry_fee: Mapped[int] = mapped_column(BigInteger, default=0)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime())
    bot_after_s: Mapped[float] = mapped_column(Float)
    ledger_account_id: Mapped[int | None] = mapped_column(
        ForeignKey("ledger_accounts.id", ondelete="RESTRICT"), unique=True, default=None
    )
    pool: Mapped[int] = mapped_column(BigInteger, default=0)  # the prize pool paid out (set when finished)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    reason: Mapped[str | None] = mapped_column(Text, default=None)  # why it was cancelled
    notified: Mapped[bool] = mapped_column(Boolean, default=False)  # "about to start" sent


class TournamentEntry(Base):
    """An account in a tournament. ``joins`` counts its entries (a fee refunded on withdrawal before
    the start may be paid again: every ledger key carries it); ``place`` and ``prize`` once finished."""

    __tablename__ = "tournament_entries"
    __table_args__ = (
        CheckConstraint(f"status IN ({in_list(ENTRY_STATUSES)})", name="status"),
        Index("ix_tournament_entries_account_id", "account_id"),
    )

    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    status: Mapped[str] = mapped_column(String(16), default="active")
    entered_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    fee_paid: Mapped[int] = mapped_column(BigInteger, default=0)
    joins: Mapped[int] = mapped_column(Integer, default=1)
    place: Mapped[int | None] = mapped_column(Integer, default=None)
    points: Mapped[int] = mapped_column(Integer, default=0)
    prize: Mapped[int] = mapped_column(BigInteger, default=0)


class TournamentGame(Base):
    """One table the arena opened: who was seated (``seats``: ``{seat, account_id, bot_level}``), and
    once its match is over, the match and its outcome."""

    __tablename__ = "tournament_games"
    __table_args__ = (
        CheckConstraint(f"status IN ({in_list(GAME_STATUSES)})", name="status"),
        Index("ix_tournament_games_tournament_id_status", "tournament_id", "status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    table_code: Mapped[str] = mapped_column(String(64), unique=True)
    watch_code: Mapped[str] = mapped_column(String(64))
    seats: Mapped[list[dict[str, Any]]] = mapped_column(Json)
    status: Mapped[str] = mapped_column(String(16), default="open")
    match_id: Mapped[str | None] = mapped_column(String(64), default=None)
    outcome: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class TournamentPoints(Base):
    """The points one entrant scored in one tournament match (RULES §10's weights)."""

    __tablename__ = "tournament_points"
    __table_args__ = (Index("ix_tournament_points_tournament_id", "tournament_id"),)

    game_id: Mapped[int] = mapped_column(
        ForeignKey("tournament_games.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    seat: Mapped[int] = mapped_column(Integer)
    points: Mapped[int] = mapped_column(Integer)
    first: Mapped[bool] = mapped_column(Boolean, default=False)
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
