"""Accounts, the double-entry coin ledger, escrows, match history and the admin audit trail.

Revision ID: 0001
Revises:
Create Date: 2025-11-29
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.db.base import UTCDateTime

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=24), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("role IN ('player', 'admin')", name=op.f("ck_accounts_role")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_accounts")),
    )
    op.create_index("uq_accounts_name_lower", "accounts", [sa.text("lower(name)")], unique=True)

    op.create_table(
        "ledger_accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("kind IN ('player', 'house', 'escrow')", name=op.f("ck_ledger_accounts_kind")),
        sa.CheckConstraint(
            "kind = 'house' OR balance >= 0", name=op.f("ck_ledger_accounts_balance_not_negative")
        ),
        sa.CheckConstraint(
            "(kind = 'player') = (owner_id IS NOT NULL)", name=op.f("ck_ledger_accounts_player_has_owner")
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["accounts.id"], name=op.f("fk_ledger_accounts_owner_id_accounts"), ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_accounts")),
        sa.UniqueConstraint("code", name=op.f("uq_ledger_accounts_code")),
        sa.UniqueConstraint("owner_id", name=op.f("uq_ledger_accounts_owner_id")),
    )

    op.create_table(
        "ledger_transfers",
        sa.Column("id", BigId, nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("reason", sa.String(length=32), nullable=False),
        sa.Column("memo", sa.Text(), nullable=True),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("match_id", sa.String(length=64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["actor_id"], ["accounts.id"], name=op.f("fk_ledger_transfers_actor_id_accounts"), ondelete="RESTRICT"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_transfers")),
        sa.UniqueConstraint("key", name=op.f("uq_ledger_transfers_key")),
    )
    op.create_index(op.f("ix_ledger_transfers_reason"), "ledger_transfers", ["reason"])
    op.create_index(op.f("ix_ledger_transfers_match_id"), "ledger_transfers", ["match_id"])

    op.create_table(
        "ledger_entries",
        sa.Column("id", BigId, nullable=False),
        sa.Column("transfer_id", BigId, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("amount <> 0", name=op.f("ck_ledger_entries_amount_not_zero")),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_ledger_entries_account_id_ledger_accounts"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["transfer_id"],
            ["ledger_transfers.id"],
            name=op.f("fk_ledger_entries_transfer_id_ledger_transfers"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_entries")),
    )
    op.create_index("ix_ledger_entries_account_id_id", "ledger_entries", ["account_id", "id"])
    op.create_index(op.f("ix_ledger_entries_transfer_id"), "ledger_entries", ["transfer_id"])

    op.create_table(
        "escrows",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("ledger_account_id", sa.Integer(), nullable=False),
        sa.Column("stake", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("opened_at", UTCDateTime(), nullable=False),
        sa.Column("closed_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint("status IN ('open', 'settled', 'refunded')", name=op.f("ck_escrows_status")),
        sa.CheckConstraint("stake > 0", name=op.f("ck_escrows_stake_positive")),
        sa.ForeignKeyConstraint(
            ["ledger_account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_escrows_ledger_account_id_ledger_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_escrows")),
        sa.UniqueConstraint("ledger_account_id", name=op.f("uq_escrows_ledger_account_id")),
    )
    op.create_index("ix_escrows_status", "escrows", ["status"])

    op.create_table(
        "matches",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        sa.Column("rules", Json, nullable=False),
        sa.Column("stake", sa.BigInteger(), nullable=False),
        sa.Column("cheating", sa.Boolean(), nullable=False),
        sa.Column("seed", sa.String(length=64), nullable=False),
        sa.Column("dealer", sa.Integer(), nullable=False),
        sa.Column("seats", Json, nullable=False),
        sa.Column("actions", Json, nullable=False),
        sa.Column("result", Json, nullable=False),
        sa.Column("coin_changes", Json, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_matches")),
    )
    op.create_index("ix_matches_finished_at", "matches", ["finished_at"])
    op.create_index(op.f("ix_matches_table_id"), "matches", ["table_id"])

    op.create_table(
        "match_players",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("seat", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=True),
        sa.Column("display_name", sa.String(length=64), nullable=False),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("coin_change", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_match_players_account_id_accounts"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_players_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name=op.f("pk_match_players")),
    )
    op.create_index(
        "ix_match_players_account_id_finished_at", "match_players", ["account_id", "finished_at"]
    )

    op.create_table(
        "admin_actions",
        sa.Column("id", BigId, nullable=False),
        sa.Column("admin_id", sa.Integer(), nullable=True),
        sa.Column("target_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=32), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("transfer_id", BigId, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["admin_id"], ["accounts.id"], name=op.f("fk_admin_actions_admin_id_accounts"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["target_id"], ["accounts.id"], name=op.f("fk_admin_actions_target_id_accounts"), ondelete="RESTRICT"
        ),
        sa.ForeignKeyConstraint(
            ["transfer_id"],
            ["ledger_transfers.id"],
            name=op.f("fk_admin_actions_transfer_id_ledger_transfers"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_admin_actions")),
    )
    op.create_index(op.f("ix_admin_actions_target_id"), "admin_actions", ["target_id"])

    # The house accounts: the mint (source of signup grants) and the counterpart of admin
    # adjustments. They may go negative; their balances are minus the coins they put out.
    ledger_accounts = sa.table(
        "ledger_accounts",
        sa.column("code", sa.String),
        sa.column("kind", sa.String),
        sa.column("owner_id", sa.Integer),
        sa.column("balance", sa.BigInteger),
        sa.column("created_at", UTCDateTime()),
    )
    now = datetime.now(UTC)
    op.bulk_insert(
        ledger_accounts,
        [
            {"code": "house:mint", "kind": "house", "owner_id": None, "balance": 0, "created_at": now},
            {"code": "house:adjustments", "kind": "house", "owner_id": None, "balance": 0, "created_at": now},
        ],
    )


def downgrade() -> None:
    op.drop_table("admin_actions")
    op.drop_table("match_players")
    op.drop_table("matches")
    op.drop_table("escrows")
    op.drop_table("ledger_entries")
    op.drop_table("ledger_transfers")
    op.drop_table("ledger_accounts")
    op.drop_table("accounts")
