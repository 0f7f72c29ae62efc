"""Table ownership across processes: leases, takeover and handover.

Each live table is owned by exactly one process, which holds the lease ``table:{<code>}`` (with a
fencing token) and renews it while alive. A supervisor in every process looks for tables whose lease
has lapsed (their process died) and takes them over: the registry rebuilds the match from the stored
record and action log (``app.tables.store``) and carries on at the same version. A stopping process
hands its tables over at once: it saves them, releases their leases and names them on ``handover``.
A lapsed lease is not taken over while nobody could have renewed it (a broker stall:
``app/tables/takeover_hold.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import orjson

from app.broker.base import Broker, BrokerError, Event, Gap
from app.metrics import HANDED_OVER, TAKEOVERS
from app.tables.actor import TableActor
from app.tables.store import Fenced, TableStore
from app.tables.takeover_hold import TakeoverHold
from app.transport import channels

log = logging.getLogger("durak.registry")

LEASE_TTL_S = 3.0  # a dead owner's tables are taken over within about this long plus SUPERVISE_S
SUPERVISE_S = 1.0
TAKEOVERS_AT_ONCE = 16  # lapsed tables a supervisor pass takes over concurrently
RENEW_RETRY_S = 0.25  # a renewal of the leases that failed is tried again after this long
HANDOVER = "handover"  # broker channel: a stopping process names the tables it has just let go of


def lease_name(code: str) -> str:
    """The broker lease of a table, tagged with the code like its channels and store keys (one
    Redis Cluster slot holds them all)."""
    return f"table:{{{code}}}"


class TableHolder(Protocol):
    """What the leases need of the registry that serves this process's tables."""

    tables: dict[str, TableActor]

    def drop(self, code: str, *, unlist: bool = True) -> None: ...

    async def revive(self, record: dict[str, Any], entries: list[str], token: int) -> TableActor: ...


class TableLeases:
    """The leases of this process's tables, and the tables it takes over or hands over."""

    def __init__(
        self,
        broker: Broker,
        store: TableStore,
        owner: str,
        holder: TableHolder,
        *,
        shares_tables: bool,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.broker, self.store, self.owner, self.holder = broker, store, owner, holder
        self.sleep = sleep  # how the renewals and the supervisor wait (the registry's clock)
        self.shares_tables = shares_tables  # other processes can serve this process's tables
        self.opening: set[str] = set()  # codes of tables being opened: stored already, not yet served
        self.draining = False  # stopping: no new tables, no takeovers (``hand_over``)
        self.taking: set[asyncio.Task[Any]] = set()  # takeovers a peer's handover asked for
        self.kept = True  # the last renewal of the leases reached the broker
        self.takeover_hold = TakeoverHold()  # no takeover while nobody could renew (a broker stall)

    async def acquire(self, code: str) -> int | None:
        """Take the lease of a table (its fencing token), or None: another process holds it."""
        return await self.broker.acquire_lease(lease_name(code), self.owner, LEASE_TTL_S)

    async def release(self, code: str, token: int) -> None:
        await self.broker.release_lease(lease_name(code), self.owner, token)

    def relock(self, code: str) -> Callable[[], Awaitable[int | None]]:
        """How a table's recorder takes its lease again after the store lost the table (None: another
        process holds it now)."""
        return lambda: self.acquire(code)

    async def renew_forever(self) -> None:
        while True:
            # After a failed renewal sooner: once the broker answers again, a lease that lapsed
            # meanwhile is taken back before another process may take the table (``TakeoverHold``).
            await self.sleep(LEASE_TTL_S / 3 if self.kept else RENEW_RETRY_S)
            await self.renew()

    async def renew(self) -> None:
        """Renew the lease of every table of this process, all in one call to the broker (one round
        trip per few hundred tables: renewing them one by one took a loop turn per table, and on a
        busy process the pass outlasted the leases). A lease that lapsed (Redis stalled, or
        restarted) is taken again before anything else is written."""
        tables = self.holder.tables
        held: list[tuple[str, TableActor, int]] = []
        for code, actor in list(tables.items()):
            if actor.recorder.fenced:
                self.lost(code)
            else:
                held.append((code, actor, actor.recorder.token))
        if not held:
            return
        try:
            kept = await self.broker.renew_leases(
                self.owner, [(lease_name(code), token) for code, _, token in held], LEASE_TTL_S
            )
        except BrokerError:
            self.kept = False
            return  # the broker is down: keep serving from memory, try again shortly
        self.kept = True
        current = [
            (code, actor, still_ours)
            for (code, actor, token), still_ours in zip(held, kept, strict=True)
            if tables.get(code) is actor and actor.recorder.token == token  # not closed or taken back meanwhile
        ]
        retaken: list[TableActor] = []
        for code, actor, still_ours in current:
            if still_ours:
                continue
            try:
                # The lease is gone (Redis stalled or restarted): take it again if nobody else has.
                new_token = await self.acquire(code)
            except BrokerError:
                continue
            if new_token is None:
                log.warning("table %s: lease lost to another process; stopping here", code[:8])
                await actor.stop()
                self.lost(code)
            else:
                log.warning("table %s: its lease had lapsed (Redis stalled or restarted?); taken again", code[:8])
                actor.recorder.relocked(new_token)  # what took the lease took the table too: write it whole
                retaken.append(actor)
        for actor in [actor for _, actor, still_ours in current if still_ours and actor.recorder.dirty] + retaken:
            with contextlib.suppress(Exception):
                await actor.save_now()

    def lost(self, code: str) -> None:
        """Another process owns the table now: forget it here, and have this process's connections
        to it say hello again (a gap on its channels), so that its new owner hears them: they
        would go on talking to the old actor's memory otherwise, and their seats' graces would
        run out at the new owner."""
        self.holder.drop(code, unlist=False)
        self.broker.signal_gap_here(channels.of_table(code), besides=channels.fan(code, self.owner))

    async def supervise_forever(self) -> None:
        while True:
            await self.sleep(SUPERVISE_S)
            await self.adopt_orphans()

    def _ours(self, code: str) -> bool:
        return code in self.holder.tables or code in self.opening

    async def adopt_orphans(self) -> None:
        """Take over every stored table whose lease has lapsed (its process died), unless the broker
        stalled lately: then nobody could renew, and living owners take their leases back first
        (``TakeoverHold``, app/tables/takeover_hold.py)."""
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
        others = [code for code in codes if not self._ours(code)]
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
                if self._ours(code):  # again: we awaited
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
        token = await self.acquire(code)
        if token is None:
            return None
        try:
            # From here on the old owner's writes are refused: the load below misses none of them
            # (it may still be writing if it lost only its lease, e.g. to a Redis restart).
            await self.store.claim(code, token)
        except Fenced:
            await self.release(code, token)
            return None
        loaded = await self.store.load(code)
        if loaded is None:
            await self.release(code, token)
            return None
        record, entries = loaded
        actor = await self.holder.revive(record, entries, token)
        log.info("table %s: taken over at version %d", code[:8], actor.version)
        return actor

    async def restore(self, record: dict[str, Any], entries: list[str]) -> TableActor:
        """Serve again a table kept while this (one-process) server was stopped (``app.db.live_tables``):
        as a takeover, the same match at the same version, its move timer given the time it had
        at the stop plus the takeover's grace, the idle limits and graces started again."""
        code = record["spec"]["code"]
        token = await self.acquire(code)
        if token is None:
            raise RuntimeError(f"table {code[:8]} is held by another process")
        actor = await self.holder.revive(record, entries, token)
        log.info("table %s: resumed at version %d", code[:8], actor.version)
        return actor

    async def hand_over(self) -> list[str]:
        """Stop opening and taking over tables, and give each table of this process to a peer at
        once (``TableRegistry.hand_over``). Returns the codes handed over."""
        self.draining = True
        handed: list[str] = []

        async def one(code: str, actor: TableActor) -> None:
            await actor.hand_over()
            if not self.shares_tables:
                return
            if actor.recorder.fenced:
                self.holder.drop(code, unlist=False)
                return
            try:
                await actor.save_now()
            except Exception as exc:  # its lease lapses and a peer takes it over from the last save
                log.warning("table %s: not saved at handover (%s); a peer takes it after the lease", code[:8], exc)
                self.holder.drop(code, unlist=False)
                return
            self.holder.drop(code, unlist=False)
            with contextlib.suppress(Exception):
                await self.release(code, actor.recorder.token)
            handed.append(code)
            HANDED_OVER.inc()

        await asyncio.gather(*(one(code, actor) for code, actor in list(self.holder.tables.items())))
        if handed:
            with contextlib.suppress(Exception):
                await self.broker.publish(HANDOVER, orjson.dumps({"from": self.owner, "codes": handed}))
            log.info("handed %d tables over to the other processes", len(handed))
        return handed

    def on_handover(self, item: Event) -> None:
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
            if self._ours(code):
                continue
            task = asyncio.get_running_loop().create_task(self._take_handed(code))
            self.taking.add(task)
            task.add_done_callback(self.taking.discard)

    async def _take_handed(self, code: str) -> None:
        try:
            if not self.draining and code not in self.holder.tables and await self.take_over(code) is not None:
                TAKEOVERS.labels("handover").inc()
        except BrokerError:
            pass  # the supervisor tries again
        except Exception:
            log.exception("table %s: taking it over after a handover failed", code[:8])
