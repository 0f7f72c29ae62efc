"""Commands for a table whose actor runs in another process go out through the broker one after
another, in the order the client sent them, even while a publish is slow or fails."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson

from app.api.routes.play import Connection
from app.broker import BrokerUnavailable, Gap, GapReason
from app.tables import channels
from app.tables.commands import Command, play_action
from app.tables.spec import Principal
from tests.support.wait import eventually


class SlowBroker:
    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.published: list[dict[str, Any]] = []
        self.fail_next = False
        self.calls = 0

    async def publish(self, channel: str, message: bytes) -> None:
        self.calls += 1
        await self.gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise BrokerUnavailable("redis is down")
        assert channel == channels.inbox("T")
        self.published.append(orjson.loads(message))


async def test_remote_commands_keep_their_order_and_a_failed_one_is_reported() -> None:
    broker = SlowBroker()
    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")  # the actor is not in this process
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    websocket = SimpleNamespace(scope={})
    conn = Connection(websocket, None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    broker.fail_next = True
    for n in range(4):
        conn.command(Command("pass", id=f"m{n}", action=play_action("pass", {})))
    await eventually(lambda: broker.calls > 0, what="the first publish has begun")
    assert broker.published == [] and broker.calls == 1  # it is still waiting, the others behind it
    broker.gate.set()
    await eventually(lambda: conn.publisher is None, 2, "every command is published")
    assert [m["id"] for m in broker.published] == ["m1", "m2", "m3"]
    # Each says who sent it and from which process (where the table's answers are bundled to).
    assert all(m["principal"]["key"] == "a:1" and m["conn"] == "c1" for m in broker.published)
    assert all(m["via"] == "proc-here" for m in broker.published)
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

    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")
    conn = Connection(SimpleNamespace(scope={}), None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    conn.last_version = 7
    conn.resync()  # lost: the next gap or reconnect asks again
    await asyncio.sleep(0)  # (a gap in a later turn of the loop)
    conn.resync()
    await eventually(lambda: conn.publisher is None, 2, "the resync is published")
    assert [(m["type"], m["last_version"]) for m in broker.published] == [("hello", 7)]
    await conn.out.flush()
    assert sent == []


async def test_the_two_gaps_of_one_outage_ask_for_one_snapshot() -> None:
    """When Redis comes back, a connection hears of the outage twice in one turn of the event loop:
    on its own subscription and through the table's relay, which signals a gap on every channel of
    the table here. It says ``hello`` once; a gap in a later turn (another outage) asks again."""
    broker = SlowBroker()
    broker.gate.set()
    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")

    async def send(message: dict[str, Any]) -> None:
        pass

    conn = Connection(SimpleNamespace(scope={}), None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    conn.last_version = 7
    gap = Gap(channels.person("T", "a:1"), GapReason.RECONNECT)
    conn.on_personal(gap)  # its own subscription
    conn.on_personal(gap)  # the relay's gap on every channel of the table
    await eventually(lambda: conn.publisher is None and broker.calls > 0, 2, "the resync is published")
    assert [(m["type"], m["last_version"]) for m in broker.published] == [("hello", 7)]
    conn.on_watched(gap)  # a later outage
    await eventually(lambda: conn.publisher is None and broker.calls > 1, 2, "the second resync is published")
    assert [m["type"] for m in broker.published] == ["hello", "hello"]
