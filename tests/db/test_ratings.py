"""Ratings (app/db/ratings.py): which matches are rated, by finishing order, once per match, and the
leaderboard and profile queries."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from sqlalchemy import func, inspect, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import matches, migrate, ratings, stakes
from app.db.models import Rating, RatingChange
from app.db.session import Database
from app.db.stakes import MatchRecord
from tests.db.helpers import assert_ledger_sound, make_player
from tests.db.support import sqlite_url


def before_ratings(url: str) -> str:
    """The revision migration 0004 (ratings) follows."""
    revision = ScriptDirectory.from_config(migrate.alembic_config(url)).get_revision("0004")
    assert revision is not None and isinstance(revision.down_revision, str)
    return revision.down_revision


T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def account_seats(*ids: int) -> list[dict[str, Any]]:
    return [{"seat": i, "account_id": a, "display_name": f"P{a}"} for i, a in enumerate(ids)]


def win_for(first: int, n: int, *, durak: int | None = None) -> dict[str, Any]:
    """Seat ``first`` out first, the others after in seat order, ``durak`` (default the last) durak."""
    durak = n - 1 if durak is None else durak
    order = [first] + [s for s in range(n) if s not in (first, durak)]
    return {"draw": False, "durak": durak, "order": order, "places": [[s] for s in order] + [[durak]]}


async def record(
    db: Database, match_id: str, seats: list[dict[str, Any]], result: dict[str, Any], **extra: Any
) -> None:
    kwargs: dict[str, Any] = {
        "match_id": match_id,
        "table_id": "t1",
        "rules": {"deck": 36, "seats": len(seats), "stake": 0},
        "seed": 7,
        "dealer": 0,
        "seats": seats,
        "actions": [],
        "result": result,
        "created_at": T0,
        "finished_at": T0 + timedelta(minutes=5),
        **extra,
    }
    await db.write(lambda s: matches.record_match(s, MatchRecord(**kwargs)))


async def rating_rows(db: Database) -> dict[int, Rating]:
    async with db.session() as session:
        return {row.account_id: row for row in (await session.scalars(select(Rating))).all()}


async def history_count(db: Database, match_id: str | None = None) -> int:
    query = select(func.count()).select_from(RatingChange)
    if match_id is not None:
        query = query.where(RatingChange.match_id == match_id)
    async with db.session() as session:
        return int(await session.scalar(query) or 0)


async def test_winner_goes_up_and_the_durak_down(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await record(db, "m1", account_seats(a, b), win_for(0, 2))
    rows = await rating_rows(db)
    assert rows[a].mu > ratings.START_MU > rows[b].mu
    assert rows[a].sigma < ratings.START_SIGMA and rows[b].sigma < ratings.START_SIGMA
    assert rows[a].matches == rows[b].matches == 1
    async with db.session() as session:
        shown = await ratings.ratings_of(session, [a, b])
    assert shown[a].rating > shown[b].rating
    assert shown[a].provisional and shown[b].provisional
    assert await history_count(db, "m1") == 2


async def test_finishing_order_of_four_with_a_shared_place(db: Database) -> None:
    ids = [await make_player(db) for _ in range(4)]
    # seat 2 first, seats 0 and 3 share second place, seat 1 is the durak
    result = {"draw": False, "durak": 1, "order": [2, 0, 3], "places": [[2], [0, 3], [1]]}
    await record(db, "m4", account_seats(*ids), result)
    rows = await rating_rows(db)
    mus = [rows[i].mu for i in ids]
    assert mus[2] > mus[0] > mus[1] and mus[0] == pytest.approx(mus[3])
    async with db.session() as session:
        places = dict((await session.execute(select(RatingChange.account_id, RatingChange.place))).all())
    assert [places[i] for i in ids] == [2, 4, 1, 2]


def test_finishing_ranks() -> None:
    assert ratings.finishing_ranks([0, 1, 2], draw=True, durak=None, places=[[0, 1, 2]]) == {0: 1, 1: 1, 2: 1}
    assert ratings.finishing_ranks([0, 1, 2], draw=False, durak=0, places=[[2], [1], [0]]) == {0: 3, 1: 2, 2: 1}
    assert ratings.finishing_ranks([0, 1, 2], draw=False, durak=1, places=[[0, 2], [1]]) == {0: 1, 1: 3, 2: 1}
    # a forfeit: the forfeiting seat is the durak even if the places leave it out
    assert ratings.finishing_ranks([0, 1], draw=False, durak=1, places=[[0]]) == {0: 1, 1: 2}


async def test_a_draw_ties_everyone(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await record(db, "d1", account_seats(a, b), {"draw": True, "durak": None, "order": [0, 1], "places": [[0, 1]]})
    rows = await rating_rows(db)
    assert rows[a].mu == pytest.approx(ratings.START_MU) and rows[b].mu == pytest.approx(ratings.START_MU)
    assert rows[a].sigma < ratings.START_SIGMA and rows[a].matches == 1


async def test_a_forfeit_is_rated_like_any_loss(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    result = {"draw": False, "durak": 0, "order": [1], "places": [[1], [0]], "forfeit": 0, "reason": "left"}
    await record(db, "f1", account_seats(a, b), result)
    rows = await rating_rows(db)
    assert rows[b].mu > rows[a].mu and rows[a].matches == 1


@pytest.mark.parametrize(
    "other",
    [{"guest_name": "visitor", "display_name": "visitor"}, {"bot_level": "hard", "display_name": "Bot (hard)"}],
    ids=["guest", "bot"],
)
async def test_a_match_with_a_guest_or_a_bot_is_not_rated(db: Database, other: dict[str, Any]) -> None:
    a, b = await make_player(db), await make_player(db)
    seats = [*account_seats(a, b), {"seat": 2, **other}]
    await record(db, "u1", seats, win_for(0, 3))
    assert await rating_rows(db) == {}
    assert await history_count(db) == 0
    async with db.session() as session:
        assert (await ratings.ratings_of(session, [a]))[a] == ratings.NEW_PLAYER


async def test_recording_the_same_match_again_never_rates_twice(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    for _ in range(3):
        await record(db, "same", account_seats(a, b), win_for(0, 2))
    rows = await rating_rows(db)
    assert rows[a].matches == rows[b].matches == 1
    assert await history_count(db) == 2
    async with db.session() as session:
        again = await ratings.rate_match(
            session, match_id="same", accounts={0: a, 1: b}, draw=False, durak=1, places=[[0], [1]]
        )
    assert again is False


async def test_a_crash_before_commit_rates_nothing_and_the_replay_rates_once(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)

    async def crash_after_recording(session: AsyncSession) -> None:
        await matches.record_match(
            session,
            MatchRecord(
                match_id="crashy",
                table_id="t1",
                rules={"deck": 36, "seats": 2, "stake": 0},
                seed=1,
                dealer=0,
                seats=account_seats(a, b),
                actions=[],
                result=win_for(1, 2, durak=0),
                created_at=T0,
            ),
        )
        raise ConnectionError("the process died before the commit")

    with pytest.raises(ConnectionError):
        await db.write(crash_after_recording)
    assert await rating_rows(db) == {}
    await record(db, "crashy", account_seats(a, b), win_for(1, 2, durak=0))
    await record(db, "crashy", account_seats(a, b), win_for(1, 2, durak=0))
    rows = await rating_rows(db)
    assert rows[a].matches == rows[b].matches == 1 and rows[b].mu > rows[a].mu


async def test_a_staked_settlement_replayed_rates_once(db: Database) -> None:
    a, b = await make_player(db, balance=100), await make_player(db, balance=100)
    await stakes.open_escrow(db, match_id="s1", stake=10, account_ids=[a, b])
    match = stakes.MatchRecord(
        match_id="s1",
        table_id="t1",
        rules={"deck": 36, "seats": 2, "stake": 10},
        seed=3,
        dealer=0,
        seats=account_seats(a, b),
        actions=[],
        result=win_for(0, 2),
        created_at=T0,
        finished_at=T0 + timedelta(minutes=3),
        coin_changes={0: 10, 1: -10},
    )
    await stakes.settle_escrow(db, match_id="s1", payouts={a: 20, b: 0}, record=match)
    await stakes.settle_escrow(db, match_id="s1", payouts={a: 20, b: 0}, record=match)  # the replay
    # and the record on its own (what a retry of the free path would do) changes nothing either
    await db.write(lambda s: stakes.record_finished(s, match, {0: 10, 1: -10}))
    rows = await rating_rows(db)
    assert rows[a].matches == rows[b].matches == 1 and rows[a].mu > rows[b].mu
    assert await history_count(db) == 2
    await assert_ledger_sound(db)


async def test_matches_finishing_at_once_for_the_same_players_are_both_rated(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await asyncio.gather(
        *(record(db, f"c{i}", account_seats(a, b), win_for(i % 2, 2, durak=1 - i % 2)) for i in range(6))
    )
    rows = await rating_rows(db)
    assert rows[a].matches == rows[b].matches == 6
    assert await history_count(db) == 12


async def test_leaderboard_lists_only_established_players_best_first(db: Database) -> None:
    strong, weak, newcomer = await make_player(db), await make_player(db), await make_player(db)
    for i in range(5):
        await record(db, f"lb{i}", account_seats(strong, weak), win_for(0, 2))
    await record(db, "lbn", account_seats(newcomer, weak), win_for(0, 2))
    async with db.session() as session:
        rows, total = await ratings.leaderboard(session, offset=0, limit=10)
        second_page, _ = await ratings.leaderboard(session, offset=1, limit=10)
        history = await ratings.rating_history(session, strong)
        stats = await ratings.match_stats(session, weak)
    assert total == 2
    assert [row.account_id for row in rows] == [strong, weak] and [row.rank for row in rows] == [1, 2]
    assert rows[0].rating > rows[1].rating and rows[0].matches == 5 and rows[1].matches == 6
    assert [row.account_id for row in second_page] == [weak] and second_page[0].rank == 2
    assert [point["match_id"] for point in history] == [f"lb{i}" for i in range(5)]
    assert all(point["change"] > 0 for point in history)
    assert history[-1]["rating"] == rows[0].rating
    assert stats == {"2p-36": {"played": 6, "wins": 0, "durak": 6, "draws": 0}}


def test_display_scale_starts_at_1500() -> None:
    assert ratings.display(ratings.START_MU, ratings.START_SIGMA) == 1500
    assert ratings.NEW_PLAYER.provisional and ratings.NEW_PLAYER.rating == 1500


async def test_migration_0004_adds_the_rating_tables_over_existing_data_and_removes_them(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "ratings.sqlite3")
    await migrate.upgrade(url, before_ratings(url))
    db = Database(url)
    try:
        # new=True: that revision has no table of counted matches (0009) to write to.
        a, b = await make_player(db, new=True), await make_player(db, new=True)
        await migrate.upgrade(url)  # an existing database with accounts gets the tables, empty
        await record(db, "after-upgrade", account_seats(a, b), win_for(0, 2))
        assert (await rating_rows(db))[a].matches == 1
        await migrate.downgrade(url, before_ratings(url))
        async with db.engine.connect() as conn:
            names = set(await conn.run_sync(lambda sync: inspect(sync).get_table_names()))
        assert "accounts" in names and not names & {"ratings", "rating_history"}
        await migrate.upgrade(url)
        await migrate.check(url)
    finally:
        await db.dispose()
