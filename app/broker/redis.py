"""``redis://`` (and ``rediss://``) backend, on redis-py's asyncio client.

Three kinds of connection:

* a redis-py pool for the occasional commands (the lease scripts, hashes and sets). Any
  connection-level failure there is raised as :class:`BrokerUnavailable`;
* one pipelined command connection for PUBLISH (:class:`~app.broker.redis_wire.Commands`, also
  used by the table store's append): the hot path, with no pool checkout, lock or task per call;
* one *link*: a dedicated connection in pub/sub mode that carries one SUBSCRIBE per channel that
  has at least one local subscriber. What arrives on it is parsed (hiredis) and fanned out into
  the subscribers' bounded queues right in the transport's read callback; a watchdog PINGs it
  every ``health_interval_s`` so a silent peer is noticed too, not only a closed socket.

The two dedicated connections are our own (``app/broker/redis_wire.py``): opened and logged in
with public asyncio calls, never by reaching into redis-py.

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

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.broker.base import (
    Broker,
    BrokerOptions,
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
from app.broker.redis_wire import Commands, RedisTarget, Wire, open_wire, pack_command, pack_publish, retrieve

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

# KEYS: the leases; ARGV[1]: the expiry (ms), then each lease's "<token>:<owner>". Returns 1/0 each.
_RENEW_MANY = """
local kept = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
    kept[i] = 1
  else
    kept[i] = 0
  end
end
return kept
"""
RENEW_BATCH = 500  # leases renewed by one script call

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



class _Link(Wire):
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
                retrieve(fut)

    async def aclose(self, reason: str = "closed") -> None:
        self.fail(reason)
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watchdog


class RedisBroker(Broker):
    def __init__(self, url: str, options: BrokerOptions | None = None) -> None:
        options = options or BrokerOptions()
        super().__init__(options)
        self._target = RedisTarget.from_url(url)  # also refuses a URL that is not for Redis
        # One quick retry covers a pooled connection that died since its last use; the real
        # reconnect policy is the supervisor's, and callers see BrokerUnavailable right away.
        pool_options: dict[str, Any] = {
            "socket_connect_timeout": options.connect_timeout_s,
            "socket_timeout": options.command_timeout_s,
            "retry": Retry(NoBackoff(), 1),
            "health_check_interval": 0,
            **parse_url(url),  # what the URL says wins, as with Redis.from_url
            "decode_responses": False,
        }
        self._pool = ConnectionPool(**pool_options)
        # PUBLISH goes over a dedicated pipelined connection of its own (no pool checkout per call).
        self._commands = Commands(self._target, options.connect_timeout_s, options.command_timeout_s)
        self._redis = Redis(connection_pool=self._pool)
        self._acquire: AsyncScript = self._redis.register_script(_ACQUIRE)
        self._renew: AsyncScript = self._redis.register_script(_RENEW)
        self._renew_many: AsyncScript = self._redis.register_script(_RENEW_MANY)
        self._release: AsyncScript = self._redis.register_script(_RELEASE)
        self._link: _Link | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()  # serialises every change of the link's subscriptions
        self._subs: dict[str, set[Subscription]] = {}
        self._remote: set[str] = set()  # channels subscribed on the current link
        self._unsubscribing: set[asyncio.Task[None]] = set()
        self._channel_prefix = (self.prefix + "ch:").encode()

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
            link = _Link(self._dispatch, self.options.health_interval_s)
            try:
                await open_wire(self._target, link, self.options.connect_timeout_s)
                link.start()
                channels = [channel for channel, subs in self._subs.items() if subs]
                if channels:
                    fulls = [self._full_channel(channel) for channel in channels]
                    await link.request(
                        ("SUBSCRIBE", *fulls),
                        [(b"subscribe", full) for full in fulls],
                        self.options.command_timeout_s,
                    )
            except BaseException as exc:  # cancellation included: never leak the half-open link
                await link.aclose(f"connect failed: {exc!r}")
                if isinstance(exc, _LOST):
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
            for delay in backoff_delays(self.options.reconnect_initial_s, self.options.reconnect_max_s):
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
                    await link.request(("SUBSCRIBE", full), [(b"subscribe", full)], self.options.command_timeout_s)
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
                await link.request(("UNSUBSCRIBE", full), [(b"unsubscribe", full)], self.options.command_timeout_s)

    async def publish(self, channel: str, message: bytes | str) -> None:
        await self.publish_many([(channel, message)])

    async def publish_many(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """All of ``messages`` in one write and one round trip (a pipeline without MULTI)."""
        self._check_open()
        if not messages:
            return
        full_channel = self._full_channel
        data = b"".join(
            pack_publish(full_channel(check_name("channel", channel)), encode_message(message))
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

    async def renew_leases(self, owner: str, leases: Sequence[tuple[str, int]], ttl_s: float) -> list[bool]:
        """One script call per ``RENEW_BATCH`` leases (a process renews every table it owns each
        second: one round trip each would cost it a loop turn per table)."""
        self._client()
        kept: list[bool] = []
        ttl = ttl_ms(ttl_s)
        for start in range(0, len(leases), RENEW_BATCH):
            batch = leases[start : start + RENEW_BATCH]
            keys = [self._lease_keys(name)[0] for name, _ in batch]
            with _unavailable("renew_leases"):
                done = await self._renew_many(keys=keys, args=[ttl, *(f"{token}:{owner}" for _, token in batch)])
            kept.extend(bool(int(flag)) for flag in done)
        return kept

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
