"""Commands for a table whose actor runs in another process go out through the broker at once
(``publish_nowait``), in the order the client sent them; one the broker cannot take is reported."""

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


class DownBroker:
    """A broker whose ``publish_nowait`` records what it is given, or raises while ``down``."""

    def __init__(self) -> None:
        self.published: list[dict[str, Any]] = []
        self.down = False
        self.calls = 0

    def publish_nowait(self, messages: list[tuple[str, bytes]]) -> None:
        self.calls += 1
        if self.down:
            raise BrokerUnavailable("redis is down")
        for channel, message in messages:
            assert channel == channels.inbox("T")
            self.published.append(orjson.loads(message))


async def test_remote_commands_keep_their_order_and_a_failed_one_is_reported() -> None:
    broker = DownBroker()
    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")  # the actor is not in this process
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    websocket = SimpleNamespace(scope={})
    conn = Connection(websocket, None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    broker.down = True
    conn.command(Command("pass", id="m0", action=play_action("pass", {})))
    broker.down = False
    for n in range(1, 4):
        conn.command(Command("pass", id=f"m{n}", action=play_action("pass", {})))
    # Sent at once, in this turn of the loop: no task and no wait per command.
    assert broker.calls == 4 and [m["id"] for m in broker.published] == ["m1", "m2", "m3"]
    # Each says who sent it and from which process (where the table's answers are bundled to).
    assert all(m["principal"]["key"] == "a:1" and m["conn"] == "c1" for m in broker.published)
    assert all(m["via"] == "proc-here" for m in broker.published)
    await conn.out.flush()
    [error] = [orjson.loads(text) for text in sent]
    assert error["code"] == "unavailable" and "redis is down" in error["message"]


async def test_a_resync_that_cannot_be_sent_is_not_reported() -> None:
    broker = DownBroker()
    broker.down = True
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")
    conn = Connection(SimpleNamespace(scope={}), None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    conn.last_version = 7
    conn.resync()  # lost: the next gap or reconnect asks again
    broker.down = False
    await asyncio.sleep(0)  # (a gap in a later turn of the loop)
    conn.resync()
    assert [(m["type"], m["last_version"]) for m in broker.published] == [("hello", 7)]
    await conn.out.flush()
    assert sent == []


async def test_the_two_gaps_of_one_outage_ask_for_one_snapshot() -> None:
    """When Redis comes back, a connection hears of the outage twice in one turn of the event loop:
    on its own subscription and through the table's relay, which signals a gap on every channel of
    the table here. It says ``hello`` once; a gap in a later turn (another outage) asks again."""
    broker = DownBroker()
    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")

    async def send(message: dict[str, Any]) -> None:
        pass

    conn = Connection(SimpleNamespace(scope={}), None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    conn.last_version = 7
    gap = Gap(channels.person("T", "a:1"), GapReason.RECONNECT)
    conn.on_personal(gap)  # its own subscription
    conn.on_personal(gap)  # the relay's gap on every channel of the table
    assert [(m["type"], m["last_version"]) for m in broker.published] == [("hello", 7)]
    await asyncio.sleep(0)
    conn.on_watched(gap)  # a later outage
    assert [m["type"] for m in broker.published] == ["hello", "hello"]
