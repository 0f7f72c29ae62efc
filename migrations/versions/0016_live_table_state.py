"""The embedded default survives a restart (issue 36): ``live_tables`` keeps each live table's
record and moves while a one-process server (in-process table store) is stopped; the next start
serves them again where they were.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from app.db.base import UTCDateTime

Json = sa.JSON().with_variant(JSONB(), "postgresql")

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "live_tables",
        sa.Column("code", sa.String(length=64), nullable=False),
        sa.Column("record", Json, nullable=False),
        sa.Column("log", Json, nullable=False),
        sa.Column("saved_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("code", name=op.f("pk_live_tables")),
    )


def downgrade() -> None:
    op.drop_table("live_tables")
