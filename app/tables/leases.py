"""Table ownership across processes: leases, takeover and handover.

Each live table is owned by exactly one process, which holds the lease ``table:{<code>}`` (with a
fencing token) and renews it while alive. A supervisor in every process looks for tables whose lease
has lapsed (their process died) and takes them over: the registry rebuilds the match from the stored
record and action log (``app.tables.store``) and carries on at the same version. A stopping process
hands its tables over at once, the live ones (playing, or in a staked match's ready check) first,
in batches (``LeaseSettings.takeovers_at_once``): it saves each batch's tables, releases their
leases and names them on ``handover`` before it starts on the next, so that its peers are taking
the first batch over while it hands the rest. A process takes tables over a limited number at once
(``TakeoverQueue``), handed ones in the order they were announced, lapsed ones playing first, tables
with no match running in a slow lane after them; a
lapsed lease is not taken over while nobody could have renewed it (a broker stall:
``app/tables/takeover_hold.py``). The timings are the settings group ``LeaseSettings``
(app/config.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

import orjson

from app.broker.base import Broker, BrokerError, Event, Gap
from app.config import LeaseSettings
from app.metrics import HANDED_OVER, TAKEOVERS
from app.tables.actor import TableActor
from app.tables.ports import Transport
from app.tables.record import StoredTable, stored_table
from app.tables.spec import TableStatus
from app.tables.store import Fenced, TableStore
from app.tables.takeover_hold import TakeoverHold
from app.tables.takeover_queue import TakeoverQueue

log = logging.getLogger("durak.registry")

RENEW_RETRY_S = 0.25  # a renewal of the leases that failed is tried again after this long
HANDOVER = "handover"  # broker channel: a stopping process names the tables it has just let go of


def lease_name(code: str) -> str:
    """The broker lease of a table, tagged with the code like its channels and store keys (one
    Redis Cluster slot holds them all)."""
    return f"table:{{{code}}}"


class TableHolder(Protocol):
    """What the leases need of the registry that serves this process's tables."""

    tables: dict[str, TableActor]
    transport: Transport

    def drop(self, code: str, *, unlist: bool = True) -> None: ...

    async def revive(self, record: StoredTable, entries: list[str], token: int) -> TableActor: ...


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
        settings: LeaseSettings | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.broker, self.store, self.owner, self.holder = broker, store, owner, holder
        self.settings = settings or LeaseSettings()
        self.sleep = sleep  # how the renewals and the supervisor wait (the registry's clock)
        self.shares_tables = shares_tables  # other processes can serve this process's tables
        self.opening: set[str] = set()  # codes of tables being opened: stored already, not yet served
        # Codes being taken over here: a lease is this process's again when asked twice (same token),
        # so a second takeover under way (a handover's and the supervisor's) would serve the table
        # twice, two actors writing with one token (the soak's matches settled twice, moves lost).
        self.adopting: set[str] = set()
        self.draining = False  # stopping: no new tables, no takeovers (``hand_over``)
        # The takeovers under way or waiting here (a peer's handover's and the supervisor's), a few
        # at once: hundreds of rebuilds started together made every table wait for all of them.
        self.queue = TakeoverQueue(self.settings.takeovers_at_once, self._take)
        self.kept = True  # the last renewal of the leases reached the broker
        self.takeover_hold = TakeoverHold()  # no takeover while nobody could renew (a broker stall)

    async def acquire(self, code: str) -> int | None:
        """Take the lease of a table (its fencing token), or None: another process holds it."""
        return await self.broker.acquire_lease(lease_name(code), self.owner, self.settings.lease_ttl_s)

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
            await self.sleep(self.settings.lease_ttl_s / 3 if self.kept else RENEW_RETRY_S)
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
                self.owner, [(lease_name(code), token) for code, _, token in held], self.settings.lease_ttl_s
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
        self.holder.transport.lost(code)

    async def supervise_forever(self) -> None:
        while True:
            await self.sleep(self.settings.takeover_sweep_s)
            await self.adopt_orphans()

    def _ours(self, code: str) -> bool:
        return code in self.holder.tables or code in self.opening or code in self.adopting

    async def adopt_orphans(self) -> None:
        """Take over every stored table whose lease has lapsed (its process died), playing ones
        first, through the queue of takeovers (skipping those a handover queued already), unless
        the broker stalled lately: then nobody could renew, and living owners take their leases back
        first (``TakeoverHold``, app/tables/takeover_hold.py)."""
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
        others = [code for code in codes if not self._ours(code) and not self.queue.has(code)]
        try:  # every other process's tables in one round trip, not one each (docs/performance.md)
            holders = await self.broker.lease_holders([lease_name(code) for code in others])
        except BrokerError:
            self.takeover_hold.failed()
            return
        if not self.takeover_hold.looked(started):
            return
        lapsed = [code for code, holder in zip(others, holders, strict=True) if holder is None]
        # The players of a running match wait for its takeover; a waiting or finished table's hardly:
        # those go in the queue's slow lane.
        playing, rest = await self._playing_and_rest(lapsed)
        asked = [self.queue.ask(code, "lapsed_lease") for code in playing]
        for code in rest:  # (not waited for: the next sweep skips what the queue holds)
            self.queue.ask(code, "lapsed_lease", later=True)
        await asyncio.gather(*(done for done in asked if done is not None))

    async def _playing_and_rest(self, codes: list[str]) -> tuple[list[str], list[str]]:
        """``codes`` split into the tables whose stored status is playing and the others (all
        playing when the statuses cannot be read: nobody waits longer for not knowing)."""
        if len(codes) < 2:
            return codes, []
        try:
            statuses = await self.store.statuses(codes)
        except BrokerError:
            return codes, []
        playing: list[str] = []
        rest: list[str] = []
        for code, status in zip(codes, statuses, strict=True):
            (playing if status == TableStatus.PLAYING else rest).append(code)
        return playing, rest

    async def _take(self, code: str, why: str) -> None:
        """One takeover of the queue (``why``: "handover" or "lapsed_lease", as counted)."""
        try:
            if not self.draining and not self._ours(code) and await self.take_over(code) is not None:
                TAKEOVERS.labels(why).inc()
        except BrokerError:
            pass  # the supervisor tries again
        except Exception:
            log.exception("table %s: taking it over failed (%s)", code[:8], why)

    async def take_over(self, code: str) -> TableActor | None:
        """Become the owner of a table whose owner is gone; rebuild it from the store. None: not
        taken (another process holds it, nothing is stored, or it is being taken over here)."""
        if self._ours(code):
            return None
        self.adopting.add(code)
        try:
            return await self._take_over(code)
        finally:
            self.adopting.discard(code)

    async def _take_over(self, code: str) -> TableActor | None:
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
        actor = await self.holder.revive(stored_table(record), entries, token)
        log.info("table %s: taken over at version %d", code[:8], actor.version)
        return actor

    async def restore(self, record: StoredTable, entries: list[str]) -> TableActor:
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
        once (``TableRegistry.hand_over``): the live ones first, then the waiting and finished ones,
        in batches of ``takeovers_at_once``, each batch named on ``handover`` as soon as it is
        handed. Returns the codes handed over, in that order."""
        self.draining = True
        self.queue.clear()
        taking = self.queue.tasks()
        if taking:  # a table being taken over now is this process's in a moment: hand it over too
            await asyncio.wait(taking, timeout=self.settings.lease_ttl_s)
        handed: list[str] = []

        async def one(code: str, actor: TableActor) -> bool:
            if self.holder.tables.get(code) is not actor:
                return False  # closed, or lost to another process, meanwhile
            await actor.hand_over()
            if not self.shares_tables:
                return False
            if actor.recorder.fenced:
                self.holder.drop(code, unlist=False)
                return False
            try:
                await actor.save_now()
            except Exception as exc:  # its lease lapses and a peer takes it over from the last save
                log.warning("table %s: not saved at handover (%s); a peer takes it after the lease", code[:8], exc)
                self.holder.drop(code, unlist=False)
                return False
            self.holder.drop(code, unlist=False)
            with contextlib.suppress(Exception):
                await self.release(code, actor.recorder.token)
            HANDED_OVER.inc()
            return True

        tables = list(self.holder.tables.items())
        live = [(code, actor) for code, actor in tables if is_live(actor)]
        rest = [(code, actor) for code, actor in tables if not is_live(actor)]
        size = self.settings.takeovers_at_once
        batches = [
            (group is live, group[start : start + size])
            for group in (live, rest)
            for start in range(0, len(group), size)
        ]
        for playing, batch in batches:
            outcomes = await asyncio.gather(*(one(code, actor) for code, actor in batch))
            codes = [code for (code, _), done in zip(batch, outcomes, strict=True) if done]
            if codes:
                message = {"from": self.owner, "codes": codes, "live": playing}
                with contextlib.suppress(Exception):
                    await self.broker.publish(HANDOVER, orjson.dumps(message))
            handed += codes
        if handed:
            log.info("handed %d tables over to the other processes (%d live first, in batches of %d)",
                     len(handed), len(live), size)  # fmt: skip
        return handed

    def on_handover(self, item: Event) -> None:
        """A stopping peer let go of tables: take them over now, in the order it named them, a few at
        once (``TakeoverQueue``; the peers race for each lease: one wins, the others find it held);
        tables it names as not live (waiting or finished) after the live ones, in the queue's slow lane."""
        if isinstance(item, Gap) or self.draining:
            return  # a gap: the supervisor finds lapsed leases within a second anyway
        try:
            message = orjson.loads(item.data)
            codes = [code for code in message["codes"] if isinstance(code, str)]
            later = message.get("live") is False
            if message.get("from") == self.owner:
                return
        except (ValueError, KeyError, TypeError, AttributeError):
            log.warning("handover: ignoring a malformed message")
            return
        for code in codes:
            if not self._ours(code):
                self.queue.ask(code, "handover", later=later)


def is_live(actor: TableActor) -> bool:
    """A match is running at the table, or about to (a staked match's ready check): its players
    wait for whoever serves it next."""
    return actor.status == TableStatus.PLAYING or actor.seating.ready is not None
