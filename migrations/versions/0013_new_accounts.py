"""New accounts (docs/integrity.md, "New accounts"): the matches that counted for each account (until
it has enough it may not play for coins), each account's daily take from new accounts, and the flag
kind ``new_inflow`` for the admins.

Accounts that existed before this revision are credited with every match they have on record, so
nobody who already played is held back.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KINDS = "kind IN ('quick_wins', 'soft_play', 'private_staked', 'pair_cap')"
NEW_KINDS = "kind IN ('quick_wins', 'soft_play', 'private_staked', 'pair_cap', 'new_inflow')"


def upgrade() -> None:
    op.create_table(
        "counted_matches",
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_counted_matches_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("account_id", name=op.f("pk_counted_matches")),
    )
    op.execute(
        "INSERT INTO counted_matches (account_id, matches) SELECT account_id, count(*) FROM match_players "
        "WHERE account_id IS NOT NULL GROUP BY account_id"
    )
    op.create_table(
        "inflow_days",
        sa.Column("account_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("day", sa.String(length=10), nullable=False),
        sa.Column("coins", sa.BigInteger(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("losers", Json, nullable=False),
        sa.Column("matches", Json, nullable=False),
        sa.ForeignKeyConstraint(
            ["account_id"], ["accounts.id"], name=op.f("fk_inflow_days_account_id_accounts"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("account_id", "day", name=op.f("pk_inflow_days")),
    )
    _flag_kinds(NEW_KINDS)


def downgrade() -> None:
    op.execute(
        "DELETE FROM integrity_warnings WHERE flag_id IN (SELECT id FROM integrity_flags WHERE kind = 'new_inflow')"
    )
    op.execute("DELETE FROM integrity_flags WHERE kind = 'new_inflow'")
    _flag_kinds(OLD_KINDS)
    op.drop_table("inflow_days")
    op.drop_table("counted_matches")


def _flag_kinds(new: str) -> None:
    """Replace the check on ``integrity_flags.kind`` with ``new`` (SQLite: the batch copies the
    table, its reflected checks included, without the old one)."""
    name = op.f("ck_integrity_flags_kind")
    with op.batch_alter_table("integrity_flags") as batch:
        batch.drop_constraint(name, type_="check")
        batch.create_check_constraint(name, new)
