"""Our own RESP2 connections to Redis, for the hot paths: the pipelined command connection
(PUBLISH, the table store's append), the muted connection of ``publish_nowait`` (:class:`Publisher`)
and the base of the pub/sub link (:class:`Wire`; the link itself is app/broker/redis_link.py).

Why our own and not redis-py's: they were measured faster. They are ``asyncio.Protocol`` objects read
by callbacks: what arrives is parsed with hiredis's public ``Reader`` and handled right in the event
loop's read callback, with no reader task, stream or timeout context per reply. A five-frame push
costs the server about 50 µs of CPU this way against about 470 µs through redis-py; on the muted
publishing connection (``CLIENT REPLY OFF``) a publish costs 8–33 µs of CPU against 61–72 µs for an
awaited one (docs/performance.md, "Own Redis wire for publishing and appending"). Everything else
(leases, lists, the store's saves and reads) goes through redis-py.

Everything here uses public APIs only: :func:`open_wire` connects with ``loop.create_connection``
/ ``loop.create_unix_connection`` (TLS through an ``ssl.SSLContext`` for ``rediss://``) and does
the handshake the URL asks for itself (AUTH, SELECT, CLIENT SETNAME, then a PING), before the
connection carries anything else. :class:`RedisTarget` reads the URL the way redis-py does, so
the broker's redis-py pool for the occasional commands and these connections reach the same place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

import hiredis
from redis.exceptions import ResponseError

from app.broker.base import SINGLE_REDIS_SCHEMES, BrokerUnavailable, backoff_delays

log = logging.getLogger("app.broker.redis")

_SSL_CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """Where a ``redis://``, ``rediss://`` or ``unix://`` URL points and how to log in there.

    ``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` (the same over TLS) and
    ``unix://[[user]:password@]/path/redis.sock?db=N``; the query may also give ``db``,
    ``username``, ``password``, ``client_name`` and, for TLS, ``ssl_cert_reqs``
    (none/optional/required), ``ssl_ca_certs`` and ``ssl_check_hostname`` (as redis-py reads them).
    """

    host: str = "localhost"
    port: int = 6379
    path: str | None = None  # a unix socket
    db: int = 0
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    client_name: str | None = None
    tls: ssl.SSLContext | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_url(cls, url: str) -> RedisTarget:
        parts = urlsplit(url)
        if parts.scheme not in SINGLE_REDIS_SCHEMES:
            raise ValueError(f"not a redis://, rediss:// or unix:// URL: {url!r}")
        query = {name: values[-1] for name, values in parse_qs(parts.query).items()}
        username = query.get("username") or (unquote(parts.username) if parts.username else None)
        password = query.get("password") or (unquote(parts.password) if parts.password else None)
        db_text = query.get("db") or (parts.path.strip("/") if parts.scheme != "unix" else "") or "0"
        try:
            db = int(db_text)
        except ValueError:
            raise ValueError(f"the database in {url!r} is not a number: {db_text!r}") from None
        common: dict[str, Any] = {
            "db": db,
            "username": username,
            "password": password,
            "client_name": query.get("client_name"),
        }
        if parts.scheme == "unix":
            if not parts.path:
                raise ValueError(f"no socket path in {url!r}: use unix:///path/redis.sock?db=0")
            return cls(path=parts.path, **common)
        tls = _tls_context(query) if parts.scheme == "rediss" else None
        return cls(host=parts.hostname or "localhost", port=parts.port or 6379, tls=tls, **common)

    def __str__(self) -> str:
        place = f"unix:{self.path}" if self.path else f"{self.host}:{self.port}"
        return f"{place} db {self.db}"

    def handshake(self) -> list[tuple[bytes | str | int, ...]]:
        """The commands that make a fresh connection ready: log in, pick the database, name the
        client, and a PING that proves the connection is usable."""
        commands: list[tuple[bytes | str | int, ...]] = []
        if self.password is not None:
            commands.append(("AUTH", self.username, self.password) if self.username else ("AUTH", self.password))
        if self.db:
            commands.append(("SELECT", self.db))
        if self.client_name:
            commands.append(("CLIENT", "SETNAME", self.client_name))
        commands.append(("PING",))
        return commands


def _tls_context(query: dict[str, str]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=query.get("ssl_ca_certs"))
    reqs = query.get("ssl_cert_reqs", "required").lower()
    if reqs not in _SSL_CERT_REQS:
        raise ValueError(f"ssl_cert_reqs must be one of {sorted(_SSL_CERT_REQS)}, not {reqs!r}")
    check_hostname = query.get("ssl_check_hostname", "true" if reqs == "required" else "false").lower()
    context.check_hostname = check_hostname in ("1", "true", "yes") and reqs != "none"
    context.verify_mode = _SSL_CERT_REQS[reqs]
    return context


class HandshakeRefused(BrokerUnavailable):
    """Redis answered a command of the handshake with an error (a wrong password, an ACL that
    forbids it): no outage, a configuration that retrying will not mend."""


def _described(command: tuple[bytes | str | int, ...]) -> str:
    """A handshake command for an error message: its name, and the user for AUTH (never the password)."""
    if command[0] == "AUTH":
        return f"AUTH as user {command[1]!r}" if len(command) == 3 else "AUTH with the URL's password"
    return f"CLIENT {command[1]!s}" if command[0] == "CLIENT" else str(command[0])


def retrieve(fut: asyncio.Future[Any]) -> None:
    if fut.done() and not fut.cancelled():
        fut.exception()  # mark as retrieved so asyncio does not log it


def _arg(value: bytes | str | int) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    return str(int(value)).encode()


def pack_command(*args: bytes | str | int) -> bytes:
    """One command in RESP (what redis-py's ``pack_command`` makes, without its per-call overhead)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = _arg(arg)
        parts.append(b"$%d\r\n%b\r\n" % (len(data), data))
    return b"".join(parts)


def pack_publish(full_channel: bytes, data: bytes) -> bytes:
    return b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(full_channel), full_channel, len(data), data)


def pack_spublish(full_channel: bytes, data: bytes) -> bytes:
    """SPUBLISH (Redis 7 sharded pub/sub), for a Redis Cluster."""
    return b"*3\r\n$8\r\nSPUBLISH\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(full_channel), full_channel, len(data), data)


_INCOMPLETE = object()  # what hiredis' Reader.gets() returns until a whole reply has arrived


class Wire(asyncio.Protocol):
    """One RESP2 connection read by callbacks. :func:`open_wire` connects it and runs the
    handshake; from then on each reply goes to :meth:`_reply` (the subclass's)."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        self.last_seen = loop.time()
        self.lost: asyncio.Future[str] = loop.create_future()
        self._transport: asyncio.Transport | None = None
        self._parser = hiredis.Reader(notEnoughData=_INCOMPLETE)
        self._greeting: tuple[asyncio.Future[list[Any]], list[Any], int] | None = None
        self._on_reply = self._greet  # the handshake's replies first, then the subclass's _reply
        self._outbox: list[bytes] = []  # what write_soon has been given in this turn of the loop

    @property
    def up(self) -> bool:
        return not self.lost.done()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's do not derive from asyncio's

    def data_received(self, data: bytes) -> None:
        self.last_seen = self._loop.time()
        parser = self._parser
        parser.feed(data)
        try:
            while (reply := parser.gets()) is not _INCOMPLETE:
                self._on_reply(reply)
        except Exception as exc:  # a protocol error, or a bug in a handler: the stream is unusable
            log.exception("broker: failed to handle a reply from redis")
            self.close(f"bad reply from redis: {exc!r}")

    def eof_received(self) -> bool | None:
        return None  # close our side too; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(f"connection lost: {exc!r}" if exc is not None else "connection closed by redis")

    async def greet(self, commands: list[tuple[bytes | str | int, ...]]) -> None:
        """Send the handshake's commands in one write and check every reply; then the connection
        is the subclass's. An error reply raises :class:`BrokerUnavailable` naming the command
        (never its arguments: they hold the password)."""
        fut: asyncio.Future[list[Any]] = self._loop.create_future()
        self._greeting = (fut, [], len(commands))
        self._write(b"".join(pack_command(*command) for command in commands))
        replies = await fut
        for command, reply in zip(commands, replies, strict=True):
            if isinstance(reply, hiredis.ReplyError):
                what = _described(command)
                self.fail(f"redis refused {what}: {reply}")
                raise HandshakeRefused(f"redis refused {what} (check the broker URL): {reply}")
        self._on_reply = self._reply

    def _greet(self, reply: Any) -> None:
        if self._greeting is None:
            raise RuntimeError(f"unexpected reply from redis before the handshake: {reply!r}")
        fut, replies, count = self._greeting
        replies.append(reply)
        if len(replies) == count:
            self._greeting = None
            if not fut.done():
                fut.set_result(replies)

    def _reply(self, reply: Any) -> None:
        raise NotImplementedError

    def fail(self, reason: str, *, abort: bool = False) -> None:
        """Mark the wire dead (once), fail whoever waits on it, and close the socket (``abort``: at
        once, dropping what the peer has not taken yet)."""
        if not self.lost.done():
            self.lost.set_result(reason)
        if self._greeting is not None:
            fut, self._greeting = self._greeting[0], None
            if not fut.done():
                fut.set_exception(BrokerUnavailable(reason))
                fut.exception()
        self._failed(reason)
        if self._transport is not None:
            if abort:
                self._transport.abort()
            else:
                self._transport.close()

    def close(self, reason: str) -> None:
        self.fail(reason)

    def _failed(self, reason: str) -> None:
        """Subclasses fail their waiters here."""

    def _write(self, data: bytes) -> None:
        if not self.up:
            raise BrokerUnavailable(f"redis connection is down: {self.lost.result()}")
        assert self._transport is not None
        self._transport.write(data)

    def write_soon(self, data: bytes) -> None:
        """Write ``data`` at the end of this turn of the event loop, with whatever else is written
        so in this turn: one system call for all of them."""
        if not self.up:
            raise BrokerUnavailable(f"redis connection is down: {self.lost.result()}")
        if not self._outbox:
            self._loop.call_soon(self._flush)
        self._outbox.append(data)

    def _flush(self) -> None:
        outbox, self._outbox = self._outbox, []
        if self.up and outbox:
            self._write(outbox[0] if len(outbox) == 1 else b"".join(outbox))


async def open_wire(
    target: RedisTarget, wire: Wire, timeout: float, also: Sequence[tuple[bytes | str | int, ...]] = ()
) -> None:
    """Connect ``wire`` to ``target`` and run the handshake (and the commands ``also``, whose replies
    are checked the same way), all within ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout):
            if target.path is not None:
                await loop.create_unix_connection(lambda: wire, target.path)
            else:
                await loop.create_connection(lambda: wire, target.host, target.port, ssl=target.tls)
            await wire.greet([*target.handshake(), *also])
    except BaseException as exc:  # cancellation included: never leak the half-open socket
        wire.fail(f"connect failed: {exc!r}")
        if isinstance(exc, OSError | TimeoutError):
            raise BrokerUnavailable(f"cannot connect to redis at {target}: {exc!r}") from exc
        raise


class Pipe(Wire):
    """A command connection: each request's commands are written at once and their replies come
    back in order; requests of concurrent callers overlap (pipelining), and those made in one
    turn of the event loop leave in one write (one system call)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: deque[tuple[asyncio.Future[list[Any]], list[Any], int]] = deque()

    def request(self, data: bytes, count: int) -> asyncio.Future[list[Any]]:
        """Send ``count`` packed commands; the future gets their ``count`` replies."""
        self.write_soon(data)
        fut: asyncio.Future[list[Any]] = self._loop.create_future()
        self._waiting.append((fut, [], count))
        return fut

    def _reply(self, reply: Any) -> None:
        if not self._waiting:
            raise RuntimeError(f"unexpected reply from redis: {reply!r}")
        fut, replies, count = self._waiting[0]
        replies.append(reply)
        if len(replies) == count:
            self._waiting.popleft()
            if not fut.done():  # a caller that gave up (timeout, cancel) left a done future
                fut.set_result(replies)

    def _failed(self, reason: str) -> None:
        waiting, self._waiting = self._waiting, deque()
        for fut, _, _ in waiting:
            if not fut.done():
                fut.set_exception(BrokerUnavailable(reason))
                fut.exception()  # nobody may be waiting any more: do not log it as unretrieved


# A command past its timeout waits this much longer before it fails: a process that was stopped
# (SIGSTOP, a stalled machine) with a command on its way wakes to the command's timer and to Redis's
# reply at once, often the timer first (a move saved just before a freeze was refused "unavailable"
# while the store had it). A reply already read, or coming this soon after, is the reply.
LATE_REPLY_S = 0.25


class Commands:
    """Commands on one dedicated, pipelined connection, for the hot paths (PUBLISH, the store's
    append script). No pool checkout, lock or task per call: a call writes its packed commands and
    awaits one future. Connects lazily, and again after the connection failed.

    Connection failures, and replies that take longer than ``command_timeout_s`` (and
    ``LATE_REPLY_S`` more; the connection is then dropped: its stream is out of step), raise
    :class:`BrokerUnavailable`; an error reply raises redis-py's ``ResponseError``.
    """

    def __init__(self, target: RedisTarget, connect_timeout_s: float, command_timeout_s: float) -> None:
        self._target = target
        self._connect_timeout_s = connect_timeout_s
        self._command_timeout_s = command_timeout_s
        self._pipe: Pipe | None = None
        self._attempt: asyncio.Task[Pipe] | None = None  # the connection attempt in progress
        self._closed = False

    async def _connect(self) -> Pipe:
        """Wait for a connection; callers that need one at the same time share one attempt."""
        if self._closed:
            raise BrokerUnavailable("the connection is closed")
        attempt = self._attempt
        if attempt is None:
            attempt = self._attempt = asyncio.create_task(self._open(), name="broker-redis-connect")
            attempt.add_done_callback(self._attempt_done)
        try:
            return await asyncio.shield(attempt)  # a cancelled caller leaves the attempt to the others
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if attempt.cancelled() and task is not None and not task.cancelling():
                raise BrokerUnavailable("the connection was closed while connecting") from None
            raise

    def _attempt_done(self, attempt: asyncio.Task[Pipe]) -> None:
        if self._attempt is attempt:
            self._attempt = None
        if not attempt.cancelled():
            attempt.exception()  # retrieved: whoever waited has it

    async def _open(self) -> Pipe:
        pipe = Pipe()
        await open_wire(self._target, pipe, self._connect_timeout_s)
        if self._closed:
            pipe.close("closed")
            raise BrokerUnavailable("the connection is closed")
        self._pipe = pipe
        return pipe

    async def call(self, data: bytes, count: int, what: str) -> list[Any]:
        """Send ``count`` packed commands (``data``) and return their replies; an error reply
        raises redis-py's ``ResponseError``."""
        replies = await self.replies(data, count, what)
        for reply in replies:
            if isinstance(reply, hiredis.ReplyError):
                raise ResponseError(str(reply))
        return replies

    async def replies(self, data: bytes, count: int, what: str) -> list[Any]:
        """Send ``count`` packed commands (``data``) and return their replies as they are, error
        replies included (as ``hiredis.ReplyError`` values)."""
        pipe = self._pipe
        if pipe is None or not pipe.up:
            pipe = await self._connect()
        fut = pipe.request(data, count)
        timeout_s = self._command_timeout_s
        loop = asyncio.get_running_loop()
        timer: asyncio.TimerHandle

        def overdue() -> None:
            nonlocal timer
            if not fut.done():
                timer = loop.call_later(LATE_REPLY_S, give_up)

        def give_up() -> None:
            if not fut.done():
                fut.set_exception(BrokerUnavailable(f"redis did not answer {what} within {timeout_s}s"))
                pipe.close(f"no reply to {what} within {timeout_s}s")

        # Timers of its own rather than a cancelling timeout: a reply that comes after the first one
        # still lands in the future (a process that was stopped, LATE_REPLY_S).
        timer = loop.call_later(timeout_s, overdue)
        try:
            return await fut
        finally:
            timer.cancel()

    async def aclose(self) -> None:
        self._closed = True
        if self._attempt is not None:
            self._attempt.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._attempt
        if self._pipe is not None:
            self._pipe.close("closed")
            self._pipe = None


_REPLY_OFF = pack_command("CLIENT", "REPLY", "OFF")
# The health probe of a muted connection: replies on for one PING, then off again (+OK, +PONG).
_PROBE = pack_command("CLIENT", "REPLY", "ON") + pack_command("PING") + _REPLY_OFF


class Muted(Wire):
    """A connection that Redis sends no replies on (``CLIENT REPLY OFF``), but to its probe's PING:
    what is written on it (``write_soon``) is fire and forget."""

    def __init__(self) -> None:
        super().__init__()
        self.probes = 0  # probes sent whose PONG has not come back

    def mute(self) -> None:
        """Turn the replies off (after the handshake, before anything else is sent)."""
        self._write(_REPLY_OFF)

    def probe(self) -> None:
        self._write(_PROBE)
        self.probes += 1

    def buffered(self) -> int:
        """Bytes written but not yet taken by the socket (Redis is not reading when this grows)."""
        return 0 if self._transport is None else self._transport.get_write_buffer_size()

    def _reply(self, reply: Any) -> None:
        if reply == b"PONG":
            self.probes = max(0, self.probes - 1)
        elif reply != b"OK":  # CLIENT REPLY ON's answer; anything else means the stream is not ours
            raise RuntimeError(f"unexpected reply on a muted connection: {reply!r}")


class Publisher:
    """PUBLISH without waiting for Redis's answer (``Broker.publish_nowait``), on a muted connection
    of its own (:class:`Muted`): no future, timer or reply to read per publish, so the sender goes
    on at once. Publishes are sent in the order they are made, and are at most once, like any
    publish: one made while the connection is down raises :class:`BrokerUnavailable` at once; one
    in flight when it breaks is lost.

    A supervisor task keeps the connection: it reconnects with backoff, and every
    ``health_interval_s`` it probes the connection with a PING (a silent peer is noticed too, not
    only a closed socket) and checks that Redis keeps reading (at most ``max_buffer`` bytes waiting)."""

    def __init__(
        self,
        target: RedisTarget,
        *,
        connect_timeout_s: float,
        health_interval_s: float,
        reconnect_initial_s: float,
        reconnect_max_s: float,
        max_buffer: int = 32 * 1024 * 1024,
    ) -> None:
        self._target = target
        self._connect_timeout_s = connect_timeout_s
        self._health_interval_s = health_interval_s
        self._delays = (reconnect_initial_s, reconnect_max_s)
        self._max_buffer = max_buffer
        self._wire: Muted | None = None
        self._task: asyncio.Task[None] | None = None
        self._first: asyncio.Future[None] | None = None
        self._kick: asyncio.Event | None = None  # cuts the backoff short (``ensure_up``)
        self._tried: list[asyncio.Future[None]] = []  # who waits for the end of the next attempt
        self.last_error = "not connected yet"
        self.refused = False  # the last attempt was refused by Redis (HandshakeRefused), not lost

    @property
    def up(self) -> bool:
        return self._wire is not None and self._wire.up

    async def start(self) -> None:
        """Start the supervisor and wait for its first attempt to connect (which may fail: it then
        keeps trying, and publishes raise meanwhile)."""
        self._first = asyncio.get_running_loop().create_future()
        self._kick = asyncio.Event()
        self._task = asyncio.create_task(self._supervise(), name="broker-redis-publisher")
        await asyncio.shield(self._first)

    async def ensure_up(self, timeout: float) -> bool:
        """Connect now if the connection is down, instead of at the end of the supervisor's backoff,
        and say whether it is up within ``timeout``: for the broker when its pub/sub link comes
        back, so that what its gaps set off (clients asking for snapshots) is not published into a
        connection still waiting to reconnect."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.up and self._kick is not None and self._running() and loop.time() < deadline:
            attempt = loop.create_future()
            self._tried.append(attempt)
            self._kick.set()
            # asyncio.timeout_at, not wait_for: on 3.11 wait_for swallows a cancel that arrives as
            # the attempt ends, and the caller (the broker closing) would never stop.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(deadline):
                    await asyncio.shield(attempt)
        return self.up

    def send(self, data: bytes) -> None:
        """Write packed PUBLISH commands in this turn of the event loop."""
        wire = self._wire
        if wire is None:
            raise BrokerUnavailable(f"redis is unreachable: {self.last_error}")
        if not wire.up:
            raise BrokerUnavailable(f"redis is unreachable: {wire.lost.result()}")
        wire.write_soon(data)

    async def _backoff(self, delay: float) -> None:
        """Wait ``delay`` seconds before the next attempt, unless ``ensure_up`` cuts it short."""
        assert self._kick is not None
        self._kick.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(delay):  # not wait_for: see ensure_up
                await self._kick.wait()

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        delays: Iterator[float] | None = None  # the backoff of the current run of failed attempts
        brief: Iterator[float] | None = None  # ... and of connections lost as soon as they were made
        while True:
            wire = Muted()
            try:
                # CLIENT REPLY ON in the handshake: a user who may not turn replies off is refused
                # there, clearly and with backoff, not on every reconnect after the fact.
                await open_wire(self._target, wire, self._connect_timeout_s, also=[("CLIENT", "REPLY", "ON")])
                wire.mute()
            except BrokerUnavailable as exc:
                self.last_error, self.refused = str(exc), isinstance(exc, HandshakeRefused)
                self._attempted()
                delays = delays or backoff_delays(*self._delays)
                await self._backoff(next(delays))
                continue
            delays = None
            self._wire, self.refused = wire, False
            self._attempted()
            connected_at = loop.time()
            await self._watch(wire)
            self._wire = None
            self.last_error = wire.lost.result()
            log.warning("broker: the publishing connection to redis was lost: %s", self.last_error)
            if loop.time() - connected_at < 1.0:  # lost at once (a bad reply, say): no tight loop
                brief = brief or backoff_delays(*self._delays)
                await self._backoff(next(brief))
            else:
                brief = None

    def _running(self) -> bool:
        return self._task is not None and not self._task.done()

    def _attempted(self) -> None:
        """An attempt to connect is over (whether it worked: ``up``)."""
        tried, self._tried = self._tried, []
        for fut in (self._first, *tried):
            if fut is not None and not fut.done():
                fut.set_result(None)

    async def _watch(self, wire: Muted) -> None:
        loop, interval = asyncio.get_running_loop(), self._health_interval_s
        while wire.up:
            await asyncio.wait([wire.lost], timeout=interval)
            if not wire.up:
                return
            silent = loop.time() - wire.last_seen
            if wire.buffered() > self._max_buffer:  # the more telling of the two, so first
                wire.fail(f"redis is not reading ({wire.buffered()} bytes waiting)", abort=True)
            elif wire.probes and silent > 2.5 * interval:  # the same patience as the pub/sub link's
                wire.fail(f"no reply from redis for {silent:.1f}s", abort=True)
            elif not wire.probes:
                wire.probe()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._attempted()
        if self._wire is not None:
            self._wire.close("closed")
            self._wire = None
