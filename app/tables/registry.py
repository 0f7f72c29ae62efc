"""The tables this process owns, table ownership across processes, the lobby, and request/reply
calls to table actors wherever they run.

Each live table is owned by exactly one process, which holds the lease ``table:<code>`` (with a
fencing token) and renews it while alive. A supervisor in every process looks for tables whose lease
has lapsed (their process died) and takes them over: it rebuilds the match from the stored record
and action log (``app.tables.store``) and carries on at the same version.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import sys
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from app.broker.base import Broker, BrokerError, Event, Gap
from app.metrics import HANDED_OVER, TAKEOVERS
from app.tables import chat
from app.tables.actor import TableActor
from app.tables.bot_runner import BotRunner
from app.tables.commands import Body, Command, command_to_json
from app.tables.hooks import MatchHooks
from app.tables.leases import TakeoverHold
from app.tables.ports import TableTransport
from app.tables.record import read_record
from app.tables.spec import AbortReason, DecisionLimits, Principal, TableSpec, TableStatus
from app.tables.store import Fenced, MemoryStore, TableStore
from app.transport import channels
from app.transport.delivery import Delivery, Relay

log = logging.getLogger("durak.registry")

CALL_TIMEOUT_S = 10.0
LEASE_TTL_S = 3.0  # a dead owner's tables are taken over within about this long plus SUPERVISE_S
SUPERVISE_S = 1.0
TAKEOVERS_AT_ONCE = 16  # lapsed tables a supervisor pass takes over concurrently
RENEW_RETRY_S = 0.25  # a renewal of the leases that failed is tried again after this long
SWEEP_S = 5.0  # how often idle tables are looked for
LOBBY_COALESCE_S = 0.1  # changes of one table within this long go out as one delta
CLOSED_REMEMBERED = 100_000  # codes of closed tables kept to answer "closed" rather than "no such table"
LISTED = (TableStatus.WAITING, TableStatus.PLAYING)  # the statuses a public table is listed in the lobby with
HANDOVER = "handover"  # broker channel: a stopping process names the tables it has just let go of


class TableGone(Exception):
    """No live table answers to that code."""


class TableClosed(TableGone):
    """The table existed here but was closed (idle, finished, or a match of bots nobody watched)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class TooMany(Exception):
    """A limit on tables (docs/architecture.md, "Limits and eviction") refuses the request."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Draining(TooMany):
    """This process is stopping (SIGTERM): it opens no table; another process will (retry)."""

    def __init__(self) -> None:
        super().__init__("draining", "this server is restarting: try again in a moment (another server takes it)")


@dataclass(frozen=True)
class TableLimits:
    """The table limits and eviction delays (settings ``DURAK_*``, app/config.py)."""

    waiting_per_account: int = 3
    waiting_per_ip: int = 10
    live_per_account: int = 5  # waiting or playing, play-a-bot tables too
    live_per_ip: int = 30
    # Tables opened within ``opened_window_s`` (the time a finished table stays in memory): a table
    # whose match is left at once is live no more, but it stays in memory and in the history.
    opened_per_account: int = 30
    opened_per_ip: int = 150
    opened_window_s: float = 600.0
    bot_tables_per_account: int = 1
    bot_table_unwatched_s: float = 60.0
    bot_match_max_s: float = 1800.0
    finished_ttl_s: float = 600.0
    idle_ttl_s: float = 1800.0

    @classmethod
    def from_settings(cls, settings: Any) -> TableLimits:
        return cls(
            waiting_per_account=settings.max_waiting_tables_per_account,
            waiting_per_ip=settings.max_waiting_tables_per_ip,
            live_per_account=settings.max_live_tables_per_account,
            live_per_ip=settings.max_live_tables_per_ip,
            opened_per_account=settings.max_tables_opened_per_account,
            opened_per_ip=settings.max_tables_opened_per_ip,
            opened_window_s=settings.tables_opened_window_s,
            bot_tables_per_account=settings.max_bot_tables_per_account,
            bot_table_unwatched_s=settings.bot_table_unwatched_s,
            bot_match_max_s=settings.bot_match_max_s,
            finished_ttl_s=settings.finished_table_ttl_s,
            idle_ttl_s=settings.idle_table_ttl_s,
        )


def bots_only(actor: TableActor) -> bool:
    return all(seat.kind == "bot" for seat in actor.seats)


def connected(actor: TableActor) -> bool:
    return bool(actor.seating.spectators) or any(seat.connections for seat in actor.seats)


def lobby_row(actor: TableActor) -> dict[str, Any]:
    """What the lobby shows of a table: no version, timers or results, which change with every move."""
    return {
        "code": actor.code,
        "name": actor.spec.name,
        "status": actor.status,
        "rules": actor.rules.to_json(),
        "seats": [
            {
                "seat": s.seat,
                "kind": s.kind,
                "name": s.name,
                "level": s.level,
                "guest": s.principal is not None and s.principal.is_guest,
                "rating": s.rating,
            }
            for s in actor.seats
        ],
        "free_seats": sum(1 for seat in actor.seats if seat.kind == "empty"),
        "spectators": len(actor.seating.spectators),
        "created": actor.created,
    }


def _row_of_record(record: dict[str, Any]) -> dict[str, Any] | None:
    """The lobby row of a stored table record (a table of another process), if it is listed."""
    info = record["info"]
    if info.get("private") or info.get("status") not in LISTED:
        return None
    seats = [{k: seat.get(k) for k in ("seat", "kind", "name", "level", "rating")} for seat in info["seats"]]
    for seat, stored in zip(seats, info["seats"], strict=True):
        seat["guest"] = bool(stored.get("guest"))
    return {
        "code": info["code"],
        "name": info["name"],
        "status": info["status"],
        "rules": info["rules"],
        "seats": seats,
        "free_seats": sum(1 for seat in seats if seat["kind"] == "empty"),
        "spectators": info.get("spectators", 0),
        "created": record["created"],
    }


def sse(event: str, data: Any) -> bytes:
    """One server-sent event, encoded once: every feed sends the same bytes object."""
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


class LobbyViewer:
    """One lobby feed's queue of server-sent-event texts. A viewer that falls ``MAX_QUEUED`` behind
    loses its queue and gets a fresh snapshot instead."""

    MAX_QUEUED = 2000

    def __init__(self, snapshot: Callable[[], bytes]) -> None:
        self.snapshot = snapshot
        self.queue: deque[bytes] = deque([snapshot()])
        self.ready = asyncio.Event()
        self.ready.set()

    def push(self, text: bytes) -> None:
        if len(self.queue) >= self.MAX_QUEUED:
            self.queue.clear()
            text = self.snapshot()
        self.queue.append(text)
        self.ready.set()

    async def texts(
        self, keepalive_s: float, *, joined: bool = False, min_interval_s: float = 0.0
    ) -> AsyncIterator[bytes]:
        """The queued texts as they come; a comment line after ``keepalive_s`` of quiet (so that a
        client that is gone is noticed). ``joined``: everything queued since the last write as one
        text, and at most one write per ``min_interval_s``: the first change after a quiet spell
        goes out at once, and under a stream of changes (a wave of matches ending) a feed costs a
        write per ``min_interval_s``, not one per lobby flush."""
        loop = asyncio.get_running_loop()
        last_write = -math.inf
        while True:
            try:
                async with asyncio.timeout(keepalive_s):
                    await self.ready.wait()
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if joined:
                early = last_write + min_interval_s - loop.time()
                if early > 0:
                    await asyncio.sleep(early)  # what is queued meanwhile goes out with it
                self.ready.clear()
                if self.queue:
                    texts = b"".join(self.queue)
                    self.queue.clear()
                    last_write = loop.time()
                    yield texts  # what is queued meanwhile sets ``ready`` again: the next text
                continue
            self.ready.clear()
            while self.queue:
                yield self.queue.popleft()


def lease_name(code: str) -> str:
    """The broker lease of a table, tagged with the code like its channels and store keys (one
    Redis Cluster slot holds them all)."""
    return f"table:{{{code}}}"



def _waits_for_players(actor: TableActor) -> bool:
    """A table with an empty seat before its match: a full table waiting for its player's seed (a
    match against a bot) is not waiting for players."""
    return actor.status == TableStatus.WAITING and any(seat.kind == "empty" for seat in actor.seats)

class TableRegistry:
    def __init__(
        self,
        broker: Broker,
        hooks: MatchHooks,
        bots: BotRunner | None = None,
        store: TableStore | None = None,
        *,
        owner: str | None = None,
        supervise: bool = True,
        limits: DecisionLimits | None = None,
        table_limits: TableLimits | None = None,
        clock: Callable[[], float] = time.monotonic,
        transport: Callable[[str, Broker, str], TableTransport] = Delivery,
    ) -> None:
        self.broker = broker
        self.hooks = hooks
        self.bots = bots or BotRunner()
        self.store: TableStore = store if store is not None else MemoryStore()
        self.owner = owner or uuid.uuid4().hex
        self.transport = transport  # each table's: where its frames go (app/transport/delivery.py)
        self.relay = Relay(broker, self.owner)  # frames from tables owned elsewhere, to our connections
        self.supervise = supervise
        self.limits = limits or DecisionLimits()  # idle limit and disconnect grace of every table
        self.tables: dict[str, TableActor] = {}
        self.watch_codes: dict[str, str] = {}
        self.table_limits = table_limits or TableLimits()
        self.clock = clock
        self.created_from: dict[str, str] = {}  # table code -> the IP address it was opened from
        self._pending: list[tuple[str, str | None]] = []  # tables being opened: (creator key, address)
        self._opened: dict[str, deque[float]] = {}  # "a:<key>" / "ip:<address>" -> when it opened tables
        self._opening: set[str] = set()  # their codes: stored already, not yet in ``tables``
        self._changed_at: dict[str, float] = {}  # table code -> its last change (clock)
        self._seen_at: dict[str, float] = {}  # table code -> when someone was last connected to it
        self._bots_since: dict[str, float] = {}  # table code -> when its match of bots only started
        self.closed: OrderedDict[str, str] = OrderedDict()  # closed table's code or watch code -> why
        # The lobby: rows of every process's listed tables, what this process last published of its
        # own, its changed tables not published yet, deltas for the other processes, the feeds.
        self.lobby_rows: dict[str, dict[str, Any]] = {}
        self._published: dict[str, dict[str, Any]] = {}
        self._lobby_dirty_codes: dict[str, None] = {}  # in the order the tables changed
        self._lobby_outgoing: list[dict[str, Any]] = []
        self._lobby_dirty = asyncio.Event()
        self._viewers: set[LobbyViewer] = set()
        self._snapshot_text: bytes | None = None
        self._lobby_reload: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._supervisor: asyncio.Task[None] | None = None
        self._leases_kept = True  # the last renewal of the leases reached the broker
        self.takeover_hold = TakeoverHold()  # no takeover while nobody could renew (a broker stall)
        self.draining = False  # stopping: no new tables, no takeovers (``hand_over``)
        self._taking: set[asyncio.Task[Any]] = set()  # takeovers a peer's handover asked for
        self.change_watchers: list[Callable[[TableActor], None]] = []  # told of every change (app/api/turn_push.py)

    async def __aenter__(self) -> TableRegistry:
        self._tasks.append(asyncio.create_task(self._publish_lobby()))
        subscribed = asyncio.Event()

        def lobby_live(after_outage: bool) -> None:
            if subscribed.is_set():
                self._lobby_live(after_outage)
            subscribed.set()

        self._tasks.append(
            asyncio.create_task(self.broker.follow(channels.LOBBY, self._on_lobby_event, on_live=lobby_live))
        )
        # The other processes' tables: from the store once the lobby channel is subscribed (what
        # changes after this comes as deltas). A broker that is down now is not waited for.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(subscribed.wait(), 5)
        await self._reload_lobby()
        self._tasks.append(asyncio.create_task(self._sweep_forever()))
        self._tasks.append(asyncio.create_task(self._keep_leases()))
        if self.supervise:
            self._supervisor = asyncio.create_task(self._supervise())
            self._tasks.append(self._supervisor)
        self._tasks.append(asyncio.create_task(self.broker.follow(HANDOVER, self._on_handover)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, release: bool = True) -> None:
        if self._lobby_reload is not None:
            self._tasks.append(self._lobby_reload)
        for task in (*self._tasks, *self._taking):
            task.cancel()
        for task in (*self._tasks, *self._taking):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        await asyncio.gather(*(actor.stop() for actor in self.tables.values()), return_exceptions=True)
        if release:
            for code, actor in self.tables.items():
                with contextlib.suppress(Exception):
                    await self.broker.release_lease(lease_name(code), self.owner, actor.recorder.token)
        self.tables.clear()
        self.bots.close()

    # ------------------------------------------------------------------ creating and finding tables

    async def create(self, spec: TableSpec, address: str | None = None) -> TableActor:
        """Open a table; ``address`` is whom the per-address limits count (``app.api.limits.address_of``:
        an IPv6 client's /64). Raises ``TooMany`` when its creator or that address has the limit of
        tables waiting for players, or of tables waiting or playing, already; ``Draining`` while the
        process stops."""
        if self.draining:
            raise Draining()
        self._check_can_open(spec.creator.key, address)
        self._pending.append((spec.creator.key, address))
        self._opening.add(spec.code)
        try:
            token = await self.broker.acquire_lease(lease_name(spec.code), self.owner, LEASE_TTL_S)
            if token is None:  # pragma: no cover - a fresh random code is never held
                raise RuntimeError("table code collision")
            actor = TableActor(
                spec,
                self.broker,
                self.hooks,
                self.bots,
                on_change=self._on_change,
                store=self.store,
                token=token,
                relock=self._relock(spec.code),
                limits=self.limits,
                process=self.owner,
                transport=self.transport(spec.code, self.broker, self.owner),
            )
            await actor.save_now()
            if address is not None:
                self.created_from[spec.code] = address
            await self._adopt(actor)
        finally:
            self._pending.remove((spec.creator.key, address))
            self._opening.discard(spec.code)
        return actor

    def _check_can_open(self, creator: str, address: str | None) -> None:
        """Refuse a new table when its creator, or the address it is opened from, has the limit of
        tables waiting for players, of live tables (waiting or playing: a match against a bot runs
        from its first moment), counting the tables being opened right now, or of tables opened
        lately (a match left at once is over, but its table stays in memory a while). When it
        passes, the opening is counted."""
        live = [actor for actor in self.tables.values() if actor.status in LISTED]
        limits, now = self.table_limits, self.clock()
        mine = [actor for actor in live if actor.spec.creator.key == creator]
        opening = sum(1 for key, _ in self._pending if key == creator)
        waiting = sum(1 for actor in mine if _waits_for_players(actor)) + opening
        if waiting >= limits.waiting_per_account:
            raise TooMany(
                "too_many_tables",
                f"you have {waiting} tables waiting for players and may have at most {limits.waiting_per_account}: "
                "start one, or wait until one fills or is closed for idleness",
            )
        if len(mine) + opening >= limits.live_per_account:
            raise TooMany(
                "too_many_tables",
                f"you have {len(mine) + opening} tables open (waiting or playing) and may have at most "
                f"{limits.live_per_account}: finish or leave one first",
            )
        counted = [(f"a:{creator}", limits.opened_per_account, "you opened")]
        if address is not None:
            from_there = [actor for actor in live if self.created_from.get(actor.code) == address]
            opening = sum(1 for _, where in self._pending if where == address)
            waiting = sum(1 for actor in from_there if _waits_for_players(actor)) + opening
            if waiting >= limits.waiting_per_ip:
                raise TooMany(
                    "too_many_tables",
                    f"{waiting} tables opened from your address are waiting for players; "
                    f"at most {limits.waiting_per_ip} may",
                )
            if len(from_there) + opening >= limits.live_per_ip:
                raise TooMany(
                    "too_many_tables",
                    f"{len(from_there) + opening} tables opened from your address are open (waiting or playing); "
                    f"at most {limits.live_per_ip} may",
                )
            counted.append((f"ip:{address}", limits.opened_per_ip, "your address opened"))
        for who, limit, whom in counted:
            self._check_rate(who, limit, now, whom)
        for who, _, _ in counted:
            self._opened.setdefault(who, deque()).append(now)

    def _check_rate(self, who: str, limit: int, now: float, whom: str) -> None:
        """Refuse ``who`` (a creator or an address) a table when it opened ``limit`` within the window."""
        window = self.table_limits.opened_window_s
        opened = self._opened.get(who)
        while opened and opened[0] <= now - window:
            opened.popleft()
        if opened and len(opened) >= limit:
            wait = math.ceil(opened[0] + window - now)
            raise TooMany(
                "too_many_tables",
                f"{whom} {len(opened)} tables in the last {_minutes(window)}, the most that may be: "
                f"the next one in {wait} s",
            )

    def check_bot_table(self, code: str, principal_key: str) -> None:
        """Refuse ``principal_key`` a bot or a match at table ``code`` (no person seated there) when
        he runs the limit of matches of bots only already (tables of this process)."""
        actor = self.tables.get(code)
        if actor is None or any(seat.kind == "human" for seat in actor.seats):
            return
        running = sum(
            1
            for other in self.tables.values()
            if other.code != code
            and other.status == TableStatus.PLAYING
            and other.spec.creator.key == principal_key
            and bots_only(other)
        )
        limit = self.table_limits.bot_tables_per_account
        if running >= limit:
            raise TooMany(
                "too_many_bot_tables",
                f"you have {running} matches of bots only running and may have at most {limit}: "
                "wait until one ends, or take a seat yourself",
            )

    async def _adopt(self, actor: TableActor) -> None:
        await actor.start()
        self.tables[actor.code] = actor
        self.watch_codes[actor.spec.watch_code] = actor.code
        self._seen_at[actor.code] = self._changed_at[actor.code] = self.clock()
        self._on_change(actor)

    async def resolve(self, code: str) -> tuple[str, bool]:
        """(table code, watch only) for an invite code or a spectator code, on any process."""
        if code in self.tables:
            return code, False
        if code in self.watch_codes:
            return self.watch_codes[code], True
        if code in self.closed:
            raise TableClosed(code, self.closed[code])
        try:
            if await self.store.load(code) is not None:
                return code, False
            found = await self.store.resolve_watch(code)
        except BrokerError as exc:
            raise TableGone(code) from exc
        if found is not None:
            return found, True
        raise TableGone(code)

    async def rules_of(self, code: str) -> dict[str, Any]:
        if code in self.tables:
            return self.tables[code].rules.to_json()
        loaded = await self.store.load(code)
        if loaded is None:
            raise TableGone(code)
        rules: dict[str, Any] = loaded[0]["rules"]
        return rules

    # ------------------------------------------------------------------ ownership

    async def _keep_leases(self) -> None:
        while True:
            # After a failed renewal sooner: once the broker answers again, a lease that lapsed
            # meanwhile is taken back before another process may take the table (``TakeoverHold``).
            await asyncio.sleep(LEASE_TTL_S / 3 if self._leases_kept else RENEW_RETRY_S)
            await self.keep_leases()

    async def keep_leases(self) -> None:
        """Renew the lease of every table of this process, all in one call to the broker (one round
        trip per few hundred tables: renewing them one by one took a loop turn per table, and on a
        busy process the pass outlasted the leases). A lease that lapsed (Redis stalled, or
        restarted) is taken again before anything else is written."""
        held: list[tuple[str, TableActor, int]] = []
        for code, actor in list(self.tables.items()):
            if actor.recorder.fenced:
                self._lost(code)
            else:
                held.append((code, actor, actor.recorder.token))
        if not held:
            return
        try:
            kept = await self.broker.renew_leases(
                self.owner, [(lease_name(code), token) for code, _, token in held], LEASE_TTL_S
            )
        except BrokerError:
            self._leases_kept = False
            return  # the broker is down: keep serving from memory, try again shortly
        self._leases_kept = True
        current = [
            (code, actor, still_ours)
            for (code, actor, token), still_ours in zip(held, kept, strict=True)
            if self.tables.get(code) is actor and actor.recorder.token == token  # not closed or taken back meanwhile
        ]
        retaken: list[TableActor] = []
        for code, actor, still_ours in current:
            if still_ours:
                continue
            try:
                # The lease is gone (Redis stalled or restarted): take it again if nobody else has.
                new_token = await self.broker.acquire_lease(lease_name(code), self.owner, LEASE_TTL_S)
            except BrokerError:
                continue
            if new_token is None:
                log.warning("table %s: lease lost to another process; stopping here", code[:8])
                await actor.stop()
                self._lost(code)
            else:
                log.warning("table %s: its lease had lapsed (Redis stalled or restarted?); taken again", code[:8])
                actor.recorder.relocked(new_token)  # what took the lease took the table too: write it whole
                retaken.append(actor)
        for actor in [actor for _, actor, still_ours in current if still_ours and actor.recorder.dirty] + retaken:
            with contextlib.suppress(Exception):
                await actor.save_now()

    def _lost(self, code: str) -> None:
        """Another process owns the table now: forget it here, and have this process's connections
        to it say hello again (a gap on its channels), so that its new owner hears them: they
        would go on talking to the old actor's memory otherwise, and their seats' graces would
        run out at the new owner."""
        self._drop(code, unlist=False)
        self.broker.signal_gap_here(channels.of_table(code), besides=channels.fan(code, self.owner))

    def _relock(self, code: str) -> Callable[[], Awaitable[int | None]]:
        """How a table's recorder takes its lease again after the store lost the table (None: another
        process holds it now)."""
        return lambda: self.broker.acquire_lease(lease_name(code), self.owner, LEASE_TTL_S)

    def _drop(self, code: str, *, unlist: bool = True) -> None:
        """Forget a table of this process. With ``unlist`` its lobby row goes too; not when another
        process took it over (that one lists it now)."""
        actor = self.tables.pop(code, None)
        if actor is not None:
            self.watch_codes.pop(actor.spec.watch_code, None)
            self.bots.forget(code)
        for facts in (self.created_from, self._changed_at, self._seen_at, self._bots_since):
            facts.pop(code, None)
        if unlist:
            self._mark_lobby(code)
        else:
            self._published.pop(code, None)

    # ------------------------------------------------------------------ eviction

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(SWEEP_S)
            try:
                await self.sweep()
            except Exception:  # pragma: no cover - one bad table must not stop the sweeping
                log.exception("sweeping idle tables failed")

    async def sweep(self) -> list[str]:
        """Close the tables that have been idle too long; returns their codes. A waiting table with
        no change and nobody connected for ``idle_ttl_s``, a finished one likewise for
        ``finished_ttl_s``, and a match of bots only nobody watches for ``bot_table_unwatched_s`` or
        that has run ``bot_match_max_s``. Running matches of people are never closed here: their
        timers end them."""
        now = self.clock()
        limits = self.table_limits
        for who, opened in list(self._opened.items()):  # the opening counts of the window only
            while opened and opened[0] <= now - limits.opened_window_s:
                opened.popleft()
            if not opened:
                del self._opened[who]
        closing: list[tuple[str, str]] = []
        for code, actor in list(self.tables.items()):
            if connected(actor):
                self._seen_at[code] = now
            quiet_s = now - max(self._seen_at.get(code, now), self._changed_at.get(code, now))
            unwatched_s = now - self._seen_at.get(code, now)
            if actor.status == TableStatus.WAITING and quiet_s >= limits.idle_ttl_s:
                closing.append((code, f"it waited {_minutes(limits.idle_ttl_s)} for players and nobody came"))
            elif actor.status == TableStatus.FINISHED and quiet_s >= limits.finished_ttl_s:
                closing.append(
                    (code, f"its match ended and nobody was at the table for {_minutes(limits.finished_ttl_s)}")
                )
            elif actor.status == TableStatus.PLAYING and bots_only(actor):
                since = self._bots_since.setdefault(code, now)
                if unwatched_s >= limits.bot_table_unwatched_s:
                    closing.append((code, "its match of bots only was stopped: nobody was watching it"))
                elif now - since >= limits.bot_match_max_s:
                    closing.append(
                        (code, f"its match of bots only was stopped after {_minutes(limits.bot_match_max_s)}")
                    )
            else:
                self._bots_since.pop(code, None)
        for code, why in closing:
            await self.close_table(code, why)
        return [code for code, _ in closing]

    async def close_table(self, code: str, why: str) -> None:
        """Stop a table of this process and forget it (its finished matches are in the database);
        later requests for its codes are told it was closed, and why."""
        actor = self.tables.get(code)
        if actor is None:
            return
        # One string per reason, however many tables it closes: the codes are what is remembered.
        message = sys.intern(f"this table was closed: {why}; its finished matches stay in the match history")
        for closed_code in (code, actor.spec.watch_code):
            self.closed[closed_code] = message
        while len(self.closed) > CLOSED_REMEMBERED:
            self.closed.popitem(last=False)
        self._drop(code)
        await actor.stop()
        await actor.abort(AbortReason.TABLE_CLOSED)  # a match cut short is recorded, its deal revealed
        with contextlib.suppress(Exception):
            await self.store.remove(code, actor.recorder.token)
        with contextlib.suppress(Exception):
            await self.broker.release_lease(lease_name(code), self.owner, actor.recorder.token)
        with contextlib.suppress(Exception):  # its chat goes with it (nobody can read or report it now)
            await self.broker.delete(chat.history_key(code))
        log.info("table %s: closed (%s)", code[:8], why)

    async def _supervise(self) -> None:
        while True:
            await asyncio.sleep(SUPERVISE_S)
            await self.adopt_orphans()

    async def adopt_orphans(self) -> None:
        """Take over every stored table whose lease has lapsed (its process died), unless the broker
        stalled lately: then nobody could renew, and living owners take their leases back first
        (``TakeoverHold``, app/tables/leases.py)."""
        if self.draining:
            return
        started = self.takeover_hold.clock()
        try:
            codes = await self.store.codes()
        except BrokerError:
            self.takeover_hold.failed()
            return
        # A table being opened here is stored before it is served: on a busy process its first
        # lease may lapse by then, and taking it over would fence out its own actor.
        others = [code for code in codes if code not in self.tables and code not in self._opening]
        try:  # every other process's tables in one round trip, not one each (docs/performance.md)
            holders = await self.broker.lease_holders([lease_name(code) for code in others])
        except BrokerError:
            self.takeover_hold.failed()
            return
        if not self.takeover_hold.looked(started):
            return
        gate = asyncio.Semaphore(TAKEOVERS_AT_ONCE)

        async def adopt(code: str) -> None:
            async with gate:
                if code in self.tables or code in self._opening:  # again: we awaited
                    return
                with contextlib.suppress(BrokerError):
                    if await self.take_over(code) is not None:
                        TAKEOVERS.labels("lapsed_lease").inc()

        # A dead process's tables together, not one after another: the last of 40 waited 4 s.
        lapsed = [code for code, holder in zip(others, holders, strict=True) if holder is None]
        outcomes = await asyncio.gather(*map(adopt, lapsed), return_exceptions=True)
        for code, outcome in zip(lapsed, outcomes, strict=True):
            if isinstance(outcome, Exception):
                log.error("table %s: taking it over failed", code[:8], exc_info=outcome)

    async def take_over(self, code: str) -> TableActor | None:
        """Become the owner of a table whose owner is gone; rebuild it from the store."""
        if not await self.store.exists(code):
            # Nothing to rebuild (removed, or lost with a Redis node that restarted empty while its
            # owner lives on and writes it again): claiming it would only fence that owner out.
            return None
        token = await self.broker.acquire_lease(lease_name(code), self.owner, LEASE_TTL_S)
        if token is None:
            return None
        try:
            # From here on the old owner's writes are refused: the load below misses none of them
            # (it may still be writing if it lost only its lease, e.g. to a Redis restart).
            await self.store.claim(code, token)
        except Fenced:
            await self.broker.release_lease(lease_name(code), self.owner, token)
            return None
        loaded = await self.store.load(code)
        if loaded is None:
            await self.broker.release_lease(lease_name(code), self.owner, token)
            return None
        record, entries = loaded
        actor = await self._revive(record, entries, token)
        log.info("table %s: taken over at version %d", code[:8], actor.version)
        return actor

    async def restore(self, record: dict[str, Any], entries: list[str]) -> TableActor:
        """Serve again a table kept while this (one-process) server was stopped (``app.db.live_tables``):
        as a takeover, the same match at the same version, its move timer given the time it had
        at the stop plus the takeover's grace, the idle limits and graces started again."""
        code = record["spec"]["code"]
        token = await self.broker.acquire_lease(lease_name(code), self.owner, LEASE_TTL_S)
        if token is None:
            raise RuntimeError(f"table {code[:8]} is held by another process")
        actor = await self._revive(record, entries, token)
        log.info("table %s: resumed at version %d", code[:8], actor.version)
        return actor

    async def _revive(self, record: dict[str, Any], entries: list[str], token: int) -> TableActor:
        table = read_record(record, entries)  # the same match at the same version
        code = table.spec.code
        actor = TableActor(
            table.spec,
            self.broker,
            self.hooks,
            self.bots,
            on_change=self._on_change,
            store=self.store,
            token=token,
            relock=self._relock(code),
            limits=self.limits,
            process=self.owner,
            restored=table,
            transport=self.transport(code, self.broker, self.owner),
        )
        if actor.status == TableStatus.PLAYING:
            self.bots.reset(code, {s.seat: s.level or "normal" for s in actor.seats if s.kind == "bot"})
        await actor.save_now()  # claims the table with the new fencing token
        await self._adopt(actor)
        await actor.resume()
        return actor

    # ------------------------------------------------------------------ handing tables over (a drain)

    def shares_tables(self) -> bool:
        """Whether other processes can serve this process's tables (not the embedded default's
        private in-memory store, whose tables only this process knows)."""
        return not (isinstance(self.store, MemoryStore) and self.store.private)

    async def hand_over(self) -> list[str]:
        """This process is stopping (SIGTERM; docs/operations.md, "Drain"): it opens no table and
        takes none over from now on, and gives each of its tables to a peer at once: the table
        handles the commands it has queued, refuses later ones with ``moved`` (retryable), is saved
        whole (its deadline as of now: the next owner adds its grace), its lease released and its
        code published on ``handover``, where every peer takes it over without waiting for the
        lease's TTL. Returns the codes handed over. With the embedded default (nobody to hand to)
        only the first part happens; its tables are kept by ``app.db.live_tables``."""
        self.draining = True
        if self._supervisor is not None:
            self._supervisor.cancel()
        handed: list[str] = []

        async def one(code: str, actor: TableActor) -> None:
            await actor.hand_over()
            if not self.shares_tables():
                return
            if actor.recorder.fenced:
                self._drop(code, unlist=False)
                return
            try:
                await actor.save_now()
            except Exception as exc:  # its lease lapses and a peer takes it over from the last save
                log.warning("table %s: not saved at handover (%s); a peer takes it after the lease", code[:8], exc)
                self._drop(code, unlist=False)
                return
            self._drop(code, unlist=False)
            with contextlib.suppress(Exception):
                await self.broker.release_lease(lease_name(code), self.owner, actor.recorder.token)
            handed.append(code)
            HANDED_OVER.inc()

        await asyncio.gather(*(one(code, actor) for code, actor in list(self.tables.items())))
        if handed:
            with contextlib.suppress(Exception):
                await self.broker.publish(HANDOVER, orjson.dumps({"from": self.owner, "codes": handed}))
            log.info("handed %d tables over to the other processes", len(handed))
        return handed

    def _on_handover(self, item: Event) -> None:
        """A stopping peer let go of tables: take them over now (the peers race for each lease; one
        wins, the others find it held)."""
        if isinstance(item, Gap) or self.draining:
            return  # a gap: the supervisor finds lapsed leases within a second anyway
        try:
            message = orjson.loads(item.data)
            codes = [code for code in message["codes"] if isinstance(code, str)]
            if message.get("from") == self.owner:
                return
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("handover: ignoring a malformed message")
            return
        for code in codes:
            if code in self.tables or code in self._opening:
                continue
            task = asyncio.get_running_loop().create_task(self._take_handed(code))
            self._taking.add(task)
            task.add_done_callback(self._taking.discard)

    async def _take_handed(self, code: str) -> None:
        try:
            if not self.draining and code not in self.tables and await self.take_over(code) is not None:
                TAKEOVERS.labels("handover").inc()
        except BrokerError:
            pass  # the supervisor tries again
        except Exception:
            log.exception("table %s: taking it over after a handover failed", code[:8])

    # ------------------------------------------------------------------ lobby

    def _on_change(self, actor: TableActor, lobby: bool = True) -> None:
        """A table changed; ``lobby=False``: a move, which changes nothing its lobby row shows."""
        self._changed_at[actor.code] = self.clock()
        if actor.status == TableStatus.PLAYING and actor.code not in self._bots_since and bots_only(actor):
            self._bots_since[actor.code] = self.clock()
        if lobby:
            self._mark_lobby(actor.code)
        for watch in self.change_watchers:
            watch(actor)

    def _mark_lobby(self, code: str) -> None:
        self._lobby_dirty_codes[code] = None
        self._lobby_dirty.set()

    def _flush_lobby(self) -> None:
        """Turn the changed tables of this process into deltas: applied here at once (so that this
        process's lobby is exact for its own tables), queued for the other processes."""
        codes, self._lobby_dirty_codes = self._lobby_dirty_codes, {}
        for code in codes:
            actor = self.tables.get(code)
            listed = actor is not None and not actor.spec.private and actor.status in LISTED
            row = lobby_row(actor) if listed and actor is not None else None
            if row == self._published.get(code):
                continue
            if row is None:
                del self._published[code]
                delta: dict[str, Any] = {"op": "removed", "code": code}
            else:
                self._published[code] = row
                delta = {"op": "upsert", "table": row}
            self._apply_delta(delta)
            self._lobby_outgoing.append(delta)
        if self._lobby_outgoing:
            self._lobby_dirty.set()

    def _apply_delta(self, delta: dict[str, Any]) -> None:
        """One table's change to the lobby, encoded once and queued for every feed."""
        if delta["op"] == "removed":
            code = delta["code"]
            if self.lobby_rows.pop(code, None) is None:
                return
            text = sse("removed", {"code": code})
        else:
            row = delta["table"]
            event = "changed" if row["code"] in self.lobby_rows else "added"
            self.lobby_rows[row["code"]] = row
            text = sse(event, row)
        self._snapshot_text = None
        for viewer in self._viewers:
            viewer.push(text)

    async def _publish_lobby(self) -> None:
        while True:
            await self._lobby_dirty.wait()
            self._lobby_dirty.clear()
            self._flush_lobby()
            outgoing, self._lobby_outgoing = self._lobby_outgoing, []
            if outgoing:
                # Lost while the broker is down: the other processes reload when it is back.
                with contextlib.suppress(Exception):
                    await self.broker.publish(channels.LOBBY, orjson.dumps({"from": self.owner, "deltas": outgoing}))
            await asyncio.sleep(LOBBY_COALESCE_S)  # a burst of changes of one table: one delta

    def _on_lobby_event(self, item: Event) -> None:
        if isinstance(item, Gap):
            self._lobby_live(True)
            return
        try:
            message = orjson.loads(item.data)
            if message.get("from") == self.owner:
                return  # applied when they were published
            for delta in message["deltas"]:
                self._apply_delta(delta)
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("lobby: ignoring a malformed message")

    def _lobby_live(self, after_outage: bool) -> None:
        """The lobby channel is (again) subscribed: read every process's listed tables from the store."""
        if self._lobby_reload is None or self._lobby_reload.done():
            self._lobby_reload = asyncio.get_running_loop().create_task(self._reload_lobby())

    async def _reload_lobby(self) -> None:
        try:
            records = await self.store.lobby()
        except BrokerError:
            records = []
        rows: dict[str, dict[str, Any]] = {}
        for record in records:
            row = _row_of_record(record)
            if row is not None and row["code"] not in self.tables:
                rows[row["code"]] = row
        rows.update(self._published)  # this process's own tables, as they are now
        self.lobby_rows = rows
        self._snapshot_text = None
        for viewer in self._viewers:
            viewer.queue.clear()
            viewer.push(self.lobby_snapshot())

    async def lobby(self) -> list[dict[str, Any]]:
        """Open and running public tables of every process, newest first."""
        self._flush_lobby()
        return sorted(self.lobby_rows.values(), key=lambda row: -row["created"])

    def lobby_snapshot(self) -> bytes:
        """The ``snapshot`` event a lobby feed starts with: every listed table, newest first."""
        if self._snapshot_text is None:
            tables = sorted(self.lobby_rows.values(), key=lambda row: -row["created"])
            self._snapshot_text = sse("snapshot", {"tables": tables})
        return self._snapshot_text

    @contextlib.asynccontextmanager
    async def lobby_feed(
        self, keepalive_s: float = 15.0, *, joined: bool = False, min_interval_s: float = 0.0
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Server-sent events: a ``snapshot`` of the listed tables, then one ``added``, ``changed``
        or ``removed`` event per table change (``joined``: the events queued since the last write in
        one text, at most one write per ``min_interval_s``)."""
        self._flush_lobby()
        viewer = LobbyViewer(self.lobby_snapshot)
        self._viewers.add(viewer)
        try:
            yield viewer.texts(keepalive_s, joined=joined, min_interval_s=min_interval_s)
        finally:
            self._viewers.discard(viewer)

    # ------------------------------------------------------------------ calls

    async def call(
        self, code: str, body: Body, principal: Principal, *, id: str | None = None, conn: str | None = None
    ) -> dict[str, Any]:
        """Send a command (its typed ``body``, from ``principal``; ``id``: a player's command id,
        ``conn``: on behalf of that connection) to the table's actor, wherever it runs, and wait for
        its answer."""
        reply_channel = f"reply:{uuid.uuid4().hex}"
        command = Command(body, principal=principal, conn=conn, reply=reply_channel, id=id)
        async with self.broker.subscribe(reply_channel) as sub:
            await self.broker.publish(channels.inbox(code), command_to_json(command))
            async with asyncio.timeout(CALL_TIMEOUT_S):
                async for item in sub:
                    if isinstance(item, Gap):
                        continue
                    reply: dict[str, Any] = json.loads(item.data)
                    return reply
        raise TableGone(code)


def _minutes(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:g} s"
    return f"{seconds / 60:g} minutes"
