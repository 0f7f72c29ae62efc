"""Chat reports: a player's report of another at a table, with the reason and the table's recent
chat lines, for the admins (GET /api/admin/reports).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

from app.db.base import UTCDateTime

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_reports",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("table_code", sa.String(length=64), nullable=False),
        sa.Column("match_id", sa.String(length=64), nullable=True),
        sa.Column("reporter_key", sa.String(length=64), nullable=False),
        sa.Column("reporter_name", sa.String(length=64), nullable=False),
        sa.Column("reported_key", sa.String(length=64), nullable=False),
        sa.Column("reported_name", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("lines", Json, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chat_reports")),
    )
    op.create_index("ix_chat_reports_created_at", "chat_reports", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_chat_reports_created_at", table_name="chat_reports")
    op.drop_table("chat_reports")
