"""One table websocket after its handshake (app/api/routes/play.py): reads the client's frames,
parsed once into their messages, and hands commands to the table's actor (onto its queue when it
runs in this process, else through the broker); writes the frames the table publishes for it as they
come. It keeps the commands it still owes an answer for and sends them again when the table may
have missed them; it limits the client's pace (app/api/token_bucket.py). It never holds game state
itself, so the actor may live in another process.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import math
import random
import time
from collections.abc import Callable
from typing import Any, Protocol

import orjson
from fastapi import WebSocket
from pydantic import ValidationError
from starlette.types import Receive, Send

from app.api import chat
from app.api.outgoing import TEXT_FRAMES, Outgoing
from app.api.protocol import CLIENT_TYPES, ChatCmd, ChatPhraseCmd, CommandMessage, Hello, Ping, client_message
from app.api.token_bucket import TokenBucket
from app.broker import BrokerError, Event, Gap
from app.metrics import COMMAND_LATENCY, COMMANDS, ERRORS
from app.tables.commands import Body, Command, command_to_json
from app.tables.commands import Bye as ByeBody
from app.tables.commands import Hello as HelloBody
from app.tables.messages import Bye, Error, Pong
from app.tables.registry import TableRegistry
from app.tables.spec import Principal
from app.transport import channels

MAX_FRAME = 64 * 1024
# Over the limit, each message is refused on its own (error ``rate_limited``); a connection still
# being refused after this long (no pause of REFUSAL_GAP_S without a refusal) is closed with 4008.
ABUSE_CLOSE_S = 10.0
REFUSAL_GAP_S = 1.0
# The clock of the rate limit (its token buckets and runs of refusals); tests put a fake one here.
rate_clock: Callable[[], float] = time.monotonic
# A command no table has answered for this long (its table has had no owner all that while) is
# answered by the connection with the error ``unavailable``; until then it is held and sent again
# whenever the table may have missed it (a new owner's ``_rehello``, a gap).
HOLD_LIMIT_S = 20.0
# A command the table has not answered for this long since it last went out is sent again, same id
# (the table answers a repeat from what it recorded): it may have been lost with no gap seen here,
# e.g. published while the owner's own subscription was down in a Redis restart (it waited for
# HOLD_LIMIT_S in the soak).
RESEND_S = 3.0
MOVED_RETRY_S = 0.25  # a command refused ``moved`` (a fenced-out owner) goes to the new owner after this
KEPT_COMMANDS = 256  # unanswered commands remembered per connection
RECONNECT_AFTER_MS = (250, 1500)  # a stopping server's bye: reconnect after so long, spread in this range


_COMMAND_COUNTERS: dict[str, Any] = {}  # COMMANDS by type, looked up once


class Timer(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    """The clock the connection's timers run on: the event loop's own (``time``, ``call_at``), or a
    test's fake one (tests/support/clock.py)."""

    def time(self) -> float: ...

    def call_at(self, when: float, callback: Callable[[], object], /) -> Timer: ...


@dataclasses.dataclass(slots=True)
class Sent:
    """A command of this connection that carries an id, until every answer to it came. ``owed``: the
    answers the client is owed (once per time it sent the id); ``expected``: the answers that may
    still come (every time it went to the table, the connection's own resends included). The first
    ``owed`` answers go to the client, later ones (a resend's ``duplicate``) are dropped."""

    command: Command
    since: float  # the connection's clock (``Timers.time``) when the client sent it
    last_sent: float  # the same clock when it last went to the table
    owed: int = 1
    expected: int = 1


class Connection:
    """One websocket: reads commands for the table's actor and writes the frames meant for it.

    It always listens on its person channel (its seat's views, replies to its commands) and, only
    while it has no seat, on the table's spectator channel: a seated player gets everything on its
    own channel, so an idle seated connection holds one subscription. Frames are written as the
    broker delivers them (:meth:`on_frame`, a subscription sink): no queue, no task per connection.
    """

    def __init__(
        self,
        websocket: WebSocket,
        receive: Receive,
        send: Send,
        registry: TableRegistry,
        code: str,
        principal: Principal,
        conn: str,
        *,
        timers: Timers | None = None,
    ) -> None:
        self.ws = websocket
        self.receive = receive  # the server's own, after the handshake: no Starlette wrapper per frame
        text_frames = (websocket.scope.get("extensions") or {}).get(TEXT_FRAMES) or {}
        self.out = Outgoing(send, text_frames.get("write"))
        self.listen: Callable[[Callable[[str], None]], None] | None = text_frames.get("listen")
        self.registry = registry
        self.broker = registry.broker
        self.code = code
        self.principal = principal
        self.conn = conn
        self.seated = False
        self.welcomed = False  # updates and presence reach the client only after its welcome
        self.last_version = -1
        self.unanswered: dict[str, Sent] = {}  # command id -> what is owed for it, oldest first
        # The event loop by default; one timer per connection, only while a command is unanswered.
        self.timers: Timers = timers if timers is not None else asyncio.get_running_loop()
        self._now = self.timers.time
        self._timer: Timer | None = None
        self._timer_at = math.inf  # when ``_timer`` fires
        self.bucket = TokenBucket()
        self.refused_since: float | None = None  # when the current run of rate-limit refusals began
        self.last_refused = 0.0
        self.watching: asyncio.Task[None] | None = None
        self.closing: asyncio.Task[None] | None = None  # set once this side closes the socket
        self.resynced_this_turn = False  # a resync was asked for in this turn of the event loop

    def send(self, payload: dict[str, Any] | str) -> None:
        """Write one message: its JSON data or text, as its model's writer made it (app/tables/messages.py)."""
        self.out.write(payload if isinstance(payload, str) else channels.dumps(payload))

    def error(self, cmd_id: Any, code: str, message: str, retry_after_ms: int | None = None) -> None:
        ERRORS.labels(code).inc()
        cmd_id = cmd_id if isinstance(cmd_id, str) else None
        self.send(Error.wire_text(id=cmd_id, code=code, message=message, retry_after_ms=retry_after_ms))

    async def run(self) -> None:
        # The table's owner may be another process: its frames for us then come as bundles on the
        # table's fan channel (app/transport/delivery.py, Relay), which must be live before we say hello.
        async with (
            self.registry.transport.joined(self.code),
            self.broker.subscribe(channels.person(self.code, self.principal.key)) as mine,
        ):
            subscribed = asyncio.get_running_loop().create_future()
            self.watching = asyncio.create_task(self.watch(subscribed, resync=False))
            await subscribed
            mine.set_sink(functools.partial(self.on_frame, personal=True))  # (on_personal, one call less)
            if self.listen is not None:
                self.listen(self.on_text)  # frames queued so far come first, in order
            try:
                await self.read()
            finally:
                if self.watching is not None:
                    self.watching.cancel()
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None
                self.out.cancel()
                chat.hub(self.registry).leave(self)
                self.command(Command(ByeBody(), self.principal, self.conn), report=False)

    async def watch(self, subscribed: asyncio.Future[None] | None, *, resync: bool) -> None:
        """Listen on the spectator channel until this connection gets a seat. Started again after
        leaving a seat, then with a resync for what was published before the subscription."""

        def live(after_outage: bool) -> None:
            if subscribed is not None and not subscribed.done():
                subscribed.set_result(None)
            if resync or after_outage:
                self.resync()

        try:
            # While the broker is down, subscribe again (the client sees its errors), except when
            # the very first subscription of the connection fails: that is its caller's error.
            await self.broker.follow(
                channels.watch(self.code), self.on_watched, on_live=live, give_up_at_first=subscribed is not None
            )
        except BrokerError:
            assert subscribed is not None and not subscribed.done()
            subscribed.set_exception(BrokerError("cannot subscribe to the table"))
        finally:
            if self.watching is asyncio.current_task():
                self.watching = None

    def _seat_changed(self, seated: bool) -> None:
        if seated == self.seated:
            return
        self.seated = seated
        if seated and self.watching is not None:
            self.watching.cancel()
            self.watching = None
        elif not seated and self.watching is None:
            self.watching = asyncio.create_task(self.watch(None, resync=True))

    def resync(self) -> None:
        """Ask the table for a fresh snapshot and the events since the last version seen, then send
        every unanswered command again, same id (quietly: if the broker is down, the next gap or
        reconnect asks again). A command may have been lost with the messages of a gap, or sent to
        a table that had no owner (its process had died or was stopping, and the new owner's
        ``_rehello`` brings us here): the table answers a command it already applied from what it
        recorded, never twice, and the client gets one answer (:meth:`answered`). Once per turn of
        the event loop: when Redis comes back, the connection hears of the outage on its own
        subscription and through the table's relay (a gap on every channel of the table) in the
        same turn, and one snapshot answers both."""
        if self.resynced_this_turn:
            return
        self.resynced_this_turn = True
        asyncio.get_running_loop().call_soon(self._next_turn)
        self.command(Command(HelloBody(self.last_version), self.principal, self.conn), report=False)
        for sent in list(self.unanswered.values()):
            if sent.owed:
                self.send_again(sent)

    def send_again(self, sent: Sent) -> None:
        """The connection's own resend of a command the client still waits for."""
        if self.command(sent.command, report=False):
            sent.expected += 1
            sent.last_sent = self._now()

    def remember(self, command: Command) -> None:
        """The client sent ``command`` (with an id): it is owed an answer."""
        cmd_id = command.id
        assert cmd_id is not None
        now = self._now()
        sent = self.unanswered.get(cmd_id)
        if sent is None:
            self.unanswered[cmd_id] = Sent(command, now, now)
            if len(self.unanswered) > KEPT_COMMANDS:
                del self.unanswered[next(iter(self.unanswered))]
        else:  # the client sent the id again itself: one more answer for it
            if not sent.owed:  # (it had its answers): its wait starts again
                sent.since = now
            sent.owed += 1
            sent.expected += 1
            sent.last_sent = now
        # The timer, if set, fires no later than this (for an earlier command); it looks again then.
        when = now + min(RESEND_S, HOLD_LIMIT_S)
        if when < self._timer_at:
            self._set_timer(when)

    def answered(self, cmd_id: str, kind: str, body: bytes) -> bool:
        """An answer from the table to command ``cmd_id``: whether it goes to the client (False: an
        answer it has had already, to a resend of the connection's own, or a ``moved`` refusal,
        which sends the command to the table's new owner instead)."""
        sent = self.unanswered.get(cmd_id)
        if sent is None:
            return True  # not one we keep (evicted, or sent before this connection kept them)
        sent.expected -= 1
        if sent.owed and kind == "error" and _error_code(body) == "moved":
            # A fenced-out owner refused it: the table has a new owner, which gets it shortly (the
            # old one stops serving the table, and this connection's commands go to the new one).
            retry = functools.partial(self._send_again_if_owed, cmd_id)
            self.timers.call_at(self._now() + MOVED_RETRY_S, retry)
            return False
        forward = sent.owed > 0
        if forward:
            COMMAND_LATENCY.observe(self._now() - sent.since)
            sent.owed -= 1
        if sent.owed <= 0 and sent.expected <= 0:
            del self.unanswered[cmd_id]
        return forward

    def _send_again_if_owed(self, cmd_id: str) -> None:
        sent = self.unanswered.get(cmd_id)
        if sent is not None and sent.owed and self.closing is None:
            self.send_again(sent)

    def _set_timer(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = self.timers.call_at(when, self._check_unanswered), when

    def _check_unanswered(self) -> None:
        """The connection's one timer, set while the client waits for an answer: answer each command
        no table has answered for ``HOLD_LIMIT_S`` with ``unavailable`` (a late answer to it is
        dropped); send again, same id, each one the table has not answered for ``RESEND_S`` since it
        last went out; set the timer for the next one due, if any. Commands answered meanwhile cost
        nothing: the timer is not moved for them, and when it fires with nothing owed it stops."""
        self._timer, self._timer_at = None, math.inf
        now, due = self._now(), math.inf
        for cmd_id, sent in list(self.unanswered.items()):
            if not sent.owed:
                continue
            if now - sent.since >= HOLD_LIMIT_S:
                for _ in range(sent.owed):
                    self.error(
                        cmd_id,
                        "unavailable",
                        f"no server answered for this table within {HOLD_LIMIT_S:g} s; "
                        "look at the table, and send the command again with the same id if it is still needed",
                    )
                sent.owed = 0
                if sent.expected <= 0:
                    del self.unanswered[cmd_id]
                continue
            due = min(due, sent.since + HOLD_LIMIT_S)
            if self.closing is not None:
                continue  # no resends from a closing connection
            if now - sent.last_sent >= RESEND_S:
                self.send_again(sent)  # (if the broker cannot take it, tried again after RESEND_S)
                due = min(due, now + RESEND_S)
            else:
                due = min(due, sent.last_sent + RESEND_S)
        if due < math.inf:
            self._set_timer(due)

    def _next_turn(self) -> None:
        self.resynced_this_turn = False

    def on_personal(self, item: Event) -> None:
        self.on_frame(item, True)

    def on_watched(self, item: Event) -> None:
        self.on_frame(item, False)

    def on_frame(self, item: Event, personal: bool) -> None:
        """Pass one frame from the table to the client: a frame's header says whom it is for, its
        body is the JSON text itself, so nothing is parsed or encoded again here."""
        if isinstance(item, Gap):  # messages may be lost
            self.resync()
            return
        try:
            frame = channels.parse_frame(item.data)
        except ValueError:
            return
        kind = frame.kind
        if kind == "_rehello":  # the table moved to another process
            self.resync()
            return
        if personal:
            if frame.conn and frame.conn != self.conn:
                return
            if (kind == "update" or kind == "welcome") and (frame.seat is not None) != self.seated:
                self._seat_changed(frame.seat is not None)
        elif self.seated:
            return
        if kind == "update" or kind == "presence":
            if not self.welcomed:
                return  # the welcome, when it comes, holds all of it
        elif kind == "welcome":
            self.welcomed = True
        if kind == "update" or kind == "welcome":
            if frame.version > self.last_version:
                self.last_version = frame.version
                self.bucket.credit()
        elif (kind == "ack" or kind == "error") and frame.cmd_id:
            if not self.answered(frame.cmd_id, kind, frame.body):
                return
            if kind == "error":
                ERRORS.labels(_error_code(frame.body)).inc()
        self.out.write_json(frame.body)
        if kind == "welcome":  # the table's last chat lines follow the (first) welcome
            chat.hub(self.registry).join(self)

    async def read(self) -> None:
        """Take frames from the server until the client goes. Under ``python -m app`` text frames come
        straight to :meth:`on_text` (the ``listen`` of the ``durak.text_frames`` extension) and this
        loop only sees the disconnect and binary frames."""
        while True:
            message = await self.receive()  # the server's ASGI receive: no wrapper per frame
            if message["type"] != "websocket.receive":
                return  # websocket.disconnect
            text = message.get("text")
            if text is None:  # a binary frame
                self.error(None, "bad_message", "frames must be JSON text")
                continue
            self.on_text(text)
            del text
            if self.closing is not None:
                await self.closing
                return

    def on_text(self, text: str) -> None:
        """One text frame from the client, handled on the spot (nothing here waits)."""
        if self.closing is not None:
            return
        if len(text) > MAX_FRAME:
            self._close(1009, "frame larger than 64 KiB")
            return
        wait = self.bucket.take()
        if wait:
            self.rate_limited(text, wait)
            return
        self.handle(text)

    def rate_limited(self, text: str, wait: float) -> None:
        """Refuse one message over the limit, saying how long to wait; close the connection when it
        has been over the limit for ABUSE_CLOSE_S without a pause."""
        now = self.bucket.clock()
        if self.refused_since is None or now - self.last_refused > REFUSAL_GAP_S:
            self.refused_since = now
        self.last_refused = now
        if now - self.refused_since >= ABUSE_CLOSE_S:
            ERRORS.labels("rate_limited").inc()
            self.send(Bye.wire_text(code="rate_limited", message="too many messages for too long"))
            self._close(4008, "rate limit exceeded")
            return
        cmd_id = None
        with contextlib.suppress(ValueError):
            raw = orjson.loads(text)
            cmd_id = raw.get("id") if isinstance(raw, dict) else None
        retry_after_ms = max(1, math.ceil(wait * 1000))
        message = f"too many messages: wait {retry_after_ms} ms, then send it again"
        self.error(cmd_id, "rate_limited", message, retry_after_ms)

    def _close(self, code: int, reason: str) -> asyncio.Task[None]:
        async def close() -> None:
            with contextlib.suppress(Exception):
                await self.out.flush()
                await self.ws.close(code=code, reason=reason)

        if self.closing is None:
            self.closing = asyncio.get_running_loop().create_task(close())
        return self.closing

    def goodbye(self) -> asyncio.Task[None]:
        """The server is stopping: ``bye`` with when to reconnect (spread over the clients, so that
        they do not all come back in the same instant), then close code 1012. Commands still
        unanswered are the client's to send again, same id, on its next connection."""
        if self.closing is None:
            reconnect_after_ms = random.randint(*RECONNECT_AFTER_MS)
            message = f"this server is restarting: reconnect in {reconnect_after_ms} ms"
            self.send(Bye.wire_text(code="shutdown", message=message, reconnect_after_ms=reconnect_after_ms))
        return self._close(1012, "server restarting")

    def handle(self, text: str) -> None:
        try:
            message = client_message.validate_json(text)  # the common case: one pass, no dicts
        except ValidationError:
            self.refuse(text)
            return
        counter = _COMMAND_COUNTERS.get(message.type)
        if counter is None:
            counter = _COMMAND_COUNTERS[message.type] = COMMANDS.labels(message.type)
        counter.inc()
        if isinstance(message, Ping):
            self.send(Pong.wire_text(id=message.id))
            return
        if isinstance(message, Hello):
            self.command(Command(message.to_body(), self.principal, self.conn))
            return
        if isinstance(message, ChatCmd | ChatPhraseCmd):  # not game state: app/api/chat.py
            chat.hub(self.registry).command(self, message)
            return
        command = command_of(message, self.principal, self.conn)
        self.remember(command)
        if not self.command(command) and command.id is not None:
            self.answered(command.id, "error", b"")  # answered here, with the error unavailable

    def command(self, command: Command, *, report: bool = True) -> bool:
        """Hand a command to the table's actor: onto its queue when it runs in this process, else
        through the broker without waiting for it (``publish_nowait``: commands keep their order).
        Whether it went; with ``report``, a command the broker cannot take is answered with the
        error ``unavailable``."""
        if command.principal is not self.principal or command.conn != self.conn:
            command = dataclasses.replace(command, principal=self.principal, conn=self.conn)
        actor = self.registry.tables.get(self.code)
        if actor is not None and not actor.recorder.fenced:
            actor.post(command)
            return True
        payload = command_to_json(command, via=self.registry.owner)
        try:
            self.broker.publish_nowait([(channels.inbox(self.code), payload)])
        except BrokerError as exc:
            if report:
                self.error(command.id, "unavailable", f"the table is unreachable right now: {exc}")
            return False
        return True

    def refuse(self, text: str) -> None:
        """Say precisely what is wrong with a frame that is not a valid message: ``unknown_type`` only
        for an object whose ``type`` names no message, ``bad_message`` for every other shape."""
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError):  # nested deeper than a parser goes: unreadable too
            self.error(None, "bad_json", "the frame is not valid JSON")
            return
        if not isinstance(raw, dict):
            self.error(None, "bad_message", f"a message is a JSON object, not {_json_kind(raw)}")
            return
        cmd_id, kind = raw.get("id"), raw.get("type")
        if "type" not in raw:
            self.error(cmd_id, "bad_message", "the message has no type")
            return
        if not isinstance(kind, str):
            self.error(cmd_id, "bad_message", f"type must be a string, not {_json_kind(kind)}")
            return
        if kind not in CLIENT_TYPES:
            self.error(cmd_id, "unknown_type", f"unknown message type {kind!r}")
            return
        try:
            client_message.validate_python(raw, strict=True)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"][1:]) or kind
            self.error(cmd_id, "bad_message", f"{kind}: {where}: {first['msg']}")
            return
        self.error(cmd_id, "bad_message", "the frame does not match the protocol")


def command_of(message: CommandMessage, principal: Principal, conn: str) -> Command:
    """A validated command frame (not hello, ping or chat) as the table's command from ``principal``
    on connection ``conn``: its body made by the frame's own model (a play command is the move
    without a seat: the table seats it from the sender's seating)."""
    body: Body = message.to_body()
    return Command(body, principal, conn, id=message.id, version=message.version)


def _error_code(body: bytes) -> str:
    """The ``code`` of an error frame's JSON (``"?"`` if it has none)."""
    try:
        code = orjson.loads(body).get("code")
    except (ValueError, AttributeError):
        return "?"
    return code if isinstance(code, str) else "?"


def _json_kind(value: Any) -> str:
    """What a JSON value is, in words, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
