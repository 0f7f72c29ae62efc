"""Seasons (app/db/seasons.py): bounds from a given time, the soft reset, rating in the season of the
match once per match, and the rollover that archives final standings once, whoever runs it."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select

from app.api.social import ROLL_OVER_EVERY_S, roll_over_forever
from app.db import matches, seasons
from app.db.models import Rating, Season, SeasonRating, SeasonRatingChange, SeasonStanding
from app.db.ratings import START_MU, START_SIGMA, display
from app.db.session import Database
from app.db.stakes import MatchRecord
from tests.db.helpers import make_player
from tests.support.clock import FakeClock
from tests.support.wait import eventually

RULES = seasons.SeasonRules()  # calendar months, mu kept by half, sigma widened halfway
DEC = datetime(2026, 12, 10, 20, 0, tzinfo=UTC)
JAN = datetime(2027, 1, 3, 9, 0, tzinfo=UTC)


def test_monthly_weekly_and_daily_bounds() -> None:
    assert seasons.season_bounds(DEC, "1m") == (datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    # the last instant of a season belongs to it, the next one to the next season
    end = datetime(2027, 1, 1, tzinfo=UTC)
    assert seasons.season_bounds(end - timedelta(microseconds=1), "1m")[1] == end
    assert seasons.season_bounds(end, "1m")[0] == end
    assert seasons.season_bounds(DEC, "3m") == (datetime(2026, 10, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC))
    start, stop = seasons.season_bounds(DEC, "2w")
    assert start.weekday() == 0 and stop - start == timedelta(weeks=2) and start <= DEC < stop
    assert seasons.season_bounds(DEC, "1d") == (datetime(2026, 12, 10, tzinfo=UTC), datetime(2026, 12, 11, tzinfo=UTC))
    with pytest.raises(ValueError):
        seasons.season_bounds(DEC, "0m")


def test_the_soft_reset_pulls_mu_toward_the_start_and_widens_sigma_without_zeroing_it() -> None:
    mu, sigma = seasons.soft_reset(START_MU + 10, 2.0, RULES)
    assert mu == pytest.approx(START_MU + 5)
    assert sigma == pytest.approx(2.0 + (START_SIGMA - 2.0) / 2)
    assert 2.0 < sigma < START_SIGMA
    assert seasons.soft_reset(START_MU - 8, 3.0, seasons.SeasonRules(mu_keep=1.0, sigma_widen=0.0)) == (
        START_MU - 8,
        3.0,
    )


def seats_of(*ids: int) -> list[dict[str, Any]]:
    return [{"seat": i, "account_id": a, "display_name": f"P{a}"} for i, a in enumerate(ids)]


async def play(db: Database, match_id: str, winner: int, loser: int, at: datetime) -> bool:
    """Record a rated match (``winner`` out first) finished at ``at`` and rate it in its season."""
    record = MatchRecord(
        match_id=match_id,
        table_id="t1",
        rules={"deck": 36, "seats": 2, "stake": 0},
        seed=7,
        dealer=0,
        seats=seats_of(winner, loser),
        actions=[],
        result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
        created_at=at - timedelta(minutes=5),
        finished_at=at,
    )
    await db.write(lambda s: matches.record_match(s, record))
    return await db.write(lambda s: seasons.rate_match(s, match_id=match_id, rules=RULES))


async def season_rows(db: Database) -> list[Season]:
    async with db.session() as session:
        return list((await session.scalars(select(Season).order_by(Season.starts_at))).all())


async def season_rating(db: Database, season_id: int, account: int) -> SeasonRating | None:
    async with db.session() as session:
        return await session.get(SeasonRating, (season_id, account))


async def test_a_match_is_rated_in_its_season_once_from_the_soft_reset_all_time_rating(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    assert await play(db, "m1", a, b, DEC) is True
    assert await db.write(lambda s: seasons.rate_match(s, match_id="m1", rules=RULES)) is False  # once
    [season] = await season_rows(db)
    assert (season.starts_at, season.ends_at) == seasons.season_bounds(DEC, "1m")
    winner = await season_rating(db, season.id, a)
    assert winner is not None and winner.matches == 1
    async with db.session() as session:
        [change] = (await session.scalars(select(SeasonRatingChange).where(SeasonRatingChange.account_id == a))).all()
    # a new player's all-time rating, softly reset, is where his season began
    assert (change.mu_before, change.sigma_before) == pytest.approx(seasons.soft_reset(START_MU, START_SIGMA, RULES))
    assert change.mu > change.mu_before and winner.mu == pytest.approx(change.mu)
    async with db.session() as session:
        told = await seasons.match_rating_changes(session, "m1")
    assert told[a]["change"] > 0 > told[b]["change"]
    assert told[a]["season_change"] > 0 > told[b]["season_change"]
    assert told[a]["provisional"] is True


async def test_an_unrated_match_is_not_rated_in_a_season(db: Database) -> None:
    a = await make_player(db)
    record = MatchRecord(
        match_id="bot1",
        table_id="t1",
        rules={"deck": 36, "seats": 2, "stake": 0},
        seed=1,
        dealer=0,
        seats=[*seats_of(a), {"seat": 1, "bot_level": "easy", "display_name": "Bot (easy)"}],
        actions=[],
        result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
        created_at=DEC,
        finished_at=DEC,
    )
    await db.write(lambda s: matches.record_match(s, record))
    assert await db.write(lambda s: seasons.rate_match(s, match_id="bot1", rules=RULES)) is False
    assert await season_rows(db) == []


async def test_the_next_season_starts_each_player_from_a_soft_reset_of_his_rating(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    for i in range(6):
        await play(db, f"d{i}", a, b, DEC + timedelta(hours=i))
    async with db.session() as session:
        all_time = await session.get(Rating, a)
    assert all_time is not None
    await play(db, "j1", a, b, JAN)
    december, january = await season_rows(db)
    assert january.starts_at == datetime(2027, 1, 1, tzinfo=UTC)
    async with db.session() as session:
        first = await session.scalar(
            select(SeasonRatingChange).where(
                SeasonRatingChange.season_id == january.id, SeasonRatingChange.account_id == a
            )
        )
    assert first is not None
    reset_mu, reset_sigma = seasons.soft_reset(all_time.mu, all_time.sigma, RULES)
    assert (first.mu_before, first.sigma_before) == pytest.approx((reset_mu, reset_sigma))
    assert first.sigma_before > all_time.sigma  # uncertainty widened
    assert START_MU < first.mu_before < all_time.mu  # halfway back toward the start
    assert (await season_rating(db, january.id, a)).matches == 1  # type: ignore[union-attr]
    assert (await season_rating(db, december.id, a)).matches == 6  # type: ignore[union-attr]


async def standings_of(db: Database, season_id: int) -> list[tuple[int, int, int]]:
    async with db.session() as session:
        rows = (
            await session.scalars(
                select(SeasonStanding).where(SeasonStanding.season_id == season_id).order_by(SeasonStanding.rank)
            )
        ).all()
    return [(row.rank, row.account_id, row.matches) for row in rows]


async def test_the_rollover_archives_final_standings_once(db: Database) -> None:
    a, b, c = await make_player(db), await make_player(db), await make_player(db)
    for i in range(5):
        await play(db, f"ab{i}", a, b, DEC + timedelta(hours=i))
        await play(db, f"bc{i}", b, c, DEC + timedelta(hours=i, minutes=30))
    await play(db, "ac0", a, c, DEC + timedelta(days=1))  # c: 6 matches, a: 6, b: 10
    [december] = await season_rows(db)
    # nothing to archive while December runs
    assert await db.write(lambda s: seasons.roll_over(s, DEC + timedelta(days=2), RULES)) == []
    assert await db.write(lambda s: seasons.roll_over(s, JAN, RULES)) == [december.id]
    assert await db.write(lambda s: seasons.roll_over(s, JAN + timedelta(hours=1), RULES)) == []
    ranked = await standings_of(db, december.id)
    assert [account for _, account, _ in ranked] == [a, b, c]
    assert [rank for rank, _, _ in ranked] == [1, 2, 3]
    async with db.session() as session:
        archived = await session.get(Season, december.id, populate_existing=True)
        assert archived is not None and archived.archived_at == JAN and archived.players == 3
        page, total = await seasons.standings(session, archived, offset=1, limit=5)
    assert total == 3 and [(row.rank, row.account_id) for row in page] == [(2, b), (3, c)]
    # the archive no longer moves: a late match of December is rated in January
    await play(db, "late", c, a, DEC + timedelta(days=20))
    assert await standings_of(db, december.id) == ranked
    async with db.session() as session:
        late = await session.scalar(
            select(SeasonRatingChange.season_id).where(SeasonRatingChange.match_id == "late").limit(1)
        )
        january = await seasons.season_containing(session, JAN)
    assert january is not None and late == january.id


async def test_the_rollover_loop_looks_once_a_minute_on_its_clock(db: Database) -> None:
    """The server's loop: it opens the season at once, then archives it within a minute of its end
    and does nothing in between (its wait is on the fake clock, so "nothing" needs no real sleep)."""
    end = datetime(2027, 1, 1, tzinfo=UTC)
    clock = FakeClock(start=(end - timedelta(seconds=30)).timestamp())

    def now() -> datetime:
        return datetime.fromtimestamp(clock.now, UTC)

    task = asyncio.create_task(roll_over_forever(db, RULES, now, clock.sleep))

    async def archived() -> list[bool]:
        return [season.archived_at is not None for season in await season_rows(db)]

    try:
        await eventually(lambda: clock.sleeping() == 1, what="the first pass is done")
        assert await archived() == [False]  # December, opened
        await clock.advance(ROLL_OVER_EVERY_S - 1)  # past the end of December, not yet a minute
        assert clock.sleeping() == 1 and await archived() == [False]
        await clock.advance(1)
        await eventually(lambda: clock.sleeping() == 1, what="the second pass is done")
        assert await archived() == [True, False]  # December archived, January opened
    finally:
        task.cancel()


async def test_players_with_fewer_than_five_matches_are_not_ranked(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    for i in range(4):
        await play(db, f"x{i}", a, b, DEC + timedelta(hours=i))
    [december] = await season_rows(db)
    await db.write(lambda s: seasons.roll_over(s, JAN, RULES))
    assert await standings_of(db, december.id) == []
    async with db.session() as session:
        mine = await seasons.player_season(session, a, december)
    assert mine is not None and mine["provisional"] is True and mine["rank"] is None and mine["matches"] == 4


async def test_concurrent_rollovers_in_two_processes_archive_once(db: Database, database_url: str) -> None:
    a, b = await make_player(db), await make_player(db)
    for i in range(5):
        await play(db, f"c{i}", a, b, DEC + timedelta(hours=i))
    [december] = await season_rows(db)
    others = [Database(database_url) for _ in range(3)]
    try:
        done = await asyncio.gather(*(other.write(lambda s: seasons.roll_over(s, JAN, RULES)) for other in others))
    finally:
        for other in others:
            await other.dispose()
    assert sorted(len(ids) for ids in done) == [0, 0, 1]
    async with db.session() as session:
        count = await session.scalar(
            select(func.count()).select_from(SeasonStanding).where(SeasonStanding.season_id == december.id)
        )
        starts = (await session.scalars(select(Season.starts_at))).all()
    assert count == 2
    assert len(starts) == len(set(starts)) == 2  # one January, however many processes opened it


async def test_a_running_season_keeps_its_bounds_when_the_length_changes(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await play(db, "m1", a, b, DEC)
    weekly = seasons.SeasonRules(length="1w")
    async with db.transaction() as session:
        same = await seasons.season_at(session, DEC + timedelta(days=3), weekly)
        assert same.ends_at == datetime(2027, 1, 1, tzinfo=UTC)
        after = await seasons.season_at(session, datetime(2027, 1, 2, tzinfo=UTC), weekly)
    # the first weekly season starts where December ended, and ends on the weeks' own bounds
    assert after.starts_at == datetime(2027, 1, 1, tzinfo=UTC)
    assert after.ends_at == seasons.season_bounds(datetime(2027, 1, 2, tzinfo=UTC), "1w")[1]


def test_display_is_the_leaderboard_number() -> None:
    assert display(START_MU, START_SIGMA) == 1500
