"""Web Push (app/push.py): subscriptions and the server's key."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.base import Base, BigId, UTCDateTime, utcnow


class PushSubscription(Base):
    """One browser's Web Push subscription for an account (``PushManager.subscribe``): where to POST
    and the keys that encrypt for it; ``lang`` is the page's language when it subscribed."""

    __tablename__ = "push_subscriptions"
    __table_args__ = (Index("ix_push_subscriptions_account_id", "account_id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"))
    endpoint: Mapped[str] = mapped_column(String(1024), unique=True)
    p256dh: Mapped[str] = mapped_column(String(128))
    auth: Mapped[str] = mapped_column(String(64))
    lang: Mapped[str] = mapped_column(String(8), default="en")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ServerKey(Base):
    """A key the server made for itself on first start and every process shares (the VAPID key,
    unless ``DURAK_VAPID_PRIVATE_KEY`` gives one)."""

    __tablename__ = "server_keys"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
