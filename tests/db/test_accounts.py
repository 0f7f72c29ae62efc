"""Accounts: names unique regardless of case, even when sign-ups race; a wallet and a grant each."""

from __future__ import annotations

import asyncio

import pytest

from app.db import accounts, ledger
from app.db.errors import NameTaken
from app.db.session import Database
from tests.db.helpers import FAKE_HASH, assert_ledger_sound


async def test_racing_signups_for_one_name_create_one_account(db: Database) -> None:
    names = ["Racer", "racer", "RACER", "rAcEr"] * 3

    async def signup(name: str) -> int:
        account = await db.write(
            lambda s: accounts.create_account(s, name=name, password_hash=FAKE_HASH, starting_balance=1000)
        )
        return account.id

    results = await asyncio.gather(*(signup(name) for name in names), return_exceptions=True)
    created = [r for r in results if isinstance(r, int)]
    assert len(created) == 1, results
    assert all(isinstance(r, NameTaken) for r in results if not isinstance(r, int))
    async with db.session() as session:
        assert (await accounts.get_by_name(session, "RaCeR")) is not None
        assert await ledger.balance_of(session, created[0]) == 1000
        report = await ledger.audit(session)
    assert report.total == 0
    await assert_ledger_sound(db)


async def test_bad_names_never_reach_the_database(db: Database) -> None:
    for name in ("a", "x" * 25, "has space", "semi;colon", "tab\t", "nul\x00"):
        with pytest.raises(ValueError):
            await db.write(
                lambda s, n=name: accounts.create_account(s, name=n, password_hash=FAKE_HASH, starting_balance=0)
            )
    account = await db.write(
        lambda s: accounts.create_account(s, name="zero_coins", password_hash=FAKE_HASH, starting_balance=0)
    )
    async with db.session() as session:
        assert await ledger.balance_of(session, account.id) == 0
