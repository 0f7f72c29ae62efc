"""What a table shows about itself, built from plain values: the table facts (``table`` in every
welcome, update and presence message, ``info`` replies and the stored record), a connection's
snapshot, and the welcome that starts or resumes a connection (docs/protocol.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.engine import Rules, State, view
from app.tables import answers
from app.tables.answers import WelcomeMessage
from app.tables.fanout import events_since, recent_events
from app.tables.results import series_key
from app.tables.seating import Seating
from app.tables.spec import DeadlineKind, Principal, TableSpec, TableStatus
from app.tables.table_events import AnyEventJson, MatchResults
from app.tables.table_facts import FairnessInfo, ReadyCheckFacts, RematchFacts, Snapshot, TableFacts


def ms_until(when: float, now: float) -> int:
    return max(0, int((when - now) * 1000))


def table_facts(
    spec: TableSpec,
    seating: Seating,
    *,
    status: TableStatus,
    rules: Rules,
    shown: dict[int, tuple[float, DeadlineKind]],
    deadline: float | None,
    now: float,
    grace_s: float,
    fairness: FairnessInfo,
    match_id: str | None,
    results: MatchResults | None,
    version: int,
    you: str | None,
) -> TableFacts:
    """Public facts about the table (seats, status, series, spectators, deadlines, rematch, the
    ready check before a staked match).

    ``shown`` holds, for each seat the match waits for, when its decision is due and why
    (:meth:`TableTimers.shown`): the seat's row carries ``deadline_ms`` (time left from ``now``) and
    ``deadline_kind`` ("timer": the move timer, "idle": the idle limit, "grace": the time to come
    back); ``deadline_ms`` of the table is the earliest of them (else the move timer ``deadline``)."""
    seats = [seat.public() for seat in seating.seats]
    for row in seats:
        when, kind = shown.get(row["seat"], (None, None))
        row["deadline_ms"] = None if when is None else ms_until(when, now)
        row["deadline_kind"] = kind
    earliest = min((when for when, _ in shown.values()), default=deadline)
    rematch: RematchFacts | None = None
    if seating.rematch is not None:
        rematch = {"agreed": seating.agreed(), "deadline_ms": ms_until(seating.rematch.deadline, now)}
    ready_check: ReadyCheckFacts | None = None
    if seating.ready is not None:
        ready_check = {"ready": sorted(seating.ready.ready), "deadline_ms": ms_until(seating.ready.deadline, now)}
    return {
        "code": spec.code,
        "name": spec.name,
        "private": spec.private,
        "chat": spec.chat,
        "status": status,
        "rules": rules.to_json(),
        "creator": spec.creator.key,
        "seats": seats,
        "spectators": len(seating.spectators),
        "series": {seat.seat: seating.series.get(series_key(seat), (0, 0)) for seat in seating.seats},
        "deadline_ms": None if earliest is None else ms_until(earliest, now),
        "grace_s": grace_s,
        "rematch": rematch,
        "ready_check": ready_check,
        "fairness": fairness,
        "match_id": match_id,
        "results": results,
        "version": version,
        "you": you,
    }


def snapshot(
    table: TableFacts, version: int, seat: int | None, game: State | None, principal: Principal | None
) -> Snapshot:
    """The table as one connection sees it: the facts ``table`` and the seat's (or a spectator's) view."""
    if principal is not None and principal.key.startswith("anon:"):
        table["code"] = None  # watchers without a session may hold only the spectator link
    return {"version": version, "seat": seat, "view": view(game, seat) if game is not None else None, "table": table}


def welcome(
    snapshot: Snapshot,
    history: Sequence[tuple[int, list[AnyEventJson]]],
    last_version: Any,
    seat: int | None,
) -> WelcomeMessage:
    """The answer to ``hello``: the snapshot, and the events a client that saw ``last_version``
    missed (``resumed_from``) when they are still in ``history``, else this match's ``recent`` ones."""
    if isinstance(last_version, int) and not isinstance(last_version, bool):
        missed = events_since(history, snapshot["version"], last_version, seat)
        if missed is not None:
            return answers.welcome(snapshot, events=missed, resumed_from=last_version)
    return answers.welcome(snapshot, recent=recent_events(history, seat))
