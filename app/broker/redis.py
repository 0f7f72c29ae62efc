"""``redis://`` (``rediss://``, ``unix://``) and ``redis+cluster://`` backend, on redis-py's asyncio
client and connections of our own.

Four kinds of connection:

* a redis-py client for the occasional commands (the leases and lists of
  ``app/broker/redis_keys.py``): a pool for one Redis, redis-py's public cluster client for a Redis
  Cluster;
* pipelined command connections for PUBLISH (:class:`~app.broker.redis_wire.Commands`, also used by
  the table store's append): the hot path, with no pool checkout, lock or task per call. One for a
  single Redis; one per master for a cluster, where SPUBLISH goes to the master of the channel's
  slot (:class:`~app.broker.redis_cluster.ClusterCommands`);
* a *muted* connection for ``publish_nowait`` on one Redis (:class:`~app.broker.redis_wire.Publisher`):
  ``CLIENT REPLY OFF``, so a publish is one write and nothing comes back (a cluster queues those
  publishes for one task that sends them over the command connections);
* *links* (``app/broker/redis_link.py``): dedicated connections in pub/sub mode that carry one
  SUBSCRIBE (SSUBSCRIBE on a cluster: sharded pub/sub) per channel that has local subscribers, and
  fan what arrives out into their queues in the read callback. One link for a single Redis; one per
  master for a cluster, each carrying the channels of that master's slots.

The dedicated connections are our own (``app/broker/redis_wire.py``): opened and logged in with
public asyncio calls, never by reaching into redis-py.

When a link breaks, its supervisor task marks the broker unhealthy, reconnects with exponential
backoff (``reconnect_initial_s`` doubling up to ``reconnect_max_s``), subscribes again to every
channel of that link that still has subscribers and then puts a ``Gap(RECONNECT)`` into each of
their queues. On a cluster it reads the slot map first, so channels whose slots moved to another
master (a failover, a resharding: the server then drops their subscriptions itself) are subscribed
there instead, with a gap too.

Leases (fencing tokens from Lua scripts) and lists: ``app/broker/redis_keys.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster

from app.broker.base import (
    CLUSTER_SCHEMES,
    Broker,
    BrokerOptions,
    BrokerUnavailable,
    GapReason,
    LeaseHolder,
    Subscription,
    backoff_delays,
    check_name,
    encode_message,
)
from app.broker.redis_cluster import (
    MAX_REDIRECTS,
    Address,
    ClusterCommands,
    ClusterPublisher,
    ClusterTarget,
    cluster_client,
    slot_of,
)
from app.broker.redis_keys import LOST, RedisKeys, connection_pool
from app.broker.redis_link import Link, Shard, moved_to
from app.broker.redis_wire import (
    Commands,
    Publisher,
    RedisTarget,
    open_wire,
    pack_publish,
    pack_spublish,
)

log = logging.getLogger("app.broker.redis")


class RedisBroker(Broker):
    def __init__(self, url: str, options: BrokerOptions | None = None) -> None:
        options = options or BrokerOptions()
        super().__init__(options)
        self._redis: Redis | RedisCluster
        self._publisher: Publisher | None  # publish_nowait's muted connection (one Redis only)
        self.cluster = urlsplit(url).scheme in CLUSTER_SCHEMES
        if self.cluster:
            self._cluster_target: ClusterTarget | None = ClusterTarget.from_url(url)
            self._target = self._cluster_target.login
            # SPUBLISH goes over one pipelined connection per master, to the master of the slot.
            self._routes: ClusterCommands | None = ClusterCommands(
                self._cluster_target, options.connect_timeout_s, options.command_timeout_s
            )
            self._routes.on_change = self._map_changed
            self._commands: Commands | None = None
            self._publisher = None
            self._cluster_publisher: ClusterPublisher | None = ClusterPublisher(self._routes)  # publish_nowait
            self._redis = cluster_client(
                url, connect_timeout_s=options.connect_timeout_s, command_timeout_s=options.command_timeout_s
            )
            self._pool: ConnectionPool | None = None
            self._sub, self._unsub = "SSUBSCRIBE", "SUNSUBSCRIBE"
        else:
            self._cluster_target = None
            self._routes = None
            self._cluster_publisher = None
            self._target = RedisTarget.from_url(url)  # also refuses a URL that is not for Redis
            self._pool = connection_pool(
                url, connect_timeout_s=options.connect_timeout_s, command_timeout_s=options.command_timeout_s
            )
            # PUBLISH goes over a dedicated pipelined connection of its own (no pool checkout per call).
            self._commands = Commands(self._target, options.connect_timeout_s, options.command_timeout_s)
            # publish_nowait's own connection, with Redis's replies turned off.
            self._publisher = Publisher(
                self._target,
                connect_timeout_s=options.connect_timeout_s,
                health_interval_s=options.health_interval_s,
                reconnect_initial_s=options.reconnect_initial_s,
                reconnect_max_s=options.reconnect_max_s,
            )
            self._redis = Redis(connection_pool=self._pool)
            self._sub, self._unsub = "SUBSCRIBE", "UNSUBSCRIBE"
        self._sub_kind, self._unsub_kind = self._sub.lower().encode(), self._unsub.lower().encode()
        self._keys = RedisKeys(self._redis, self.prefix)
        self._shards: dict[Address | None, Shard] = {}
        self._lock = asyncio.Lock()  # serialises every change of the links' subscriptions
        self._home: dict[str, Shard] = {}  # channel -> the shard it is (or was last) subscribed on
        self._lost: set[str] = set()  # channels whose subscription was lost: a gap when it is back
        self._unsubscribing: set[asyncio.Task[None]] = set()
        self._rehoming: asyncio.Task[None] | None = None
        self._rehome_again = False
        self._channel_prefix = (self.prefix + "ch:").encode()

    def __repr__(self) -> str:
        kind = "cluster " if self.cluster else ""
        return f"<RedisBroker {kind}prefix={self.prefix!r} healthy={self.healthy}>"

    # --- lifecycle ---

    async def start(self) -> None:
        if self._started:
            raise ValueError("the broker was already started")
        if self._closed:
            raise ValueError("a closed broker cannot be restarted")
        self._started = True
        try:
            if self._routes is not None:
                # A cluster: learn its masters and link to each; a master that cannot be reached
                # now is retried by its supervisor (its channels are unavailable meanwhile).
                await self._routes.refresh()
                shards = [self._shard_at(address) for address in self._routes.masters()]
                await asyncio.gather(*(asyncio.shield(shard.first_attempt) for shard in shards))
            else:
                shard = self._shard_at(None)
                await asyncio.shield(shard.first_attempt)
                if not shard.up:
                    raise BrokerUnavailable(f"cannot connect to redis: {shard.last_error}")
                assert self._publisher is not None
                await self._publisher.start()
                if self._publisher.refused:  # an ACL, say: a retry would not mend it (a timeout may)
                    raise BrokerUnavailable(f"cannot open the publishing connection: {self._publisher.last_error}")
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        tasks = [shard.supervisor for shard in self._shards.values() if shard.supervisor is not None]
        if self._rehoming is not None:
            tasks.append(self._rehoming)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._cluster_publisher is not None:
            await self._cluster_publisher.aclose()
        for shard in self._shards.values():
            if shard.link is not None:
                await shard.link.aclose()
                shard.link = None
            shard.remote.clear()
        for task in list(self._unsubscribing):
            task.cancel()
        for subs in self._subs.values():
            for sub in subs:
                sub._close()
        self._subs.clear()
        self._home.clear()
        if self._commands is not None:
            await self._commands.aclose()
        if self._publisher is not None:
            await self._publisher.aclose()
        if self._routes is not None:
            await self._routes.aclose()
        await self._redis.aclose()
        if self._pool is not None:
            await self._pool.disconnect()

    @property
    def healthy(self) -> bool:
        if self._closed or not self._started:
            return False
        if self._routes is None:
            shard = self._shards.get(None)
            return shard is not None and shard.up
        masters = self._routes.masters()
        return bool(masters) and all(
            (shard := self._shards.get(address)) is not None and shard.up for address in masters
        )

    def _client(self) -> Redis | RedisCluster:
        self._check_open()
        return self._redis

    # --- the pub/sub links ---

    def _full_channel(self, channel: str) -> bytes:
        return self._channel_prefix + channel.encode()

    def _dispatch(self, full_channel: bytes, data: bytes) -> None:
        if not full_channel.startswith(self._channel_prefix):
            return
        self._to_subscribers(full_channel[len(self._channel_prefix) :].decode("utf-8", "replace"), data)

    def _shard_at(self, address: Address | None) -> Shard:
        """The shard of a node (made, and its supervisor started, on first use)."""
        shard = self._shards.get(address)
        if shard is None:
            cluster = self._cluster_target
            target = self._target if address is None or cluster is None else cluster.node(address)
            shard = self._shards[address] = Shard(address, target)
            shard.supervisor = asyncio.create_task(self._supervise(shard), name="broker-redis-supervisor")
        return shard

    def _shard_for(self, channel: str) -> Shard:
        """Where ``channel`` belongs now: the one Redis, or the master of its slot."""
        if self._routes is None:
            return self._shard_at(None)
        return self._shard_at(self._routes.address_of(slot_of(self._full_channel(channel))))

    def _belongs_to(self, channel: str, shard: Shard) -> bool:
        if self._routes is None:
            return True
        return self._routes.slots[slot_of(self._full_channel(channel))] == shard.address

    async def _supervise(self, shard: Shard) -> None:
        """Connect the shard's link, and again (with backoff) whenever it is lost."""
        delays: Iterator[float] | None = None
        attempts = 0
        while True:
            if delays is not None:
                await asyncio.sleep(next(delays))
            attempts += 1
            try:
                link = await self._connect(shard)
            except BrokerUnavailable as exc:
                shard.last_error = str(exc)
                log.debug("broker: connecting to redis %s failed (attempt %d): %s", shard.target, attempts, exc)
                delays = delays or backoff_delays(self.options.reconnect_initial_s, self.options.reconnect_max_s)
                if self._retire(shard):
                    return
                continue
            except Exception as exc:  # keep the supervisor alive whatever happens
                shard.last_error = repr(exc)
                log.exception("broker: unexpected error while connecting to redis %s", shard.target)
                delays = delays or backoff_delays(self.options.reconnect_initial_s, self.options.reconnect_max_s)
                continue
            finally:
                if not shard.first_attempt.done():
                    shard.first_attempt.set_result(None)
            if delays is not None:
                log.warning("broker: redis pub/sub link to %s restored after %d attempt(s)", shard.target, attempts)
            reason = await link.lost
            log.warning("broker: redis pub/sub link to %s down (%s); reconnecting", shard.target, reason)
            async with self._lock:
                if shard.link is link:
                    shard.link = None
                for channel in shard.remote:
                    self._lost.add(channel)
                shard.remote.clear()
            await link.aclose(reason)
            delays = backoff_delays(self.options.reconnect_initial_s, self.options.reconnect_max_s)
            attempts = 0

    def _retire(self, shard: Shard) -> bool:
        """A cluster node that no longer serves any slot and has no channel is let go."""
        if self._routes is None or shard.address in self._routes.masters():
            return False
        if any(home is shard for home in self._home.values()):
            return False
        if self._shards.get(shard.address) is shard:
            del self._shards[shard.address]
        return True

    async def _connect(self, shard: Shard) -> Link:
        """Open the shard's link, subscribe the channels that belong there and signal gaps where
        messages may have been lost."""
        if self._routes is not None:
            with contextlib.suppress(BrokerUnavailable):
                await self._routes.refresh()  # channels whose slots moved go to their new master
        link = Link(self._dispatch, lambda full: self._dropped(shard, full), self.options.health_interval_s)
        try:  # outside the lock: a master that does not answer must not hold up the others
            await open_wire(shard.target, link, self.options.connect_timeout_s)
        except BaseException as exc:
            await link.aclose(f"connect failed: {exc!r}")
            if isinstance(exc, LOST):
                raise BrokerUnavailable(f"cannot connect to redis at {shard.target}: {exc}") from exc
            raise
        if self._publisher is not None and self._started:
            # Redis is back: the publishing connection too, before the gaps below make the
            # subscribers publish (a connection's request for a snapshot would be lost).
            await self._publisher.ensure_up(self.options.connect_timeout_s)
        async with self._lock:
            try:
                if self._closed:
                    raise BrokerUnavailable("the broker is closed")
                link.start()
                shard.link = link
                await self._resubscribe(shard)
                if self._routes is not None:
                    await self._rehome()
            except BaseException as exc:  # cancellation included: never leak the half-open link
                if shard.link is link:
                    shard.link = None
                for channel in shard.remote:
                    self._lost.add(channel)
                shard.remote.clear()
                await link.aclose(f"connect failed: {exc!r}")
                if isinstance(exc, LOST):
                    raise BrokerUnavailable(f"cannot connect to redis at {shard.target}: {exc}") from exc
                raise
            return link

    async def _resubscribe(self, shard: Shard) -> None:
        """(Under the lock.) Subscribe on ``shard`` every channel with subscribers that belongs
        there and is not subscribed yet; those that had lost their subscription get a gap."""
        link = shard.link
        if link is None or not link.up:
            return
        channels = [
            channel
            for channel, subs in self._subs.items()
            if subs and channel not in shard.remote and self._belongs_to(channel, shard)
        ]
        if not channels:
            return
        fulls = [self._full_channel(channel) for channel in channels]
        if self._routes is None:
            commands: list[tuple[str | bytes, ...]] = [(self._sub, *fulls)]
        else:  # a cluster takes several shard channels in one SSUBSCRIBE only from one slot
            commands = [(self._sub, full) for full in fulls]
        expect = [(self._sub_kind, full) for full in fulls]
        outcomes = await link.request(commands, expect, self.options.command_timeout_s)
        for channel, outcome in zip(channels, outcomes, strict=True):
            if outcome is not None:
                self._refused(channel, outcome)
                continue
            shard.remote.add(channel)
            self._home[channel] = shard
            if channel in self._lost:
                self._lost.discard(channel)
                for sub in tuple(self._subs.get(channel, ())):
                    sub._signal_gap(GapReason.RECONNECT)

    def _refused(self, channel: str, error: BaseException) -> None:
        """A node refused to subscribe ``channel`` again (it stays among the lost ones)."""
        moved = moved_to(error)
        if moved is not None and self._routes is not None:
            self._routes.moved(*moved)  # our map is old: the next round subscribes it there
        else:
            log.warning("broker: redis refused to subscribe %r: %s", channel, error)
        self._rehome_soon()  # a cluster tries again (a failover may be under way)

    async def _rehome(self) -> None:
        """(Under the lock; cluster.) Move every subscribed channel to the master that serves its
        slot now: drop it where it no longer belongs, subscribe it where it does (with a gap)."""
        assert self._routes is not None
        for channel, subs in list(self._subs.items()):
            if not subs:
                continue
            home = self._home.get(channel)
            address = self._routes.slots[slot_of(self._full_channel(channel))]
            if home is not None and home.address != address:
                self._home.pop(channel, None)
                self._lost.add(channel)
                if channel in home.remote:
                    home.remote.discard(channel)
                    if home.link is not None and home.up:
                        full = self._full_channel(channel)
                        with contextlib.suppress(BrokerUnavailable):
                            await home.link.request(
                                [(self._unsub, full)], [(self._unsub_kind, full)], self.options.command_timeout_s
                            )
            if address is not None:
                self._shard_at(address)  # its supervisor subscribes the channel once it is linked
        for shard in list(self._shards.values()):
            await self._resubscribe(shard)

    def _rehome_soon(self) -> None:
        """Re-home the channels in the background (the map changed, or a node dropped channels)."""
        if self._closed or self._routes is None:
            return
        self._rehome_again = True
        if self._rehoming is None or self._rehoming.done():
            self._rehoming = asyncio.create_task(self._rehome_loop(), name="broker-redis-rehome")

    async def _rehome_loop(self) -> None:
        """Until every channel is where the map says (a refused subscription, say during a
        failover, is tried again with the reconnect backoff)."""
        assert self._routes is not None
        delays = backoff_delays(self.options.reconnect_initial_s, self.options.reconnect_max_s)
        while self._rehome_again and not self._closed:
            self._rehome_again = False
            try:
                await self._routes.refresh()
                async with self._lock:
                    await self._rehome()
            except BrokerUnavailable as exc:
                log.debug("broker: re-homing channels failed: %s", exc)
                self._rehome_again = True
            if self._rehome_again:
                await asyncio.sleep(next(delays))

    def _map_changed(self) -> None:
        self._rehome_soon()

    def _dropped(self, shard: Shard, full_channel: bytes) -> None:
        """The node dropped a channel's subscription by itself (its slot moved elsewhere)."""
        if not full_channel.startswith(self._channel_prefix):
            return
        channel = full_channel[len(self._channel_prefix) :].decode("utf-8", "replace")
        if channel in shard.remote:
            shard.remote.discard(channel)
            self._lost.add(channel)
            log.info("broker: redis %s dropped the subscription of %r (slot moved)", shard.target, channel)
            if self._routes is not None:
                self._routes.refresh_soon()
            self._rehome_soon()

    async def _attach(self, sub: Subscription) -> None:
        channel = sub.channel
        self._subs.setdefault(channel, set()).add(sub)
        try:
            home = self._home.get(channel)
            if home is not None and channel in home.remote and home.up:
                return
            for _ in range(MAX_REDIRECTS + 1):
                shard = self._shard_for(channel)
                if not shard.first_attempt.done():
                    await asyncio.shield(shard.first_attempt)
                async with self._lock:
                    if self._shard_for(channel) is not shard:
                        continue  # the map changed meanwhile
                    if channel in shard.remote and shard.up:
                        return
                    link = shard.link
                    if link is None or not link.up:
                        raise BrokerUnavailable(f"redis pub/sub link to {shard.target} is down")
                    full = self._full_channel(channel)
                    (outcome,) = await link.request(
                        [(self._sub, full)], [(self._sub_kind, full)], self.options.command_timeout_s
                    )
                    if outcome is None:
                        shard.remote.add(channel)
                        self._home[channel] = shard
                        return
                    moved = moved_to(outcome)
                    if moved is None or self._routes is None:
                        raise BrokerUnavailable(f"redis refused {self._sub} {channel!r}: {outcome}")
                    self._routes.moved(*moved)
            raise BrokerUnavailable(f"redis cluster kept redirecting {self._sub} {channel!r}")
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
            self._lost.discard(channel)
            shard = self._home.pop(channel, None)
            if shard is None or channel not in shard.remote:
                return
            shard.remote.discard(channel)
            link = shard.link
            if link is None or not link.up:
                return
            full = self._full_channel(channel)
            with contextlib.suppress(BrokerUnavailable):
                await link.request([(self._unsub, full)], [(self._unsub_kind, full)], self.options.command_timeout_s)

    async def publish(self, channel: str, message: bytes | str) -> None:
        await self.publish_many([(channel, message)])

    async def publish_many(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """All of ``messages`` in one write and one round trip (a pipeline without MULTI); on a
        cluster, one write per master concerned, sent at once."""
        self._check_open()
        if not messages:
            return
        if self._commands is not None:
            await self._commands.call(self._packed_publishes(messages), len(messages), "PUBLISH")
            return
        assert self._routes is not None
        await self._routes.call(self._packed_spublishes(messages), "SPUBLISH")

    def _packed_publishes(self, messages: Sequence[tuple[str, bytes | str]]) -> bytes:
        """PUBLISH commands for one Redis, each channel and message checked first."""
        full_channel = self._full_channel
        return b"".join(
            pack_publish(full_channel(check_name("channel", channel)), encode_message(message))
            for channel, message in messages
        )

    def _packed_spublishes(self, messages: Sequence[tuple[str, bytes | str]]) -> list[tuple[int, bytes]]:
        """SPUBLISH commands for a cluster, each with its slot, each channel and message checked first."""
        items = []
        for channel, message in messages:
            full = self._full_channel(check_name("channel", channel))
            items.append((slot_of(full), pack_spublish(full, encode_message(message))))
        return items

    def publish_nowait(self, messages: Sequence[tuple[str, bytes | str]]) -> None:
        """One Redis: written on the muted connection in this turn of the loop
        (:class:`~app.broker.redis_wire.Publisher`). A cluster: queued, and sent in order by one
        task (failures are logged)."""
        self._check_open()
        if not messages:
            return
        if self._publisher is not None:
            self._publisher.send(self._packed_publishes(messages))
            return
        assert self._routes is not None and self._cluster_publisher is not None
        items = self._packed_spublishes(messages)
        for slot, _ in items:
            address = self._routes.address_of(slot)  # raises when no node is known to serve it
            shard = self._shards.get(address)
            if shard is None or not shard.up:
                raise BrokerUnavailable(f"the redis cluster node {address} is unreachable")
        self._cluster_publisher.send(items)

    # --- leases and lists (app/broker/redis_keys.py) ---

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> int | None:
        self._check_open()
        return await self._keys.acquire_lease(name, owner, ttl_s)

    async def renew_lease(self, name: str, owner: str, token: int, ttl_s: float) -> bool:
        self._check_open()
        return await self._keys.renew_lease(name, owner, token, ttl_s)

    async def renew_leases(self, owner: str, leases: Sequence[tuple[str, int]], ttl_s: float) -> list[bool]:
        self._check_open()
        return await self._keys.renew_leases(owner, leases, ttl_s)

    async def release_lease(self, name: str, owner: str, token: int) -> bool:
        self._check_open()
        return await self._keys.release_lease(name, owner, token)

    async def lease_holder(self, name: str) -> LeaseHolder | None:
        self._check_open()
        return await self._keys.lease_holder(name)

    async def lease_holders(self, names: Sequence[str]) -> list[LeaseHolder | None]:
        self._check_open()
        return await self._keys.lease_holders(names)

    async def push_capped(self, key: str, item: bytes | str, limit: int, *, ttl_s: float | None = None) -> None:
        self._check_open()
        await self._keys.push_capped(key, item, limit, ttl_s=ttl_s)

    async def read_list(self, key: str) -> list[bytes]:
        self._check_open()
        return await self._keys.read_list(key)

    async def delete(self, *keys: str) -> int:
        self._check_open()
        return await self._keys.delete(*keys)
