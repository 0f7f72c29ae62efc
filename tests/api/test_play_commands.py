"""Commands for a table whose actor runs in another process go out through the broker one after
another, in the order the client sent them, even while a publish is slow or fails."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson

from app.api.routes.play import Connection
from app.broker import BrokerUnavailable
from app.tables import channels
from app.tables.commands import Command, play_action
from app.tables.spec import Principal


class SlowBroker:
    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.published: list[dict[str, Any]] = []
        self.fail_next = False

    async def publish(self, channel: str, message: bytes) -> None:
        await self.gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise BrokerUnavailable("redis is down")
        assert channel == channels.inbox("T")
        self.published.append(orjson.loads(message))


async def test_remote_commands_keep_their_order_and_a_failed_one_is_reported() -> None:
    broker = SlowBroker()
    registry = SimpleNamespace(broker=broker, tables={})  # the actor is not in this process
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    websocket = SimpleNamespace(scope={})
    conn = Connection(websocket, None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    broker.fail_next = True
    for n in range(4):
        conn.command(Command("pass", id=f"m{n}", action=play_action("pass", {})))
    await asyncio.sleep(0.01)
    assert broker.published == []  # the first publish is still waiting
    broker.gate.set()
    async with asyncio.timeout(2):
        while conn.publisher is not None:
            await asyncio.sleep(0.005)
    assert [m["id"] for m in broker.published] == ["m1", "m2", "m3"]
    assert all(m["principal"]["key"] == "a:1" and m["conn"] == "c1" for m in broker.published)
    await conn.out.flush()
    [error] = [orjson.loads(text) for text in sent]
    assert error["code"] == "unavailable" and "redis is down" in error["message"]


async def test_a_resync_that_cannot_be_sent_is_not_reported() -> None:
    broker = SlowBroker()
    broker.gate.set()
    broker.fail_next = True
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    registry = SimpleNamespace(broker=broker, tables={})
    conn = Connection(SimpleNamespace(scope={}), None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    conn.last_version = 7
    conn.resync()  # lost: the next gap or reconnect asks again
    conn.resync()
    async with asyncio.timeout(2):
        while conn.publisher is not None:
            await asyncio.sleep(0.005)
    assert [(m["type"], m["last_version"]) for m in broker.published] == [("hello", 7)]
    await conn.out.flush()
    assert sent == []
