"""The coach's limits and every dealt match recorded (issue 35): ``match_analyses`` says who started
a computation (``requested_by``, for his quota) and when anyone last asked for its progress
(``polled_at``: one nobody asks about is cancelled); ``live_matches`` holds each match from its deal
until it is recorded, so that one that never ends (its table evicted, the server restarted) is
recorded as aborted with its deal revealed.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from app.db.base import UTCDateTime

Json = sa.JSON().with_variant(JSONB(), "postgresql")

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("match_analyses") as batch:
        batch.add_column(sa.Column("requested_by", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("polled_at", UTCDateTime(), nullable=True))
    op.create_table(
        "live_matches",
        sa.Column("match_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("rules", Json, nullable=False),
        sa.Column("seats", Json, nullable=False),
        sa.Column("dealer", sa.Integer(), nullable=False),
        sa.Column("fairness", Json, nullable=False),
        sa.PrimaryKeyConstraint("match_id", name=op.f("pk_live_matches")),
    )


def downgrade() -> None:
    op.drop_table("live_matches")
    with op.batch_alter_table("match_analyses") as batch:
        batch.drop_column("polled_at")
        batch.drop_column("requested_by")
