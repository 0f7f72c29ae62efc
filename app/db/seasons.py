"""Seasons: a rating per season beside the all-time one, season leaderboards and the final standings
of past seasons.

A season is [starts_at, ends_at) in UTC; its length is a setting (``DURAK_SEASON_LENGTH``: N days,
weeks from Mondays or months from the 1st; calendar months by default), and a season under way keeps
its bounds if the setting changes. Boundaries are computed from the time a caller passes (the
finishing time of a match, the server's clock): nothing here reads a clock of its own.

Every match the all-time rating takes (``app.db.ratings``) is rated again in the season its
``finished_at`` falls in, with the same model and the same finishing ranks, once per match (a row per
match and account in ``season_rating_history``). A player's season rating starts, at his first rated
match of the season, from his all-time rating as it stood then (which is its value at the season's
start: no rated match came between) **softly reset**: mu pulled toward a new player's by
``1 - mu_keep`` of the distance, sigma widened by ``sigma_widen`` of the way back to a new player's.

The **rollover** of a season that has ended archives it: its final standings (every player with at
least ``PROVISIONAL_BELOW`` rated matches in it, ranked by the ordinal) are written to
``season_standings`` and ``archived_at`` is set. It is idempotent and safe with several server
processes: only the transaction whose ``UPDATE ... WHERE archived_at IS NULL`` changed the row writes
the standings (PostgreSQL takes a row lock for it, SQLite has one writer), and a match being rated
holds the season row (``FOR SHARE``) so that no rating lands in a season after its standings were
taken. A match that reaches a season already archived (a settlement that came late) is rated in the
season open at the end of that one.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import SeasonRules as SeasonRules  # the settings group (DURAK_SEASON_*)
from app.db.base import utcnow
from app.db.models import Account, Match, RatingChange, Season, SeasonRating, SeasonRatingChange, SeasonStanding
from app.db.ratings import MODEL, PROVISIONAL_BELOW, START_MU, START_SIGMA, display
from app.tables.hooks import RatingChange as RatingChangeJson

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
FIRST_MONDAY = datetime(1970, 1, 5, tzinfo=UTC)


def season_bounds(at: datetime, length: str) -> tuple[datetime, datetime]:
    """The [start, end) of the season of ``length`` that holds ``at`` (UTC), seasons being laid
    end to end from 1970: N days from 1 January, N weeks from Monday 5 January, N months from January."""
    count, unit = int(length[:-1]), length[-1]
    if count < 1 or unit not in "dwm":
        raise ValueError(f"bad season length {length!r}")
    at = at.astimezone(UTC)
    if unit == "m":
        months = (at.year - 1970) * 12 + at.month - 1
        first = months - months % count
        start = datetime(1970 + first // 12, first % 12 + 1, 1, tzinfo=UTC)
        after = first + count
        return start, datetime(1970 + after // 12, after % 12 + 1, 1, tzinfo=UTC)
    origin, span = (EPOCH, timedelta(days=count)) if unit == "d" else (FIRST_MONDAY, timedelta(weeks=count))
    index = (at - origin) // span
    start = origin + index * span
    return start, start + span


def _insert(session: AsyncSession) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


def soft_reset(mu: float, sigma: float, rules: SeasonRules) -> tuple[float, float]:
    """A rating at a season's start: mu pulled toward a new player's, sigma widened toward his (never
    narrowed, never zeroed)."""
    reset_mu = START_MU + (mu - START_MU) * rules.mu_keep
    reset_sigma = sigma if sigma >= START_SIGMA else sigma + (START_SIGMA - sigma) * rules.sigma_widen
    return reset_mu, reset_sigma


# ---------------------------------------------------------------------- finding and opening seasons


async def season_containing(session: AsyncSession, at: datetime) -> Season | None:
    return await session.scalar(
        select(Season)
        .where(Season.starts_at <= at, Season.ends_at > at)
        .order_by(Season.starts_at.desc())
        .limit(1)
        .execution_options(populate_existing=True)
    )


async def season_at(session: AsyncSession, at: datetime, rules: SeasonRules) -> Season:
    """The season holding ``at``, opened (inserted) when there is none yet. A new season starts no
    earlier than the end of the one before it (the length setting may have changed)."""
    found = await season_containing(session, at)
    if found is not None:
        return found
    start, end = season_bounds(at, rules.length)
    before = await session.scalar(select(func.max(Season.ends_at)).where(Season.ends_at <= at))
    if before is not None and before > start:
        start = before
    after = await session.scalar(select(func.min(Season.starts_at)).where(Season.starts_at > at))
    if after is not None and after < end:
        end = after
    await session.execute(
        _insert(session)(Season)
        .values(starts_at=start, ends_at=end, players=0)
        .on_conflict_do_nothing(index_elements=["starts_at"])
    )
    season = await session.scalar(
        select(Season).where(Season.starts_at == start).execution_options(populate_existing=True)
    )
    assert season is not None
    return season


async def _hold(session: AsyncSession, season: Season) -> Season:
    """Read the season again holding it against its rollover (a shared row lock on PostgreSQL)."""
    query = select(Season).where(Season.id == season.id).execution_options(populate_existing=True)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(read=True)
    held = await session.scalar(query)
    assert held is not None
    return held


async def _open_season_for(session: AsyncSession, at: datetime, rules: SeasonRules) -> Season:
    """The season a match finished at ``at`` is rated in: the one holding ``at``, or, when that one
    is archived already, the one open at its end (and so on), held against its rollover."""
    season = await _hold(session, await season_at(session, at, rules))
    while season.archived_at is not None:
        season = await _hold(session, await season_at(session, max(at, season.ends_at), rules))
    return season


# ---------------------------------------------------------------------- rating


async def rate_match(session: AsyncSession, *, match_id: str, rules: SeasonRules) -> bool:
    """Rate a recorded match in its season, inside the caller's transaction: the match must have its
    all-time rating rows already (``app.db.ratings.rate_match``); the same finishing ranks count.
    Whether it was rated now (False: the match is not rated, or it was rated in its season before)."""
    changes = (
        await session.scalars(
            select(RatingChange).where(RatingChange.match_id == match_id).order_by(RatingChange.account_id)
        )
    ).all()
    if len(changes) < 2:
        return False
    already = await session.scalar(
        select(func.count()).select_from(SeasonRatingChange).where(SeasonRatingChange.match_id == match_id)
    )
    if already:
        return False
    finished = await session.scalar(select(Match.finished_at).where(Match.id == match_id))
    season = await _open_season_for(session, finished or changes[0].created_at, rules)
    ids = [change.account_id for change in changes]
    starts = [
        {
            "season_id": season.id,
            "account_id": change.account_id,
            "mu": soft_reset(change.mu_before, change.sigma_before, rules)[0],
            "sigma": soft_reset(change.mu_before, change.sigma_before, rules)[1],
            "matches": 0,
            "updated_at": utcnow(),
        }
        for change in changes
    ]
    await session.execute(
        _insert(session)(SeasonRating).values(starts).on_conflict_do_nothing(index_elements=["season_id", "account_id"])
    )
    rows = (
        await session.scalars(
            select(SeasonRating)
            .where(SeasonRating.season_id == season.id, SeasonRating.account_id.in_(ids))
            .order_by(SeasonRating.account_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).all()
    by_account = {row.account_id: row for row in rows}
    before = [by_account[account] for account in ids]
    teams = [[MODEL.rating(mu=row.mu, sigma=row.sigma)] for row in before]
    rated = MODEL.rate(teams, ranks=[float(change.place) for change in changes])
    when = changes[0].created_at
    for row, team in zip(before, rated, strict=True):
        after = team[0]
        session.add(
            SeasonRatingChange(
                season_id=season.id,
                account_id=row.account_id,
                match_id=match_id,
                mu_before=row.mu,
                sigma_before=row.sigma,
                mu=float(after.mu),
                sigma=float(after.sigma),
                created_at=when,
            )
        )
        row.mu, row.sigma = float(after.mu), float(after.sigma)
        row.matches += 1
        row.updated_at = when
    await session.flush()
    return True


async def match_rating_changes(session: AsyncSession, match_id: str) -> dict[int, RatingChangeJson]:
    """Account id -> what the match did to its ratings: ``{rating, change, provisional}`` all time and
    ``season_rating``, ``season_change`` (null when the match is not rated in a season yet)."""
    overall = (await session.scalars(select(RatingChange).where(RatingChange.match_id == match_id))).all()
    if not overall:
        return {}
    seasonal = {
        row.account_id: row
        for row in (
            await session.scalars(select(SeasonRatingChange).where(SeasonRatingChange.match_id == match_id))
        ).all()
    }
    counts = dict(
        (
            await session.execute(
                select(RatingChange.account_id, func.count())
                .where(
                    RatingChange.account_id.in_([row.account_id for row in overall]),
                    RatingChange.id <= max(row.id for row in overall),
                )
                .group_by(RatingChange.account_id)
            )
        ).all()
    )
    out: dict[int, RatingChangeJson] = {}
    for row in overall:
        season = seasonal.get(row.account_id)
        out[row.account_id] = {
            "rating": display(row.mu, row.sigma),
            "change": display(row.mu, row.sigma) - display(row.mu_before, row.sigma_before),
            "provisional": int(counts.get(row.account_id, 0)) < PROVISIONAL_BELOW,
            "season_rating": None if season is None else display(season.mu, season.sigma),
            "season_change": None
            if season is None
            else display(season.mu, season.sigma) - display(season.mu_before, season.sigma_before),
        }
    return out


# ---------------------------------------------------------------------- the rollover


async def archive(session: AsyncSession, season_id: int, now: datetime) -> bool:
    """Store the final standings of an ended season and mark it archived, once: whether this call did
    it (False: it was archived already, by this or another process)."""
    claimed = await session.execute(
        update(Season)
        .where(Season.id == season_id, Season.archived_at.is_(None), Season.ends_at <= now)
        .values(archived_at=now)
    )
    if getattr(claimed, "rowcount", 0) != 1:
        return False
    ordinal = SeasonRating.mu - 3 * SeasonRating.sigma
    rows = (
        await session.execute(
            select(SeasonRating.account_id, SeasonRating.mu, SeasonRating.sigma, SeasonRating.matches)
            .where(SeasonRating.season_id == season_id, SeasonRating.matches >= PROVISIONAL_BELOW)
            .order_by(ordinal.desc(), SeasonRating.account_id)
        )
    ).all()
    standings = [
        {
            "season_id": season_id,
            "account_id": account_id,
            "rank": rank,
            "rating": display(mu, sigma),
            "matches": matches,
        }
        for rank, (account_id, mu, sigma, matches) in enumerate(rows, start=1)
    ]
    for first in range(0, len(standings), 1000):
        await session.execute(_insert(session)(SeasonStanding).values(standings[first : first + 1000]))
    await session.execute(update(Season).where(Season.id == season_id).values(players=len(standings)))
    return True


async def roll_over(session: AsyncSession, now: datetime, rules: SeasonRules) -> list[int]:
    """Open the season holding ``now`` and archive every season that has ended; the ids archived by
    this call (idempotent: a second call, here or in another process, archives nothing)."""
    await season_at(session, now, rules)
    ended = (
        await session.scalars(
            select(Season.id).where(Season.archived_at.is_(None), Season.ends_at <= now).order_by(Season.starts_at)
        )
    ).all()
    return [season_id for season_id in ended if await archive(session, season_id, now)]


async def needs_roll_over(session: AsyncSession, now: datetime) -> bool:
    """Whether ``roll_over`` has anything to do at ``now`` (a read; the common answer is no)."""
    current = await season_containing(session, now)
    if current is None:
        return True
    pending = await session.scalar(
        select(func.count()).select_from(Season).where(Season.archived_at.is_(None), Season.ends_at <= now)
    )
    return bool(pending)


# ---------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class StandingRow:
    rank: int
    account_id: int
    name: str
    rating: int
    matches: int


def season_json(season: Season, now: datetime) -> dict[str, Any]:
    return {
        "id": season.id,
        "starts_at": season.starts_at,
        "ends_at": season.ends_at,
        "current": season.starts_at <= now < season.ends_at,
        "archived": season.archived_at is not None,
        "players": season.players,
    }


async def list_seasons(session: AsyncSession, *, offset: int, limit: int) -> tuple[list[Season], int]:
    """Every season, newest first, a page; and how many there are."""
    total = int(await session.scalar(select(func.count()).select_from(Season)) or 0)
    rows = (await session.scalars(select(Season).order_by(Season.starts_at.desc()).offset(offset).limit(limit))).all()
    return list(rows), total


async def standings(session: AsyncSession, season: Season, *, offset: int, limit: int) -> tuple[list[StandingRow], int]:
    """A page of a season's leaderboard, best first, and how many it ranks: an archived season's final
    standings, or the live board of players with at least ``PROVISIONAL_BELOW`` rated matches in it."""
    if season.archived_at is not None:
        total = int(
            await session.scalar(
                select(func.count()).select_from(SeasonStanding).where(SeasonStanding.season_id == season.id)
            )
            or 0
        )
        rows = (
            await session.execute(
                select(SeasonStanding, Account.name)
                .join(Account, Account.id == SeasonStanding.account_id)
                .where(SeasonStanding.season_id == season.id)
                .order_by(SeasonStanding.rank)
                .offset(offset)
                .limit(limit)
            )
        ).all()
        return [StandingRow(row.rank, row.account_id, name, row.rating, row.matches) for row, name in rows], total
    established = (SeasonRating.season_id == season.id, SeasonRating.matches >= PROVISIONAL_BELOW)
    total = int(await session.scalar(select(func.count()).select_from(SeasonRating).where(*established)) or 0)
    ordinal = SeasonRating.mu - 3 * SeasonRating.sigma
    live = (
        await session.execute(
            select(SeasonRating, Account.name)
            .join(Account, Account.id == SeasonRating.account_id)
            .where(*established)
            .order_by(ordinal.desc(), SeasonRating.account_id)
            .offset(offset)
            .limit(limit)
        )
    ).all()
    return [
        StandingRow(offset + i + 1, row.account_id, name, display(row.mu, row.sigma), row.matches)
        for i, (row, name) in enumerate(live)
    ], total


async def player_season(session: AsyncSession, account_id: int, season: Season | None) -> dict[str, Any] | None:
    """An account's place in a running season: ``{season_id, rating, provisional, matches, rank}``
    (rank null while provisional); None when it has no rated match in it."""
    if season is None:
        return None
    row = await session.get(SeasonRating, (season.id, account_id), populate_existing=True)
    if row is None:
        return None
    rank = None
    if row.matches >= PROVISIONAL_BELOW:
        ordinal = SeasonRating.mu - 3 * SeasonRating.sigma
        mine = row.mu - 3 * row.sigma
        better = await session.scalar(
            select(func.count())
            .select_from(SeasonRating)
            .where(
                SeasonRating.season_id == season.id,
                SeasonRating.matches >= PROVISIONAL_BELOW,
                (ordinal > mine) | ((ordinal == mine) & (SeasonRating.account_id < account_id)),
            )
        )
        rank = int(better or 0) + 1
    return {
        "season_id": season.id,
        "rating": display(row.mu, row.sigma),
        "provisional": row.matches < PROVISIONAL_BELOW,
        "matches": row.matches,
        "rank": rank,
    }


async def past_placings(session: AsyncSession, account_id: int, *, limit: int = 24) -> list[dict[str, Any]]:
    """The account's final places in archived seasons, newest first."""
    rows = (
        await session.execute(
            select(SeasonStanding, Season)
            .join(Season, Season.id == SeasonStanding.season_id)
            .where(SeasonStanding.account_id == account_id)
            .order_by(Season.starts_at.desc())
            .limit(limit)
        )
    ).all()
    return [
        {
            "season_id": season.id,
            "starts_at": season.starts_at,
            "ends_at": season.ends_at,
            "rank": standing.rank,
            "players": season.players,
            "rating": standing.rating,
            "matches": standing.matches,
        }
        for standing, season in rows
    ]


async def current_season(session: AsyncSession, now: datetime) -> Season | None:
    return await season_containing(session, now)
