"""Escrow: open all-or-none, settle or refund (exclusive), idempotency, the open list, recording."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.db import matches, stakes
from app.db.errors import (
    EscrowClosed,
    EscrowNotFound,
    IdempotencyConflict,
    InsufficientFunds,
    NoWallet,
    PayoutMismatch,
)
from app.db.session import Database
from tests.db.helpers import assert_ledger_sound, balance, ledger_balance, make_player


async def test_open_moves_every_stake_into_escrow(db: Database) -> None:
    a, b, c = [await make_player(db) for _ in range(3)]
    info = await stakes.open_escrow(db, match_id="m1", stake=100, account_ids=[a, b, c])
    assert info.status == "open" and info.balance == 300 and info.stakes == {a: 100, b: 100, c: 100}
    assert [await balance(db, x) for x in (a, b, c)] == [900, 900, 900]
    assert await ledger_balance(db, "escrow:m1") == 300
    assert [e.match_id for e in await stakes.open_escrows(db)] == ["m1"]
    await assert_ledger_sound(db)


async def test_open_is_all_or_none_and_names_who_cannot_pay(db: Database) -> None:
    rich = await make_player(db, balance=1000)
    poor = await make_player(db, balance=99, name="Poor")
    with pytest.raises(InsufficientFunds) as info:
        await stakes.open_escrow(db, match_id="m2", stake=100, account_ids=[rich, poor])
    assert info.value.account_id == poor and "Poor" in str(info.value)
    assert await balance(db, rich) == 1000 and await balance(db, poor) == 99
    assert await stakes.get_escrow(db, match_id="m2") is None
    assert await stakes.open_escrows(db) == []
    # Nothing was left behind, so the same match can still be opened once everyone can pay.
    await stakes.open_escrow(db, match_id="m2", stake=99, account_ids=[rich, poor])
    assert await balance(db, poor) == 0
    await assert_ledger_sound(db)


async def test_open_is_idempotent_and_refuses_a_different_open_for_the_same_match(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    first = await stakes.open_escrow(db, match_id="m3", stake=50, account_ids=[a, b])
    again = await stakes.open_escrow(db, match_id="m3", stake=50, account_ids=[b, a])
    assert again == first and await balance(db, a) == 950
    with pytest.raises(IdempotencyConflict):
        await stakes.open_escrow(db, match_id="m3", stake=60, account_ids=[a, b])


async def test_guests_and_unknown_accounts_cannot_stake(db: Database) -> None:
    a = await make_player(db)
    with pytest.raises(NoWallet):
        await stakes.open_escrow(db, match_id="m4", stake=10, account_ids=[a, 424242])
    assert await balance(db, a) == 1000
    with pytest.raises(ValueError):
        await stakes.open_escrow(db, match_id="m4", stake=0, account_ids=[a])
    with pytest.raises(ValueError):
        await stakes.open_escrow(db, match_id="m4", stake=10, account_ids=[a, a])


async def test_settle_pays_out_exactly_the_escrow_once(db: Database) -> None:
    a, b, c = [await make_player(db) for _ in range(3)]
    await stakes.open_escrow(db, match_id="m5", stake=100, account_ids=[a, b, c])
    with pytest.raises(PayoutMismatch):
        await stakes.settle_escrow(db, match_id="m5", payouts={a: 200, b: 99})
    with pytest.raises(PayoutMismatch):
        await stakes.settle_escrow(db, match_id="m5", payouts={a: 200, 999: 100})
    info = await stakes.settle_escrow(db, match_id="m5", payouts={a: 200, b: 100, c: 0})
    assert info.status == "settled" and info.balance == 0 and info.closed_at is not None
    assert [await balance(db, x) for x in (a, b, c)] == [1100, 1000, 900]
    again = await stakes.settle_escrow(db, match_id="m5", payouts={a: 200, b: 100, c: 0})
    assert again.status == "settled" and await balance(db, a) == 1100
    with pytest.raises(IdempotencyConflict):
        await stakes.settle_escrow(db, match_id="m5", payouts={a: 300, c: 0})
    with pytest.raises(EscrowClosed, match="already settled"):
        await stakes.refund_escrow(db, match_id="m5")
    assert await stakes.open_escrows(db) == []
    await assert_ledger_sound(db)


async def test_refund_returns_every_stake_and_excludes_settling(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await stakes.open_escrow(db, match_id="m6", stake=250, account_ids=[a, b])
    info = await stakes.refund_escrow(db, match_id="m6")
    assert info.status == "refunded" and info.balance == 0
    assert await balance(db, a) == 1000 and await balance(db, b) == 1000
    assert (await stakes.refund_escrow(db, match_id="m6")).status == "refunded"  # idempotent
    assert await balance(db, a) == 1000
    with pytest.raises(EscrowClosed, match="already refunded"):
        await stakes.settle_escrow(db, match_id="m6", payouts={a: 500})
    with pytest.raises(EscrowNotFound):
        await stakes.refund_escrow(db, match_id="never-opened")
    await assert_ledger_sound(db)


async def test_settle_can_record_the_match_in_the_same_transaction(db: Database) -> None:
    a, b = await make_player(db, name="Ann"), await make_player(db, name="Ben")
    await stakes.open_escrow(db, match_id="m7", stake=100, account_ids=[a, b])
    record = stakes.MatchRecord(
        match_id="m7",
        table_id="t1",
        rules={"deck": 36, "seats": 2, "stake": 100},
        seed=12345678901234567890,
        dealer=0,
        seats=[
            {"seat": 0, "account_id": a, "display_name": "Ann"},
            {"seat": 1, "account_id": b, "display_name": "Ben"},
        ],
        actions=[],
        result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
    )
    await stakes.settle_escrow(db, match_id="m7", payouts={a: 200, b: 0}, record=record)
    async with db.session() as session:
        stored = await matches.get_match(session, "m7", viewer_id=a, viewer_is_admin=False)
        assert stored is not None
        assert stored.coin_changes == {"0": 100, "1": -100}
        assert stored.seed == "12345678901234567890"
        assert [(p.seat, p.account_id, p.place, p.coin_change) for p in stored.players] == [
            (0, a, 1, 100),
            (1, b, 2, -100),
        ]
