"""Accounts and their coins: accounts, log-in sessions, sign-out and throttle records, the double-entry
coin ledger (accounts, transfers, entries), match escrows, and the admins' audit trail."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, CheckConstraint, Float, ForeignKey, Index, Integer, String, Text, func
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base, BigId, UTCDateTime, utcnow

ROLE_PLAYER = "player"
ROLE_ADMIN = "admin"

# Ledger account kinds. Only house accounts may hold a negative balance.
KIND_PLAYER = "player"
KIND_HOUSE = "house"
KIND_ESCROW = "escrow"

# Fixed house accounts, created by the first migration.
HOUSE_MINT = "house:mint"  # source of every signup grant
HOUSE_ADJUSTMENTS = "house:adjustments"  # counterpart of every admin adjustment
HOUSE_CODES = (HOUSE_MINT, HOUSE_ADJUSTMENTS)

ESCROW_OPEN = "open"
ESCROW_SETTLED = "settled"
ESCROW_REFUNDED = "refunded"


class Account(Base):
    """A person who signed up. Guests are not stored: they live only in their session cookie."""

    __tablename__ = "accounts"
    __table_args__ = (
        Index("uq_accounts_name_lower", func.lower("name"), unique=True),
        CheckConstraint(f"role IN ('{ROLE_PLAYER}', '{ROLE_ADMIN}')", name="role"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(24))
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default=ROLE_PLAYER)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    wallet: Mapped[LedgerAccount | None] = relationship(back_populates="owner", lazy="raise")

    @property
    def is_admin(self) -> bool:
        return self.role == ROLE_ADMIN


class LoginSession(Base):
    """One signed-in browser of an account: its session cookie names this row, and logging out
    revokes it, so a copied cookie stops working when its owner signs out (guests have no row:
    ``GuestSignout`` records their log-outs)."""

    __tablename__ = "login_sessions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)  # 128 random bits, hex
    account_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class GuestSignout(Base):
    """A guest session signed out before its cookie expires. Guests have no login session: their
    cookie carries a random guest id, and this row makes every cookie of that id stop working on
    the server (a copy taken before the log-out included). Deleted once ``expires_at``, the
    cookie's own expiry, has passed."""

    __tablename__ = "guest_signouts"

    guest_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)


class ThrottleHit(Base):
    """One counted request of a rate limit (``app/api/throttle.py``): a wrong password for a name from
    an address, a sign-up from an address... Kept in the database, so every server process counts
    the same hits. ``bucket`` names the limit and whom it counts; rows are deleted once ``until``
    (the end of the window they count in) has passed."""

    __tablename__ = "throttle_hits"
    __table_args__ = (Index("ix_throttle_hits_bucket_at", "bucket", "at"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    bucket: Mapped[str] = mapped_column(String(400))  # "<limit>:<address>[:<name case-folded>]"
    at: Mapped[float] = mapped_column(Float)  # Unix seconds
    until: Mapped[float] = mapped_column(Float, index=True)  # at + the limit's window


class LedgerAccount(Base):
    """Something that holds coins: a player's wallet, a house account, or one match's escrow."""

    __tablename__ = "ledger_accounts"
    __table_args__ = (
        CheckConstraint(
            f"kind IN ('{KIND_PLAYER}', '{KIND_HOUSE}', '{KIND_ESCROW}')",
            name="kind",
        ),
        CheckConstraint(f"kind = '{KIND_HOUSE}' OR balance >= 0", name="balance_not_negative"),
        CheckConstraint(f"(kind = '{KIND_PLAYER}') = (owner_id IS NOT NULL)", name="player_has_owner"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(100), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), unique=True, default=None
    )
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    owner: Mapped[Account | None] = relationship(back_populates="wallet", lazy="raise")


class LedgerTransfer(Base):
    """One balanced movement of coins. Append-only; ``key`` makes re-applying it a no-op."""

    __tablename__ = "ledger_transfers"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    key: Mapped[str] = mapped_column(String(200), unique=True)
    reason: Mapped[str] = mapped_column(String(32), index=True)
    memo: Mapped[str | None] = mapped_column(Text, default=None)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"), default=None)
    match_id: Mapped[str | None] = mapped_column(String(64), index=True, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    entries: Mapped[list[LedgerEntry]] = relationship(
        back_populates="transfer", lazy="raise", order_by="LedgerEntry.id"
    )


class LedgerEntry(Base):
    """One side of a transfer: ``amount`` is added to the account (negative = debit)."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount <> 0", name="amount_not_zero"),
        Index("ix_ledger_entries_account_id_id", "account_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    transfer_id: Mapped[int] = mapped_column(ForeignKey("ledger_transfers.id", ondelete="RESTRICT"), index=True)
    account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id", ondelete="RESTRICT"))
    amount: Mapped[int] = mapped_column(BigInteger)
    balance_after: Mapped[int] = mapped_column(BigInteger)

    transfer: Mapped[LedgerTransfer] = relationship(back_populates="entries", lazy="raise")


class Escrow(Base):
    """The stakes of one staked match, held in its own ledger account until settled or refunded."""

    __tablename__ = "escrows"
    __table_args__ = (
        CheckConstraint(
            f"status IN ('{ESCROW_OPEN}', '{ESCROW_SETTLED}', '{ESCROW_REFUNDED}')",
            name="status",
        ),
        CheckConstraint("stake > 0", name="stake_positive"),
        Index("ix_escrows_status", "status"),
    )

    match_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    ledger_account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id", ondelete="RESTRICT"), unique=True)
    stake: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=ESCROW_OPEN)
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), default=None)


class AdminAction(Base):
    """Audit trail: which admin did what to which account, when and why."""

    __tablename__ = "admin_actions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    admin_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"))
    target_id: Mapped[int] = mapped_column(ForeignKey("accounts.id", ondelete="RESTRICT"), index=True)
    action: Mapped[str] = mapped_column(String(32))
    amount: Mapped[int | None] = mapped_column(BigInteger, default=None)
    reason: Mapped[str] = mapped_column(Text)
    transfer_id: Mapped[int | None] = mapped_column(
        ForeignKey("ledger_transfers.id", ondelete="RESTRICT"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
