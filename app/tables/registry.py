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
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from app.broker import Broker, BrokerError, Gap
from app.tables import channels
from app.tables.actor import TableActor
from app.tables.bot_runner import BotRunner
from app.tables.hooks import MatchHooks
from app.tables.spec import DecisionLimits, Principal, TableSpec
from app.tables.store import Fenced, MemoryStore, TableStore

log = logging.getLogger("durak.registry")

CALL_TIMEOUT_S = 10.0
LEASE_TTL_S = 3.0  # a dead owner's tables are taken over within about this long plus SUPERVISE_S
SUPERVISE_S = 1.0


class TableGone(Exception):
    """No live table answers to that code."""


def lease_name(code: str) -> str:
    return f"table:{code}"


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
    ) -> None:
        self.broker = broker
        self.hooks = hooks
        self.bots = bots or BotRunner()
        self.store: TableStore = store if store is not None else MemoryStore()
        self.owner = owner or uuid.uuid4().hex
        self.supervise = supervise
        self.limits = limits or DecisionLimits()  # idle limit and disconnect grace of every table
        self.tables: dict[str, TableActor] = {}
        self.watch_codes: dict[str, str] = {}
        self._lobby_dirty = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> TableRegistry:
        self._tasks.append(asyncio.create_task(self._publish_lobby()))
        self._tasks.append(asyncio.create_task(self._keep_leases()))
        if self.supervise:
            self._tasks.append(asyncio.create_task(self._supervise()))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, release: bool = True) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        await asyncio.gather(*(actor.stop() for actor in self.tables.values()), return_exceptions=True)
        if release:
            for code, actor in self.tables.items():
                with contextlib.suppress(Exception):
                    await self.broker.release_lease(lease_name(code), self.owner, actor.token)
        self.tables.clear()
        self.bots.close()

    # ------------------------------------------------------------------ creating and finding tables

    async def create(self, spec: TableSpec) -> TableActor:
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
            limits=self.limits,
        )
        await actor.save_now()
        await self._adopt(actor)
        return actor

    async def _adopt(self, actor: TableActor) -> None:
        await actor.start()
        self.tables[actor.code] = actor
        self.watch_codes[actor.spec.watch_code] = actor.code
        self._lobby_dirty.set()

    async def resolve(self, code: str) -> tuple[str, bool]:
        """(table code, watch only) for an invite code or a spectator code, on any process."""
        if code in self.tables:
            return code, False
        if code in self.watch_codes:
            return self.watch_codes[code], True
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
            await asyncio.sleep(LEASE_TTL_S / 3)
            for code, actor in list(self.tables.items()):
                if actor.fenced:
                    self._drop(code)
                    continue
                try:
                    if await self.broker.renew_lease(lease_name(code), self.owner, actor.token, LEASE_TTL_S):
                        if actor._dirty:
                            await actor.save_now()
                        continue
                    # The lease is gone (Redis restarted empty?): take it again if nobody else has.
                    token = await self.broker.acquire_lease(lease_name(code), self.owner, LEASE_TTL_S)
                except BrokerError:
                    continue  # the broker is down: keep serving from memory, try again shortly
                if token is None:
                    log.warning("table %s: lease lost to another process; stopping here", code[:8])
                    await actor.stop()
                    self._drop(code)
                else:
                    actor.token = token
                    with contextlib.suppress(Exception):
                        await actor.save_now()

    def _drop(self, code: str) -> None:
        actor = self.tables.pop(code, None)
        if actor is not None:
            self.watch_codes.pop(actor.spec.watch_code, None)
            self.bots.forget(code)

    async def _supervise(self) -> None:
        while True:
            await asyncio.sleep(SUPERVISE_S)
            try:
                codes = await self.store.codes()
            except BrokerError:
                continue
            for code in codes:
                if code in self.tables:
                    continue
                with contextlib.suppress(BrokerError):
                    if await self.broker.lease_holder(lease_name(code)) is None:
                        await self.take_over(code)

    async def take_over(self, code: str) -> TableActor | None:
        """Become the owner of a table whose owner is gone; rebuild it from the store."""
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
        actor = TableActor.restore(
            record,
            entries,
            self.broker,
            self.hooks,
            self.bots,
            store=self.store,
            token=token,
            on_change=self._on_change,
            limits=self.limits,
        )
        if actor.status == "playing":
            self.bots.reset(code, {s.seat: s.level or "normal" for s in actor.seats if s.kind == "bot"})
        await actor.save_now()  # claims the table with the new fencing token
        await self._adopt(actor)
        await actor.resume()
        log.info("table %s: taken over at version %d", code[:8], actor.version)
        return actor

    # ------------------------------------------------------------------ lobby

    def _on_change(self, actor: TableActor) -> None:
        self._lobby_dirty.set()

    async def lobby(self) -> list[dict[str, Any]]:
        """Open public tables of every process, newest first."""
        try:
            records = await self.store.lobby()
        except BrokerError:
            records = [actor.record() for actor in self.tables.values() if not actor.spec.private]
        rows = []
        for record in records:
            code = record["spec"]["code"]
            info = self.tables[code].info() if code in self.tables else record["info"]  # local: live
            free = sum(1 for seat in info["seats"] if seat["kind"] == "empty")
            rows.append({**info, "free_seats": free, "created": record["created"]})
        rows.sort(key=lambda row: -row["created"])
        return rows

    async def _publish_lobby(self) -> None:
        while True:
            await self._lobby_dirty.wait()
            self._lobby_dirty.clear()
            with contextlib.suppress(Exception):
                await self.broker.publish(channels.LOBBY, json.dumps({"type": "lobby_changed", "at": time.time()}))
            await asyncio.sleep(0.1)  # coalesce bursts of changes

    @contextlib.asynccontextmanager
    async def lobby_feed(self) -> AsyncIterator[AsyncIterator[list[dict[str, Any]]]]:
        """The open tables now, then again whenever any process reports a change."""
        async with self.broker.subscribe(channels.LOBBY) as sub:

            async def feed() -> AsyncIterator[list[dict[str, Any]]]:
                yield await self.lobby()
                async for _ in sub:
                    yield await self.lobby()

            yield feed()

    # ------------------------------------------------------------------ calls

    async def call(self, code: str, op: str, principal: Principal, **args: Any) -> dict[str, Any]:
        """Send a command to the table's actor (wherever it runs) and wait for its answer."""
        reply_channel = f"reply:{uuid.uuid4().hex}"
        message = {"op": op, "principal": principal.to_json(), "reply": reply_channel, **args}
        async with self.broker.subscribe(reply_channel) as sub:
            await self.broker.publish(channels.inbox(code), json.dumps(message))
            async with asyncio.timeout(CALL_TIMEOUT_S):
                async for item in sub:
                    if isinstance(item, Gap):
                        continue
                    reply: dict[str, Any] = json.loads(item.data)
                    return reply
        raise TableGone(code)
