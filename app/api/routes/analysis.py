"""The coach over HTTP: ``GET /api/matches/{id}/analysis?seat=N``.

Only finished matches (those in the match history) can be analysed: a running match is not there,
so there is no live help. Anyone who may see the match reads an analysis that is done (200) or being
computed (202, the progress); only the match's players (its accounts) and admins start one, within
their limits (settings ``coach_*``): one computation per account at once and ``coach_starts_per_account``
an hour (429), ``coach_max_running`` on the whole server (503), each with ``Retry-After``. The
computation runs in the coach's process pool (``app.coaching``), its progress stored
(``match_analyses``); one nobody has asked about for ``coach_unpolled_s`` is cancelled. The report
is answered from the database ever after.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from concurrent.futures import Executor
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Query, Request, Response, status
from pydantic import BaseModel

from app.api.deps import OptionalUser, SessionDep, SessionInfo
from app.api.errors import responses
from app.api.security import cross_site_refusal
from app.api.throttle import Throttle
from app.bots.coach import DEFAULT_WORLDS
from app.coaching import Abandoned, analyse_match
from app.config import Settings
from app.db import analyses
from app.db import matches as history
from app.db.base import utcnow
from app.db.models import Match
from app.db.session import Database

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api/matches", tags=["matches"])

MatchId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
PROGRESS_EVERY_S = 0.5  # progress is written to the database at most this often
POLL_EVERY_S = 5.0  # a request notes that the progress was asked for at most this often per computation
BUSY_RETRY_S = 15  # Retry-After when the account or the server is computing all it may

_jobs: dict[tuple[str, int], asyncio.Task[None]] = {}  # computations running in this process
_polled: dict[tuple[str, int], float] = {}  # when this process last noted a request for one


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


def may_start(match: Match, user: SessionInfo | None) -> bool:
    """Starting an analysis (CPU for minutes) is for the match's own players and admins."""
    if user is None:
        return False
    return user.is_admin or any(
        seat.get("account_id") is not None and seat.get("account_id") == user.account_id for seat in match.seats
    )


def _refused(code: Literal[429, 503], error: str, message: str, retry_after: float) -> HTTPException:
    seconds = max(1, math.ceil(retry_after))
    detail = f"{error}: {message}; try again in {seconds} s"
    headers = {"Retry-After": str(seconds)}
    # Each status spelled out: the OpenAPI test reads the answers a route can give from its code.
    if code == 503:
        return HTTPException(503, detail=detail, headers=headers)
    return HTTPException(429, detail=detail, headers=headers)


@router.get(
    "/{match_id}/analysis",
    responses={
        200: {"description": "The coach's report on the seat's decisions."},
        202: {"model": AnalysisOut, "description": "Being computed: the progress so far."},
        **responses(
            403,
            404,
            429,
            503,
            r403="`coach_players_only`: no analysis of this seat exists, and only the match's players and admins "
            "may start one; `cross_site_request`: another site's page (Origin, Sec-Fetch-Site) may not start one.",
            r404="No finished match with this id (a running match cannot be analysed), a private table's match "
            "the caller did not play, or no such seat.",
            r429="`coach_busy` (the caller's analysis is still being computed) or `coach_quota` (he started as many "
            "as he may lately); Retry-After says when to try again.",
            r503="`coach_full`: the server computes as many analyses as it may; Retry-After says when to try again.",
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
    db: Database = request.app.state.db
    row = await analyses.get(session, match_id, seat)
    if row is not None and row.status == analyses.DONE:
        _polled.pop((match_id, seat), None)
        return AnalysisOut(
            match_id=match_id, seat=seat, status="done", done=row.total, total=row.total, analysis=row.result
        )
    total = sum(1 for action in match.actions if action.get("seat") == seat)
    response.status_code = status.HTTP_202_ACCEPTED
    key = (match_id, seat)
    if key in _jobs or (row is not None and not analyses.is_stale(row)):  # being computed: someone still asks
        if time.monotonic() - _polled.get(key, 0.0) >= POLL_EVERY_S:
            _polled[key] = time.monotonic()
            await db.write(lambda s: analyses.polled(s, match_id, seat))
        done = row.done if row is not None else 0
        return AnalysisOut(match_id=match_id, seat=seat, status="computing", done=done, total=total)
    if not may_start(match, user):
        raise HTTPException(
            status.HTTP_403_FORBIDDEN,
            detail="coach_players_only: nobody has had this seat analysed yet, and only the match's players "
            "and admins may start an analysis",
        )
    assert user is not None
    # Starting one is the only GET that spends something of the caller's (his quota, minutes of CPU):
    # another site's page (a link, an image; a sibling port gets his cookie) may not do it for him.
    refusal = cross_site_refusal(request.headers, scheme=request.url.scheme, settings=request.app.state.settings)
    if refusal is not None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail=f"cross_site_request: {refusal}")
    await _start(request, db, match, seat, total, user)
    return AnalysisOut(match_id=match_id, seat=seat, status="computing", done=0, total=total)


async def _start(request: Request, db: Database, match: Match, seat: int, total: int, user: SessionInfo) -> None:
    """Claim the computation within the limits (else 429 or 503 with Retry-After) and start it."""
    settings: Settings = request.app.state.settings
    quota = Throttle("coach", settings.coach.coach_starts_per_account, settings.coach.coach_window_s)
    who = user.key
    wait = await quota.retry_after(db, who)
    if wait is not None:
        raise _refused(429, "coach_quota", "you have started as many analyses as you may for now", wait)
    coach = settings.coach
    limits = analyses.Limits(per_account=coach.coach_runs_per_account, running=coach.coach_max_running)
    match_id = match.id
    claimed = await db.write(
        lambda s: analyses.claim(s, match_id, seat, total, account_id=user.account_id, limits=limits)
    )
    if claimed == "account_busy":
        raise _refused(429, "coach_busy", "your last analysis is still being computed", BUSY_RETRY_S)
    if claimed == "server_busy":
        raise _refused(503, "coach_full", "the coach is busy with other analyses", BUSY_RETRY_S)
    if claimed != "claimed":
        return  # another process got there first: its progress is what the next request reads
    await quota.hit(db, who)
    executor = getattr(request.app.state, "coach_executor", None)  # tests: a thread pool
    worlds = getattr(request.app.state, "coach_worlds", DEFAULT_WORLDS)  # tests: fewer deals
    _polled[(match_id, seat)] = time.monotonic()
    _jobs[(match_id, seat)] = asyncio.create_task(
        _compute(db, executor, worlds, match_input(match), match_id, seat, settings.coach.coach_unpolled_s)
    )


async def _compute(
    db: Database,
    executor: Executor | None,
    worlds: int,
    match: dict[str, Any],
    match_id: str,
    seat: int,
    unpolled_s: float,
) -> None:
    written = time.monotonic()

    async def progress(done: int, total: int) -> None:
        nonlocal written
        if time.monotonic() - written < PROGRESS_EVERY_S and done < total:
            return
        written = time.monotonic()
        asked: datetime | None = await db.write(lambda s: analyses.progress(s, match_id, seat, done))
        if asked is not None and (utcnow() - asked).total_seconds() > unpolled_s:
            raise Abandoned(f"nobody asked about it for {unpolled_s:g} s")

    try:
        report = await analyse_match(match, seat, executor=executor, worlds=worlds, progress=progress)
        await db.write(lambda s: analyses.finish(s, match_id, seat, report))
    except Abandoned as reason:
        log.info("analysis of match %s seat %d cancelled: %s", match_id, seat, reason)
        await db.write(lambda s: analyses.forget(s, match_id, seat))
    except Exception:
        log.exception("analysis of match %s seat %d failed", match_id, seat)
        await db.write(lambda s: analyses.forget(s, match_id, seat))
    finally:
        _jobs.pop((match_id, seat), None)
        _polled.pop((match_id, seat), None)
