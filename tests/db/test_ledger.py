"""The ledger's rules, one at a time, on both backends."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from app.db import ledger
from app.db.errors import IdempotencyConflict, InsufficientFunds, UnknownLedgerAccount
from app.db.models import HOUSE_ADJUSTMENTS, HOUSE_MINT, LedgerEntry, LedgerTransfer
from app.db.session import Database
from tests.db.helpers import assert_ledger_sound, balance, ledger_balance, make_player


async def test_signup_grant_comes_from_the_mint_through_the_ledger(db: Database) -> None:
    alice = await make_player(db, balance=1000)
    assert await balance(db, alice) == 1000
    assert await ledger_balance(db, HOUSE_MINT) == -1000  # the house may go negative; players may not
    async with db.session() as session:
        transfer = await ledger.find_transfer(session, f"signup:{alice}")
        assert transfer is not None and transfer.reason == "signup_grant"
        assert sum(transfer.deltas.values()) == 0
    await assert_ledger_sound(db)


async def test_transfer_moves_coins_balanced_and_once_per_key(db: Database) -> None:
    alice, bob = await make_player(db), await make_player(db)
    async with db.session() as session:
        a, b = await ledger.wallet_id(session, alice), await ledger.wallet_id(session, bob)

    first = await db.write(lambda s: ledger.transfer(s, key="t1", reason="test", moves=[(a, b, 300)]))
    again = await db.write(lambda s: ledger.transfer(s, key="t1", reason="test", moves=[(a, b, 300)]))
    assert not first.replayed and again.replayed and again.id == first.id
    assert await balance(db, alice) == 700 and await balance(db, bob) == 1300
    async with db.session() as session:
        entries = (await session.scalars(select(LedgerEntry).where(LedgerEntry.transfer_id == first.id))).all()
        assert sorted(e.amount for e in entries) == [-300, 300]
        assert {e.account_id: e.balance_after for e in entries} == {a: 700, b: 1300}
    await assert_ledger_sound(db)


async def test_same_key_for_a_different_transfer_is_refused(db: Database) -> None:
    alice, bob = await make_player(db), await make_player(db)
    async with db.session() as session:
        a, b = await ledger.wallet_id(session, alice), await ledger.wallet_id(session, bob)
    await db.write(lambda s: ledger.transfer(s, key="k", reason="test", moves=[(a, b, 10)]))
    with pytest.raises(IdempotencyConflict):
        await db.write(lambda s: ledger.transfer(s, key="k", reason="test", moves=[(a, b, 11)]))
    assert await balance(db, alice) == 990


async def test_overdraw_raises_naming_the_account_and_writes_nothing(db: Database) -> None:
    alice, bob = await make_player(db, balance=50, name="Alice"), await make_player(db)
    async with db.session() as session:
        a, b = await ledger.wallet_id(session, alice), await ledger.wallet_id(session, bob)
        transfers_before = await session.scalar(select(func.count()).select_from(LedgerTransfer))
    with pytest.raises(InsufficientFunds) as info:
        await db.write(lambda s: ledger.transfer(s, key="big", reason="test", moves=[(a, b, 51)]))
    assert info.value.account_id == alice and "Alice" in str(info.value) and info.value.balance == 50
    assert await balance(db, alice) == 50
    async with db.session() as session:
        assert await session.scalar(select(func.count()).select_from(LedgerTransfer)) == transfers_before
        assert await ledger.find_transfer(session, "big") is None


async def test_house_accounts_may_go_negative_players_may_not_even_bypassing_the_code(db: Database) -> None:
    alice = await make_player(db, balance=5)
    async with db.session() as session:
        house = await ledger.house_account_id(session, HOUSE_ADJUSTMENTS)
        wallet = await ledger.wallet_id(session, alice)
    await db.write(lambda s: ledger.transfer(s, key="gift", reason="test", moves=[(house, wallet, 10)]))
    assert await ledger_balance(db, HOUSE_ADJUSTMENTS) == -10
    with pytest.raises(IntegrityError):  # the CHECK constraint holds even for a raw UPDATE
        async with db.transaction() as session:
            await session.execute(text("UPDATE ledger_accounts SET balance = -1 WHERE id = :id"), {"id": wallet})


async def test_invalid_moves_are_refused(db: Database) -> None:
    alice = await make_player(db)
    async with db.session() as session:
        a = await ledger.wallet_id(session, alice)
    for moves in ([], [(a, a, 5)], [(a, a + 1000, 0)], [(a, a + 1000, -5)]):
        with pytest.raises(ValueError):
            await db.write(lambda s, m=moves: ledger.transfer(s, key="bad", reason="test", moves=m))
    with pytest.raises(UnknownLedgerAccount):
        await db.write(lambda s: ledger.transfer(s, key="bad", reason="test", moves=[(a, 999_999, 5)]))
    assert await balance(db, alice) == 1000
