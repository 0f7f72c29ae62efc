"""Friends (app/db/friends.py): friendships, blocks, challenges and presence."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import CheckConstraint, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, BigId, Json, UTCDateTime, in_list, utcnow

FRIEND_PENDING = "pending"
FRIEND_ACCEPTED = "accepted"
CHALLENGE_STATUSES = ("pending", "accepted", "declined", "cancelled", "expired")


class Friendship(Base):
    """Two accounts (``low_id`` < ``high_id``, one row per pair): a friend request from
    ``requested_by`` while ``pending``, friends once ``accepted``."""

    __tablename__ = "friendships"
    __table_args__ = (
        CheckConstraint("low_id < high_id", name="ordered_pair"),
        CheckConstraint(f"status IN ('{FRIEND_PENDING}', '{FRIEND_ACCEPTED}')", name="status"),
        Index("ix_friendships_high_id", "high_id"),
    )

    low_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    high_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    requested_by: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default=FRIEND_PENDING)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class Block(Base):
    """``blocker_id`` blocked ``blocked_id``: no friendship, no challenges between them, and the
    blocker's table chat leaves out the blocked one's lines."""

    __tablename__ = "blocks"
    __table_args__ = (Index("ix_blocks_blocked_id", "blocked_id"),)

    blocker_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    blocked_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Challenge(Base):
    """A friend challenged: a private table opened with the challenger's rules (``table_code``), the
    challenger seated; ``pending`` until the friend accepts (and sits down), declines, the
    challenger cancels, or it expires."""

    __tablename__ = "challenges"
    __table_args__ = (
        CheckConstraint(f"status IN ({in_list(CHALLENGE_STATUSES)})", name="status"),
        Index("ix_challenges_to_id_status", "to_id", "status"),
        Index("ix_challenges_from_id_status", "from_id", "status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    from_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    to_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    table_code: Mapped[str] = mapped_column(String(64))
    table_name: Mapped[str] = mapped_column(String(64))
    rules: Mapped[dict[str, Any]] = mapped_column(Json)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class Presence(Base):
    """When an account was last seen with a page of the web client open (its notice feed), and the
    table it last sat down at (checked against the live table before it is shown)."""

    __tablename__ = "presence"

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True, autoincrement=False
    )
    seen_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)
    table_code: Mapped[str | None] = mapped_column(String(64), default=None)
