"""Player ratings: OpenSkill's Plackett–Luce model rates a match by its finishing order.

A match is rated when every seat holds a signed-up account (no guests, no bots), free or staked,
forfeits included. ``rate_match`` runs inside the transaction that records the match
(``app.db.matches.record_match``) and at most once per match: a history row per (match, account)
is unique, and a match that already has rows is left alone.

One number is shown: the ordinal (mu - 3 sigma) on a scale that starts at 1500
(``DISPLAY_START + DISPLAY_SCALE * ordinal``), provisional until ``PROVISIONAL_BELOW`` rated matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from openskill.models import PlackettLuce
from sqlalchemy import ColumnElement, func, select, true
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import Account, Match, MatchPlayer, Rating, RatingChange
from app.tables.spec import SeatRating

MODEL = PlackettLuce()
START_MU: float = MODEL.mu
START_SIGMA: float = MODEL.sigma
DISPLAY_START = 1500
DISPLAY_SCALE = 20
PROVISIONAL_BELOW = 5
LEADERBOARD_SIZE = 100


def display(mu: float, sigma: float) -> int:
    """The one number shown: the ordinal mu - 3 sigma, 1500 for a new player."""
    return round(DISPLAY_START + DISPLAY_SCALE * (mu - 3 * sigma))


@dataclass(frozen=True, slots=True)
class RatingView:
    rating: int
    provisional: bool
    matches: int
    mu: float
    sigma: float

    def to_json(self) -> dict[str, Any]:
        return {"rating": self.rating, "provisional": self.provisional, "matches": self.matches}


def _view(mu: float, sigma: float, matches: int) -> RatingView:
    return RatingView(display(mu, sigma), matches < PROVISIONAL_BELOW, matches, mu, sigma)


NEW_PLAYER = _view(START_MU, START_SIGMA, 0)


def finishing_ranks(
    seats: Sequence[int], *, draw: bool, durak: int | None, places: Sequence[Sequence[int]]
) -> dict[int, int]:
    """Seat -> rank (1 = best; equal ranks tie): the places of the result, a draw ties everyone,
    the durak is last. A seat the places do not name (never happens for an engine result) shares
    the last place before the durak."""
    if draw:
        return dict.fromkeys(seats, 1)
    ranks: dict[int, int] = {}
    rank = 1
    for group in places:
        for seat in group:
            ranks[seat] = rank
        rank += len(group)
    missing = [seat for seat in seats if seat not in ranks and seat != durak]
    for seat in missing:
        ranks[seat] = rank
    if durak is not None and durak not in ranks:
        ranks[durak] = rank + (1 if missing else 0)
    return {seat: ranks[seat] for seat in seats}


def _insert(session: AsyncSession) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


async def rate_match(
    session: AsyncSession,
    *,
    match_id: str,
    accounts: Mapping[int, int | None],
    draw: bool,
    durak: int | None,
    places: Sequence[Sequence[int]],
    finished_at: datetime | None = None,
) -> bool:
    """Rate a recorded match inside the caller's transaction; ``accounts`` maps seat -> account id
    (None for a guest or a bot). Whether it was rated now (False: not a rated match, or rated before)."""
    if len(accounts) < 2 or any(account is None for account in accounts.values()):
        return False
    already = await session.scalar(
        select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
    )
    if already:
        return False
    account_of = {seat: int(account) for seat, account in accounts.items() if account is not None}
    ids = sorted(set(account_of.values()))
    insert = _insert(session)
    await session.execute(
        insert(Rating)
        .values(
            [{"account_id": i, "mu": START_MU, "sigma": START_SIGMA, "matches": 0, "updated_at": utcnow()} for i in ids]
        )
        .on_conflict_do_nothing(index_elements=["account_id"])
    )
    # Locked in account order, so two matches finishing at once for the same players wait, not deadlock.
    rows = (
        await session.scalars(
            select(Rating)
            .where(Rating.account_id.in_(ids))
            .order_by(Rating.account_id)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
    ).all()
    by_account = {row.account_id: row for row in rows}
    seats = sorted(account_of)
    ranks = finishing_ranks(seats, draw=draw, durak=durak, places=places)
    before = [by_account[account_of[seat]] for seat in seats]
    teams = [[MODEL.rating(mu=row.mu, sigma=row.sigma)] for row in before]
    rated = MODEL.rate(teams, ranks=[float(ranks[seat]) for seat in seats])
    when = finished_at or utcnow()
    for seat, row, team in zip(seats, before, rated, strict=True):
        after = team[0]
        session.add(
            RatingChange(
                account_id=row.account_id,
                match_id=match_id,
                place=ranks[seat],
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


# ---------------------------------------------------------------------- reading


async def ratings_of(session: AsyncSession, account_ids: Sequence[int]) -> dict[int, RatingView]:
    """The rating of each account (a new player's for one that has never played a rated match)."""
    found = {
        row.account_id: _view(row.mu, row.sigma, row.matches)
        for row in (await session.scalars(select(Rating).where(Rating.account_id.in_(set(account_ids))))).all()
    }
    return {account: found.get(account, NEW_PLAYER) for account in account_ids}


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    rank: int
    account_id: int
    name: str
    rating: int
    matches: int


async def leaderboard(session: AsyncSession, *, offset: int, limit: int) -> tuple[list[LeaderboardRow], int]:
    """A page of the top ``LEADERBOARD_SIZE`` established players (at least ``PROVISIONAL_BELOW``
    rated matches), best first; and how many the whole board holds."""
    established = Rating.matches >= PROVISIONAL_BELOW
    total = int(await session.scalar(select(func.count()).select_from(Rating).where(established)) or 0)
    total = min(total, LEADERBOARD_SIZE)
    limit = max(0, min(limit, total - offset))
    if limit == 0:
        return [], total
    ordinal = Rating.mu - 3 * Rating.sigma
    rows = (
        await session.execute(
            select(Rating, Account.name)
            .join(Account, Account.id == Rating.account_id)
            .where(established)
            .order_by(ordinal.desc(), Rating.account_id)
            .offset(offset)
            .limit(limit)
        )
    ).all()
    return [
        LeaderboardRow(offset + i + 1, rating.account_id, name, display(rating.mu, rating.sigma), rating.matches)
        for i, (rating, name) in enumerate(rows)
    ], total


async def rating_history(
    session: AsyncSession, account_id: int, *, limit: int = 200, visible: ColumnElement[bool] | None = None
) -> list[dict[str, Any]]:
    """The account's rating after each of its last ``limit`` rated matches, oldest first; only the
    matches ``visible`` (a condition on ``Match``: ``app.db.matches.visible_to``) lets through."""
    rows = (
        await session.scalars(
            select(RatingChange)
            .join(Match, Match.id == RatingChange.match_id)
            .where(RatingChange.account_id == account_id, true() if visible is None else visible)
            .order_by(RatingChange.id.desc())
            .limit(limit)
        )
    ).all()
    return [
        {
            "match_id": row.match_id,
            "at": row.created_at,
            "rating": display(row.mu, row.sigma),
            "change": display(row.mu, row.sigma) - display(row.mu_before, row.sigma_before),
            "place": row.place,
        }
        for row in reversed(rows)
    ]


def table_type(rules: Mapping[str, Any]) -> str:
    """How a profile groups matches: ``<seats>p-<deck>``, plus ``-staked`` for a table with a stake."""
    kind = f"{rules.get('seats', '?')}p-{rules.get('deck', '?')}"
    return f"{kind}-staked" if int(rules.get("stake", 0) or 0) > 0 else kind


async def match_stats(
    session: AsyncSession, account_id: int, *, visible: ColumnElement[bool] | None = None
) -> dict[str, dict[str, int]]:
    """Per table type: matches played, wins (first out, not a draw) and times durak; of the matches
    ``visible`` lets through (see ``rating_history``)."""
    rows = (
        await session.execute(
            select(MatchPlayer.seat, MatchPlayer.place, Match.rules, Match.result)
            .join(Match, Match.id == MatchPlayer.match_id)
            .where(MatchPlayer.account_id == account_id, true() if visible is None else visible)
        )
    ).all()
    stats: dict[str, dict[str, int]] = {}
    for seat, place, rules, result in rows:
        counts = stats.setdefault(table_type(rules), {"played": 0, "wins": 0, "durak": 0, "draws": 0})
        counts["played"] += 1
        if result.get("draw"):
            counts["draws"] += 1
        elif result.get("durak") == seat:
            counts["durak"] += 1
        elif place == 1:
            counts["wins"] += 1
    return dict(sorted(stats.items()))


async def recent_matches(
    session: AsyncSession,
    account_id: int,
    *,
    limit: int = 10,
    visible: ColumnElement[bool] | None = None,
    coins: bool = True,
) -> list[dict[str, Any]]:
    """The account's last ``limit`` matches that ``visible`` lets through (see ``rating_history``),
    newest first: its place, whether it was the durak, its coins (None unless ``coins``) and rating
    change, who else sat at the table and which of them were bots."""
    rows = (
        await session.execute(
            select(MatchPlayer, Match)
            .join(Match, Match.id == MatchPlayer.match_id)
            .where(MatchPlayer.account_id == account_id, true() if visible is None else visible)
            .order_by(MatchPlayer.finished_at.desc(), MatchPlayer.match_id.desc())
            .limit(limit)
        )
    ).all()
    ids = [match.id for _, match in rows]
    changes = {
        change.match_id: change
        for change in (
            await session.scalars(
                select(RatingChange).where(RatingChange.account_id == account_id, RatingChange.match_id.in_(ids))
            )
        ).all()
    }
    out = []
    for player, match in rows:
        change = changes.get(match.id)
        out.append(
            {
                "match_id": match.id,
                "finished_at": match.finished_at,
                "table_type": table_type(match.rules),
                "place": player.place,
                "draw": bool(match.result.get("draw")),
                "durak": match.result.get("durak") == player.seat,
                "coin_change": player.coin_change if coins else None,
                "rating_change": None
                if change is None
                else display(change.mu, change.sigma) - display(change.mu_before, change.sigma_before),
                "players": [seat["display_name"] for seat in match.seats],
                "bots": [seat["display_name"] for seat in match.seats if seat.get("bot_level")],
            }
        )
    return out


async def seat_rating(session: AsyncSession, account_id: int | None) -> SeatRating | None:
    """What a table shows next to an account's seat: ``{"rating", "provisional"}``; None for a guest."""
    if account_id is None:
        return None
    view = (await ratings_of(session, [account_id]))[account_id]
    return {"rating": view.rating, "provisional": view.provisional}


async def ratings_after(session: AsyncSession, match_ids: Sequence[str]) -> dict[tuple[str, int], dict[str, int]]:
    """(match id, account id) -> ``{"rating", "change"}``: each player's rating after those matches
    that were rated (for the match history)."""
    rows = (await session.scalars(select(RatingChange).where(RatingChange.match_id.in_(set(match_ids))))).all()
    return {
        (row.match_id, row.account_id): {
            "rating": display(row.mu, row.sigma),
            "change": display(row.mu, row.sigma) - display(row.mu_before, row.sigma_before),
        }
        for row in rows
    }
