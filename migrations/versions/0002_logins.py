"""Logins: server-side login sessions (a session cookie names a row, and logging out revokes it) and
the wrong passwords per name that every server process's log-in throttle counts.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from app.db.base import UTCDateTime

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_sessions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("account_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.Column("revoked_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_login_sessions_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_sessions")),
    )
    op.create_index(op.f("ix_login_sessions_account_id"), "login_sessions", ["account_id"])

    op.create_table(
        "login_failures",
        sa.Column("id", BigId, autoincrement=True, nullable=False),
        sa.Column("name_key", sa.String(length=255), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    op.create_index("ix_login_failures_name_key_at", "login_failures", ["name_key", "at"])
    op.create_index(op.f("ix_login_failures_at"), "login_failures", ["at"])


def downgrade() -> None:
    op.drop_index(op.f("ix_login_failures_at"), table_name="login_failures")
    op.drop_index("ix_login_failures_name_key_at", table_name="login_failures")
    op.drop_table("login_failures")
    op.drop_index(op.f("ix_login_sessions_account_id"), table_name="login_sessions")
    op.drop_table("login_sessions")
