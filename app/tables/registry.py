"""The tables this process serves, composed of its parts: opening within limits (``opening.py``),
leases, takeover and handover (``leases.py``), idle tables closed (``eviction.py``), the lobby rows
and feeds (``lobby.py``); request/reply calls to table actors wherever they run go through the
transport (``Transport.call``, ports.py).

The registry holds the live tables of this process (``tables``, and their spectator codes), builds
their actors, starts the loops of its parts and tells them of every table it adopts, changes or drops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

from app.broker.base import Broker, BrokerError
from app.config import LeaseSettings
from app.engine import RulesJson
from app.event_feed import KEEPALIVE_S
from app.tables import chat
from app.tables.actor import TableActor
from app.tables.answers import Answer
from app.tables.bot_runner import BotRunner
from app.tables.calls import StoreUnreachable, TableClosed, TableGone
from app.tables.commands import Body
from app.tables.eviction import SWEEP_S, IdleTables
from app.tables.hooks import MatchHooks
from app.tables.leases import HANDOVER, TableLeases, lease_name
from app.tables.lobby import LOBBY, LobbyListing, LobbyRow, lobby_row
from app.tables.opening import Draining, OpeningLimits, TableLimits, TooMany
from app.tables.ports import Transport
from app.tables.record import StoredTable, TableRecord, read_record
from app.tables.spec import AbortReason, DecisionLimits, Principal, TableSpec, TableStatus
from app.tables.store import MemoryStore, TableStore

# What callers import from here: the registry's errors, its limits and the names of its parts.
__all__ = [
    "Draining",
    "LeaseSettings",
    "StoreUnreachable",
    "TableClosed",
    "TableGone",
    "TableLimits",
    "TableRegistry",
    "TooMany",
    "lease_name",
    "lobby_row",
]

log = logging.getLogger("durak.registry")


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
        lease_settings: LeaseSettings | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        transport: Callable[[Broker, str], Transport],
    ) -> None:
        """``transport``: makes this process's transport of the tables from the broker and ``owner``
        (``BrokerTransport``, app/transport/table_transport.py)."""
        self.broker = broker
        self.hooks = hooks
        self.bots = bots or BotRunner()
        self.store: TableStore = store if store is not None else MemoryStore()
        self.owner = owner or uuid.uuid4().hex
        # Each table's commands come and messages go through it; frames of tables owned elsewhere
        # reach this process's connections through it; so do request/reply calls (``call``).
        self.transport = transport(broker, self.owner)
        self.supervise = supervise
        self.limits = limits or DecisionLimits()  # idle limit and disconnect grace of every table
        self.table_limits = table_limits or TableLimits()
        # Its time: ``clock`` says what time it is (idle tables, limits), ``sleep`` is how every loop
        # of its parts waits (sweeps, lease renewals, the supervisor, lobby flushes and the feeds'
        # pacing); tests pass a fake clock's pair (tests/support/clock.py) and move time by hand.
        self.clock, self.sleep = clock, sleep
        self.tables: dict[str, TableActor] = {}
        self.watch_codes: dict[str, str] = {}
        self.opening = OpeningLimits(self.table_limits, clock)
        self.idle = IdleTables(self.table_limits)
        self.leases = TableLeases(
            broker,
            self.store,
            self.owner,
            self,
            shares_tables=self.shares_tables(),
            settings=lease_settings,  # lease TTL, how often lapsed ones are looked for, takeovers at once
            sleep=sleep,
        )
        self.listing = LobbyListing(broker, self.store, self.owner, self.tables, clock=clock, sleep=sleep)
        self._tasks: list[asyncio.Task[None]] = []
        self._supervisor: asyncio.Task[None] | None = None
        self.change_watchers: list[Callable[[TableActor], None]] = []  # told of every change (app/api/turn_push.py)

    async def __aenter__(self) -> TableRegistry:
        self._tasks.append(asyncio.create_task(self.listing.publish_forever()))
        subscribed = asyncio.Event()

        def lobby_live(after_outage: bool) -> None:
            if subscribed.is_set():
                self.listing.live(after_outage)
            subscribed.set()

        self._tasks.append(asyncio.create_task(self.broker.follow(LOBBY, self.listing.on_event, on_live=lobby_live)))
        # The other processes' tables: from the store once the lobby channel is subscribed (what
        # changes after this comes as deltas). A broker that is down now is not waited for.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await subscribed.wait()
        await self.listing.reload()
        self._tasks.append(asyncio.create_task(self._sweep_forever()))
        self._tasks.append(asyncio.create_task(self.leases.renew_forever()))
        if self.supervise:
            self._supervisor = asyncio.create_task(self.leases.supervise_forever())
            self._tasks.append(self._supervisor)
        self._tasks.append(asyncio.create_task(self.broker.follow(HANDOVER, self.leases.on_handover)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, release: bool = True) -> None:
        if self.listing.reloading is not None:
            self._tasks.append(self.listing.reloading)
        self.leases.queue.clear()
        taking = self.leases.queue.tasks()
        for task in (*self._tasks, *taking):
            task.cancel()
        for task in (*self._tasks, *taking):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        await asyncio.gather(*(actor.stop() for actor in self.tables.values()), return_exceptions=True)
        if release:
            for code, actor in self.tables.items():
                with contextlib.suppress(Exception):
                    await self.leases.release(code, actor.recorder.token)
        self.tables.clear()
        self.bots.close()

    # ------------------------------------------------------------------ opening, adopting, dropping tables

    @property
    def draining(self) -> bool:
        """This process is stopping: it opens no table and takes none over (``hand_over``)."""
        return self.leases.draining

    @property
    def created_from(self) -> dict[str, str]:
        """Table code -> the address it was opened from (``OpeningLimits``)."""
        return self.opening.created_from

    async def create(self, spec: TableSpec, address: str | None = None) -> TableActor:
        """Open a table; ``address`` is whom the per-address limits count (``app.api.limits.address_of``:
        an IPv6 client's /64). Raises ``TooMany`` when its creator or that address has the limit of
        tables waiting for players, or of tables waiting or playing, already; ``Draining`` while the
        process stops."""
        if self.draining:
            raise Draining()
        with self.opening.opening(spec.creator.key, address, self.tables.values()):
            self.leases.opening.add(spec.code)
            try:
                token = await self.leases.acquire(spec.code)
                if token is None:  # pragma: no cover - a fresh random code is never held
                    raise RuntimeError("table code collision")
                actor = self._new_actor(spec, token)
                await actor.save_now()
                self.opening.opened_from(spec.code, address)
                await self._adopt(actor)
            finally:
                self.leases.opening.discard(spec.code)
        return actor

    def check_bot_table(self, code: str, principal_key: str) -> None:
        """Refuse ``principal_key`` a bot or a match at table ``code`` (no person seated there) when
        he runs the limit of matches of bots only already (tables of this process)."""
        self.opening.check_bot_table(code, principal_key, self.tables)

    def _new_actor(self, spec: TableSpec, token: int, restored: TableRecord | None = None) -> TableActor:
        return TableActor(
            spec,
            self.transport.table(spec.code),
            self.hooks,
            self.bots,
            on_change=self._on_change,
            store=self.store,
            token=token,
            relock=self.leases.relock(spec.code),
            limits=self.limits,
            restored=restored,
        )

    async def revive(self, record: StoredTable, entries: list[str], token: int) -> TableActor:
        """Serve a stored table under the lease ``token`` (a takeover): the same match at the same version."""
        table = read_record(record, entries)
        actor = self._new_actor(table.spec, token, restored=table)
        if actor.status == TableStatus.PLAYING:
            self.bots.reset(actor.code, {s.seat: s.level or "normal" for s in actor.seats if s.kind == "bot"})
        await actor.save_now()  # claims the table with the new fencing token
        await self._adopt(actor)
        await actor.resume()
        return actor

    async def _adopt(self, actor: TableActor) -> None:
        await actor.start()
        self.tables[actor.code] = actor
        self.watch_codes[actor.spec.watch_code] = actor.code
        self.idle.adopted(actor.code, self.clock())
        self._on_change(actor)

    def _on_change(self, actor: TableActor, lobby: bool = True) -> None:
        """A table changed; ``lobby=False``: a move, which changes nothing its lobby row shows."""
        self.idle.changed(actor, self.clock())
        if lobby:
            self.listing.mark(actor.code)
        for watch in self.change_watchers:
            watch(actor)

    def drop(self, code: str, *, unlist: bool = True) -> None:
        """Forget a table of this process. With ``unlist`` its lobby row goes too; not when another
        process took it over (that one lists it now)."""
        actor = self.tables.pop(code, None)
        if actor is not None:
            self.watch_codes.pop(actor.spec.watch_code, None)
            self.bots.forget(code)
        self.opening.forget(code)
        self.idle.forget(code)
        if unlist:
            self.listing.mark(code)
        else:
            self.listing.taken_elsewhere(code)

    # ------------------------------------------------------------------ finding tables

    async def resolve(self, code: str) -> tuple[str, bool]:
        """(table code, watch only) for an invite code or a spectator code, on any process."""
        if code in self.tables:
            return code, False
        if code in self.watch_codes:
            return self.watch_codes[code], True
        if code in self.idle.closed:
            raise TableClosed(code, self.idle.closed[code])
        try:
            if await self.store.load(code) is not None:
                return code, False
            found = await self.store.resolve_watch(code)
        except BrokerError as exc:
            raise StoreUnreachable(code) from exc
        if found is not None:
            return found, True
        raise TableGone(code)

    async def rules_of(self, code: str) -> RulesJson:
        if code in self.tables:
            return self.tables[code].rules.to_json()
        loaded = await self.store.load(code)
        if loaded is None:
            raise TableGone(code)
        rules: RulesJson = loaded[0]["rules"]
        return rules

    # ------------------------------------------------------------------ ownership (leases.py)

    async def keep_leases(self) -> None:
        await self.leases.renew()

    async def adopt_orphans(self) -> None:
        await self.leases.adopt_orphans()

    async def take_over(self, code: str) -> TableActor | None:
        return await self.leases.take_over(code)

    async def restore(self, record: StoredTable, entries: list[str]) -> TableActor:
        return await self.leases.restore(record, entries)

    def shares_tables(self) -> bool:
        """Whether other processes can serve this process's tables (not the embedded default's
        private in-memory store, whose tables only this process knows)."""
        return not (isinstance(self.store, MemoryStore) and self.store.private)

    async def hand_over(self) -> list[str]:
        """This process is stopping (SIGTERM; docs/operations.md, "Drain"): it opens no table and
        takes none over from now on, and gives each of its tables to a peer at once, the live ones
        first, in batches each published as soon as it is handed (``TableLeases.hand_over``): the
        table handles the commands it has queued, refuses later ones with ``moved`` (retryable), is
        saved whole (its deadline as of now: the next owner adds its grace), its lease released and
        its code published on ``handover``, where every peer takes it over without waiting for the
        lease's TTL, a few at once in the order published. Returns the codes handed over. With the
        embedded default (nobody to hand to) only the first part happens; its tables are kept by
        ``app.db.live_tables``."""
        if self._supervisor is not None:
            self._supervisor.cancel()
        return await self.leases.hand_over()

    # ------------------------------------------------------------------ eviction (eviction.py)

    async def _sweep_forever(self) -> None:
        while True:
            await self.sleep(SWEEP_S)
            try:
                await self.sweep()
            except Exception:  # pragma: no cover - one bad table must not stop the sweeping
                log.exception("sweeping idle tables failed")

    async def sweep(self) -> list[str]:
        """Close the tables that have been idle too long (``IdleTables.due``); returns their codes."""
        now = self.clock()
        self.opening.prune(now)  # the opening counts of the window only
        closing = self.idle.due(self.tables, now)
        for code, why in closing:
            await self.close_table(code, why)
        return [code for code, _ in closing]

    async def close_table(self, code: str, why: str) -> None:
        """Stop a table of this process and forget it (its finished matches are in the database);
        later requests for its codes are told it was closed, and why."""
        actor = self.tables.get(code)
        if actor is None:
            return
        self.idle.remember_closed((code, actor.spec.watch_code), why)
        self.drop(code)
        await actor.stop()
        await actor.abort(AbortReason.TABLE_CLOSED)  # a match cut short is recorded, its deal revealed
        with contextlib.suppress(Exception):
            await self.store.remove(code, actor.recorder.token)
        with contextlib.suppress(Exception):
            await self.leases.release(code, actor.recorder.token)
        with contextlib.suppress(Exception):  # its chat goes with it (nobody can read or report it now)
            await self.broker.delete(chat.history_key(code))
        log.info("table %s: closed (%s)", code[:8], why)

    # ------------------------------------------------------------------ the lobby (lobby.py)

    @property
    def lobby_rows(self) -> dict[str, LobbyRow]:
        """Every process's listed tables by code."""
        return self.listing.rows

    async def lobby(self) -> list[LobbyRow]:
        """Open and running public tables of every process, newest first."""
        return self.listing.listed_now()

    def lobby_snapshot(self) -> bytes:
        return self.listing.snapshot()

    def lobby_feed(
        self, keepalive_s: float = KEEPALIVE_S, *, joined: bool = False, min_interval_s: float = 0.0
    ) -> contextlib.AbstractAsyncContextManager[AsyncIterator[bytes]]:
        """Server-sent events of the lobby (``LobbyListing.feed``)."""
        return self.listing.feed(keepalive_s, joined=joined, min_interval_s=min_interval_s)

    # ------------------------------------------------------------------ calls (the transport's)

    async def call(
        self, code: str, body: Body, principal: Principal, *, id: str | None = None, conn: str | None = None
    ) -> Answer:
        """Send a command to the table's actor, wherever it runs, and wait for its answer (``Transport.call``)."""
        return await self.transport.call(code, body, principal, id=id, conn=conn)
