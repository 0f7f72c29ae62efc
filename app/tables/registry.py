"""The live tables of this process, the lobby list, and request/reply calls to table actors."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from app.broker import Broker, Gap
from app.tables import channels
from app.tables.actor import TableActor
from app.tables.bot_runner import BotRunner
from app.tables.hooks import MatchHooks
from app.tables.spec import Principal, TableSpec

CALL_TIMEOUT_S = 10.0


class TableGone(Exception):
    """No live table answers to that code."""


class TableRegistry:
    def __init__(self, broker: Broker, hooks: MatchHooks, bots: BotRunner | None = None) -> None:
        self.broker = broker
        self.hooks = hooks
        self.bots = bots or BotRunner()
        self.tables: dict[str, TableActor] = {}
        self.watch_codes: dict[str, str] = {}
        self._lobby_dirty = asyncio.Event()
        self._lobby_task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> TableRegistry:
        self._lobby_task = asyncio.create_task(self._publish_lobby())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._lobby_task is not None:
            self._lobby_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lobby_task
        await asyncio.gather(*(actor.stop() for actor in self.tables.values()), return_exceptions=True)
        self.tables.clear()
        self.bots.close()

    async def create(self, spec: TableSpec) -> TableActor:
        actor = TableActor(spec, self.broker, self.hooks, self.bots, on_change=self._on_change)
        await actor.start()
        self.tables[spec.code] = actor
        self.watch_codes[spec.watch_code] = spec.code
        self._lobby_dirty.set()
        return actor

    def resolve(self, code: str) -> tuple[str, bool]:
        """(table code, watch only) for an invite code or a spectator code."""
        if code in self.tables:
            return code, False
        if code in self.watch_codes:
            return self.watch_codes[code], True
        raise TableGone(code)

    def _on_change(self, actor: TableActor) -> None:
        self._lobby_dirty.set()

    def lobby(self) -> list[dict[str, Any]]:
        """Open public tables: waiting for players, with at least one free seat."""
        rows = []
        for actor in self.tables.values():
            if actor.spec.private:
                continue
            info = actor.info()
            free = sum(1 for seat in info["seats"] if seat["kind"] == "empty")
            rows.append({**info, "free_seats": free, "created": actor.created})
        rows.sort(key=lambda row: -row["created"])
        return rows

    async def _publish_lobby(self) -> None:
        while True:
            await self._lobby_dirty.wait()
            self._lobby_dirty.clear()
            with contextlib.suppress(Exception):
                await self.broker.publish(channels.LOBBY, json.dumps({"type": "lobby", "tables": self.lobby()}))
            await asyncio.sleep(0.1)  # coalesce bursts of changes

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

    @contextlib.asynccontextmanager
    async def lobby_feed(self) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        async with self.broker.subscribe(channels.LOBBY) as sub:

            async def feed() -> AsyncIterator[dict[str, Any]]:
                yield {"type": "lobby", "tables": self.lobby()}
                async for item in sub:
                    if isinstance(item, Gap):
                        yield {"type": "lobby", "tables": self.lobby()}
                    else:
                        yield json.loads(item.data)

            yield feed()
