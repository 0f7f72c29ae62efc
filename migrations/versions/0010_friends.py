"""Friends (app/db/friends.py): friend requests and friendships, blocks, challenges to a friend, and
where each account was last seen.

Revision ID: 0010
Revises: 0009
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

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _account(column: str, table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], ["accounts.id"], name=op.f(f"fk_{table}_{column}_accounts"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "friendships",
        sa.Column("low_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("high_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("accepted_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint("low_id < high_id", name=op.f("ck_friendships_ordered_pair")),
        sa.CheckConstraint("status IN ('pending', 'accepted')", name=op.f("ck_friendships_status")),
        _account("low_id", "friendships"),
        _account("high_id", "friendships"),
        sa.PrimaryKeyConstraint("low_id", "high_id", name=op.f("pk_friendships")),
    )
    op.create_index("ix_friendships_high_id", "friendships", ["high_id"])
    op.create_table(
        "blocks",
        sa.Column("blocker_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("blocked_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        _account("blocker_id", "blocks"),
        _account("blocked_id", "blocks"),
        sa.PrimaryKeyConstraint("blocker_id", "blocked_id", name=op.f("pk_blocks")),
    )
    op.create_index("ix_blocks_blocked_id", "blocks", ["blocked_id"])
    op.create_table(
        "challenges",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("from_id", sa.Integer(), nullable=False),
        sa.Column("to_id", sa.Integer(), nullable=False),
        sa.Column("table_code", sa.String(length=64), nullable=False),
        sa.Column("table_name", sa.String(length=64), nullable=False),
        sa.Column("rules", Json, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("answered_at", UTCDateTime(), nullable=True),
        sa.CheckConstraint(
            "status IN ('pending', 'accepted', 'declined', 'cancelled', 'expired')", name=op.f("ck_challenges_status")
        ),
        _account("from_id", "challenges"),
        _account("to_id", "challenges"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenges")),
    )
    op.create_index("ix_challenges_to_id_status", "challenges", ["to_id", "status"])
    op.create_index("ix_challenges_from_id_status", "challenges", ["from_id", "status"])
    op.create_table(
        "presence",
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seen_at", UTCDateTime(), nullable=True),
        sa.Column("table_code", sa.String(length=64), nullable=True),
        _account("account_id", "presence"),
        sa.PrimaryKeyConstraint("account_id", name=op.f("pk_presence")),
    )


def downgrade() -> None:
    op.drop_table("presence")
    op.drop_index("ix_challenges_from_id_status", table_name="challenges")
    op.drop_index("ix_challenges_to_id_status", table_name="challenges")
    op.drop_table("challenges")
    op.drop_index("ix_blocks_blocked_id", table_name="blocks")
    op.drop_table("blocks")
    op.drop_index("ix_friendships_high_id", table_name="friendships")
    op.drop_table("friendships")
