"""Arena tournaments (app/db/tournaments.py, docs/tournaments.md): tournaments, their entries, the
tables the arena opened and the points scored there.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.db.base import UTCDateTime

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _fk(column: str, table: str, target: str, ondelete: str = "CASCADE") -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}"), ondelete=ondelete
    )


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.Column("official", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("rules", Json, nullable=False),
        sa.Column("entry_fee", sa.BigInteger(), nullable=False),
        sa.Column("starts_at", UTCDateTime(), nullable=False),
        sa.Column("ends_at", UTCDateTime(), nullable=False),
        sa.Column("bot_after_s", sa.Float(), nullable=False),
        sa.Column("ledger_account_id", sa.Integer(), nullable=True),
        sa.Column("pool", sa.BigInteger(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("notified", sa.Boolean(), nullable=False),
        sa.CheckConstraint(
            "status IN ('scheduled', 'running', 'finished', 'cancelled')", name=op.f("ck_tournaments_status")
        ),
        sa.CheckConstraint("entry_fee >= 0", name=op.f("ck_tournaments_entry_fee_not_negative")),
        sa.CheckConstraint("starts_at < ends_at", name=op.f("ck_tournaments_starts_before_end")),
        _fk("created_by", "tournaments", "accounts", "SET NULL"),
        sa.ForeignKeyConstraint(
            ["ledger_account_id"],
            ["ledger_accounts.id"],
            name=op.f("fk_tournaments_ledger_account_id_ledger_accounts"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
        sa.UniqueConstraint("ledger_account_id", name=op.f("uq_tournaments_ledger_account_id")),
    )
    op.create_index("ix_tournaments_status_starts_at", "tournaments", ["status", "starts_at"])
    op.create_table(
        "tournament_entries",
        sa.Column("tournament_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("entered_at", UTCDateTime(), nullable=False),
        sa.Column("fee_paid", sa.BigInteger(), nullable=False),
        sa.Column("joins", sa.Integer(), nullable=False),
        sa.Column("place", sa.Integer(), nullable=True),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("prize", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("status IN ('active', 'paused', 'withdrawn')", name=op.f("ck_tournament_entries_status")),
        _fk("tournament_id", "tournament_entries", "tournaments"),
        _fk("account_id", "tournament_entries", "accounts"),
        sa.PrimaryKeyConstraint("tournament_id", "account_id", name=op.f("pk_tournament_entries")),
    )
    op.create_index("ix_tournament_entries_account_id", "tournament_entries", ["account_id"])
    op.create_table(
        "tournament_games",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("table_code", sa.String(length=64), nullable=False),
        sa.Column("watch_code", sa.String(length=64), nullable=False),
        sa.Column("seats", Json, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=True),
        sa.Column("outcome", Json, nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint("status IN ('open', 'finished', 'aborted')", name=op.f("ck_tournament_games_status")),
        _fk("tournament_id", "tournament_games", "tournaments"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournament_games")),
        sa.UniqueConstraint("table_code", name=op.f("uq_tournament_games_table_code")),
    )
    op.create_index("ix_tournament_games_tournament_id_status", "tournament_games", ["tournament_id", "status"])
    op.create_table(
        "tournament_points",
        sa.Column("game_id", BigId, autoincrement=False, nullable=False),
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("tournament_id", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("first", sa.Boolean(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["tournament_games.id"],
            name=op.f("fk_tournament_points_game_id_tournament_games"),
            ondelete="CASCADE",
        ),
        _fk("account_id", "tournament_points", "accounts"),
        _fk("tournament_id", "tournament_points", "tournaments"),
        sa.PrimaryKeyConstraint("game_id", "account_id", name=op.f("pk_tournament_points")),
    )
    op.create_index("ix_tournament_points_tournament_id", "tournament_points", ["tournament_id"])


def downgrade() -> None:
    op.drop_index("ix_tournament_points_tournament_id", table_name="tournament_points")
    op.drop_table("tournament_points")
    op.drop_index("ix_tournament_games_tournament_id_status", table_name="tournament_games")
    op.drop_table("tournament_games")
    op.drop_index("ix_tournament_entries_account_id", table_name="tournament_entries")
    op.drop_table("tournament_entries")
    op.drop_index("ix_tournaments_status_starts_at", table_name="tournaments")
    op.drop_table("tournaments")
