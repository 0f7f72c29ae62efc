"""Guest sessions can be signed out: ``guest_signouts`` holds the guest ids whose cookies stop
working on the server, each until its cookie would have expired anyway.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-09
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UTCDateTime

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "guest_signouts",
        sa.Column("guest_id", sa.String(length=64), primary_key=True),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_guest_signouts_expires_at", "guest_signouts", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_guest_signouts_expires_at", table_name="guest_signouts")
    op.drop_table("guest_signouts")
