"""Tournaments in the database: fees escrowed and refunded, points counted once, the final standings
and the prizes paid exactly (docs/tournaments.md)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db import tournaments as store
from app.db.errors import InsufficientFunds
from app.db.session import Database
from app.engine import Rules
from tests.db.helpers import assert_ledger_sound, balance, ledger_balance, make_player

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


def _new(fee: int, seats: int = 2) -> store.NewTournament:
    rules = Rules.for_preset("durak_peak", seats=seats, deck=36, stake=0, timer=30).to_json()
    return store.NewTournament("Cup", rules, fee, T0, 600, 30.0, None, True)


async def _tournament(db: Database, fee: int, seats: int = 2) -> int:
    return (await db.write(lambda s: store.create(s, _new(fee, seats)))).id


async def _play(db: Database, tid: int, code: str, players: list[int], places: list[list[int]], at: datetime) -> None:
    seats = [{"seat": i, "account_id": a, "name": f"p{a}", "bot_level": None} for i, a in enumerate(players)]
    await db.write(lambda s: store.open_game(s, tid, code, f"w{code}", seats, at))
    outcome = {"draw": False, "durak": places[-1][0], "places": places, "order": []}
    game = await db.write(
        lambda s: store.finish_game(s, code, match_id=f"m{code}", outcome=outcome, seats=seats, now=at)
    )
    assert game is not None


async def test_fees_are_escrowed_and_a_withdrawal_before_the_start_refunds(db: Database) -> None:
    tid = await _tournament(db, 100)
    a, b = await make_player(db), await make_player(db)
    await db.write(lambda s: store.enter(s, tid, a, T0 - timedelta(minutes=5)))
    await db.write(lambda s: store.enter(s, tid, b, T0 - timedelta(minutes=5)))
    assert await balance(db, a) == 900 and await ledger_balance(db, f"tournament:{tid}") == 200
    await db.write(lambda s: store.enter(s, tid, a, T0))  # entering again takes nothing more
    assert await balance(db, a) == 900
    await db.write(lambda s: store.withdraw(s, tid, b))
    assert await balance(db, b) == 1000 and await ledger_balance(db, f"tournament:{tid}") == 100
    await db.write(lambda s: store.enter(s, tid, b, T0))  # back in: a second fee, a key of its own
    assert await balance(db, b) == 900 and await ledger_balance(db, f"tournament:{tid}") == 200
    await assert_ledger_sound(db)


async def test_a_player_who_cannot_pay_is_not_entered(db: Database) -> None:
    tid = await _tournament(db, 100)
    poor = await make_player(db, balance=50)
    with pytest.raises(InsufficientFunds):
        await db.write(lambda s: store.enter(s, tid, poor, T0))
    async with db.session() as session:
        assert await store.entry_of(session, tid, poor) is None
    assert await balance(db, poor) == 50


async def test_cancel_refunds_every_fee_and_closes_entries(db: Database) -> None:
    tid = await _tournament(db, 70)
    players = [await make_player(db) for _ in range(3)]
    for p in players:
        await db.write(lambda s, p=p: store.enter(s, tid, p, T0))
    await db.write(lambda s: store.cancel(s, tid, "the organiser fell ill", T0))
    assert [await balance(db, p) for p in players] == [1000] * 3
    assert await ledger_balance(db, f"tournament:{tid}") == 0
    with pytest.raises(store.TournamentError):
        await db.write(lambda s: store.enter(s, tid, players[0], T0))
    with pytest.raises(store.TournamentError):
        await db.write(lambda s: store.cancel(s, tid, "again", T0))
    await assert_ledger_sound(db)


async def test_start_with_one_player_cancels_and_refunds(db: Database) -> None:
    tid = await _tournament(db, 40)
    a = await make_player(db)
    await db.write(lambda s: store.enter(s, tid, a, T0))
    row = await db.write(lambda s: store.start(s, tid, T0))
    assert row.status == "cancelled" and await balance(db, a) == 1000


async def test_points_are_counted_once_and_prizes_paid_exactly(db: Database) -> None:
    tid = await _tournament(db, 101)
    a, b, c, d = [await make_player(db) for _ in range(4)]
    for p in (a, b, c, d):
        await db.write(lambda s, p=p: store.enter(s, tid, p, T0))
    assert (await db.write(lambda s: store.start(s, tid, T0))).status == "running"
    await _play(db, tid, "t1", [a, b], [[0], [1]], T0 + timedelta(seconds=10))  # a 1
    await _play(db, tid, "t2", [c, d], [[1], [0]], T0 + timedelta(seconds=11))  # d 1
    await _play(db, tid, "t3", [a, d], [[0], [1]], T0 + timedelta(seconds=20))  # a 2
    # The same table's match again (a rematch there) counts nothing.
    again = await db.write(
        lambda s: store.finish_game(
            s,
            "t3",
            match_id="other",
            outcome={"draw": False, "durak": 0, "places": [[1], [0]]},
            seats=[{"seat": 0, "account_id": a}, {"seat": 1, "account_id": d}],
            now=T0,
        )
    )
    assert again is None
    row = await db.write(lambda s: store.finish(s, tid, T0 + timedelta(minutes=11)))
    assert row.status == "finished" and row.pool == 404
    async with db.session() as session:
        entries = {e.account_id: e for e in await store.entries(session, tid)}
    assert [entries[p].place for p in (a, d, b, c)] == [1, 2, 3, 4]
    assert [entries[p].points for p in (a, d, b, c)] == [2, 1, 0, 0]
    # 404 * 50 // 100 = 202, * 30 // 100 = 121, * 20 // 100 = 80: 403, the odd coin to the first.
    assert [entries[p].prize for p in (a, d, b, c)] == [203, 121, 80, 0]
    assert [await balance(db, p) for p in (a, d, b, c)] == [1000 - 101 + 203, 1000 - 101 + 121, 979, 899]
    assert await ledger_balance(db, f"tournament:{tid}") == 0
    assert (await db.write(lambda s: store.finish(s, tid, T0))).status == "finished"  # twice: nothing more
    await assert_ledger_sound(db)


async def test_nobody_played_refunds(db: Database) -> None:
    tid = await _tournament(db, 10)
    a, b = await make_player(db), await make_player(db)
    for p in (a, b):
        await db.write(lambda s, p=p: store.enter(s, tid, p, T0))
    await db.write(lambda s: store.start(s, tid, T0))
    row = await db.write(lambda s: store.finish(s, tid, T0 + timedelta(minutes=11)))
    assert row.status == "cancelled" and await balance(db, a) == 1000 and await balance(db, b) == 1000
