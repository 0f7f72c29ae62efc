"""Seasons in public: the list of seasons (the current one and the archive) and each season's
leaderboard (live for the current season, the final standings of a past one)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, Request, status
from pydantic import BaseModel, Field
from sqlalchemy import select

from app.api.deps import DatabaseDep, SessionDep
from app.api.errors import responses
from app.api.season_clock import clock_of, rolled_over, season_rules
from app.db import seasons
from app.db.models import Season

router = APIRouter(prefix="/api", tags=["seasons"])


class SeasonOut(BaseModel):
    id: int = Field(description="The season's id (its standings are /api/seasons/{id}/standings).")
    starts_at: datetime
    ends_at: datetime = Field(description="The first moment after the season (UTC).")
    current: bool = Field(description="The season running now.")
    archived: bool = Field(description="Ended, with its final standings stored.")
    players: int = Field(description="Players ranked in its final standings (0 until it is archived).")


class SeasonsPage(BaseModel):
    current: SeasonOut | None = Field(description="The season running now.")
    items: list[SeasonOut] = Field(description="Every season, newest first (the current one too).")
    page: int
    page_size: int
    total: int


class StandingOut(BaseModel):
    rank: int
    name: str
    rating: int = Field(description="The season rating (an archived season's: when it ended).")
    matches: int = Field(description="Rated matches in the season.")


class StandingsPage(BaseModel):
    season: SeasonOut
    items: list[StandingOut]
    page: int
    page_size: int
    total: int = Field(description="Players on the board: at least 5 rated matches in the season.")


SeasonRef = Annotated[
    str,
    Path(
        pattern=r"^(current|[1-9][0-9]{0,8})$",
        description="A season id, or `current`.",
        examples=["current", "3"],
    ),
]


@router.get("/seasons", responses={200: {"description": "The seasons, newest first, a page."}})
async def list_seasons(
    request: Request,
    db: DatabaseDep,
    page: Annotated[int, Query(ge=1, le=10_000)] = 1,
    page_size: Annotated[int, Query(ge=1, le=100)] = 24,
) -> SeasonsPage:
    """The current season and the archive of past ones."""
    now = clock_of(request)()
    await rolled_over(db, now, season_rules(request))
    async with db.session() as session:
        rows, total = await seasons.list_seasons(session, offset=(page - 1) * page_size, limit=page_size)
        current = await seasons.current_season(session, now)
    return SeasonsPage(
        current=None if current is None else SeasonOut(**seasons.season_json(current, now)),
        items=[SeasonOut(**seasons.season_json(row, now)) for row in rows],
        page=page,
        page_size=page_size,
        total=total,
    )


@router.get(
    "/seasons/{season}/standings",
    responses={200: {"description": "A page of the season's leaderboard."}, **responses(404, r404="No such season.")},
)
async def season_standings(
    season: SeasonRef,
    request: Request,
    db: DatabaseDep,
    session: SessionDep,
    page: Annotated[int, Query(ge=1, le=10_000)] = 1,
    page_size: Annotated[int, Query(ge=1, le=100)] = 25,
) -> StandingsPage:
    """The live leaderboard of the current season (players with at least 5 rated matches in it), or
    the final standings of a past one, best first."""
    now = clock_of(request)()
    await rolled_over(db, now, season_rules(request))
    if season == "current":
        found = await seasons.current_season(session, now)
    else:
        found = await session.scalar(
            select(Season).where(Season.id == int(season)).execution_options(populate_existing=True)
        )
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail="no such season")
    rows, total = await seasons.standings(session, found, offset=(page - 1) * page_size, limit=page_size)
    return StandingsPage(
        season=SeasonOut(**seasons.season_json(found, now)),
        items=[StandingOut(rank=row.rank, name=row.name, rating=row.rating, matches=row.matches) for row in rows],
        page=page,
        page_size=page_size,
        total=total,
    )
