"""A match's coins: the stakes taken into escrow when it starts, and when it ends, on plain values,
the coins, the series scores and the record for the ledger, and its settlement, retried until the
ledger takes it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from app.engine import ActionJson, Rules, State, payout, series_update
from app.engine.fairness import FairnessRecord
from app.tables.commands import Refused
from app.tables.hooks import (
    AbortedOutcome,
    CannotStart,
    DealtMatch,
    FinishedMatch,
    MatchHooks,
    RatingChange,
    SeatRecord,
)
from app.tables.spec import Seat, TableSpec
from app.tables.table_events import MatchResults

log = logging.getLogger("durak.table")

SETTLE_TRIES = 12


async def take_stakes(hooks: MatchHooks, match_id: str, stake: int, account_ids: list[int]) -> None:
    """A match is dealt: the hooks note its start (every match, free ones too) and move every seat's
    stake into the match's escrow, all or none, or ``Refused`` with the ledger's reason (a player
    cannot cover the stake)."""
    try:
        await hooks.match_started(match_id=match_id, stake=stake, account_ids=account_ids)
    except CannotStart as exc:
        raise Refused(exc.code, exc.message) from exc


def aborted_result(reason: str) -> AbortedOutcome:
    """The ``result`` of a match stopped without an outcome."""
    return {"draw": False, "durak": None, "order": [], "places": [], "forfeit": None, "reason": reason, "aborted": True}


def series_key(seat: Seat) -> str:
    """Whose score a seat's result counts for: its player, or the bot in that seat."""
    return seat.principal.key if seat.principal else f"bot:{seat.seat}"


def seat_record(seat: Seat) -> SeatRecord:
    principal = seat.principal
    return {
        "seat": seat.seat,
        "account_id": principal.account_id if principal else None,
        "guest_name": principal.name if principal and principal.account_id is None else None,
        "bot_level": seat.level if seat.kind == "bot" else None,
        "display_name": seat.name or f"Seat {seat.seat + 1}",
    }


@dataclass(frozen=True, slots=True)
class MatchEnd:
    results: MatchResults  # what the players are told (outcome, coin changes, match id)
    series: dict[str, tuple[int, int]]  # the table's series scores afterwards
    next_dealer: int | None  # the durak deals the next match (None: a draw)
    record: FinishedMatch  # what the ledger settles


def match_end(
    game: State,
    rules: Rules,
    seats: list[Seat],
    series: dict[str, tuple[int, int]],
    spec: TableSpec,
    match_id: str,
    actions: list[ActionJson],
    fairness: FairnessRecord | None = None,
    *,
    started_at: float | None = None,
) -> MatchEnd:
    """Everything that follows from a match's outcome (``game.outcome`` is set); ``fairness`` is the
    revealed deal (docs/fairness.md), told to the players and stored with the match; ``started_at``
    when it was dealt (epoch seconds)."""
    outcome = game.outcome
    assert outcome is not None
    n = len(seats)
    paid = payout(outcome, rules.stake, n, dealer=game.dealer)
    changes = {i: paid[i] - rules.stake for i in range(n)}
    payouts: dict[int, int] = {}
    for seat in seats:
        if seat.principal is not None and seat.principal.account_id is not None and rules.stake > 0:
            payouts[seat.principal.account_id] = paid[seat.seat]
    scores = dict(series)
    for seat_no, (wins, losses) in series_update({}, outcome).items():
        key = series_key(seats[seat_no])
        old = scores.get(key, (0, 0))
        scores[key] = (old[0] + wins, old[1] + losses)
    results: MatchResults = {
        "outcome": outcome.to_json(),
        "coin_changes": changes,
        "match_id": match_id,
        "fairness": fairness,
    }
    record = FinishedMatch(
        match_id=match_id,
        table_code=spec.code,
        rules=rules.to_json(),
        seed=str(game.seed),
        dealer=game.dealer,
        seats=[seat_record(seat) for seat in seats],
        actions=actions,
        outcome=outcome.to_json(),
        stake=rules.stake,
        payouts=payouts,
        coin_changes=changes,
        hands=[[str(c) for c in hand] for hand in game.hands],
        fairness=fairness,
        private=spec.private,
        started_at=started_at,
    )
    return MatchEnd(results, scores, outcome.durak, record)


def dealt_match(
    game: State, rules: Rules, seats: list[Seat], spec: TableSpec, match_id: str, fairness: FairnessRecord
) -> DealtMatch:
    """What is kept of a match from its deal (``fairness``: the deal with its server seed)."""
    return DealtMatch(
        match_id=match_id,
        table_code=spec.code,
        rules=rules.to_json(),
        seats=[seat_record(seat) for seat in seats],
        dealer=game.dealer,
        fairness=fairness,
        private=spec.private,
    )


def aborted_match(
    game: State,
    rules: Rules,
    seats: list[Seat],
    spec: TableSpec,
    match_id: str,
    actions: list[ActionJson],
    fairness: FairnessRecord | None,
    reason: str,
) -> FinishedMatch:
    """A match stopped without an outcome (its table closed mid-match): its moves so far and its
    deal revealed, nobody's coins changed (every stake goes back)."""
    return FinishedMatch(
        match_id=match_id,
        table_code=spec.code,
        rules=rules.to_json(),
        seed=str(game.seed),
        dealer=game.dealer,
        seats=[seat_record(seat) for seat in seats],
        actions=actions,
        outcome=aborted_result(reason),
        stake=rules.stake,
        payouts={},
        coin_changes={seat.seat: 0 for seat in seats},
        hands=[[str(c) for c in hand] for hand in game.hands],
        fairness=fairness,
        private=spec.private,
    )


async def settle(
    hooks: MatchHooks,
    record: FinishedMatch,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    on_rated: Callable[[dict[int, RatingChange]], None] | None = None,
) -> bool:
    """Hand a finished match to the ledger (idempotent by match id), trying again after 0.2 s,
    0.4 s ... (at most 5 s apart) while it fails; whether it was taken within ``SETTLE_TRIES`` tries.
    ``on_rated`` hears what the match did to the seats' ratings, when the ledger says."""
    delay = 0.2
    for _ in range(SETTLE_TRIES):
        try:
            rated = await hooks.match_finished(record)
            if rated and on_rated is not None:
                on_rated(rated)
            return True
        except Exception:
            log.exception("table %s: settling match %s failed; retrying", record.table_code[:8], record.match_id)
            await sleep(delay)
            delay = min(delay * 2, 5.0)
    return False
