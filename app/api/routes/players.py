"""Ratings in public: the leaderboard and a player's profile.

A profile shows the matches the caller may see, as ``/api/matches`` does (``history.visible_to``: a
private table's matches only to the accounts that played them and to admins), in its history, its
counts and its recent matches; coin results only to the profile's owner and to admins."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request, status
from pydantic import BaseModel, Field

from app.api.deps import OptionalUser, SessionDep
from app.api.errors import responses
from app.api.season_clock import clock_of
from app.db import accounts, ratings, seasons
from app.db import matches as history

router = APIRouter(prefix="/api", tags=["players"])


class RatingOut(BaseModel):
    rating: int = Field(description="The ordinal mu - 3 sigma on a scale where a new player has 1500.")
    provisional: bool = Field(description="Fewer than 5 rated matches: shown with a question mark.")
    matches: int = Field(description="Rated matches played.")


class LeaderboardRowOut(BaseModel):
    rank: int
    name: str
    rating: int
    matches: int


class LeaderboardPage(BaseModel):
    items: list[LeaderboardRowOut]
    page: int
    page_size: int
    total: int = Field(description="Players on the board (at most 100).")


class RatingPoint(BaseModel):
    match_id: str
    at: datetime
    rating: int = Field(description="The rating after this match.")
    change: int
    place: int


class TableTypeStats(BaseModel):
    played: int
    wins: int = Field(description="Matches won: out first, not a draw.")
    durak: int = Field(description="Matches left holding cards.")
    draws: int


class RecentMatch(BaseModel):
    match_id: str = Field(description="The replay is at `/api/matches/{match_id}/replay` (page `#/replay/{id}`).")
    finished_at: datetime
    table_type: str
    place: int | None
    draw: bool
    durak: bool
    coin_change: int | None = Field(description="The player's coins won or lost: shown to him and to admins only.")
    rating_change: int | None = Field(description="Null when the match was not rated.")
    players: list[str]
    bots: list[str] = Field(
        default_factory=list, description="The bots among `players` (labelled as such; a match with a bot is unrated)."
    )


class SeasonRatingOut(BaseModel):
    season_id: int
    rating: int = Field(description="The rating in the current season.")
    provisional: bool = Field(description="Fewer than 5 rated matches this season (not on its board yet).")
    matches: int = Field(description="Rated matches this season.")
    rank: int | None = Field(description="Place on the season's board; null while provisional.")


class PastSeason(BaseModel):
    season_id: int
    starts_at: datetime
    ends_at: datetime
    rank: int = Field(description="Final place.")
    players: int = Field(description="Players ranked that season.")
    rating: int = Field(description="Season rating at its end.")
    matches: int


class PlayerProfile(BaseModel):
    name: str
    member_since: datetime
    rating: RatingOut = Field(description="All time.")
    season: SeasonRatingOut | None = Field(
        default=None, description="This season (see docs/api.md, Seasons); null before a rated match in it."
    )
    past_seasons: list[PastSeason] = Field(
        default_factory=list, description="Final places in past seasons, newest first (last 24)."
    )
    rating_history: list[RatingPoint] = Field(
        description="The rating after each rated match the caller may see, oldest first (last 200)."
    )
    matches_played: int = Field(description="Matches the caller may see.")
    by_table_type: dict[str, TableTypeStats] = Field(
        description="Keyed `<seats>p-<deck>`, with `-staked` for tables with a stake; the matches the caller may see."
    )
    recent_matches: list[RecentMatch] = Field(description="The last 10 matches the caller may see, newest first.")


@router.get("/leaderboard", responses={200: {"description": "A page of the top 100 established players."}})
async def leaderboard(
    session: SessionDep,
    page: Annotated[int, Query(ge=1, le=100)] = 1,
    page_size: Annotated[int, Query(ge=1, le=100)] = 25,
) -> LeaderboardPage:
    """The 100 best players with at least 5 rated matches, best first."""
    rows, total = await ratings.leaderboard(session, offset=(page - 1) * page_size, limit=page_size)
    return LeaderboardPage(
        items=[LeaderboardRowOut(rank=row.rank, name=row.name, rating=row.rating, matches=row.matches) for row in rows],
        page=page,
        page_size=page_size,
        total=total,
    )


@router.get(
    "/players/{name}",
    responses={200: {"description": "A player's public profile."}, **responses(404, r404="No account has that name.")},
)
async def player(
    name: Annotated[str, Path(min_length=1, max_length=64)], request: Request, session: SessionDep, user: OptionalUser
) -> PlayerProfile:
    """Rating (all time and this season) and its history, match counts, recent matches, past seasons:
    of the matches the caller may see (a private table's only to those who played it, and admins);
    coin results only to the player and admins. Guests have no profile."""
    account = await accounts.get_by_name(session, name)
    if account is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no player with that name")
    is_admin = bool(user and user.is_admin)
    visible = history.visible_to(user.account_id if user else None, is_admin=is_admin)
    coins = is_admin or (user is not None and user.account_id == account.id)
    view = (await ratings.ratings_of(session, [account.id]))[account.id]
    stats = await ratings.match_stats(session, account.id, visible=visible)
    points = await ratings.rating_history(session, account.id, visible=visible)
    recent = await ratings.recent_matches(session, account.id, visible=visible, coins=coins)
    this_season = await seasons.player_season(
        session, account.id, await seasons.current_season(session, clock_of(request)())
    )
    return PlayerProfile(
        name=account.name,
        member_since=account.created_at,
        rating=RatingOut(**view.to_json()),
        season=None if this_season is None else SeasonRatingOut(**this_season),
        past_seasons=[PastSeason(**row) for row in await seasons.past_placings(session, account.id)],
        rating_history=[RatingPoint(**point) for point in points],
        matches_played=sum(counts["played"] for counts in stats.values()),
        by_table_type={kind: TableTypeStats(**counts) for kind, counts in stats.items()},
        recent_matches=[RecentMatch(**row) for row in recent],
    )
