"""Saving and restoring a table: its record (seats, status, series, the match's seed) and the log of
the match's actions, written to a :class:`TableStore` under the lease's fencing token.

:class:`TableRecord` is the plain value a table is rebuilt from (:func:`read_record` replays the log);
:class:`Recorder` writes one table, appending a move to the log or rewriting the whole record.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict, cast

import orjson

from app.broker.base import BrokerError
from app.engine import Action, ActionJson, Rules, RulesJson, State, action_from_json, action_to_json, apply, new_match
from app.engine.cards import Card
from app.tables.answers import Answer, ack
from app.tables.commands import Refused
from app.tables.fair import FairDealsJson
from app.tables.messages import dumps
from app.tables.spec import (
    Principal,
    PrincipalJson,
    RematchProposal,
    Seat,
    SeatKind,
    SeatRating,
    TableSpec,
    TableSpecJson,
    TableStatus,
)
from app.tables.store import Fenced, LogGap, MemoryStore, TableStore
from app.tables.table_events import MatchResults
from app.tables.table_facts import TableFacts

log = logging.getLogger("durak.table")

TAKEOVER_GRACE_S = 3.0  # extra decision time after a table moved to another process


class SeatJson(TypedDict):
    """A seat in the table record."""

    seat: int
    kind: SeatKind
    level: str | None
    principal: PrincipalJson | None
    rating: NotRequired[SeatRating | None]


class RematchJson(TypedDict):
    """An open rematch proposal in the table record."""

    agreed: list[int]  # seats
    deadline: float  # epoch seconds


class LiveJson(TypedDict):
    """What a move changes of the record besides the log (``TableStore.append``)."""

    version: int
    deadline: float | None  # epoch seconds
    saved_at: float


class StoredTable(TypedDict):
    """The stored form of a table (``record_json``); its log is stored apart."""

    spec: TableSpecJson
    seats: list[SeatJson]
    status: TableStatus
    rules: RulesJson
    version: int
    match_id: str | None
    seed: str | None  # the running (or last) match's
    dealer: int | None
    fair: NotRequired[FairDealsJson | None]
    deadline: float | None  # epoch seconds
    series: dict[str, list[int]]  # series key -> [wins, losses]
    next_dealer: int | None
    results: MatchResults | None
    created: float
    rematch: NotRequired[RematchJson | None]
    saved_at: NotRequired[float]
    started: NotRequired[float | None]
    info: TableFacts  # the public facts (the lobby reads them without the actor)


def stored_table(data: object) -> StoredTable:
    """A record read back from where it was kept (a table store, ``live_tables``): the JSON that
    :func:`record_json` wrote, so of its shape (a record with no table spec is refused)."""
    if not isinstance(data, dict) or not isinstance(data.get("spec"), dict):
        raise ValueError("not a stored table record")
    return cast(StoredTable, data)


class LoggedMove(TypedDict):
    a: ActionJson
    k: str | None  # the key of the command that made it


def seat_json(seat: Seat) -> SeatJson:
    return {
        "seat": seat.seat,
        "kind": seat.kind,
        "level": seat.level,
        "principal": seat.principal.to_json() if seat.principal else None,
        "rating": seat.rating,
    }


def seat_from_json(data: SeatJson) -> Seat:
    principal = Principal.from_json(data["principal"]) if data["principal"] else None
    return Seat(data["seat"], data["kind"], principal, data["level"], rating=data.get("rating"))


def log_entry(action: Action, key: str | None) -> str:
    """One move of a match's log as it is kept and stored: the JSON text of ``{"a": the action,
    "k": the key of the command that made it}`` (``key`` None: a bot's move, a timer's). As text it
    is one object the garbage collector never walks; as dicts and lists a match's log was two or
    three a move (docs/performance.md)."""
    move: LoggedMove = {"a": action_to_json(action), "k": key}
    return dumps(move)


def logged_move(entry: str) -> tuple[ActionJson, str | None]:
    """A :func:`log_entry` read back: the action as a JSON value, and the command key (or None)."""
    move: LoggedMove = orjson.loads(entry)
    return move["a"], move.get("k")


def logged_actions(log: list[str]) -> list[ActionJson]:
    """The actions of a log, in order, as JSON values."""
    return [logged_move(entry)[0] for entry in log]


@dataclass
class TableRecord:
    """What a table is rebuilt from (``deadline`` in epoch seconds, the log replayed into ``game``)."""

    spec: TableSpec
    rules: Rules
    seats: list[Seat]
    status: TableStatus
    version: int
    match_id: str | None
    series: dict[str, tuple[int, int]]
    next_dealer: int | None
    results: MatchResults | None
    created: float
    deadline: float | None
    game: State | None = None
    log: list[str] = field(default_factory=list)  # log_entry() of each move of the match
    done: dict[tuple[str, str], Answer] = field(default_factory=dict)  # answers of logged commands
    fair: FairDealsJson | None = None  # the committed seed and the running deal
    rematch: RematchJson | None = None  # an open rematch proposal
    saved_at: float | None = None  # when it was written (epoch): its owner was alive until then
    started: float | None = None  # when the current (or last) match was dealt, epoch seconds

    @classmethod
    def new(cls, spec: TableSpec) -> TableRecord:
        """A table just opened: empty seats, waiting for players."""
        seats = [Seat(i) for i in range(spec.rules.seats)]
        return cls(spec, spec.rules, seats, TableStatus.WAITING, 0, None, {}, None, None, time.time(), None)


def record_json(table: TableRecord, info: TableFacts) -> StoredTable:
    """The stored form of a table (its log is stored apart); ``info`` is its public facts."""
    game = table.game
    return {
        "spec": table.spec.to_json(),
        "seats": [seat_json(s) for s in table.seats],
        "status": table.status,
        "rules": table.rules.to_json(),
        "version": table.version,
        "match_id": table.match_id,
        "seed": str(game.seed) if game is not None else None,
        "dealer": game.dealer if game is not None else None,
        "fair": table.fair,
        "deadline": table.deadline,
        "series": {key: list(score) for key, score in table.series.items()},
        "next_dealer": table.next_dealer,
        "results": table.results,
        "created": table.created,
        "rematch": table.rematch,
        "saved_at": time.time(),
        "started": table.started,
        "info": info,
    }


def read_record(record: StoredTable, entries: list[str]) -> TableRecord:
    """Decode a stored record and replay its log: the same match at the same version."""
    table = TableRecord(
        spec=TableSpec.from_json(record["spec"]),
        rules=Rules.from_json(record["rules"]),
        seats=[seat_from_json(s) for s in record["seats"]],
        status=TableStatus(record["status"]),
        version=record["version"],
        match_id=record["match_id"],
        series={key: (score[0], score[1]) for key, score in record["series"].items()},
        next_dealer=record["next_dealer"],
        results=record["results"],
        created=record["created"],
        deadline=record["deadline"],
        fair=record.get("fair"),
        rematch=record.get("rematch"),
        saved_at=record.get("saved_at"),
        started=record.get("started"),
    )
    if record["seed"] is not None and table.status in (TableStatus.PLAYING, TableStatus.FINISHED):
        deal = table.fair["deal"] if table.fair is not None else None
        order = [Card.parse(text) for text in deal["deck"]] if deal is not None else None
        game = new_match(table.rules, int(record["seed"]), record["dealer"], order)
        for entry in entries:
            action, key = logged_move(entry)
            game, _ = apply(game, action_from_json(action))
            if key:
                principal_key, cmd_id = key.split("|", 1)
                table.done[(principal_key, cmd_id)] = ack(cmd_id, table.version)
        table.game = game
        table.log = list(entries)
    return table


def takeover_deadline(deadline_epoch: float | None, now: float, saved_at: float | None = None) -> float | None:
    """A deadline (the move timer, a rematch proposal's end) on this process's clock (``now``) after a
    takeover: the time that was left when the old owner last saved the table (``saved_at``, epoch;
    it was alive then), plus a grace. The time since, in which the table may have had no owner
    (its process died, or stopped), is nobody's to lose. Without ``saved_at``: what is left now."""
    if deadline_epoch is None:
        return None
    since = time.time() if saved_at is None else min(saved_at, time.time())
    return now + max(0.0, deadline_epoch - since) + TAKEOVER_GRACE_S


def rematch_json(proposal: RematchProposal | None, now: float) -> RematchJson | None:
    """An open rematch proposal as the record keeps it (``now``: the actor's clock; the deadline as
    an epoch time, as another process reads it)."""
    if proposal is None:
        return None
    return {"agreed": sorted(proposal.agreed), "deadline": time.time() + (proposal.deadline - now)}


def rematch_from_json(data: RematchJson | None, now: float, saved_at: float | None) -> RematchProposal | None:
    """The proposal a table taken over had open: the same agreements, the time that was left (plus
    the takeover's grace, as for the move timer), on this process's clock (``now``)."""
    if data is None:
        return None
    deadline = takeover_deadline(float(data["deadline"]), now, saved_at)
    assert deadline is not None
    return RematchProposal(deadline=deadline, agreed={int(seat) for seat in data["agreed"]})


class Recorder:
    """Writes one table to its store. A move is appended to the stored log; a new match, seat changes
    and results rewrite the record (and the log only when the stored one may differ). Raises
    :class:`Refused` ``moved`` once a newer owner fenced this one out (and calls ``on_fenced``).

    When the store turns out to have lost the table (``LogGap``: a Redis that restarted empty), the
    recorder first takes the table's lease again (``relock``: the new fencing token, or None when
    another process holds the lease now) and only then writes the table whole. Writing it back
    under the lapsed lease would let another process find a stored table without a lease and take
    it over from under its living owner."""

    def __init__(
        self,
        code: str,
        store: TableStore | None,
        token: int,
        on_fenced: Callable[[], None],
        relock: Callable[[], Awaitable[int | None]] | None = None,
    ) -> None:
        self.code = code
        self.store: TableStore = store if store is not None else MemoryStore()
        self.token = token  # the lease's fencing token: every write to the store carries it
        self.fenced = False
        self.dirty = False  # a change could not be saved: the whole record goes at the next write
        self.on_fenced = on_fenced
        self.relock = relock
        self._create = True  # the next whole write may find the table missing (a new table, or relocked)
        self._log_stored: int | None = None  # entries of our log known to be in the store

    def relocked(self, token: int) -> None:
        """The lease was taken again (it had vanished with the store's data) under ``token``: the
        next write puts the whole table back."""
        self.token, self._create, self.dirty = token, True, True

    async def save(
        self,
        record: Callable[[], StoredTable],
        log_entries: list[str],
        entry: str | None,
        live: Callable[[], LiveJson],
    ) -> None:
        """Save a change: ``entry`` is the move just appended to ``log_entries`` (None: no move)."""
        if self.fenced:
            raise Refused("moved", "this table is now served by another server; reconnect")
        if isinstance(self.store, MemoryStore) and self.store.private and entry is not None:
            return  # one process, nobody to take over: the log lives in memory; seats etc. still saved
        try:
            try:
                if self._create:
                    self._log_stored = None
                    await self.store.save(self.code, self.token, record(), log_entries, create=True)
                    self._create = self.dirty = False
                elif entry is None or self.dirty:
                    # The stored log is rewritten only when it may differ from ours (a new match, after
                    # a failed append); otherwise the record alone is written (e.g. a match's results).
                    same_log = self._log_stored == len(log_entries) and not self.dirty
                    self._log_stored = None
                    await self.store.save(self.code, self.token, record(), None if same_log else log_entries)
                    self.dirty = False
                else:
                    self._log_stored = None  # unknown until the store answers
                    await self.store.append(self.code, self.token, live(), entry, len(log_entries) - 1)
            except LogGap:
                await self._put_back(record(), log_entries)
            self._log_stored = len(log_entries)
        except Fenced:
            self.fenced = True
            log.warning("table %s: fenced out by a newer owner; stopping here", self.code[:8])
            self.on_fenced()
            raise Refused("moved", "this table is now served by another server; reconnect") from None

    async def _put_back(self, record: StoredTable, log_entries: list[str]) -> None:
        """The store lost (part of) the table: take the lease again, then write the table whole."""
        if self.relock is not None:
            token = await self.relock()
            if token is None:
                raise Fenced(self.code)
            if token != self.token:
                log.warning("table %s: the store lost it; lease taken again, written back whole", self.code[:8])
            self.token = token
        await self.store.save(self.code, self.token, record, log_entries, create=True)
        self._create = self.dirty = False

    async def save_change(
        self,
        record: Callable[[], StoredTable],
        log_entries: list[str],
        entry: str | None,
        live: Callable[[], LiveJson],
    ) -> None:
        """Like :meth:`save`, but a seat change (no ``entry``) that the store cannot take now is kept
        to be saved whole once the store is back; a move that cannot be saved raises."""
        try:
            await self.save(record, log_entries, entry, live)
        except BrokerError:
            if entry is not None:
                raise  # a move that cannot be saved is not applied
            self.dirty = True
