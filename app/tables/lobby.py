"""The lobby: a row for each open and running public table of every process, and the feeds of it.

Each process lists its own tables: a changed table is marked, and the marks are flushed at most
every ``LOBBY_COALESCE_S`` into deltas (``upsert`` a row, or ``removed``), applied here at once and
published on the broker channel ``lobby`` for the other processes. A process that (re)subscribes to
that channel reads every listed table from the store. Each feed gets a ``snapshot`` of the rows and
then one server-sent event per delta, encoded once for all feeds.

A lobby row is built in one place, :func:`build_lobby_row`, from a table of this process
(:func:`lobby_row`) or from the stored record of another process's table (:func:`stored_lobby_row`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from typing import Literal, TypedDict

import orjson

from app.broker.base import Broker, BrokerError, Event, Gap
from app.engine import RulesJson
from app.event_feed import KEEPALIVE_S, EventFeed, sse
from app.tables.actor import TableActor
from app.tables.opening import LIVE
from app.tables.record import StoredTable, stored_table
from app.tables.spec import PublicSeat, SeatKind, SeatRating, TableStatus
from app.tables.store import TableStore

log = logging.getLogger("durak.registry")

LOBBY_COALESCE_S = 0.1  # changes of one table within this long go out as one delta
LOBBY = "lobby"  # broker channel: the processes' lobby deltas


class LobbySeat(TypedDict):
    """A seat as the lobby shows it (app/api/schemas.py ``LobbySeat``)."""

    seat: int
    kind: SeatKind
    name: str | None
    level: str | None
    guest: bool
    rating: SeatRating | None


class LobbyRow(TypedDict):
    """What the lobby shows of a table (app/api/schemas.py ``LobbyRow`` documents it): no version,
    timers or results, which change with every move."""

    code: str
    name: str
    status: TableStatus
    rules: RulesJson
    seats: list[LobbySeat]
    free_seats: int
    spectators: int
    created: float  # epoch seconds


class Upsert(TypedDict):
    op: Literal["upsert"]
    table: LobbyRow


class Removed(TypedDict):
    op: Literal["removed"]
    code: str


Delta = Upsert | Removed


def listed(private: bool, status: TableStatus | None) -> bool:
    """Whether the lobby lists a table: a public one, waiting for players or playing."""
    return not private and status in LIVE


def build_lobby_row(
    *,
    code: str,
    name: str,
    status: TableStatus,
    rules: RulesJson,
    seats: Iterable[PublicSeat],
    spectators: int,
    created: float,
) -> LobbyRow:
    """The one builder of a lobby row; ``seats``: the public seats (``Seat.public()``, or as the
    stored table facts keep them)."""
    rows: list[LobbySeat] = [
        {
            "seat": seat["seat"],
            "kind": seat["kind"],
            "name": seat.get("name"),
            "level": seat.get("level"),
            "guest": bool(seat.get("guest")),
            "rating": seat.get("rating"),
        }
        for seat in seats
    ]
    return {
        "code": code,
        "name": name,
        "status": status,
        "rules": rules,
        "seats": rows,
        "free_seats": sum(1 for seat in rows if seat["kind"] == "empty"),
        "spectators": spectators,
        "created": created,
    }


def lobby_row(actor: TableActor) -> LobbyRow:
    """The lobby row of a table of this process (listed or not)."""
    return build_lobby_row(
        code=actor.code,
        name=actor.spec.name,
        status=actor.status,
        rules=actor.rules.to_json(),
        seats=(seat.public() for seat in actor.seats),
        spectators=len(actor.seating.spectators),
        created=actor.created,
    )


def stored_lobby_row(record: StoredTable) -> LobbyRow | None:
    """The lobby row of a stored table record (a table of another process), if it is listed."""
    info = record["info"]
    status = TableStatus(info["status"])
    if not listed(bool(info.get("private")), status):
        return None
    return build_lobby_row(
        code=info["code"] or record["spec"]["code"],
        name=info["name"],
        status=status,
        rules=info["rules"],
        seats=info["seats"],
        spectators=info.get("spectators", 0),
        created=record["created"],
    )


def newest_first(rows: Iterable[LobbyRow]) -> list[LobbyRow]:
    return sorted(rows, key=lambda row: -row["created"])


class LobbyViewer(EventFeed[bytes]):
    """One lobby feed's queue of server-sent-event texts (app/event_feed.py). A viewer
    that falls ``MAX_QUEUED`` behind loses its queue and gets a fresh snapshot instead."""

    MAX_QUEUED = limit = 2000

    def __init__(
        self,
        snapshot: Callable[[], bytes],
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(clock, sleep)  # the keep-alive's and the pacing's time (the registry's)
        self.snapshot = snapshot
        self.push(snapshot())

    def overflow(self, item: bytes) -> bytes:
        self.queue.clear()
        return self.snapshot()


class LobbyListing:
    """The lobby of this process: the rows of every process's listed tables (``rows``), what this
    process last published of its own ``tables``, its changed tables not published yet, the deltas
    for the other processes, and the feeds. Its flushes and the feeds' pacing wait on the registry's
    clock (``clock``: what time it is, ``sleep``: how to wait)."""

    def __init__(
        self,
        broker: Broker,
        store: TableStore,
        owner: str,
        tables: Mapping[str, TableActor],
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.broker, self.store, self.owner, self.tables = broker, store, owner, tables
        self.clock, self.sleep = clock, sleep
        self.rows: dict[str, LobbyRow] = {}
        self.published: dict[str, LobbyRow] = {}
        self._dirty_codes: dict[str, None] = {}  # in the order the tables changed
        self._outgoing: list[Delta] = []
        self._dirty = asyncio.Event()
        self.viewers: set[LobbyViewer] = set()
        self._snapshot_text: bytes | None = None
        self.reloading: asyncio.Task[None] | None = None

    def mark(self, code: str) -> None:
        """A table of this process changed what its row may show: flushed with the next delta."""
        self._dirty_codes[code] = None
        self._dirty.set()

    def taken_elsewhere(self, code: str) -> None:
        """A table of this process went to another process, which lists it from now on."""
        self.published.pop(code, None)

    def flush(self) -> None:
        """Turn the changed tables of this process into deltas: applied here at once (so that this
        process's lobby is exact for its own tables), queued for the other processes."""
        codes, self._dirty_codes = self._dirty_codes, {}
        for code in codes:
            actor = self.tables.get(code)
            row = lobby_row(actor) if actor is not None and listed(actor.spec.private, actor.status) else None
            if row == self.published.get(code):
                continue
            delta: Delta
            if row is None:
                del self.published[code]
                delta = {"op": "removed", "code": code}
            else:
                self.published[code] = row
                delta = {"op": "upsert", "table": row}
            self.apply(delta)
            self._outgoing.append(delta)
        if self._outgoing:
            self._dirty.set()

    def apply(self, delta: Delta) -> None:
        """One table's change to the lobby, encoded once and queued for every feed."""
        if delta["op"] == "removed":
            code = delta["code"]
            if self.rows.pop(code, None) is None:
                return
            text = sse("removed", {"code": code})
        else:
            row = delta["table"]
            event = "changed" if row["code"] in self.rows else "added"
            self.rows[row["code"]] = row
            text = sse(event, row)
        self._snapshot_text = None
        for viewer in self.viewers:
            viewer.push(text)

    async def publish_forever(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            self.flush()
            outgoing, self._outgoing = self._outgoing, []
            if outgoing:
                # Lost while the broker is down: the other processes reload when it is back.
                with contextlib.suppress(Exception):
                    await self.broker.publish(LOBBY, orjson.dumps({"from": self.owner, "deltas": outgoing}))
            await self.sleep(LOBBY_COALESCE_S)  # a burst of changes of one table: one delta

    def on_event(self, item: Event) -> None:
        """A message on the lobby channel: another process's deltas (a gap: read everything again)."""
        if isinstance(item, Gap):
            self.live(True)
            return
        try:
            message = orjson.loads(item.data)
            if message.get("from") == self.owner:
                return  # applied when they were published
            for delta in message["deltas"]:
                self.apply(delta)
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("lobby: ignoring a malformed message")

    def live(self, after_outage: bool) -> None:
        """The lobby channel is (again) subscribed: read every process's listed tables from the store."""
        if self.reloading is None or self.reloading.done():
            self.reloading = asyncio.get_running_loop().create_task(self.reload())

    async def reload(self) -> None:
        try:
            records = await self.store.lobby()
        except BrokerError:
            records = []
        rows: dict[str, LobbyRow] = {}
        for record in records:
            try:
                row = stored_lobby_row(stored_table(record))
            except (KeyError, TypeError, ValueError):
                log.warning("lobby: ignoring a malformed stored table")
                continue
            if row is not None and row["code"] not in self.tables:
                rows[row["code"]] = row
        rows.update(self.published)  # this process's own tables, as they are now
        self.rows = rows
        self._snapshot_text = None
        for viewer in self.viewers:
            viewer.queue.clear()
            viewer.push(self.snapshot())

    def listed_now(self) -> list[LobbyRow]:
        """Open and running public tables of every process, newest first."""
        self.flush()
        return newest_first(self.rows.values())

    def snapshot(self) -> bytes:
        """The ``snapshot`` event a lobby feed starts with: every listed table, newest first."""
        if self._snapshot_text is None:
            self._snapshot_text = sse("snapshot", {"tables": newest_first(self.rows.values())})
        return self._snapshot_text

    @contextlib.asynccontextmanager
    async def feed(
        self, keepalive_s: float = KEEPALIVE_S, *, joined: bool = False, min_interval_s: float = 0.0
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Server-sent events: a ``snapshot`` of the listed tables, then one ``added``, ``changed``
        or ``removed`` event per table change (``joined``: the events queued since the last write in
        one text, at most one write per ``min_interval_s``)."""
        self.flush()
        viewer = LobbyViewer(self.snapshot, self.clock, self.sleep)
        self.viewers.add(viewer)
        try:
            yield viewer.texts(keepalive_s, join=b"".join if joined else None, min_interval_s=min_interval_s)
        finally:
            self.viewers.discard(viewer)
            viewer.close()
