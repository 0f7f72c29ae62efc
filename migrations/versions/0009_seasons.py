"""Seasons (app/db/seasons.py): the seasons, each account's rating in a season and after each rated
match of it, and the final standings of past seasons.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UTCDateTime

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "seasons",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("starts_at", UTCDateTime(), nullable=False),
        sa.Column("ends_at", UTCDateTime(), nullable=False),
        sa.Column("archived_at", UTCDateTime(), nullable=True),
        sa.Column("players", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_seasons")),
        sa.UniqueConstraint("starts_at", name=op.f("uq_seasons_starts_at")),
    )
    op.create_table(
        "season_ratings",
        sa.Column("season_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.CheckConstraint("matches >= 0", name=op.f("ck_season_ratings_matches_not_negative")),
        sa.ForeignKeyConstraint(
            ["season_id"], ["seasons.id"], name=op.f("fk_season_ratings_season_id_seasons"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_season_ratings_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("season_id", "account_id", name=op.f("pk_season_ratings")),
    )
    op.create_table(
        "season_rating_history",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("season_id", sa.Integer(), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["season_id"], ["seasons.id"], name=op.f("fk_season_rating_history_season_id_seasons"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"],
            ["accounts.id"],
            name=op.f("fk_season_rating_history_account_id_accounts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_season_rating_history_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_season_rating_history")),
        sa.UniqueConstraint("match_id", "account_id", name=op.f("uq_season_rating_history_match_id_account_id")),
    )
    op.create_index("ix_season_rating_history_season_id", "season_rating_history", ["season_id"])
    op.create_table(
        "season_standings",
        sa.Column("season_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["season_id"], ["seasons.id"], name=op.f("fk_season_standings_season_id_seasons"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_season_standings_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("season_id", "account_id", name=op.f("pk_season_standings")),
    )
    op.create_index("ix_season_standings_season_id_rank", "season_standings", ["season_id", "rank"])
    op.create_index("ix_season_standings_account_id", "season_standings", ["account_id"])


def downgrade() -> None:
    op.drop_index("ix_season_standings_account_id", table_name="season_standings")
    op.drop_index("ix_season_standings_season_id_rank", table_name="season_standings")
    op.drop_table("season_standings")
    op.drop_index("ix_season_rating_history_season_id", table_name="season_rating_history")
    op.drop_table("season_rating_history")
    op.drop_table("season_ratings")
    op.drop_table("seasons")
