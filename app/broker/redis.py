"""``redis://`` (and ``rediss://``) backend, on redis-py's asyncio client.

Three kinds of connection:

* a redis-py pool for the occasional commands (the lease scripts, hashes and sets). Any
  connection-level failure there is raised as :class:`BrokerUnavailable`;
* one pipelined command connection for PUBLISH (:class:`Commands`, also used by the table
  store's append): the hot path, with no pool checkout, lock or task per call;
* one *link*: a dedicated connection in pub/sub mode that carries one SUBSCRIBE per channel that
  has at least one local subscriber. What arrives on it is parsed (hiredis) and fanned out into
  the subscribers' bounded queues right in the transport's read callback; a watchdog PINGs it
  every ``health_interval_s`` so a silent peer is noticed too, not only a closed socket.

redis-py opens the two dedicated connections (handshake included) and :func:`_open_wire` then
takes their sockets over with an :class:`asyncio.Protocol` of ours.

When the link breaks, a supervisor task marks the broker unhealthy, reconnects with
exponential backoff (``reconnect_initial_s`` doubling up to ``reconnect_max_s``), subscribes
again to every channel that still has subscribers and then puts a ``Gap(RECONNECT)`` into each
of their queues.

Leases are one string key ``<prefix>lease:<name>`` holding ``"<token>:<owner>"`` with a PX
expiry, changed only by Lua scripts that check owner and token. Tokens come from INCR on the
companion key ``<prefix>fence:<name>``, which never expires; when it does not exist (first use,
or a Redis restarted without persistence) it is seeded from the server clock in milliseconds,
so tokens keep growing across such a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Any
from urllib.parse import urlsplit

import hiredis
from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.connection import AbstractConnection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.broker.base import (
    DEFAULT_MAX_QUEUE,
    DEFAULT_PREFIX,
    REDIS_SCHEMES,
    Broker,
    BrokerUnavailable,
    GapReason,
    LeaseHolder,
    Message,
    Subscription,
    backoff_delays,
    check_name,
    encode_message,
    ttl_ms,
)

log = logging.getLogger("app.broker.redis")

_LOST = (RedisConnectionError, RedisTimeoutError, OSError, TimeoutError)

_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  if string.sub(current, sep + 1) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return tonumber(string.sub(current, 1, sep - 1))
  end
  return false
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000)))
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], tostring(token) .. ':' .. ARGV[1], 'PX', ARGV[2])
return token
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""


@contextlib.contextmanager
def _unavailable(what: str) -> Iterator[None]:
    try:
        yield
    except _LOST as exc:
        raise BrokerUnavailable(f"redis unavailable during {what}: {exc}") from exc


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _retrieve(fut: asyncio.Future[Any]) -> None:
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


def _pack_publish(full_channel: bytes, data: bytes) -> bytes:
    return b"*3\r\n$7\r\nPUBLISH\r\n$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(full_channel), full_channel, len(data), data)


_INCOMPLETE = object()  # what hiredis' Reader.gets() returns until a whole reply has arrived


class _Wire(asyncio.Protocol):
    """One RESP2 connection read by callbacks: what arrives is parsed (hiredis) and handled right in
    the event loop's read callback, with no reader task, stream or timeout context per reply.

    redis-py opens the connection (TLS, AUTH, SELECT, client name: everything the URL asks for),
    then :func:`_open_wire` takes its transport over.
    """

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        self.last_seen = loop.time()
        self.lost: asyncio.Future[str] = loop.create_future()
        self._transport: asyncio.Transport | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._parser = hiredis.Reader(notEnoughData=_INCOMPLETE)

    @property
    def up(self) -> bool:
        return not self.lost.done()

    def _attach(self, transport: asyncio.Transport, writer: asyncio.StreamWriter) -> None:
        self._transport = transport
        self._writer = writer  # kept alive: a collected StreamWriter closes its transport

    def data_received(self, data: bytes) -> None:
        self.last_seen = self._loop.time()
        parser = self._parser
        parser.feed(data)
        try:
            while (reply := parser.gets()) is not _INCOMPLETE:
                self._reply(reply)
        except Exception as exc:  # a protocol error, or a bug in a handler: the stream is unusable
            log.exception("broker: failed to handle a reply from redis")
            self.close(f"bad reply from redis: {exc!r}")

    def eof_received(self) -> bool | None:
        return None  # close our side too; connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.fail(f"connection lost: {exc!r}" if exc is not None else "connection closed by redis")

    def _reply(self, reply: Any) -> None:
        raise NotImplementedError

    def fail(self, reason: str) -> None:
        """Mark the wire dead (once), fail whoever waits on it, and close the socket."""
        if not self.lost.done():
            self.lost.set_result(reason)
        self._failed(reason)
        if self._transport is not None:
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


async def _open_wire(pool: ConnectionPool, wire: _Wire, timeout: float) -> None:
    """Connect with redis-py (handshake included), then hand the socket to ``wire``."""
    conn: AbstractConnection = pool.make_connection()  # type: ignore[no-untyped-call]
    try:
        async with asyncio.timeout(timeout):
            await conn.connect()  # type: ignore[no-untyped-call]
    except BaseException as exc:  # cancellation included: never leak the half-open socket
        with contextlib.suppress(Exception):
            await conn.disconnect(nowait=True)
        if isinstance(exc, (*_LOST, RedisError)):
            raise BrokerUnavailable(f"cannot connect to redis: {exc}") from exc
        raise
    reader, writer = conn._reader, conn._writer
    assert reader is not None and writer is not None
    conn._reader = conn._writer = None  # the socket is the wire's now: redis-py must not close it
    transport = writer.transport
    buffered = bytes(getattr(reader, "_buffer", b""))  # anything read past the handshake
    wire._attach(transport, writer)  # type: ignore[arg-type]
    transport.set_protocol(wire)
    if buffered:
        wire.data_received(buffered)
    if reader.at_eof() or transport.is_closing():
        wire.fail("connection closed during the handshake")
        raise BrokerUnavailable("redis closed the connection during the handshake")


class _Pipe(_Wire):
    """A command connection: each request's commands are written at once and their replies come
    back in order; requests of concurrent callers overlap (pipelining), and those made in one
    turn of the event loop leave in one write (one system call)."""

    def __init__(self) -> None:
        super().__init__()
        self._waiting: deque[tuple[asyncio.Future[list[Any]], list[Any], int]] = deque()
        self._outbox: list[bytes] = []

    def request(self, data: bytes, count: int) -> asyncio.Future[list[Any]]:
        """Send ``count`` packed commands; the future gets their ``count`` replies."""
        if not self.up:
            raise BrokerUnavailable(f"redis connection is down: {self.lost.result()}")
        if not self._outbox:
            self._loop.call_soon(self._flush)
        self._outbox.append(data)
        fut: asyncio.Future[list[Any]] = self._loop.create_future()
        self._waiting.append((fut, [], count))
        return fut

    def _flush(self) -> None:
        outbox, self._outbox = self._outbox, []
        if self.up and outbox:
            self._write(outbox[0] if len(outbox) == 1 else b"".join(outbox))

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


class Commands:
    """Commands on one dedicated, pipelined connection, for the hot paths (PUBLISH, the store's
    append script). No pool checkout, lock or task per call: a call writes its packed commands and
    awaits one future. Connects lazily, and again after the connection failed.

    Connection failures, and replies that take longer than ``command_timeout_s`` (the connection
    is then dropped: its stream is out of step), raise :class:`BrokerUnavailable`; an error reply
    raises redis-py's ``ResponseError``.
    """

    def __init__(self, pool: ConnectionPool, connect_timeout_s: float, command_timeout_s: float) -> None:
        self._pool = pool
        self._connect_timeout_s = connect_timeout_s
        self._command_timeout_s = command_timeout_s
        self._pipe: _Pipe | None = None
        self._attempt: asyncio.Task[_Pipe] | None = None  # the connection attempt in progress
        self._closed = False

    async def _connect(self) -> _Pipe:
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

    def _attempt_done(self, attempt: asyncio.Task[_Pipe]) -> None:
        if self._attempt is attempt:
            self._attempt = None
        if not attempt.cancelled():
            attempt.exception()  # retrieved: whoever waited has it

    async def _open(self) -> _Pipe:
        pipe = _Pipe()
        await _open_wire(self._pool, pipe, self._connect_timeout_s)
        if self._closed:
            pipe.close("closed")
            raise BrokerUnavailable("the connection is closed")
        self._pipe = pipe
        return pipe

    async def call(self, data: bytes, count: int, what: str) -> list[Any]:
        """Send ``count`` packed commands (``data``) and return their replies."""
        pipe = self._pipe
        if pipe is None or not pipe.up:
            pipe = await self._connect()
        fut = pipe.request(data, count)
        try:
            async with asyncio.timeout(self._command_timeout_s):
                replies = await fut
        except TimeoutError as exc:
            pipe.close(f"no reply to {what} within {self._command_timeout_s}s")
            raise BrokerUnavailable(f"redis did not answer {what} within {self._command_timeout_s}s") from exc
        for reply in replies:
            if isinstance(reply, hiredis.ReplyError):
                raise ResponseError(str(reply))
        return replies

    async def aclose(self) -> None:
        self._closed = True
        if self._attempt is not None:
            self._attempt.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._attempt
        if self._pipe is not None:
            self._pipe.close("closed")
            self._pipe = None


class _Link(_Wire):
    """The pub/sub connection (RESP2): messages are fanned out as they are parsed; a watchdog task
    PINGs it so a silent peer is noticed too, not only a closed socket."""

    def __init__(self, on_message: Callable[[bytes, bytes], None], health_interval_s: float) -> None:
        super().__init__()
        self._on_message = on_message
        self._health_interval_s = health_interval_s
        self._pending: dict[tuple[bytes, bytes], deque[asyncio.Future[None]]] = {}
        self._watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._watchdog = asyncio.create_task(self._watch(), name="broker-redis-watchdog")

    def _failed(self, reason: str) -> None:
        for waiters in self._pending.values():
            for fut in waiters:
                if not fut.done():
                    fut.set_exception(BrokerUnavailable(reason))
        self._pending.clear()

    def _reply(self, reply: Any) -> None:
        if type(reply) is list and len(reply) == 3 and reply[0] == b"message":
            self._on_message(reply[1], reply[2])
            return
        if not isinstance(reply, list) or len(reply) < 2:
            return  # +PONG outside subscribed mode, or anything else without a payload for us
        kind = reply[0]
        if kind in (b"subscribe", b"unsubscribe"):
            waiters = self._pending.get((kind, reply[1]))
            if waiters:
                fut = waiters.popleft()
                if not fut.done():
                    fut.set_result(None)

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self._health_interval_s
        ping = pack_command("PING")
        while self.up:
            await asyncio.sleep(interval)
            if loop.time() - self.last_seen > 2.5 * interval:
                self.fail(f"no reply from redis for {loop.time() - self.last_seen:.1f}s")
                return
            try:
                self._write(ping)
            except Exception as exc:
                self.fail(f"PING failed: {exc!r}")
                return

    async def request(
        self, args: tuple[str | bytes, ...], expect: list[tuple[bytes, bytes]], timeout: float
    ) -> None:
        """Send a (UN)SUBSCRIBE and wait for one confirmation per ``(kind, channel)`` in ``expect``."""
        if not self.up:
            raise BrokerUnavailable(f"redis pub/sub link is down: {self.lost.result()}")
        futures: list[asyncio.Future[None]] = []
        for key in expect:
            fut: asyncio.Future[None] = self._loop.create_future()
            self._pending.setdefault(key, deque()).append(fut)
            futures.append(fut)
        try:
            self._write(pack_command(*args))
            async with asyncio.timeout(timeout):
                await asyncio.gather(*futures)
        except BrokerUnavailable:
            raise
        except TimeoutError as exc:
            self.fail(f"no confirmation of {args[0]!r} within {timeout}s")
            raise BrokerUnavailable(f"redis did not confirm {args[0]!r} within {timeout}s") from exc
        finally:
            for key, fut in zip(expect, futures, strict=True):
                waiters = self._pending.get(key)
                if waiters is not None and fut in waiters:
                    waiters.remove(fut)
                    if not waiters:
                        del self._pending[key]
                _retrieve(fut)

    async def aclose(self, reason: str = "closed") -> None:
        self.fail(reason)
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watchdog


class RedisBroker(Broker):
    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_queue: int = DEFAULT_MAX_QUEUE,
        reconnect_initial_s: float = 0.1,
        reconnect_max_s: float = 2.0,
        health_interval_s: float = 3.0,
        connect_timeout_s: float = 5.0,
        command_timeout_s: float = 5.0,
    ) -> None:
        super().__init__(prefix=prefix, max_queue=max_queue)
        if urlsplit(url).scheme not in REDIS_SCHEMES:
            raise ValueError(f"not a redis:// URL: {url!r}")
        next(backoff_delays(reconnect_initial_s, reconnect_max_s))  # validates the pair
        if not (health_interval_s > 0 and connect_timeout_s > 0 and command_timeout_s > 0):
            raise ValueError("health_interval_s, connect_timeout_s and command_timeout_s must be positive")
        self._reconnect = (reconnect_initial_s, reconnect_max_s)
        self._health_interval_s = health_interval_s
        self._connect_timeout_s = connect_timeout_s
        self._command_timeout_s = command_timeout_s
        # One quick retry covers a pooled connection that died since its last use; the real
        # reconnect policy is the supervisor's, and callers see BrokerUnavailable right away.
        options: dict[str, Any] = {
            "socket_connect_timeout": connect_timeout_s,
            "socket_timeout": command_timeout_s,
            "retry": Retry(NoBackoff(), 1),
            "health_check_interval": 0,
            **parse_url(url),  # what the URL says wins, as with Redis.from_url
            "decode_responses": False,
        }
        self._pool = ConnectionPool(**options)
        # The pub/sub link speaks RESP2 on purpose: its replies then come back from
        # read_response() as plain arrays instead of going to RESP3's push-message handlers.
        self._link_pool = ConnectionPool(**{**options, "protocol": 2})
        # PUBLISH goes over a dedicated pipelined connection of its own (no pool checkout per call).
        self._commands = Commands(self._link_pool, connect_timeout_s, command_timeout_s)
        self._redis = Redis(connection_pool=self._pool)
        self._acquire: AsyncScript = self._redis.register_script(_ACQUIRE)
        self._renew: AsyncScript = self._redis.register_script(_RENEW)
        self._release: AsyncScript = self._redis.register_script(_RELEASE)
        self._link: _Link | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # serialises every change of the link's subscriptions
        self._subs: dict[str, set[Subscription]] = {}
        self._remote: set[str] = set()  # channels subscribed on the current link
        self._unsubscribing: set[asyncio.Task[None]] = set()
        self._channel_prefix = (prefix + "ch:").encode()

    def __repr__(self) -> str:
        return f"<RedisBroker prefix={self.prefix!r} healthy={self.healthy}>"

    # --- lifecycle ---

    async def start(self) -> None:
        if self._started:
            raise ValueError("the broker was already started")
        if self._closed:
            raise ValueError("a closed broker cannot be restarted")
        self._started = True
        try:
            link = await self._open_link(reconnect=False)
        except BrokerUnavailable:
            await self.aclose()
            raise
        self._supervisor = asyncio.create_task(self._supervise(link), name="broker-redis-supervisor")

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
        if self._link is not None:
            await self._link.aclose()
            self._link = None
        for task in list(self._unsubscribing):
            task.cancel()
        for subs in self._subs.values():
            for sub in subs:
                sub._close()
        self._subs.clear()
        self._remote.clear()
        await self._commands.aclose()
        await self._redis.aclose()
        await self._pool.disconnect()
        await self._link_pool.disconnect()

    @property
    def healthy(self) -> bool:
        return not self._closed and self._link is not None and self._link.up

    def _client(self) -> Redis:
        self._check_open()
        return self._redis

    # --- the pub/sub link ---

    def _full_channel(self, channel: str) -> bytes:
        return self._channel_prefix + channel.encode()

    def deliver_here(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        self._check_open()
        for channel, message in messages:
            self._dispatch(self._full_channel(check_name("channel", channel)), encode_message(message))

    def _dispatch(self, full_channel: bytes, data: bytes) -> None:
        if not full_channel.startswith(self._channel_prefix):
            return
        channel = full_channel[len(self._channel_prefix) :].decode("utf-8", "replace")
        subs = self._subs.get(channel)
        if subs:
            message = Message(channel, data)
            for sub in subs:  # _deliver never changes the set: no copy needed
                sub._deliver(message)

    async def _open_link(self, *, reconnect: bool) -> _Link:
        """Connect, subscribe every channel that has subscribers, and signal them a gap if asked."""
        async with self._lock:
            link = _Link(self._dispatch, self._health_interval_s)
            try:
                await _open_wire(self._link_pool, link, self._connect_timeout_s)
                link.start()
                channels = [channel for channel, subs in self._subs.items() if subs]
                if channels:
                    fulls = [self._full_channel(channel) for channel in channels]
                    await link.request(
                        ("SUBSCRIBE", *fulls),
                        [(b"subscribe", full) for full in fulls],
                        self._command_timeout_s,
                    )
            except BaseException as exc:  # cancellation included: never leak the half-open link
                await link.aclose(f"connect failed: {exc!r}")
                if isinstance(exc, (*_LOST, RedisError)):
                    raise BrokerUnavailable(f"cannot connect to redis: {exc}") from exc
                raise
            self._link = link
            self._remote = set(channels)
            if reconnect:
                for channel in channels:
                    for sub in tuple(self._subs.get(channel, ())):
                        sub._signal_gap(GapReason.RECONNECT)
            return link

    async def _supervise(self, link: _Link) -> None:
        while True:
            reason = await link.lost
            log.warning("broker: redis pub/sub link down (%s); reconnecting", reason)
            async with self._lock:
                self._link = None
                self._remote.clear()
            await link.aclose(reason)
            attempts = 0
            for delay in backoff_delays(*self._reconnect):
                await asyncio.sleep(delay)
                attempts += 1
                try:
                    link = await self._open_link(reconnect=True)
                except BrokerUnavailable as exc:
                    log.debug("broker: reconnect attempt %d failed: %s", attempts, exc)
                    continue
                except Exception:  # keep the supervisor alive whatever happens
                    log.exception("broker: unexpected error while reconnecting")
                    continue
                log.warning("broker: redis pub/sub link restored after %d attempt(s)", attempts)
                break

    async def _attach(self, sub: Subscription) -> None:
        channel = sub.channel
        self._subs.setdefault(channel, set()).add(sub)
        try:
            if channel in self._remote and self.healthy:
                return
            async with self._lock:
                link = self._link
                if link is None or not link.up:
                    raise BrokerUnavailable("redis pub/sub link is down")
                if channel not in self._remote:
                    full = self._full_channel(channel)
                    await link.request(("SUBSCRIBE", full), [(b"subscribe", full)], self._command_timeout_s)
                    self._remote.add(channel)
        except BaseException:
            await self._detach(sub)
            raise

    async def _detach(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.channel)
        if subs is None:
            return
        subs.discard(sub)
        if subs or self._closed:
            return
        # The last local subscriber left: UNSUBSCRIBE in a task of its own, so that a cancelled
        # caller cannot leave the link half-way through the exchange.
        task = asyncio.create_task(self._unsubscribe_if_unused(sub.channel))
        self._unsubscribing.add(task)
        task.add_done_callback(self._unsubscribing.discard)
        with contextlib.suppress(BrokerUnavailable):
            await asyncio.shield(task)

    async def _unsubscribe_if_unused(self, channel: str) -> None:
        async with self._lock:
            if self._subs.get(channel):
                return
            self._subs.pop(channel, None)
            link = self._link
            if channel not in self._remote or link is None or not link.up:
                self._remote.discard(channel)
                return
            self._remote.discard(channel)
            full = self._full_channel(channel)
            with contextlib.suppress(BrokerUnavailable):
                await link.request(("UNSUBSCRIBE", full), [(b"unsubscribe", full)], self._command_timeout_s)

    async def publish(self, channel: str, message: bytes | str) -> None:
        await self.publish_many([(channel, message)])

    async def publish_many(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """All of ``messages`` in one write and one round trip (a pipeline without MULTI)."""
        self._check_open()
        if not messages:
            return
        full_channel = self._full_channel
        data = b"".join(
            _pack_publish(full_channel(check_name("channel", channel)), encode_message(message))
            for channel, message in messages
        )
        await self._commands.call(data, len(messages), "PUBLISH")

    # --- leases ---

    def _lease_keys(self, name: str) -> list[str]:
        check_name("lease name", name)
        return [f"{self.prefix}lease:{name}", f"{self.prefix}fence:{name}"]

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> int | None:
        self._client()
        check_name("owner", owner)
        with _unavailable("acquire_lease"):
            token = await self._acquire(keys=self._lease_keys(name), args=[owner, ttl_ms(ttl_s)])
        return None if token is None else int(token)

    async def renew_lease(self, name: str, owner: str, token: int, ttl_s: float) -> bool:
        self._client()
        with _unavailable("renew_lease"):
            done = await self._renew(
                keys=self._lease_keys(name)[:1], args=[f"{token}:{owner}", ttl_ms(ttl_s)]
            )
        return bool(done)

    async def release_lease(self, name: str, owner: str, token: int) -> bool:
        self._client()
        with _unavailable("release_lease"):
            done = await self._release(keys=self._lease_keys(name)[:1], args=[f"{token}:{owner}"])
        return bool(done)

    async def lease_holder(self, name: str) -> LeaseHolder | None:
        client = self._client()
        with _unavailable("lease_holder"):
            value = await client.get(self._lease_keys(name)[0])
        if value is None:
            return None
        token, _, owner = _text(value).partition(":")
        return LeaseHolder(owner, int(token))

    # --- counters and sets ---

    def _key(self, key: str) -> str:
        return f"{self.prefix}kv:{check_name('key', key)}"

    async def hincrby(self, key: str, field: str, delta: int = 1) -> int:
        client = self._client()
        with _unavailable("hincrby"):
            return int(await client.hincrby(self._key(key), field, int(delta)))

    async def hgetall(self, key: str) -> dict[str, int]:
        client = self._client()
        with _unavailable("hgetall"):
            raw = await client.hgetall(self._key(key))
        return {_text(name): int(value) for name, value in raw.items()}

    async def hdel(self, key: str, *fields: str) -> int:
        client = self._client()
        if not fields:
            return 0
        with _unavailable("hdel"):
            return int(await client.hdel(self._key(key), *fields))

    async def sadd(self, key: str, *members: str) -> int:
        client = self._client()
        if not members:
            return 0
        with _unavailable("sadd"):
            return int(await client.sadd(self._key(key), *members))

    async def srem(self, key: str, *members: str) -> int:
        client = self._client()
        if not members:
            return 0
        with _unavailable("srem"):
            return int(await client.srem(self._key(key), *members))

    async def smembers(self, key: str) -> set[str]:
        client = self._client()
        with _unavailable("smembers"):
            raw = await client.smembers(self._key(key))
        return {_text(member) for member in raw}

    async def delete(self, *keys: str) -> int:
        client = self._client()
        if not keys:
            return 0
        with _unavailable("delete"):
            return int(await client.delete(*(self._key(key) for key in keys)))
