"""The schema: accounts, the double-entry coin ledger, match escrows, match history, ratings, admin
audit.

The schema is only ever created by the Alembic migrations in ``migrations/``; a test compares these
models with the migrations so the two cannot drift apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    func,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.base import Base, BigId, Json, UTCDateTime, utcnow

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


# ---------------------------------------------------------------------- integrity (docs/integrity.md)

FLAG_KINDS = ("quick_wins", "soft_play", "private_staked", "pair_cap", "new_inflow")
FLAG_OPEN = "open"
FLAG_DISMISSED = "dismissed"
FLAG_WARNED = "warned"
FLAG_STATUSES = (FLAG_OPEN, FLAG_DISMISSED, FLAG_WARNED)


def _in(values: tuple[str, ...]) -> str:
    return ", ".join(f"'{value}'" for value in values)


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
        CheckConstraint(f"kind IN ({_in(FLAG_KINDS)})", name="kind"),
        CheckConstraint(f"status IN ({_in(FLAG_STATUSES)})", name="status"),
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


# ---------------------------------------------------------------------- seasons (app/db/seasons.py)


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


# ---------------------------------------------------------------------- friends (app/db/friends.py)

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
        CheckConstraint(f"status IN ({_in(CHALLENGE_STATUSES)})", name="status"),
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


# ---------------------------------------------------------------------- Web Push (app/push.py)


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


# ---------------------------------------------------------------------- tournaments (app/db/tournaments.py)

TOURNAMENT_STATUSES = ("scheduled", "running", "finished", "cancelled")
ENTRY_STATUSES = ("active", "paused", "withdrawn")
GAME_STATUSES = ("open", "finished", "aborted")


class Tournament(Base):
    """An arena tournament (docs/tournaments.md): ``rules`` of its tables (``seats`` 2-6), from
    ``starts_at`` to ``ends_at``; a paid one holds the entry fees in its own escrow ledger account
    (``ledger_account_id``, code ``tournament:<id>``) until the prizes are paid or the fees refunded."""

    __tablename__ = "tournaments"
    __table_args__ = (
        CheckConstraint(f"status IN ({_in(TOURNAMENT_STATUSES)})", name="status"),
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
        CheckConstraint(f"status IN ({_in(ENTRY_STATUSES)})", name="status"),
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
        CheckConstraint(f"status IN ({_in(GAME_STATUSES)})", name="status"),
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
