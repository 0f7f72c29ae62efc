"""Match history: list (newest first), detail, and the public replay."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Query, status

from app.api.deps import OptionalUser, SessionDep
from app.api.errors import responses
from app.api.schemas import FairnessOut, MatchDetail, MatchPage, MatchSummary, ReplayView, SeatOut
from app.db import accounts
from app.db import matches as history
from app.db.models import Match

router = APIRouter(prefix="/api/matches", tags=["matches"])

MatchId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
MAX_ID = 2**31 - 1


def _seats(match: Match) -> list[SeatOut]:
    players = {p.seat: p for p in match.players}
    out = []
    for seat in match.seats:
        player = players.get(int(seat["seat"]))
        out.append(
            SeatOut(
                seat=seat["seat"],
                account_id=seat.get("account_id"),
                guest_name=seat.get("guest_name"),
                bot_level=seat.get("bot_level"),
                display_name=seat["display_name"],
                place=player.place if player else None,
                coin_change=player.coin_change if player else 0,
            )
        )
    return out


def _summary(match: Match) -> MatchSummary:
    return MatchSummary(
        id=match.id,
        table_id=match.table_id,
        created_at=match.created_at,
        finished_at=match.finished_at,
        stake=match.stake,
        cheating=match.cheating,
        draw=bool(match.result.get("draw")),
        durak=match.result.get("durak"),
        seats=_seats(match),
        rules=dict(match.rules),
    )


@router.get(
    "",
    responses={
        200: {"description": "A page of matches, newest first."},
        **responses(
            401,
            404,
            r401="account=me without a session.",
            r404="No such account (or account=me from a guest, who has no match history).",
        ),
    },
)
async def list_matches(
    session: SessionDep,
    user: OptionalUser,
    account: Annotated[
        str | None,
        Query(
            description="Only matches this account played: an account id, or `me`.",
            pattern=r"^(me|[1-9][0-9]{0,9})$",
        ),
    ] = None,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
    page_size: Annotated[int, Query(ge=1, le=100)] = 20,
) -> MatchPage:
    account_id: int | None = None
    if account == "me":
        if user is None:
            raise HTTPException(status.HTTP_401_UNAUTHORIZED, detail="account=me needs a signed-in session")
        if user.account_id is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, detail="guests have no match history")
        account_id = user.account_id
    elif account is not None:
        account_id = int(account)
        if account_id > MAX_ID or await accounts.get(session, account_id) is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no account {account}")
    rows, total = await history.list_matches(
        session, account_id=account_id, offset=(page - 1) * page_size, limit=page_size
    )
    return MatchPage(items=[_summary(row) for row in rows], page=page, page_size=page_size, total=total)


async def _load(session: SessionDep, match_id: str) -> Match:
    match = await history.get_match(session, match_id)
    if match is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no match {match_id}")
    return match


@router.get("/{match_id}", responses={200: {"description": "One finished match."}, **responses(404)})
async def get_match(match_id: MatchId, session: SessionDep) -> MatchDetail:
    """A finished match: seats, places, coin changes, rules and result, and ``fairness``: the
    revealed deal (server seed, client seeds, deck) that anyone can recompute (docs/fairness.md)."""
    match = await _load(session, match_id)
    return MatchDetail(
        **_summary(match).model_dump(),
        dealer=match.dealer,
        result=match.result,
        coin_changes=match.coin_changes,
        actions=len(match.actions),
        fairness=FairnessOut.model_validate(match.fairness) if match.fairness else None,
    )


def build_replay(match: Match) -> list[dict[str, Any]]:
    """The spectator view after the deal and after every action, each with every hand face up (the
    match is over); the final entry also has the hands as dealt and as left at the end."""
    from app.engine import Card, Rules, action_from_json, new_match, replay, replay_views  # lazy: optional

    order = [Card.parse(text) for text in match.fairness["deck"]] if match.fairness else None
    views = replay_views(match.rules, int(match.seed), match.dealer, match.actions, order, hands=True)
    if views:
        rules = Rules.from_json(match.rules)
        dealt = new_match(rules, int(match.seed), match.dealer, order)
        final = replay(rules, int(match.seed), match.dealer, [action_from_json(a) for a in match.actions], order)
        views[-1] = {
            **views[-1],
            "revealed_hands": {
                "dealt": [[str(card) for card in hand] for hand in dealt.hands],
                "final": [[str(card) for card in hand] for hand in final.hands],
            },
        }
    return views


@router.get(
    "/{match_id}/replay",
    response_model=list[ReplayView],
    response_model_exclude_unset=True,
    responses={
        200: {"description": "The public replay: a list of spectator views."},
        **responses(404, 503, r503="The rules engine is not available."),
    },
)
async def get_replay(match_id: MatchId, session: SessionDep) -> list[dict[str, Any]]:
    match = await _load(session, match_id)
    try:
        return await asyncio.to_thread(build_replay, match)
    except ImportError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the rules engine is not available") from exc
