"""Integrity (docs/integrity.md): the devices and sign-up addresses that relate accounts, frozen
staked play, the farming watch per pair and day, throw-in counts for soft-play signals, flags for the
admins, warnings for the players, and reversed matches.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-10
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.db.base import UTCDateTime

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _account_fk(table: str, column: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], ["accounts.id"], name=op.f(f"fk_{table}_{column}_accounts"), ondelete=ondelete
    )


def upgrade() -> None:
    op.create_table(
        "device_accounts",
        sa.Column("device", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("first_at", UTCDateTime(), nullable=False),
        _account_fk("device_accounts", "account_id"),
        sa.PrimaryKeyConstraint("device", "account_id", name=op.f("pk_device_accounts")),
    )
    op.create_index("ix_device_accounts_account_id", "device_accounts", ["account_id"])
    op.create_table(
        "signup_addresses",
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        _account_fk("signup_addresses", "account_id"),
        sa.PrimaryKeyConstraint("account_id", name=op.f("pk_signup_addresses")),
    )
    op.create_index("ix_signup_addresses_address_created_at", "signup_addresses", ["address", "created_at"])
    op.create_table(
        "staked_play_freezes",
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("admin_id", sa.Integer(), nullable=True),
        sa.Column("since", UTCDateTime(), nullable=False),
        _account_fk("staked_play_freezes", "account_id"),
        _account_fk("staked_play_freezes", "admin_id", "RESTRICT"),
        sa.PrimaryKeyConstraint("account_id", name=op.f("pk_staked_play_freezes")),
    )
    op.create_table(
        "pair_days",
        sa.Column("winner_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("loser_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("quick_wins", sa.Integer(), nullable=False),
        sa.Column("coins", sa.BigInteger(), nullable=False),
        sa.Column("quick_matches", Json, nullable=False),
        _account_fk("pair_days", "winner_id"),
        _account_fk("pair_days", "loser_id"),
        sa.PrimaryKeyConstraint("winner_id", "loser_id", "day", name=op.f("pk_pair_days")),
    )
    op.create_table(
        "throw_in_counts",
        sa.Column("player_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("defender_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("chances", sa.Integer(), nullable=False),
        sa.Column("passes", sa.Integer(), nullable=False),
        _account_fk("throw_in_counts", "player_id"),
        _account_fk("throw_in_counts", "defender_id"),
        sa.PrimaryKeyConstraint("player_id", "defender_id", name=op.f("pk_throw_in_counts")),
    )
    op.create_table(
        "integrity_flags",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("dedupe", sa.String(length=200), nullable=False),
        sa.Column("account_a", sa.Integer(), nullable=False),
        sa.Column("account_b", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("match_ids", Json, nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("reviewed_by", sa.Integer(), nullable=True),
        sa.Column("reviewed_at", UTCDateTime(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint(
            "kind IN ('quick_wins', 'soft_play', 'private_staked', 'pair_cap')", name=op.f("ck_integrity_flags_kind")
        ),
        sa.CheckConstraint("status IN ('open', 'dismissed', 'warned')", name=op.f("ck_integrity_flags_status")),
        _account_fk("integrity_flags", "account_a", "RESTRICT"),
        _account_fk("integrity_flags", "account_b", "RESTRICT"),
        _account_fk("integrity_flags", "reviewed_by", "RESTRICT"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_integrity_flags")),
        sa.UniqueConstraint("dedupe", name=op.f("uq_integrity_flags_dedupe")),
    )
    op.create_index("ix_integrity_flags_status_id", "integrity_flags", ["status", "id"])
    op.create_table(
        "integrity_warnings",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("flag_id", BigId, nullable=True),
        sa.Column("dedupe", sa.String(length=200), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        _account_fk("integrity_warnings", "account_id"),
        sa.ForeignKeyConstraint(
            ["flag_id"],
            ["integrity_flags.id"],
            name=op.f("fk_integrity_warnings_flag_id_integrity_flags"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_integrity_warnings")),
        sa.UniqueConstraint("dedupe", name=op.f("uq_integrity_warnings_dedupe")),
    )
    op.create_index("ix_integrity_warnings_account_id_id", "integrity_warnings", ["account_id", "id"])
    op.create_table(
        "match_reversals",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("admin_id", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("transfer_id", BigId, nullable=True),
        sa.Column("returned", sa.BigInteger(), nullable=False),
        sa.Column("shortfall", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_reversals_match_id_matches"), ondelete="RESTRICT"
        ),
        _account_fk("match_reversals", "admin_id", "RESTRICT"),
        sa.ForeignKeyConstraint(
            ["transfer_id"],
            ["ledger_transfers.id"],
            name=op.f("fk_match_reversals_transfer_id_ledger_transfers"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_match_reversals")),
    )


def downgrade() -> None:
    op.drop_table("match_reversals")
    op.drop_index("ix_integrity_warnings_account_id_id", table_name="integrity_warnings")
    op.drop_table("integrity_warnings")
    op.drop_index("ix_integrity_flags_status_id", table_name="integrity_flags")
    op.drop_table("integrity_flags")
    op.drop_table("throw_in_counts")
    op.drop_table("pair_days")
    op.drop_table("staked_play_freezes")
    op.drop_index("ix_signup_addresses_address_created_at", table_name="signup_addresses")
    op.drop_table("signup_addresses")
    op.drop_index("ix_device_accounts_account_id", table_name="device_accounts")
    op.drop_table("device_accounts")
