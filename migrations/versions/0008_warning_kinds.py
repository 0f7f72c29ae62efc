"""Integrity warnings say what they are (``kind``) and carry their facts (``params``), so that each
player reads them in his own language; ``text`` stays as the English wording (and the only wording
of the warnings written before this revision).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("integrity_warnings") as batch:
        batch.add_column(sa.Column("kind", sa.String(length=40), nullable=True))
        batch.add_column(sa.Column("params", Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("integrity_warnings") as batch:
        batch.drop_column("params")
        batch.drop_column("kind")
