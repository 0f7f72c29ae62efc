"""The restore drill of docs/operations.md ("Backups"): a ``pg_dump`` of a live database, restored
into a new database with ``pg_restore``, holds a ledger that checks out — every transfer balanced,
every cached balance equal to the sum of its entries — and the same balances as the original."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import ledger
from app.db.models import LedgerAccount
from app.db.session import Database
from tests.db.helpers import assert_ledger_sound, make_player
from tests.db.support import PostgresServer

pytestmark = pytest.mark.postgres


def _libpq(url: str) -> str:
    """The database URL as pg_dump and pg_restore take it."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _balances(db: Database) -> dict[str, int]:
    async with db.session() as session:
        rows = (await session.execute(select(LedgerAccount.code, LedgerAccount.balance))).all()
    return {code: int(balance) for code, balance in rows}


async def test_a_dump_restored_into_a_new_database_has_a_ledger_that_checks_out(
    postgres_server: PostgresServer, postgres_template: str
) -> None:
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("pg_dump / pg_restore not installed")
    source_name = postgres_server.create(template=postgres_template)
    target_name = postgres_server.create()  # empty: the restore brings the schema and the data
    source = Database(postgres_server.url_for(source_name))
    target = Database(postgres_server.url_for(target_name))
    try:
        players = [await make_player(source, balance=500) for _ in range(4)]

        async def move(session: AsyncSession) -> None:
            wallets = await ledger.wallet_ids(session, players)
            for index, (payer, payee) in enumerate(zip(players, players[1:] + players[:1], strict=True)):
                await ledger.transfer(
                    session,
                    key=f"drill:{index}",
                    reason="admin_adjustment",
                    moves=[(wallets[payer], wallets[payee], 10 * (index + 1))],
                )

        await source.write(move)
        await assert_ledger_sound(source)
        before = await _balances(source)

        dump = subprocess.run(
            ["pg_dump", "--format=custom", "--no-owner", _libpq(postgres_server.url_for(source_name))],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(
            ["pg_restore", "--no-owner", "--exit-on-error", "-d", _libpq(postgres_server.url_for(target_name))],
            input=dump,
            check=True,
            capture_output=True,
        )
        await assert_ledger_sound(target)
        assert await _balances(target) == before
        assert sum(value for code, value in before.items()) == 0  # coins only move: the mint holds minus the rest
    finally:
        await source.dispose()
        await target.dispose()
        postgres_server.drop(source_name)
        postgres_server.drop(target_name)
