"""Seasons (app/db/seasons.py): seasons, season ratings, their changes and the final standings."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, Float, ForeignKey, Index, Integer, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, BigId, UTCDateTime, utcnow


class Season(Base):
    """One season of ratings, [starts_at, ends_at) in UTC. ``archived_at`` is set once, by the
    rollover that stored its final standings (``season_standings``); an archived season takes no
    more matches. ``players``: how many players its final standings rank."""

    __tablename__ = "seasons"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    starts_at: Mapped[datetime] = mapped_column(UTCDateTime(), unique=True)
    ends_at: Mapped[datetime] = mapped_column(UTCDateTime())
    archived_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    players: Mapped[int] = mapped_column(Integer, default=0)


class SeasonRating(Base):
    """An account's rating in one season: from its first rated match of the season on, starting from
    its all-time rating softly reset (mu pulled toward the start, sigma widened)."""

    __tablename__ = "season_ratings"
    __table_args__ = (CheckConstraint("matches >= 0", name="matches_not_negative"),)

    season_id: Mapped[int] = mapped_column(
        ForeignKey("seasons.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SeasonRatingChange(Base):
    """One account's season rating after one rated match (at most one row per match and account)."""

    __tablename__ = "season_rating_history"
    __table_args__ = (UniqueConstraint("match_id", "account_id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    season_id: Mapped[int] = mapped_column(ForeignKey("seasons.id", ondelete="CASCADE"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    match_id: Mapped[str] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    mu_before: Mapped[float] = mapped_column(Float)
    sigma_before: Mapped[float] = mapped_column(Float)
    mu: Mapped[float] = mapped_column(Float)
    sigma: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SeasonStanding(Base):
    """A past season's final standings, written once by its rollover: every player with enough rated
    matches in it, ranked."""

    __tablename__ = "season_standings"
    __table_args__ = (
        Index("ix_season_standings_season_id_rank", "season_id", "rank"),
        Index("ix_season_standings_account_id", "account_id"),
    )

    season_id: Mapped[int] = mapped_column(
        ForeignKey("seasons.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    rank: Mapped[int] = mapped_column(Integer)
    rating: Mapped[int] = mapped_column(Integer)
    matches: Mapped[int] = mapped_column(Integer)
