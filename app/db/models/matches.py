"""Matches: history and its players, live matches and tables, ratings and their changes, the coach's
analyses, and chat reports made at a table."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, CheckConstraint, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base, BigId, Json, UTCDateTime, utcnow


class Match(Base):
    """A finished match: everything needed to list it, show it and replay it."""

    __tablename__ = "matches"
    __table_args__ = (Index("ix_matches_finished_at", "finished_at"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    # An opaque id of the table (``matches.table_ref``), never its invite or watch code.
    table_id: Mapped[str] = mapped_column(String(64), index=True)
    # A private table's matches are shown only to their players and admins.
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())
    rules: Mapped[dict[str, Any]] = mapped_column(Json)
    stake: Mapped[int] = mapped_column(BigInteger, default=0)
    cheating: Mapped[bool] = mapped_column(Boolean, default=False)
    seed: Mapped[str] = mapped_column(String(64))
    dealer: Mapped[int] = mapped_column(Integer)
    seats: Mapped[list[dict[str, Any]]] = mapped_column(Json)
    actions: Mapped[list[dict[str, Any]]] = mapped_column(Json)
    result: Mapped[dict[str, Any]] = mapped_column(Json)
    coin_changes: Mapped[dict[str, int]] = mapped_column(Json)
    # A provably fair deal (docs/fairness.md): algorithm, table, match number, deck size, commitment,
    # server seed, client seeds and the dealt deck. None for matches dealt before.
    fairness: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True, default=None)

    players: Mapped[list[MatchPlayer]] = relationship(back_populates="match", lazy="raise", order_by="MatchPlayer.seat")


class LiveMatch(Base):
    """A match dealt and not yet in the history, written at the deal (``app.db.matches.record_deal``)
    and removed in the transaction that records the match. What it holds is enough to record the
    match as aborted with its deal revealed, should it never end (``record_abandoned_deals``):
    ``fairness`` is the whole deal, the secret server seed included, kept in the server's own
    database as the table store keeps it."""

    __tablename__ = "live_matches"

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    table_id: Mapped[str] = mapped_column(String(64))  # ``table_ref``, never the invite code
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    rules: Mapped[dict[str, Any]] = mapped_column(Json)
    seats: Mapped[list[dict[str, Any]]] = mapped_column(Json)
    dealer: Mapped[int] = mapped_column(Integer)
    fairness: Mapped[dict[str, Any]] = mapped_column(Json)


class LiveTable(Base):
    """A live table of the embedded default (one process, the in-process table store), kept here
    while the server is stopped: written at a graceful stop, read back and deleted at the next
    start (``app.db.live_tables``), where its match goes on at the same version. ``record`` is the
    table store's record (the deal's secret seed included), ``log`` the moves of its match."""

    __tablename__ = "live_tables"

    code: Mapped[str] = mapped_column(String(64), primary_key=True)  # the invite code: a secret
    record: Mapped[dict[str, Any]] = mapped_column(Json)
    log: Mapped[list[str]] = mapped_column(Json)
    saved_at: Mapped[datetime] = mapped_column(UTCDateTime())


class MatchPlayer(Base):
    """One seat of a finished match, for listing a player's matches."""

    __tablename__ = "match_players"
    __table_args__ = (Index("ix_match_players_account_id_finished_at", "account_id", "finished_at"),)

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"))
    display_name: Mapped[str] = mapped_column(String(64))
    place: Mapped[int | None] = mapped_column(Integer)
    coin_change: Mapped[int] = mapped_column(BigInteger, default=0)
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime())

    match: Mapped[Match] = relationship(back_populates="players", lazy="raise")


class Rating(Base):
    """An account's OpenSkill (Plackett–Luce) rating, ``app/db/ratings.py``: it has a row once it
    has played a rated match. ``matches`` counts its rated matches (provisional below 5)."""

    __tablename__ = "ratings"
    __table_args__ = (CheckConstraint("matches >= 0", name="matches_not_negative"),)

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RatingChange(Base):
    """One account's rating after one rated match: at most one row per (match, account), so a
    settlement replayed after a crash never rates twice."""

    __tablename__ = "rating_history"
    __table_args__ = (
        UniqueConstraint("match_id", "account_id"),
        Index("ix_rating_history_account_id_id", "account_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    place: Mapped[int] = mapped_column(Integer)
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class MatchAnalysis(Base):
    """The coach's analysis of one seat of a finished match (``app.bots.coach``): computed once, on
    demand; ``status`` is "computing" (``done`` of ``total`` decisions) or "done" (``result``)."""

    __tablename__ = "match_analyses"

    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    status: Mapped[str] = mapped_column(String(16))
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True, default=None)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Who started the computation (his quota counts it), and when anyone last asked for its
    # progress: a computation nobody asks about is cancelled (docs/api.md, "Coach").
    requested_by: Mapped[int | None] = mapped_column(Integer, nullable=True, default=None)
    polled_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True, default=None)


class ChatReport(Base):
    """A player's report of another at a table: the reason and the table's recent chat lines (as
    the clients got them), for the admins. Guests may report and be reported: players are named by
    their person keys (``a:<account id>``, ``g:<guest id>``)."""

    __tablename__ = "chat_reports"
    __table_args__ = (Index("ix_chat_reports_created_at", "created_at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    table_code: Mapped[str] = mapped_column(String(64))
    match_id: Mapped[str | None] = mapped_column(String(64), default=None)
    reporter_key: Mapped[str] = mapped_column(String(64))
    reporter_name: Mapped[str] = mapped_column(String(64))
    reported_key: Mapped[str] = mapped_column(String(64))
    reported_name: Mapped[str] = mapped_column(String(64))
    reason: Mapped[str] = mapped_column(String(500))
    lines: Mapped[list[dict[str, Any]]] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
