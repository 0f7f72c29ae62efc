"""The broker and the table store on a real 3-master Redis Cluster (``redis+cluster://``): sharded
pub/sub on every master, one table's channels and keys in one slot, the global channels, a node
that restarts, a slot that moves to another master, and the store's fenced writes.

(The behavioural suite of ``test_broker.py`` runs on the cluster too, as its ``cluster`` backend.)
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import orjson
import pytest
from redis.asyncio import Redis

from app.broker import Broker, BrokerOptions, BrokerUnavailable, Gap, GapReason, Message, Subscription, open_broker
from app.broker.redis import RedisBroker
from app.broker.redis_cluster import ClusterTarget, slot_of
from app.store.redis import RedisStore
from app.tables import chat
from app.tables.lobby import LOBBY
from app.tables.registry import lease_name
from app.tables.store import Fenced, LogGap
from app.transport import channels
from tests.broker.conftest import assert_silent, next_event
from tests.support.redis_cluster import RedisClusterServers
from tests.support.wait import eventually

pytestmark = pytest.mark.redis

QUICK = {"health_interval_s": 0.5, "reconnect_initial_s": 0.05, "reconnect_max_s": 0.5}


def _prefix() -> str:
    return f"test:{uuid.uuid4().hex[:12]}:"


@asynccontextmanager
async def brokers(url: str, count: int, prefix: str) -> AsyncIterator[list[Broker]]:
    async with AsyncExitStack() as stack:
        options = BrokerOptions(prefix=prefix, **QUICK)
        yield [await stack.enter_async_context(open_broker(url, options)) for _ in range(count)]


def channel_on(servers: RedisClusterServers, prefix: str, port: int, stem: str = "room") -> str:
    """A channel name whose slot the master on ``port`` serves now."""
    for n in range(10_000):
        name = f"{stem}{n}"
        if servers.port_of(f"{prefix}ch:{name}") == port:
            return name
    raise AssertionError(f"no channel found for {port}")


def node_client(port: int) -> Redis:
    return Redis(host="127.0.0.1", port=port)


async def shard_subscribers(port: int, full_channel: str) -> tuple[int, int]:
    """(sharded, classic) subscriber counts of a channel on one node."""
    client = node_client(port)
    try:
        sharded = await client.execute_command("PUBSUB", "SHARDNUMSUB", full_channel)
        classic = await client.execute_command("PUBSUB", "NUMSUB", full_channel)
        return int(sharded[1]), int(classic[1])
    finally:
        await client.aclose()


def test_a_table_lives_in_one_slot() -> None:
    """Its channels, its lease and fence, its store keys and its chat history share a hash tag."""
    code = "Q7WJ2KXM"
    prefix = "durak:"
    names = [
        f"{prefix}ch:{channels.inbox(code)}",
        f"{prefix}ch:{channels.person(code, 'a:1')}",
        f"{prefix}ch:{channels.watch(code)}",
        f"{prefix}ch:{channels.chat(code)}",
        f"{prefix}kv:{chat.history_key(code)}",
    ]
    broker = RedisBroker("redis://127.0.0.1:1/0", BrokerOptions(prefix=prefix))  # not started: names only
    names += broker._keys.lease_keys(lease_name(code))
    store = RedisStore("redis://127.0.0.1:1/0", prefix)
    names += store._table_keys(code)
    assert {slot_of(name) for name in names} == {slot_of(code)}
    # The global channels and the store's indexes each hash on their own.
    assert slot_of(f"{prefix}ch:{LOBBY}") != slot_of(f"{prefix}ch:signouts")
    assert len({slot_of(key) for key in store._index_keys()}) == 1


def test_cluster_urls_are_read_and_checked() -> None:
    target = ClusterTarget.from_url("redis+cluster://app:s%3Acret@10.0.0.1:7000,10.0.0.2:7001/0?client_name=durak")
    assert target.seeds == (("10.0.0.1", 7000), ("10.0.0.2", 7001))
    node = target.node(("10.0.0.9", 7005))
    assert (node.host, node.port, node.username, node.password, node.client_name, node.db) == (
        "10.0.0.9", 7005, "app", "s:cret", "durak", 0
    )
    assert ClusterTarget.from_url("rediss+cluster://h:7000?ssl_cert_reqs=none").login.tls is not None
    assert ClusterTarget.from_url("redis+cluster://[::1]:7000").seeds == (("::1", 7000),)
    for bad in ("redis+cluster://", "redis+cluster://h:7000/2", "redis+cluster://h:x", "redis://h:7000"):
        with pytest.raises(ValueError):
            ClusterTarget.from_url(bad)


async def test_sharded_pub_sub_reaches_every_master(redis_cluster: RedisClusterServers) -> None:
    prefix = _prefix()
    names = {port: channel_on(redis_cluster, prefix, port) for port in redis_cluster.ports}
    async with brokers(redis_cluster.url, 2, prefix) as (publisher, listener), AsyncExitStack() as stack:
        assert listener.healthy
        subs = {port: await stack.enter_async_context(listener.subscribe(name)) for port, name in names.items()}
        for port, name in names.items():  # a shard channel on its own master, not a classic channel
            assert await shard_subscribers(port, f"{prefix}ch:{name}") == (1, 0)
        # One publish_many over all three masters: each message arrives, in order per channel.
        batch = [(name, f"{name}-{n}") for n in range(3) for name in names.values()]
        await publisher.publish_many(batch)
        for port, name in names.items():
            got = [await next_event(subs[port]) for _ in range(3)]
            assert got == [Message(name, f"{name}-{n}".encode()) for n in range(3)]


async def test_lobby_and_signouts_reach_every_process(redis_cluster: RedisClusterServers) -> None:
    prefix = _prefix()
    async with brokers(redis_cluster.url, 3, prefix) as (one, two, three), AsyncExitStack() as stack:
        lobbies = [await stack.enter_async_context(b.subscribe(LOBBY)) for b in (two, three)]
        signouts = [await stack.enter_async_context(b.subscribe("signouts")) for b in (two, three)]
        await one.publish(LOBBY, b'{"deltas": []}')
        await one.publish("signouts", b'{"account": 1}')
        for sub in lobbies:
            assert await next_event(sub) == Message(LOBBY, b'{"deltas": []}')
        for sub in signouts:
            assert await next_event(sub) == Message("signouts", b'{"account": 1}')


async def _until_message(sub: Subscription, via: Broker, channel: str) -> list[Any]:
    """Publish markers until one arrives (the publisher's connection to a restarted node may need
    a try to come back); the events seen on the way."""
    seen: list[Any] = []
    for attempt in range(50):
        marker = f"marker-{attempt}"
        try:
            await via.publish(channel, marker)
        except BrokerUnavailable:
            await asyncio.sleep(0.1)
            continue
        while True:
            try:
                event = await next_event(sub, timeout=0.5)
            except TimeoutError:
                break
            seen.append(event)
            if event == Message(channel, marker.encode()):
                return seen
    raise AssertionError(f"nothing arrived on {channel}: {seen}")


async def test_a_restarted_master_costs_its_channels_a_gap_and_the_others_nothing(
    redis_cluster: RedisClusterServers,
) -> None:
    prefix = _prefix()
    names = {port: channel_on(redis_cluster, prefix, port) for port in redis_cluster.ports}
    victim = redis_cluster.ports[0]
    async with brokers(redis_cluster.url, 2, prefix) as (publisher, listener), AsyncExitStack() as stack:
        subs = {port: await stack.enter_async_context(listener.subscribe(name)) for port, name in names.items()}
        await asyncio.to_thread(redis_cluster.stop_node, victim)
        try:
            await eventually(lambda: not listener.healthy, what="the listener notices the node is gone")
            with pytest.raises(BrokerUnavailable):
                await publisher.publish(names[victim], "lost")
            for port in names:  # the other masters carry on
                if port != victim:
                    await assert_silent(subs[port], publisher)
        finally:
            await asyncio.to_thread(redis_cluster.start_node, victim)
        await asyncio.to_thread(redis_cluster.wait_ok)
        await eventually(lambda: listener.healthy, timeout=15, what="the listener links to the node again")
        seen = await _until_message(subs[victim], publisher, names[victim])
        assert seen[0] == Gap(names[victim], GapReason.RECONNECT)
        for port in names:
            if port != victim:
                await assert_silent(subs[port], publisher)  # no gap where nothing was lost


async def test_a_slot_moved_to_another_master_is_followed(redis_cluster: RedisClusterServers) -> None:
    """Resharding: the old master drops the channel's subscription (``sunsubscribe``), the listener
    subscribes where the slot went and says so with a gap; the publisher follows ``MOVED``."""
    prefix = _prefix()
    source, target = redis_cluster.ports[0], redis_cluster.ports[1]
    name = channel_on(redis_cluster, prefix, source)
    slot = slot_of(f"{prefix}ch:{name}")
    async with brokers(redis_cluster.url, 2, prefix) as (publisher, listener), listener.subscribe(name) as sub:
        await assert_silent(sub, publisher)
        await asyncio.to_thread(redis_cluster.move_slot, slot, source, target)
        try:
            seen = await _until_message(sub, publisher, name)
            assert seen[0] == Gap(name, GapReason.RECONNECT)
            assert await shard_subscribers(target, f"{prefix}ch:{name}") == (1, 0)
            assert await shard_subscribers(source, f"{prefix}ch:{name}") == (0, 0)
        finally:
            await asyncio.to_thread(redis_cluster.move_slot, slot, target, source)
        seen = await _until_message(sub, publisher, name)  # and back again
        assert seen[0] == Gap(name, GapReason.RECONNECT)


# --- the table store ---


def record(version: int = 0, private: bool = False) -> dict[str, Any]:
    return {"spec": {"watch_code": "W1", "private": private}, "version": version, "deadline": None}


def entry(n: int) -> str:
    return orjson.dumps({"a": {"type": "attack", "seat": n % 2, "card": "QS"}, "k": f"key-{n}"}).decode()


async def test_the_store_writes_fenced_on_a_cluster(redis_cluster: RedisClusterServers) -> None:
    store = RedisStore(redis_cluster.url, prefix=_prefix())
    try:
        await store.save("T1", 3, record(), [], create=True)
        for n in range(5):
            await store.append("T1", 3, {"version": n + 1, "deadline": None}, entry(n), n)
        loaded = await store.load("T1")
        assert loaded is not None and loaded[0]["version"] == 5 and loaded[1] == [entry(n) for n in range(5)]
        with pytest.raises(LogGap):
            await store.append("T1", 3, {"version": 9, "deadline": None}, entry(9), 9)
        assert await store.codes() == ["T1"] and await store.resolve_watch("W1") == "T1"
        assert [row["version"] for row in await store.lobby()] == [0]
        # A newer owner claims the table: the old owner's writes are refused, the indexes included.
        await store.claim("T1", 7)
        with pytest.raises(Fenced):
            await store.append("T1", 3, {"version": 6, "deadline": None}, entry(5), 5)
        with pytest.raises(Fenced):
            await store.save("T1", 3, record(version=99), None)
        await store.save("T1", 7, record(version=6), None)
        assert [row["version"] for row in await store.lobby()] == [6]
        await store.save("T1", 7, record(version=6, private=True), None)
        assert await store.lobby() == []
        with pytest.raises(Fenced):
            await store.remove("T1", 3)
        await store.remove("T1", 7)
        assert await store.load("T1") is None and await store.codes() == []
        assert await store.resolve_watch("W1") is None
    finally:
        await store.close()


async def test_the_index_refuses_an_old_owner_that_got_past_the_table_check(redis_cluster: RedisClusterServers) -> None:
    """On a cluster a save is two scripts (the table's slot, then the indexes' slot); the indexes
    check the token again, so an old owner cannot overwrite a newer owner's lobby row in between."""
    prefix = _prefix()
    store = RedisStore(redis_cluster.url, prefix=prefix)
    try:
        await store.save("T2", 5, record(version=1), [], create=True)
        await store.save("T2", 8, record(version=2), None)  # the new owner
        args = [5, "T2", b'{"stale": true}', "W1", "1", "save"]
        index_keys = [f"{prefix}store:{{index}}:tokens", *store._index_keys()]
        assert await store._run(store._write_index, index_keys, args) == -1
        assert [row["version"] for row in await store.lobby()] == [2]
    finally:
        await store.close()


async def test_the_append_follows_a_flushed_script_cache_and_a_restarted_master(
    redis_cluster: RedisClusterServers,
) -> None:
    store = RedisStore(redis_cluster.url, prefix=_prefix())
    port = redis_cluster.port_of("{T3}")
    try:
        await store.save("T3", 1, record(), [], create=True)
        await store.append("T3", 1, {"version": 1, "deadline": None}, entry(0), 0)
        client = node_client(port)
        try:
            await client.script_flush()
        finally:
            await client.aclose()
        await store.append("T3", 1, {"version": 2, "deadline": None}, entry(1), 1)  # NOSCRIPT -> EVAL
        await asyncio.to_thread(redis_cluster.stop_node, port)
        try:
            with pytest.raises(BrokerUnavailable):
                await store.append("T3", 1, {"version": 3, "deadline": None}, entry(2), 2)
        finally:
            await asyncio.to_thread(redis_cluster.start_node, port)
        await asyncio.to_thread(redis_cluster.wait_ok)
        with pytest.raises(LogGap):  # the node came back empty: the owner writes the table whole
            await store.append("T3", 1, {"version": 3, "deadline": None}, entry(2), 2)
    finally:
        await store.close()
