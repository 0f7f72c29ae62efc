"""Match history: list (newest first), detail, and the replay.

Who sees what: a private table's matches only their players and admins (``history.visible_to``;
anyone else gets 404, as for a match that does not exist); a seat's coin result only the player
in it and admins (everyone else sees ``coin_change`` null and places only).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, HTTPException, Path, Query, status

from app.api.deps import OptionalUser, SessionDep, SessionInfo
from app.api.errors import responses
from app.api.schemas import FairnessOut, MatchDetail, MatchPage, MatchSummary, ReplayView, SeatOut
from app.db import accounts, ratings
from app.db import matches as history
from app.db.models import Match

if TYPE_CHECKING:  # the engine is imported lazily where it runs
    from app.engine.replay import ReplayViewJson

router = APIRouter(prefix="/api/matches", tags=["matches"])

MatchId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$")]
MAX_ID = 2**31 - 1


def _sees_coins(user: SessionInfo | None, account_id: int | None) -> bool:
    """A seat's coin result is its player's own business (and admins')."""
    if user is None:
        return False
    return user.is_admin or (account_id is not None and account_id == user.account_id)


def _seats(match: Match, user: SessionInfo | None, rated: dict[tuple[str, int], dict[str, int]]) -> list[SeatOut]:
    players = {p.seat: p for p in match.players}
    out = []
    for seat in match.seats:
        player = players.get(int(seat["seat"]))
        coin_change = player.coin_change if player else 0
        after = rated.get((match.id, seat.get("account_id") or 0))
        out.append(
            SeatOut(
                seat=seat["seat"],
                account_id=seat.get("account_id"),
                guest_name=seat.get("guest_name"),
                guest=seat.get("guest_name") is not None,
                bot_level=seat.get("bot_level"),
                display_name=seat["display_name"],
                place=player.place if player else None,
                coin_change=coin_change if _sees_coins(user, seat.get("account_id")) else None,
                rating=after["rating"] if after else None,
                rating_change=after["change"] if after else None,
            )
        )
    return out


def _summary(match: Match, user: SessionInfo | None, rated: dict[tuple[str, int], dict[str, int]]) -> MatchSummary:
    return MatchSummary(
        id=match.id,
        table_id=match.table_id,
        created_at=match.created_at,
        finished_at=match.finished_at,
        stake=match.stake,
        cheating=match.cheating,
        draw=bool(match.result.get("draw")),
        durak=match.result.get("durak"),
        aborted=bool(match.result.get("aborted")),
        seats=_seats(match, user, rated),
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
        session,
        account_id=account_id,
        viewer_id=user.account_id if user else None,
        viewer_is_admin=bool(user and user.is_admin),
        offset=(page - 1) * page_size,
        limit=page_size,
    )
    rated = await ratings.ratings_after(session, [row.id for row in rows])
    return MatchPage(items=[_summary(row, user, rated) for row in rows], page=page, page_size=page_size, total=total)


async def _load(session: SessionDep, match_id: str, user: SessionInfo | None) -> Match:
    """The match if the user may see it; 404 alike for a match that does not exist and a private
    one he did not play (the answer does not tell them apart)."""
    match = await history.get_match(
        session,
        match_id,
        viewer_id=user.account_id if user else None,
        viewer_is_admin=bool(user and user.is_admin),
    )
    if match is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no match {match_id}")
    return match


@router.get(
    "/{match_id}",
    responses={
        200: {"description": "One finished match."},
        **responses(404, r404="No such match, or a private table's match the caller did not play."),
    },
)
async def get_match(match_id: MatchId, session: SessionDep, user: OptionalUser) -> MatchDetail:
    """A finished match: seats, places, the caller's own coin change (all of them for admins), rules
    and result, and ``fairness``: the revealed deal (server seed, client seeds, deck) that anyone who
    may see the match can recompute (docs/fairness.md). The engine seed of older matches stays secret."""
    match = await _load(session, match_id, user)
    summary = _summary(match, user, await ratings.ratings_after(session, [match.id]))
    return MatchDetail(
        **summary.model_dump(),
        dealer=match.dealer,
        result=match.result,
        coin_changes={str(seat.seat): seat.coin_change for seat in summary.seats if seat.coin_change is not None},
        actions=len(match.actions),
        fairness=FairnessOut.model_validate(match.fairness) if match.fairness else None,
    )


def build_replay(match: Match) -> list[ReplayViewJson]:
    """The spectator view after the deal and after every action, each with every hand face up (the
    match is over); the final entry also has the hands as dealt and as left at the end."""
    from app.engine import Card, Rules, action_from_json, new_match, replay, replay_views  # lazy: optional

    order = [Card.parse(text) for text in match.fairness["deck"]] if match.fairness else None
    views = replay_views(match.rules, int(match.seed), match.dealer, match.actions, order, hands=True)
    if views:
        rules = Rules.from_json(match.rules)
        dealt = new_match(rules, int(match.seed), match.dealer, order)
        final = replay(rules, int(match.seed), match.dealer, [action_from_json(a) for a in match.actions], order)
        views[-1]["revealed_hands"] = {
            "dealt": [[str(card) for card in hand] for hand in dealt.hands],
            "final": [[str(card) for card in hand] for hand in final.hands],
        }
    return views


@router.get(
    "/{match_id}/replay",
    response_model=list[ReplayView],
    response_model_exclude_unset=True,
    responses={
        200: {"description": "The replay: a list of spectator views."},
        **responses(
            404,
            503,
            r404="No such match, or a private table's match the caller did not play.",
            r503="The rules engine is not available.",
        ),
    },
)
async def get_replay(match_id: MatchId, session: SessionDep, user: OptionalUser) -> list[ReplayViewJson]:
    match = await _load(session, match_id, user)
    try:
        return await asyncio.to_thread(build_replay, match)
    except ImportError as exc:
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the rules engine is not available") from exc
