"""Private history and rate limits: match history stores an opaque table id instead of the table's
invite code (existing rows are rewritten), and whether the table was private; the throttle's
``login_failures`` (per name) becomes ``throttle_hits`` (per limit, address and name).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def table_ref(code: str) -> str:
    """A copy of ``app.db.matches.table_ref`` as it was at this revision (a test keeps them equal)."""
    return "t-" + hashlib.sha256(f"durak-table:{code}".encode()).hexdigest()[:32]


def upgrade() -> None:
    # Whether a match was private was never stored: every existing match counts as private (shown
    # only to its players and admins), since its invite code was its only trace.
    with op.batch_alter_table("matches") as batch:
        batch.add_column(sa.Column("private", sa.Boolean(), nullable=False, server_default=sa.true()))
    matches = sa.table("matches", sa.column("id", sa.String), sa.column("table_id", sa.String))
    bind = op.get_bind()
    rows = bind.execute(sa.select(matches.c.id, matches.c.table_id)).all()
    for match_id, code in rows:
        bind.execute(matches.update().where(matches.c.id == match_id).values(table_id=table_ref(code)))
    with op.batch_alter_table("matches") as batch:
        batch.alter_column("private", server_default=None, existing_type=sa.Boolean(), existing_nullable=False)

    # Failures only count for a minute: nothing worth carrying over.
    op.drop_index(op.f("ix_login_failures_at"), table_name="login_failures")
    op.drop_index("ix_login_failures_name_key_at", table_name="login_failures")
    op.drop_table("login_failures")
    op.create_table(
        "throttle_hits",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("bucket", sa.String(length=400), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("until", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_throttle_hits")),
    )
    op.create_index("ix_throttle_hits_bucket_at", "throttle_hits", ["bucket", "at"])
    op.create_index(op.f("ix_throttle_hits_until"), "throttle_hits", ["until"])


def downgrade() -> None:
    op.drop_index(op.f("ix_throttle_hits_until"), table_name="throttle_hits")
    op.drop_index("ix_throttle_hits_bucket_at", table_name="throttle_hits")
    op.drop_table("throttle_hits")
    op.create_table(
        "login_failures",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("name_key", sa.String(length=255), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    op.create_index("ix_login_failures_name_key_at", "login_failures", ["name_key", "at"])
    op.create_index(op.f("ix_login_failures_at"), "login_failures", ["at"])
    # The invite codes are gone for good: table_id keeps the opaque ids.
    with op.batch_alter_table("matches") as batch:
        batch.drop_column("private")
