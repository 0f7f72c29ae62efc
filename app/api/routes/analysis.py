"""The coach over HTTP: ``GET /api/matches/{id}/analysis?seat=N``.

Only finished matches (those in the match history) can be analysed: a running match is not there,
so there is no live help. The first request starts the computation in the coach's process pool
(``app.coaching``) and answers 202 with the progress; later requests answer 202 with the progress
until the report is stored (``match_analyses``), then 200 with it, from the cache ever after.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import Executor
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response, status
from pydantic import BaseModel

from app.api.deps import OptionalUser, SessionDep
from app.api.errors import responses
from app.bots.coach import DEFAULT_WORLDS
from app.coaching import analyse_match
from app.db import analyses
from app.db import matches as history
from app.db.models import Match
from app.db.session import Database

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/matches", tags=["matches"])

MatchId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
PROGRESS_EVERY_S = 0.5  # progress is written to the database at most this often

_jobs: dict[tuple[str, int], asyncio.Task[None]] = {}  # computations running in this process


class AnalysisOut(BaseModel):
    """``status`` "computing" (202: ``done`` of ``total`` decisions analysed so far) or "done" (200:
    ``analysis`` is the coach's report, see docs/api.md)."""

    match_id: str
    seat: int
    status: Literal["computing", "done"]
    done: int
    total: int
    analysis: dict[str, Any] | None = None


def match_input(match: Match) -> dict[str, Any]:
    """What the coach replays: rules, seed, dealer, actions and the dealt deck of a fair deal."""
    fairness = match.fairness or {}
    return {
        "rules": match.rules,
        "seed": match.seed,
        "dealer": match.dealer,
        "actions": match.actions,
        "deck": fairness.get("deck"),
    }


@router.get(
    "/{match_id}/analysis",
    responses={
        200: {"description": "The coach's report on the seat's decisions."},
        202: {"model": AnalysisOut, "description": "Being computed: the progress so far."},
        **responses(
            404,
            r404="No finished match with this id (a running match cannot be analysed), a private table's match "
            "the caller did not play, or no such seat.",
        ),
    },
)
async def get_analysis(
    match_id: MatchId,
    seat: Annotated[int, Query(ge=0, le=5, description="The seat whose decisions to analyse.")],
    request: Request,
    response: Response,
    session: SessionDep,
    user: OptionalUser,
) -> AnalysisOut:
    match = await history.get_match(
        session, match_id, viewer_id=user.account_id if user else None, viewer_is_admin=bool(user and user.is_admin)
    )
    if match is None:
        raise HTTPException(
            status.HTTP_404_NOT_FOUND,
            detail=f"no finished match {match_id}: only finished matches can be analysed",
        )
    if seat >= len(match.seats):
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"match {match_id} has no seat {seat}")
    row = await analyses.get(session, match_id, seat)
    if row is not None and row.status == analyses.DONE:
        return AnalysisOut(
            match_id=match_id, seat=seat, status="done", done=row.total, total=row.total, analysis=row.result
        )
    total = sum(1 for action in match.actions if action.get("seat") == seat)
    key = (match_id, seat)
    if key not in _jobs and (row is None or analyses.is_stale(row)):
        db: Database = request.app.state.db
        if await db.write(lambda s: analyses.claim(s, match_id, seat, total)):
            executor = getattr(request.app.state, "coach_executor", None)  # tests: a thread pool
            worlds = getattr(request.app.state, "coach_worlds", DEFAULT_WORLDS)  # tests: fewer deals
            _jobs[key] = asyncio.create_task(_compute(db, executor, worlds, match_input(match), match_id, seat))
            row = None
    response.status_code = status.HTTP_202_ACCEPTED
    done = row.done if row is not None else 0
    return AnalysisOut(match_id=match_id, seat=seat, status="computing", done=done, total=total)


async def _compute(
    db: Database, executor: Executor | None, worlds: int, match: dict[str, Any], match_id: str, seat: int
) -> None:
    written = time.monotonic()

    async def progress(done: int, total: int) -> None:
        nonlocal written
        if time.monotonic() - written >= PROGRESS_EVERY_S:
            written = time.monotonic()
            await db.write(lambda s: analyses.progress(s, match_id, seat, done))

    try:
        report = await analyse_match(match, seat, executor=executor, worlds=worlds, progress=progress)
        await db.write(lambda s: analyses.finish(s, match_id, seat, report))
    except Exception:
        log.exception("analysis of match %s seat %d failed", match_id, seat)
        await db.write(lambda s: analyses.forget(s, match_id, seat))
    finally:
        _jobs.pop((match_id, seat), None)
