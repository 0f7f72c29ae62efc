"""Provably fair deals and the coach: ``matches.fairness`` (algorithm, commitment, server seed,
client seeds, dealt deck; docs/fairness.md) and ``match_analyses``, the coach's reports cached per
match and seat.

Revision ID: 0005
Revises: 0003
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from app.db.base import UTCDateTime

Json = sa.JSON().with_variant(JSONB(), "postgresql")

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("fairness", Json, nullable=True))
    op.create_table(
        "match_analyses",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("seat", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("result", Json, nullable=True),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["match_id"], ["matches.id"], name=op.f("fk_match_analyses_match_id_matches"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("match_id", "seat", name=op.f("pk_match_analyses")),
    )


def downgrade() -> None:
    op.drop_table("match_analyses")
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("fairness")
