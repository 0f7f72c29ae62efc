"""A match starts and ends at a table: the deal (stakes into escrow, the deal kept before anyone sees
a card), the end (results, series, settlement in the background, the next deal's commitment), the
ratings the ledger sends back, and a match aborted because its table closes.

These are steps of the table's actor (``actor.py``), on the parts of it that :class:`MatchTable`
names; the actor runs them one at a time like everything else it does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Sequence
from typing import Protocol

from app.engine import Rules, State
from app.tables.bot_turns import BotTurns
from app.tables.commands import Command, Rated, unavailable
from app.tables.deadlines import TableTimers
from app.tables.fair import FairDeals
from app.tables.hooks import MatchHooks
from app.tables.record import logged_actions
from app.tables.results import aborted_match, dealt_match, match_end, settle, take_stakes
from app.tables.seating import Seating
from app.tables.spec import Seat, TableSpec, TableStatus
from app.tables.table_events import AnyEvent, MatchResults, MatchStartEvent, results_event

log = logging.getLogger("durak.table")

_aborting: set[asyncio.Task[bool]] = set()  # aborted matches being recorded after their table closed


class MatchTable(Protocol):
    """What the steps of a match read and change of the table's actor."""

    code: str
    spec: TableSpec
    hooks: MatchHooks
    rules: Rules
    seating: Seating
    fair: FairDeals
    timers: TableTimers
    bot_turns: BotTurns
    status: TableStatus
    game: State | None
    match_id: str | None
    log: list[str]
    results: MatchResults | None
    next_dealer: int | None
    started: float | None
    _settle_task: asyncio.Task[bool] | None

    @property
    def seats(self) -> list[Seat]: ...

    def post(self, command: Command) -> None: ...

    async def _changed(self, events: Sequence[AnyEvent], bump: bool = True) -> None: ...


async def start_match(table: MatchTable) -> None:
    """Deal a match with the seats as they are: its stakes into escrow, its deal kept, then told."""
    table.rules = rules = table.seating.for_match(table.rules)
    match_id = uuid.uuid4().hex
    # Every match's start is told (it counts toward the rated minimum, docs/integrity.md); a
    # staked match's stakes go into escrow here, and only here.
    accounts = table.seating.stake_accounts() if rules.stake > 0 else table.seating.account_ids()
    await take_stakes(table.hooks, match_id, rules.stake, accounts)
    fair = table.fair
    last_deal = fair.deal
    game = fair.new_match(rules, table.seats, table.next_dealer)
    revealed = fair.revealed()
    assert revealed is not None
    try:  # kept before anyone sees a card, so that the deal is revealed however the match ends
        await table.hooks.match_dealt(dealt_match(game, rules, table.seats, table.spec, match_id, revealed))
    except Exception as exc:
        log.warning("table %s: the deal of match %s not kept (%s): not dealt", table.code[:8], match_id, exc)
        fair.deal = last_deal  # nothing was dealt: its seed stays the secret of the next deal
        if rules.stake > 0:
            with contextlib.suppress(Exception):
                await table.hooks.match_abandoned(match_id=match_id)
        raise unavailable() from exc
    table.game = game
    table.match_id, table.log, table.results, table.status = match_id, [], None, TableStatus.PLAYING
    table.started = time.time()  # the deal's wall-clock time, kept in the record (takeovers too)
    table.seating.match_started()
    table.bot_turns.new_match(table.seats)
    start: MatchStartEvent = {
        "type": "match_start",
        "match_id": match_id,
        "dealer": game.dealer,
        "attacker": game.attacker,
        "defender": game.defender,
    }
    await table._changed([start])


async def finish_match(table: MatchTable, bump: bool = True) -> None:
    """The match is over: its results and the series, its settlement started in the background, the
    next deal committed to. ``bump=False``: a takeover settles a match its record counts already."""
    game, match_id, fair = table.game, table.match_id, table.fair
    assert game is not None and game.outcome is not None and match_id is not None
    table.status = TableStatus.FINISHED
    table.timers.deadline = table.timers.decision_since = None
    table.seating.gone_since.clear()
    actions, series = logged_actions(table.log), table.seating.series
    end = match_end(
        game, table.rules, table.seats, series, table.spec, match_id, actions, fair.revealed(), started_at=table.started
    )
    if bump:  # not when a takeover settles a finished match again: its record counts it already
        table.seating.series, table.next_dealer, table.results = end.series, end.next_dealer, end.results
    # What the ledger says the match did to the ratings comes back to the actor as a command.
    table._settle_task = asyncio.create_task(
        settle(table.hooks, end.record, on_rated=lambda ratings: table.post(Command(Rated(match_id, ratings))))
    )
    renewed = fair.next_commitment()  # the next match's seed, committed to before any client seed
    told: list[AnyEvent] = [results_event(end.results)]
    if renewed:
        told.append({"type": "commitment", "match_number": fair.number, "commitment": fair.commitment})
    await table._changed(told, bump=bump)


async def ratings_came(table: MatchTable, command: Command) -> None:
    """The finished match's rating changes (seat -> rating, change...) join its results, as a
    ``ratings`` event, unless the table has moved on to another match."""
    results, rated = table.results, command.body
    assert isinstance(rated, Rated)
    if results is None or results["match_id"] != rated.match_id:
        return
    ratings = {str(seat): change for seat, change in rated.ratings.items()}
    if results.get("ratings") == ratings:
        return
    rated_results = results.copy()  # a new value: the record saved last still holds the old one
    rated_results["ratings"] = ratings
    table.results = rated_results
    await table._changed([{"type": "ratings", "match_id": rated.match_id, "ratings": ratings}])


def abort_match(table: MatchTable, reason: str) -> None:
    """The table closes in the middle of a match (once the actor has stopped): the match is recorded
    as aborted, its moves so far and its deal revealed, and every stake goes back (retried in the
    background like a settlement; a restart finishes it otherwise)."""
    game, match_id = table.game, table.match_id
    if table.status != TableStatus.PLAYING or game is None or match_id is None or game.outcome is not None:
        return
    table.status = TableStatus.FINISHED
    actions = logged_actions(table.log)
    record = aborted_match(game, table.rules, table.seats, table.spec, match_id, actions, table.fair.revealed(), reason)
    table._settle_task = task = asyncio.create_task(settle(table.hooks, record))
    _aborting.add(task)
    task.add_done_callback(_aborting.discard)
