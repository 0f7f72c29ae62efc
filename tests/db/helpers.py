"""Small builders shared by the db tests."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import accounts, ledger
from app.db.models import CountedMatches, LedgerAccount
from app.db.session import Database
from app.integrity_policy import IntegrityRules

FAKE_HASH = "$argon2id$v=19$m=65536,t=3,p=4$not-a-real-hash"


async def make_player(
    db: Database, *, balance: int = 1000, name: str | None = None, role: str = "player", new: bool = False
) -> int:
    """An account credited with ``balance`` from the mint; returns the account id. It has played the
    matches an account needs before it may play for coins, unless ``new`` (docs/integrity.md)."""
    name = name or f"p{uuid.uuid4().hex[:10]}"

    async def create(session: AsyncSession) -> int:
        account = await accounts.create_account(
            session, name=name, password_hash=FAKE_HASH, starting_balance=balance, role=role
        )
        if not new:
            session.add(CountedMatches(account_id=account.id, matches=IntegrityRules().new_account_matches))
            await session.flush()
        return account.id

    return await db.write(create)


async def balance(db: Database, account_id: int) -> int:
    async with db.session() as session:
        value = await ledger.balance_of(session, account_id)
    assert value is not None
    return value


async def ledger_balance(db: Database, code: str) -> int:
    async with db.session() as session:
        value = await session.scalar(select(LedgerAccount.balance).where(LedgerAccount.code == code))
    assert value is not None
    return int(value)


async def assert_ledger_sound(db: Database) -> None:
    async with db.session() as session:
        report = await ledger.audit(session)
    assert report.ok, report
