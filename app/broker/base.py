"""The broker interface shared by every backend, and the pieces that do not depend on one.

A :class:`Broker` gives the server three things across processes:

* pub/sub with per-process fan-out (:meth:`Broker.publish`, :meth:`Broker.subscribe`),
* leases with fencing tokens, for "exactly one process owns this table" (``*_lease``),
* small shared capped lists (``push_capped``/``read_list``, ``delete``).

Delivery is at-most-once. Whenever a subscriber may have missed messages it receives a
:class:`Gap` in place of them; the consumer then resyncs from a full snapshot. See
``docs/broker.md``.
"""

from __future__ import annotations

import abc
import asyncio
import enum
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import NamedTuple, Self

log = logging.getLogger("app.broker")

DEFAULT_PREFIX = "durak:"
DEFAULT_MAX_QUEUE = 1024
SINGLE_REDIS_SCHEMES = ("redis", "rediss", "unix")  # one Redis server
CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")  # a Redis Cluster (sharded pub/sub)
REDIS_SCHEMES = SINGLE_REDIS_SCHEMES + CLUSTER_SCHEMES  # URL schemes served by the Redis backend and store


class BrokerError(Exception):
    """Base class of every error the broker raises on purpose."""


class BrokerUnavailable(BrokerError):
    """The backend cannot be reached right now; nothing was sent. Retry later or degrade."""


class BrokerClosed(BrokerError):
    """The broker was used after :meth:`Broker.aclose` (or before :meth:`Broker.start`)."""


class GapReason(enum.StrEnum):
    OVERFLOW = "overflow"
    """The subscriber fell ``max_queue`` messages behind; its queue was discarded."""
    RECONNECT = "reconnect"
    """The connection to the backend was lost and has been re-established."""


@dataclass(frozen=True, slots=True)
class Message:
    """One published message, as delivered to a subscriber."""

    channel: str
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


@dataclass(frozen=True, slots=True)
class Gap:
    """Messages on ``channel`` may have been lost just before this point: resync from a snapshot.

    ``dropped`` is how many messages this subscriber lost, when that is known (overflow), and
    ``None`` when it is not (reconnect: whatever was published while the link was down).
    """

    channel: str
    reason: GapReason
    dropped: int | None = None


Event = Message | Gap


class LeaseHolder(NamedTuple):
    owner: str
    token: int


class Subscription:
    """The receiving end of :meth:`Broker.subscribe`: iterate it for :class:`Message`/:class:`Gap`.

    Each subscription has its own bounded queue. Delivery into it never blocks the publisher or
    other subscribers: when it is full, the queued messages and the one that did not fit are
    replaced by a single ``Gap(reason=OVERFLOW, dropped=n)``, and messages published after
    that are queued behind the gap as usual. One task should consume a subscription.
    Iteration stops when the subscription's context exits or the broker closes.

    Instead of iterating, a consumer that can handle an event on the spot may hand the
    subscription a *sink* (:meth:`set_sink`): every event is then passed to it as it arrives,
    inside the publisher's call (memory) or the backend's read callback (Redis), with no queue
    and no task switch. A sink must not block; an exception it raises is logged and swallowed.
    """

    def __init__(self, channel: str, max_queue: int) -> None:
        if max_queue < 1:
            raise ValueError("max_queue must be at least 1")
        self.channel = channel
        self._max_queue = max_queue
        self._items: deque[Event] = deque()
        self._waiter: asyncio.Future[None] | None = None  # the consumer's, while it waits
        self._closed = False
        self._sink: Callable[[Event], None] | None = None

    def __repr__(self) -> str:
        return f"<Subscription {self.channel!r} queued={len(self._items)} closed={self._closed}>"

    @property
    def closed(self) -> bool:
        return self._closed

    def qsize(self) -> int:
        return len(self._items)

    def set_sink(self, sink: Callable[[Event], None]) -> None:
        """From now on pass each event to ``sink`` as it arrives (anything queued goes first)."""
        self._sink = sink
        while self._items and not self._closed:
            self._to_sink(sink, self._items.popleft())

    def _to_sink(self, sink: Callable[[Event], None], event: Event) -> None:
        try:
            sink(event)
        except Exception:  # one consumer's bug must not stop the publisher or the other subscribers
            log.exception("broker: the sink of %r failed", self.channel)

    # --- producer side (called by backends, never blocks) ---

    def _deliver(self, message: Message) -> None:
        if self._closed:
            return
        if self._sink is not None:
            self._to_sink(self._sink, message)
            return
        if len(self._items) >= self._max_queue:
            self._replace_with_gap(GapReason.OVERFLOW, extra_dropped=1)
        else:
            self._items.append(message)
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _signal_gap(self, reason: GapReason) -> None:
        if self._closed:
            return
        if self._sink is not None:
            self._to_sink(self._sink, Gap(self.channel, reason, None))
            return
        if len(self._items) >= self._max_queue:
            self._replace_with_gap(reason, extra_dropped=0)
        else:
            if self._items and isinstance(self._items[-1], Gap):
                self._items.pop()  # two gaps in a row say no more than one
            self._items.append(Gap(self.channel, reason, None))
        self._wake()

    def _replace_with_gap(self, reason: GapReason, extra_dropped: int) -> None:
        dropped: int | None = extra_dropped
        for item in self._items:
            if isinstance(item, Message):
                dropped = None if dropped is None else dropped + 1
            elif item.dropped is None:
                dropped = None
            elif dropped is not None:
                dropped += item.dropped
        self._items.clear()
        self._items.append(Gap(self.channel, reason, dropped))

    def _close(self) -> None:
        self._closed = True
        self._wake()

    # --- consumer side ---

    async def receive(self) -> Event:
        """The next message or gap; raises ``StopAsyncIteration`` once closed and drained."""
        items = self._items
        while not items:
            if self._closed:
                raise StopAsyncIteration
            waiter = self._waiter
            if waiter is None or waiter.done():  # done: cancelled along with an earlier receive
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return items.popleft()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        return await self.receive()


def encode_message(message: bytes | str) -> bytes:
    if type(message) is bytes:  # the common cases first: this runs for every push
        return message
    if isinstance(message, str):
        return message.encode("utf-8")
    if isinstance(message, bytes | bytearray | memoryview):
        return bytes(message)
    raise TypeError(f"message must be bytes or str, not {type(message).__name__}")


def check_name(kind: str, value: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{kind} must be a non-empty string")
    return value


def ttl_ms(ttl_s: float) -> int:
    if not ttl_s > 0:
        raise ValueError("ttl_s must be positive")
    return max(1, round(ttl_s * 1000))


def backoff_delays(initial_s: float, maximum_s: float) -> Iterator[float]:
    """Reconnect delays: ``initial_s`` doubling up to ``maximum_s``, then ``maximum_s`` forever."""
    if not 0 < initial_s <= maximum_s:
        raise ValueError("need 0 < initial_s <= maximum_s")
    delay = initial_s
    while True:
        yield delay
        delay = min(delay * 2, maximum_s)


@dataclass(frozen=True, slots=True)
class BrokerOptions:
    """How a broker behaves, whatever its URL; checked when made.

    ``prefix`` namespaces every channel and key, so several deployments (or tests) can share one
    Redis. ``max_queue`` bounds each subscription's queue. The rest only matter for Redis:
    reconnect backoff (doubling from ``reconnect_initial_s`` up to ``reconnect_max_s``), the
    PING interval of the pub/sub link, and timeouts for connecting and for single commands.
    """

    prefix: str = DEFAULT_PREFIX
    max_queue: int = DEFAULT_MAX_QUEUE
    reconnect_initial_s: float = 0.1
    reconnect_max_s: float = 2.0
    health_interval_s: float = 3.0
    connect_timeout_s: float = 5.0
    command_timeout_s: float = 5.0

    def __post_init__(self) -> None:
        if self.max_queue < 1:
            raise ValueError("max_queue must be at least 1")
        next(backoff_delays(self.reconnect_initial_s, self.reconnect_max_s))  # checks the pair
        if not (self.health_interval_s > 0 and self.connect_timeout_s > 0 and self.command_timeout_s > 0):
            raise ValueError("health_interval_s, connect_timeout_s and command_timeout_s must be positive")


class Broker(abc.ABC):
    """Pub/sub, leases and shared capped lists behind one URL. Use as an async context manager."""

    def __init__(self, options: BrokerOptions) -> None:
        self.options = options
        self.prefix = options.prefix
        self.max_queue = options.max_queue
        self._started = False
        self._closed = False
        self._subs: dict[str, set[Subscription]] = {}  # channel -> this process's subscriptions

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if not self._started or self._closed:
            raise BrokerClosed("the broker is not open")

    # --- lifecycle ---

    @abc.abstractmethod
    async def start(self) -> None:
        """Connect. Raises :class:`BrokerUnavailable` when the backend cannot be reached."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Disconnect; open subscriptions stop iterating. Idempotent."""

    @property
    @abc.abstractmethod
    def healthy(self) -> bool:
        """True while the broker is open and its subscription link to the backend is up."""

    # --- pub/sub ---

    @abc.abstractmethod
    async def publish(self, channel: str, message: bytes | str) -> None:
        """Send ``message`` to every current subscriber of ``channel`` in every process.

        Raises :class:`BrokerUnavailable` when the backend cannot be reached: a publish is
        never dropped silently on this side.
        """

    async def publish_many(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """Publish several ``(channel, message)`` pairs, in order. Backends that talk to a server
        send them in one round trip; each pair is delivered exactly as :meth:`publish` would.
        Raises :class:`BrokerUnavailable` when the backend cannot be reached (some may have been sent).
        """
        for channel, message in messages:
            await self.publish(channel, message)

    @abc.abstractmethod
    def publish_nowait(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """Publish ``(channel, message)`` pairs without waiting for the backend: for the hot paths
        (a table's pushes to other processes, a connection's commands to a table elsewhere), which
        go on at once. Sent in the order of the calls, and delivered as :meth:`publish` delivers;
        not ordered with :meth:`publish` and :meth:`publish_many`, which may take another
        connection. Raises :class:`BrokerUnavailable` at once when the backend is known to be down;
        a message in flight when it goes down is lost without a word to the publisher (the
        subscribers get a ``Gap`` when they lost their own link, and clients resync on a version
        they did not expect)."""

    def deliver_here(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """Deliver ``(channel, message)`` pairs, in order, to this process's subscribers only, at
        once and without the backend: for a publisher that knows no other process listens on
        those channels. Messages for a channel must not take both ways while any are in flight.

        This is the hot path of every push to a local connection, so it looks the subscriptions
        up by the channel itself (no prefixed name built and taken apart again)."""
        self._check_open()
        to_subscribers = self._to_subscribers
        for channel, message in messages:
            # The common case inline (a frame's text for a named channel): this runs for every push.
            if type(message) is str and type(channel) is str and channel:
                to_subscribers(channel, message.encode())
            else:
                to_subscribers(check_name("channel", channel), encode_message(message))

    def _to_subscribers(self, channel: str, data: bytes) -> None:
        """One message to this process's subscriptions of ``channel`` (the channel without the
        broker's prefix): for :meth:`deliver_here` and for what a backend receives."""
        subs = self._subs.get(channel)
        if subs:
            message = Message(channel, data)
            for sub in tuple(subs):  # a sink may unsubscribe
                sink = sub._sink
                if sink is None or sub._closed:
                    sub._deliver(message)
                    continue
                try:  # Subscription._deliver's common case inline (this runs for every push)
                    sink(message)
                except Exception:
                    log.exception("broker: the sink of %r failed", sub.channel)

    def signal_gap_here(self, prefix: str, *, besides: str = "") -> None:
        """Tell this process's subscribers of every channel that starts with ``prefix`` (but
        ``besides``) that messages may have been lost: for a relay whose own subscription, which
        carried their messages, had a gap."""
        for channel, subs in list(self._subs.items()):
            if channel.startswith(prefix) and channel != besides:
                for sub in tuple(subs):
                    sub._signal_gap(GapReason.RECONNECT)

    @asynccontextmanager
    async def subscribe(self, channel: str, *, max_queue: int | None = None) -> AsyncIterator[Subscription]:
        """Receive what is published on ``channel`` from the moment this context is entered.

        The subscription is live on the backend before the ``async with`` body starts, so a
        message published after entering is delivered (barring a :class:`Gap`). ``max_queue``
        overrides the broker's queue bound for this subscription. Raises
        :class:`BrokerUnavailable` when the backend is down.
        """
        self._check_open()
        check_name("channel", channel)
        sub = Subscription(channel, self.max_queue if max_queue is None else max_queue)
        await self._attach(sub)
        try:
            yield sub
        finally:
            sub._close()
            await self._detach(sub)

    async def follow(
        self,
        channel: str,
        sink: Callable[[Event], None],
        *,
        on_live: Callable[[bool], None] | None = None,
        retry_s: float = 1.0,
        give_up_at_first: bool = False,
    ) -> None:
        """Keep a subscription on ``channel`` that hands every event to ``sink``, until cancelled:
        while the backend is down, subscribe again every ``retry_s`` seconds. ``on_live(after_outage)``
        is called each time the subscription is live; ``after_outage`` says that messages published
        meanwhile may be lost. With ``give_up_at_first``, a subscription that was never live raises
        :class:`BrokerError` instead of retrying."""
        after_outage = ever_live = False
        while True:
            try:
                async with self.subscribe(channel) as sub:
                    sub.set_sink(sink)
                    ever_live = True
                    if on_live is not None:
                        on_live(after_outage)
                    await asyncio.get_running_loop().create_future()  # until cancelled
            except BrokerError:
                if give_up_at_first and not ever_live:
                    raise
                after_outage = True
                await asyncio.sleep(retry_s)

    @abc.abstractmethod
    async def _attach(self, sub: Subscription) -> None: ...

    @abc.abstractmethod
    async def _detach(self, sub: Subscription) -> None: ...

    # --- leases ---

    @abc.abstractmethod
    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> int | None:
        """Take lease ``name`` for ``ttl_s`` seconds and return its fencing token.

        Returns ``None`` if another owner holds it. If ``owner`` already holds it, the TTL is
        extended and the same token is returned (so a retried acquire is harmless). Every
        successful take-over yields a token larger than any earlier token for ``name``.
        """

    @abc.abstractmethod
    async def renew_lease(self, name: str, owner: str, token: int, ttl_s: float) -> bool:
        """Extend the lease to ``ttl_s`` from now if ``(owner, token)`` still holds it."""

    async def renew_leases(self, owner: str, leases: Sequence[tuple[str, int]], ttl_s: float) -> list[bool]:
        """:meth:`renew_lease` for many ``(name, token)`` leases of ``owner``; whether each still
        holds. One by one here; a backend whose every call is a round trip does them in one."""
        return [await self.renew_lease(name, owner, token, ttl_s) for name, token in leases]

    @abc.abstractmethod
    async def release_lease(self, name: str, owner: str, token: int) -> bool:
        """Give the lease up if ``(owner, token)`` holds it; returns whether it did."""

    @abc.abstractmethod
    async def lease_holder(self, name: str) -> LeaseHolder | None:
        """The current ``(owner, token)`` of lease ``name``, or ``None`` when it is free."""

    async def lease_holders(self, names: Sequence[str]) -> list[LeaseHolder | None]:
        """:meth:`lease_holder` of each of ``names``, in order. One by one here; a backend whose
        every call is a round trip asks for them all at once."""
        return [await self.lease_holder(name) for name in names]

    # --- shared lists ---

    @abc.abstractmethod
    async def push_capped(self, key: str, item: bytes | str, limit: int, *, ttl_s: float | None = None) -> None:
        """Append ``item`` to list ``key`` and keep only its last ``limit`` items. With ``ttl_s`` the
        list is deleted that long after its last push (Redis only: a ``memory://`` list lives as
        long as its hub)."""

    @abc.abstractmethod
    async def read_list(self, key: str) -> list[bytes]:
        """The items of list ``key``, oldest first (empty when missing)."""

    @abc.abstractmethod
    async def delete(self, *keys: str) -> int:
        """Delete lists ``keys``; returns how many existed."""
