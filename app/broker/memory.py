"""``memory://`` backend: everything in this process, for the embedded default and for tests.

``memory://`` gives a private hub. ``memory://NAME`` gives the hub called NAME, shared by every
broker opened with that URL in this process while any of them is alive: that lets a test run
several "processes" (brokers) against one backend, as they would share one Redis.

Lease expiry uses the event loop's monotonic clock, or the ``clock`` the broker was given (tests
pass a fake one to expire leases without waiting). Tokens come from one counter per hub, so a
token is larger than every token issued before it, for any name: nothing of a lease is kept once it
is released or has expired (Redis keeps a fence key per name; here that would grow with every table
ever opened). Capped lists honour their ``ttl_s`` as Redis does, so the chat of a table that is
gone leaves memory too.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from app.broker.base import (
    Broker,
    BrokerOptions,
    LeaseHolder,
    Subscription,
    check_name,
    encode_message,
    ttl_ms,
)

LIST_SWEEP_S = 60.0


@dataclass(slots=True)
class _Lease:
    owner: str
    token: int
    expires_at: float


@dataclass(eq=False)
class _Hub:
    """The shared state behind one or more :class:`MemoryBroker` objects."""

    channels: dict[str, set[MemoryBroker]] = field(default_factory=dict)  # full name -> brokers
    leases: dict[str, _Lease] = field(default_factory=dict)
    issued: int = 0  # the last lease token handed out, for any name
    lists: dict[str, deque[bytes]] = field(default_factory=dict)
    list_expiry: dict[str, float] = field(default_factory=dict)  # lists pushed with a ttl: when they go
    next_sweep: float = 0.0

    def __hash__(self) -> int:
        return id(self)


_named_hubs: weakref.WeakValueDictionary[str, _Hub] = weakref.WeakValueDictionary()


def _hub_for(url: str) -> _Hub:
    parts = urlsplit(url)
    if parts.scheme != "memory":
        raise ValueError(f"not a memory:// URL: {url!r}")
    name = (parts.netloc + parts.path).strip("/")
    if not name:
        return _Hub()
    hub = _named_hubs.get(name)
    if hub is None:
        hub = _Hub()
        _named_hubs[name] = hub
    return hub


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


class MemoryBroker(Broker):
    def __init__(
        self,
        url: str = "memory://",
        options: BrokerOptions | None = None,
        *,
        clock: Callable[[], float] = _loop_time,
    ) -> None:
        super().__init__(options or BrokerOptions())
        self._hub = _hub_for(url)
        self._clock = clock  # seconds, for lease expiry

    def __repr__(self) -> str:
        return f"<MemoryBroker prefix={self.prefix!r} healthy={self.healthy}>"

    async def start(self) -> None:
        if self._closed:
            raise ValueError("a closed broker cannot be restarted")
        self._started = True

    async def aclose(self) -> None:
        self._closed = True
        for channel, subs in list(self._subs.items()):
            for sub in subs:
                sub._close()
            self._unlink(channel)
        self._subs.clear()

    @property
    def healthy(self) -> bool:
        return self._started and not self._closed

    # --- pub/sub ---

    async def publish(self, channel: str, message: bytes | str) -> None:
        await self.publish_many([(channel, message)])

    async def publish_many(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        self.publish_nowait(messages)

    def publish_nowait(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """Every message checked first, then all delivered in one go (nothing here ever waits)."""
        self._check_open()
        prefix = self.prefix
        batch = [(prefix + check_name("channel", channel), encode_message(message)) for channel, message in messages]
        channels = self._hub.channels
        for full, data in batch:
            brokers = channels.get(full)
            if brokers:
                for broker in tuple(brokers):
                    broker._dispatch(full, data)

    def subscriber_count(self, channel: str) -> int:
        """How many open subscriptions this broker holds on ``channel``."""
        return len(self._subs.get(channel, ()))

    def _dispatch(self, full: str, data: bytes) -> None:
        self._to_subscribers(full[len(self.prefix) :], data)

    # Like the Redis backend, each broker holds one hub-level subscription per channel and fans
    # out to its own subscriptions.

    async def _attach(self, sub: Subscription) -> None:
        self._subs.setdefault(sub.channel, set()).add(sub)
        self._hub.channels.setdefault(self.prefix + sub.channel, set()).add(self)

    async def _detach(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.channel)
        if subs is None:
            return
        subs.discard(sub)
        if not subs:
            del self._subs[sub.channel]
            self._unlink(sub.channel)

    def _unlink(self, channel: str) -> None:
        full = self.prefix + channel
        brokers = self._hub.channels.get(full)
        if brokers is not None:
            brokers.discard(self)
            if not brokers:
                del self._hub.channels[full]

    # --- leases ---

    def _live_lease(self, name: str) -> _Lease | None:
        key = self.prefix + check_name("lease name", name)
        lease = self._hub.leases.get(key)
        if lease is not None and lease.expires_at <= self._clock():
            del self._hub.leases[key]
            return None
        return lease

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> int | None:
        self._check_open()
        check_name("owner", owner)
        ttl = ttl_ms(ttl_s) / 1000
        lease = self._live_lease(name)
        if lease is not None:
            if lease.owner != owner:
                return None
            lease.expires_at = self._clock() + ttl
            return lease.token
        self._hub.issued += 1
        token = self._hub.issued
        self._hub.leases[self.prefix + name] = _Lease(owner, token, self._clock() + ttl)
        return token

    async def renew_lease(self, name: str, owner: str, token: int, ttl_s: float) -> bool:
        self._check_open()
        ttl = ttl_ms(ttl_s) / 1000
        lease = self._live_lease(name)
        if lease is None or lease.owner != owner or lease.token != token:
            return False
        lease.expires_at = self._clock() + ttl
        return True

    async def release_lease(self, name: str, owner: str, token: int) -> bool:
        self._check_open()
        lease = self._live_lease(name)
        if lease is None or lease.owner != owner or lease.token != token:
            return False
        del self._hub.leases[self.prefix + name]
        return True

    async def lease_holder(self, name: str) -> LeaseHolder | None:
        self._check_open()
        lease = self._live_lease(name)
        return None if lease is None else LeaseHolder(lease.owner, lease.token)

    async def lease_holders(self, names: Sequence[str]) -> list[LeaseHolder | None]:
        self._check_open()
        leases = [self._live_lease(name) for name in names]
        return [None if lease is None else LeaseHolder(lease.owner, lease.token) for lease in leases]

    # --- lists ---

    def _key(self, key: str) -> str:
        self._check_open()
        return self.prefix + check_name("key", key)

    async def push_capped(self, key: str, item: bytes | str, limit: int, *, ttl_s: float | None = None) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        # A copy of its own length: the list keeps it for long, and bytes fresh from orjson keep its
        # 4 KiB buffer for as long as they live.
        data = memoryview(encode_message(item)).tobytes()
        full = self._key(key)
        self._drop_expired_lists()
        items = self._hub.lists.get(full)
        if items is None or items.maxlen != limit:
            items = self._hub.lists[full] = deque(items or (), maxlen=limit)
        items.append(data)
        if ttl_s is None:
            self._hub.list_expiry.pop(full, None)
        else:
            self._hub.list_expiry[full] = self._clock() + ttl_s

    async def read_list(self, key: str) -> list[bytes]:
        full = self._key(key)
        if self._hub.list_expiry.get(full, float("inf")) <= self._clock():
            self._drop_list(full)
        return list(self._hub.lists.get(full, ()))

    def _drop_list(self, full: str) -> None:
        self._hub.lists.pop(full, None)
        self._hub.list_expiry.pop(full, None)

    def _drop_expired_lists(self) -> None:
        """Every list whose time is up, at most once a minute (a push pays for it)."""
        now = self._clock()
        if now < self._hub.next_sweep:
            return
        self._hub.next_sweep = now + LIST_SWEEP_S
        for full in [full for full, until in self._hub.list_expiry.items() if until <= now]:
            self._drop_list(full)

    async def delete(self, *keys: str) -> int:
        removed = 0
        for key in keys:
            full = self._key(key)
            found = self._hub.lists.pop(full, None) is not None
            self._hub.list_expiry.pop(full, None)
            removed += found
        return removed
