"""Commands for a table whose actor runs in another process go out through the broker at once
(``publish_nowait``), in the order the client sent them; one the broker cannot take is reported."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import orjson

from app.api.table_connection import HOLD_LIMIT_S, MOVED_RETRY_S, RESEND_S, Connection
from app.broker import BrokerUnavailable, Gap, GapReason, Message
from app.tables import commands as cmd
from app.tables.commands import Command
from app.tables.spec import Principal
from app.transport import channels
from tests.support.clock import FakeClock


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
    conn.command(Command(cmd.PassMove(), id="m0"))
    broker.down = False
    for n in range(1, 4):
        conn.command(Command(cmd.PassMove(), id=f"m{n}"))
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


def _frame(payload: dict[str, Any], conn: str | None = "c1") -> Message:
    return Message(channels.person("T", "a:1"), channels.frame(payload, conn).encode())


async def test_a_command_the_table_never_got_is_sent_again_when_a_new_owner_asks_for_hello() -> None:
    """The table had no owner when the command went out (its process died, or was stopping): nobody
    read it. The new owner's ``_rehello`` makes the connection say hello and send it again, same id;
    the client gets one answer, however many the table sends."""
    broker = DownBroker()
    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")
    sent: list[str] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    conn = Connection(SimpleNamespace(scope={}), None, send, registry, "T", Principal("a:1", "alice", 1), "c1")  # type: ignore[arg-type]
    conn.last_version = 12
    conn.handle('{"type": "take", "id": "m1", "version": 12}')  # lost: the table has no owner now
    assert [(m["type"], m["id"]) for m in broker.published] == [("take", "m1")]
    conn.on_personal(_frame({"type": "_rehello"}, conn=None))  # the new owner is listening
    assert [(m["type"], m.get("id")) for m in broker.published[1:]] == [("hello", None), ("take", "m1")]
    assert broker.published[2]["version"] == 12 and broker.published[2]["via"] == "proc-here"
    conn.on_personal(_frame({"type": "ack", "id": "m1", "version": 13}))
    conn.on_personal(_frame({"type": "ack", "id": "m1", "version": 13, "duplicate": True}))  # if both got there
    await conn.out.flush()
    assert [orjson.loads(text) for text in sent] == [{"type": "ack", "id": "m1", "version": 13}]
    await asyncio.sleep(0)
    conn.on_personal(Gap(channels.person("T", "a:1"), GapReason.RECONNECT))  # answered: not sent again
    assert [m["type"] for m in broker.published[3:]] == ["hello"]


def _connection(broker: DownBroker, sent: list[str], clock: FakeClock) -> Connection:
    registry = SimpleNamespace(broker=broker, tables={}, owner="proc-here")  # the actor is not in this process

    async def send(message: dict[str, Any]) -> None:
        sent.append(message["text"])

    principal = Principal("a:1", "alice", 1)
    return Connection(SimpleNamespace(scope={}), None, send, registry, "T", principal, "c1", timers=clock)  # type: ignore[arg-type]


async def test_a_command_no_table_answers_in_time_gets_unavailable_and_a_moved_one_goes_to_the_new_owner() -> None:
    broker, sent, clock = DownBroker(), [], FakeClock()
    conn = _connection(broker, sent, clock)
    conn.handle('{"type": "pass", "id": "m1"}')
    # A fenced-out owner refuses it with ``moved``: not shown, sent again (to the new owner) shortly.
    conn.on_personal(_frame({"type": "error", "id": "m1", "code": "moved", "message": "reconnect"}))
    assert [m["id"] for m in broker.published] == ["m1"]
    await clock.advance(MOVED_RETRY_S)
    assert [m["id"] for m in broker.published] == ["m1", "m1"]
    assert sent == []
    conn.handle('{"type": "pass", "id": "m2"}')
    await clock.advance(HOLD_LIMIT_S - MOVED_RETRY_S - 0.01)
    await conn.out.flush()
    assert sent == []  # still held (and sent again meanwhile, every RESEND_S)
    assert [m["id"] for m in broker.published].count("m2") == 1 + int((HOLD_LIMIT_S - 0.01) // RESEND_S)
    await clock.advance(0.01)  # nobody answered m1 within the limit
    await conn.out.flush()
    assert [(e["type"], e["id"], e["code"]) for e in map(orjson.loads, sent)] == [("error", "m1", "unavailable")]
    await clock.advance(MOVED_RETRY_S)  # nor m2
    await conn.out.flush()
    errors = [orjson.loads(text) for text in sent]
    assert [(e["type"], e["id"], e["code"]) for e in errors] == [
        ("error", "m1", "unavailable"),
        ("error", "m2", "unavailable"),
    ]
    assert clock.due_times() == []  # nothing owed: no timer
    published = len(broker.published)
    conn.on_personal(_frame({"type": "ack", "id": "m1", "version": 5}))  # too late: the client was answered
    await clock.advance(HOLD_LIMIT_S)
    await conn.out.flush()
    assert len(sent) == 2 and len(broker.published) == published


async def test_a_command_the_table_has_not_answered_for_a_while_is_sent_again() -> None:
    """Lost with no gap seen by this connection (published while the owner's own subscription was
    down, in a Redis restart): sent again, same id, until an answer comes; the client gets one."""
    broker, sent, clock = DownBroker(), [], FakeClock()
    conn = _connection(broker, sent, clock)
    conn.handle('{"type": "pass", "id": "m1"}')
    await clock.advance(RESEND_S - 0.01)  # too early: not yet
    assert [m["id"] for m in broker.published] == ["m1"]
    await clock.advance(0.01)
    assert [(m["type"], m["id"]) for m in broker.published] == [("pass", "m1"), ("pass", "m1")]
    conn.on_personal(_frame({"type": "ack", "id": "m1", "version": 5}))
    conn.on_personal(_frame({"type": "ack", "id": "m1", "version": 5, "duplicate": True}))  # both got there
    await clock.advance(RESEND_S)  # answered: not sent again, and the timer stops
    await conn.out.flush()
    assert [orjson.loads(text) for text in sent] == [{"type": "ack", "id": "m1", "version": 5}]
    assert len(broker.published) == 2
    assert clock.due_times() == []


async def test_one_timer_per_connection_however_many_commands_wait() -> None:
    """Each command is sent again RESEND_S after it last went out, on the connection's one timer."""
    broker, sent, clock = DownBroker(), [], FakeClock()
    conn = _connection(broker, sent, clock)
    for n in range(10):  # one every 0.25 s
        conn.handle(f'{{"type": "pass", "id": "m{n}"}}')
        await clock.advance(0.25)
    assert len(broker.published) == 10 and len(clock.due_times()) == 1
    await clock.advance(RESEND_S - 2.5)  # m0 went out 3 s ago, the others later
    assert [m["id"] for m in broker.published[10:]] == ["m0"]
    await clock.advance(2.5)  # each one 3 s after it went out, once
    assert [m["id"] for m in broker.published[10:]] == [f"m{n}" for n in range(10)]
    assert len(clock.due_times()) == 1
    for n in range(10):
        conn.on_personal(_frame({"type": "ack", "id": f"m{n}", "version": n}))
    await clock.advance(RESEND_S)
    assert clock.due_times() == [] and len(broker.published) == 20
