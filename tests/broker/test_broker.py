"""One behavioural suite, run on every backend (``memory``, a real Redis and a real Redis Cluster)."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from app.broker import Broker, BrokerClosed, BrokerUnavailable, Gap, GapReason, LeaseHolder, Message, redis_keys
from tests.broker.conftest import LeaseTime, MakeBroker, assert_silent, next_event
from tests.support.wait import eventually


async def remote_subscriber_count(broker: Broker, channel: str) -> int:
    """How many subscriptions the backend itself holds for ``channel`` (all processes)."""
    from app.broker.memory import MemoryBroker
    from app.broker.redis import RedisBroker

    if isinstance(broker, MemoryBroker):
        return len(broker._hub.channels.get(broker.prefix + channel, ()))
    assert isinstance(broker, RedisBroker)
    full = broker._full_channel(channel)
    if isinstance(broker._redis, RedisCluster):  # sharded: ask the master of the channel's slot
        await broker._redis.initialize()
        node = broker._redis.get_node_from_key(full)
        reply = await broker._redis.execute_command("PUBSUB", "SHARDNUMSUB", full, target_nodes=node)
        return int(reply[1])
    client: Redis = broker._redis
    [(_, count)] = await client.pubsub_numsub(full)
    return int(count)


# --- pub/sub ---


async def test_fan_out_to_many_subscribers(broker: Broker) -> None:
    async with contextlib.AsyncExitStack() as stack:
        subs = [await stack.enter_async_context(broker.subscribe("room")) for _ in range(10)]
        await broker.publish("room", b"hello")
        for sub in subs:
            assert await next_event(sub) == Message("room", b"hello")
        assert await remote_subscriber_count(broker, "room") == 1  # one upstream subscription


async def test_fan_out_across_brokers(make_broker: MakeBroker) -> None:
    first, second = await make_broker(), await make_broker()
    async with first.subscribe("lobby") as on_first, second.subscribe("lobby") as on_second:
        await first.publish("lobby", "from first")
        await second.publish("lobby", "from second")
        for sub in (on_first, on_second):
            assert [(await next_event(sub)) for _ in range(2)] == [
                Message("lobby", b"from first"),
                Message("lobby", b"from second"),
            ]


async def test_str_is_sent_as_utf8_and_bytes_as_is(broker: Broker) -> None:
    async with broker.subscribe("c") as sub:
        await broker.publish("c", "козырь ♠")
        await broker.publish("c", b"\x00\xff")
        first = await next_event(sub)
        assert isinstance(first, Message)
        assert first.text == "козырь ♠"
        assert await next_event(sub) == Message("c", b"\x00\xff")
        with pytest.raises(TypeError):
            await broker.publish("c", 42)  # type: ignore[arg-type]


async def test_publish_many_delivers_each_pair_in_order(make_broker: MakeBroker) -> None:
    first, second = await make_broker(), await make_broker()
    async with first.subscribe("a") as sub_a, second.subscribe("a") as other_a, second.subscribe("b") as sub_b:
        await first.publish_many([("a", "1"), ("b", b"2"), ("a", "козырь"), ("a", b"\x00")])
        await first.publish_many([])
        await first.publish("a", "after")
        expected = [Message("a", b"1"), Message("a", "козырь".encode()), Message("a", b"\x00"), Message("a", b"after")]
        for sub in (sub_a, other_a):
            assert [await next_event(sub) for _ in range(4)] == expected
        assert await next_event(sub_b) == Message("b", b"2")
        await assert_silent(sub_b, via=first)


async def test_publish_many_checks_everything_before_sending(broker: Broker) -> None:
    async with broker.subscribe("a") as sub:
        with pytest.raises(ValueError):
            await broker.publish_many([("a", "x"), ("", "y")])
        with pytest.raises(TypeError):
            await broker.publish_many([("a", "x"), ("a", 42)])  # type: ignore[list-item]
        await assert_silent(sub, via=broker)


async def test_publish_nowait_checks_first_then_sends_in_the_order_of_the_calls(make_broker: MakeBroker) -> None:
    first, second = await make_broker(), await make_broker()
    async with second.subscribe("a") as sub_a, second.subscribe("b") as sub_b:
        with pytest.raises(ValueError):
            first.publish_nowait([("a", "x"), ("", "y")])
        with pytest.raises(TypeError):
            first.publish_nowait([("b", "x"), ("b", 42)])  # type: ignore[list-item]
        first.publish_nowait([])
        for i in range(40):  # none of them waits: all are on their way before the first arrives
            first.publish_nowait([("a", str(i)), ("b", str(i))] if i % 2 else [("a", str(i))])
        # Had a refused call sent its valid part, it would come first on the same connection.
        assert [(await next_event(sub_a)).data for _ in range(40)] == [str(i).encode() for i in range(40)]  # type: ignore[union-attr]
        assert [(await next_event(sub_b)).data for _ in range(20)] == [str(i).encode() for i in range(1, 40, 2)]  # type: ignore[union-attr]
    await first.aclose()
    with pytest.raises(BrokerClosed):
        first.publish_nowait([("a", "late")])


async def test_concurrent_publishes_all_arrive_in_order_per_publisher(broker: Broker) -> None:
    async def publisher(channel: str) -> None:
        for i in range(30):
            if i % 2:
                await broker.publish(channel, str(i))
            else:
                await broker.publish_many([(channel, str(i))])

    async with contextlib.AsyncExitStack() as stack:
        channels = [f"c{n}" for n in range(8)]
        subs = [await stack.enter_async_context(broker.subscribe(channel)) for channel in channels]
        await asyncio.gather(*(publisher(channel) for channel in channels))
        for sub in subs:
            got = [(await next_event(sub)).data for _ in range(30)]  # type: ignore[union-attr]
            assert got == [str(i).encode() for i in range(30)]


async def test_only_messages_after_subscribing_arrive(broker: Broker) -> None:
    await broker.publish("c", "too early")
    async with broker.subscribe("c") as sub:
        await broker.publish("c", "in time")
        assert await next_event(sub) == Message("c", b"in time")
        await assert_silent(sub, via=broker)


async def test_ordering_per_channel(broker: Broker) -> None:
    async with broker.subscribe("a") as sub_a, broker.subscribe("b") as sub_b:
        for i in range(200):
            await broker.publish("a" if i % 3 else "b", str(i))
        got_a = [(await next_event(sub_a)).data for _ in range(133)]  # type: ignore[union-attr]
        got_b = [(await next_event(sub_b)).data for _ in range(67)]  # type: ignore[union-attr]
        assert got_a == [str(i).encode() for i in range(200) if i % 3]
        assert got_b == [str(i).encode() for i in range(200) if not i % 3]


async def test_channels_are_isolated(broker: Broker) -> None:
    async with broker.subscribe("table:1") as one, broker.subscribe("table:10") as ten:
        await broker.publish("table:1", "for one")
        assert await next_event(one) == Message("table:1", b"for one")
        await assert_silent(ten, via=broker)


async def test_prefixes_are_isolated(make_broker: MakeBroker) -> None:
    ours = await make_broker()
    theirs = await make_broker(prefix=ours.prefix + "other:")
    async with ours.subscribe("c") as sub_ours, theirs.subscribe("c") as sub_theirs:
        await theirs.publish("c", "theirs")
        assert await next_event(sub_theirs) == Message("c", b"theirs")
        await assert_silent(sub_ours, via=ours)
    await ours.push_capped("l", "ours", 5)
    assert await theirs.read_list("l") == []
    assert await theirs.delete("l") == 0
    assert await ours.read_list("l") == [b"ours"]
    assert await ours.acquire_lease("L", "me", 5) is not None
    assert await theirs.lease_holder("L") is None


async def test_unsubscribe_on_context_exit(broker: Broker) -> None:
    async with broker.subscribe("c") as staying:
        async with broker.subscribe("c") as leaving:
            pass
        assert leaving.closed
        assert [event async for event in leaving] == []
        await broker.publish("c", "after leaving")
        assert await next_event(staying) == Message("c", b"after leaving")
        assert leaving.qsize() == 0
        assert await remote_subscriber_count(broker, "c") == 1
    assert await remote_subscriber_count(broker, "c") == 0
    async with broker.subscribe("c") as again:  # a channel can be subscribed again
        await broker.publish("c", "again")
        assert await next_event(again) == Message("c", b"again")


async def test_cancelled_consumer_still_unsubscribes(broker: Broker) -> None:
    entered = asyncio.Event()

    async def consume() -> None:
        async with broker.subscribe("c") as sub:
            entered.set()
            async for _ in sub:
                pass

    task = asyncio.create_task(consume())
    await asyncio.wait_for(entered.wait(), 2)
    assert await remote_subscriber_count(broker, "c") == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    async def unsubscribed() -> bool:
        return await remote_subscriber_count(broker, "c") == 0

    await eventually(unsubscribed, what="the backend drops the subscription")


async def test_slow_subscriber_gets_overflow_gap_without_blocking_others(broker: Broker) -> None:
    async with broker.subscribe("c", max_queue=4) as slow, broker.subscribe("c", max_queue=100) as fast:
        for i in range(10):
            await broker.publish("c", str(i))
        assert [(await next_event(fast)).data for _ in range(10)] == [  # type: ignore[union-attr]
            str(i).encode() for i in range(10)
        ]
        # queue of 4: m0-m3 queued, m4 overflows (5 lost), m5-m7 queued, m8 overflows again
        # (9 lost in all), then m9 queues behind the gap.
        assert await next_event(slow) == Gap("c", GapReason.OVERFLOW, dropped=9)
        assert await next_event(slow) == Message("c", b"9")
        await broker.publish("c", "after the gap")
        assert await next_event(slow) == Message("c", b"after the gap")
        assert await next_event(fast) == Message("c", b"after the gap")


async def test_a_sink_gets_each_message_as_it_arrives_after_what_was_queued(make_broker: MakeBroker) -> None:
    publisher, receiver = await make_broker(), await make_broker()
    got: list[object] = []
    async with receiver.subscribe("c") as sub, receiver.subscribe("c") as plain:
        await publisher.publish("c", "queued")
        assert await next_event(plain) == Message("c", b"queued")  # it has arrived in this "process"
        sub.set_sink(got.append)
        assert got == [Message("c", b"queued")]  # what waited in the queue comes first
        await publisher.publish_many([("c", "one"), ("c", "two")])
        await eventually(lambda: len(got) == 3, what="the sink gets both")
        assert got == [Message("c", b"queued"), Message("c", b"one"), Message("c", b"two")]
        assert sub.qsize() == 0
        assert await next_event(plain) == Message("c", b"one")  # other subscribers are unaffected
    async with receiver.subscribe("c") as probe:
        await publisher.publish("c", "after")
        assert await next_event(probe) == Message("c", b"after")  # it has arrived in this "process"
    assert len(got) == 3  # nothing after the subscription's context has ended


async def test_a_failing_sink_is_logged_and_others_still_receive(
    broker: Broker, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(event: object) -> None:
        raise RuntimeError("consumer bug")

    async with broker.subscribe("c") as bad, broker.subscribe("c") as good:
        bad.set_sink(explode)
        await broker.publish("c", "x")
        assert await next_event(good) == Message("c", b"x")
    assert "the sink of 'c' failed" in caplog.text


async def test_follow_keeps_a_sink_subscribed_through_outages(broker: Broker, monkeypatch: pytest.MonkeyPatch) -> None:
    got: list[object] = []
    lives: list[bool] = []
    real_attach = broker._attach
    failures = [BrokerUnavailable("down"), BrokerUnavailable("still down")]

    async def flaky_attach(sub: object) -> None:  # the backend is down for the first two tries
        if failures:
            raise failures.pop(0)
        await real_attach(sub)  # type: ignore[arg-type]

    monkeypatch.setattr(broker, "_attach", flaky_attach)
    with pytest.raises(BrokerUnavailable):  # never live: give up at once when asked to
        await broker.follow("c", got.append, give_up_at_first=True)
    following = asyncio.create_task(broker.follow("c", got.append, on_live=lives.append, retry_s=0.01))
    await eventually(lambda: bool(lives), what="the subscription is live")
    assert lives == [True]  # live after an outage: what was published meanwhile may be lost
    await broker.publish("c", "x")
    await eventually(lambda: bool(got), what="the sink gets the message")
    assert got == [Message("c", b"x")]
    following.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await following
    async with broker.subscribe("c") as probe:
        await broker.publish("c", "after")
        assert await next_event(probe) == Message("c", b"after")
    assert got == [Message("c", b"x")]  # cancelled: unsubscribed


async def test_deliver_here_reaches_only_this_processs_subscribers(make_broker: MakeBroker) -> None:
    here, there = await make_broker(), await make_broker()
    async with here.subscribe("c") as mine, there.subscribe("c") as theirs:
        here.deliver_here([("c", "one"), ("c", b"two")])
        assert await next_event(mine) == Message("c", b"one")
        assert await next_event(mine) == Message("c", b"two")
        marker = await assert_silent(theirs, via=here)
        assert await next_event(mine) == marker
        await here.publish("c", "three")  # a publish still reaches both
        assert await next_event(theirs) == Message("c", b"three")
        assert await next_event(mine) == Message("c", b"three")


async def test_broker_wide_max_queue(make_broker: MakeBroker) -> None:
    broker = await make_broker(max_queue=2)
    async with broker.subscribe("c") as sub:
        for i in range(3):
            await broker.publish("c", str(i))
        await broker.publish("c", "last")
        # [0, 1] fill the queue, 2 overflows it (Gap of 3), "last" queues behind the gap.
        await eventually(lambda: sub.qsize() == 2, what="all four have arrived")
        assert await next_event(sub) == Gap("c", GapReason.OVERFLOW, dropped=3)
        assert await next_event(sub) == Message("c", b"last")


# --- lifecycle ---


async def test_healthy_while_open_and_closed_after(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    assert broker.healthy
    await broker.aclose()
    assert not broker.healthy
    with pytest.raises(BrokerClosed):
        await broker.publish("c", "x")
    with pytest.raises(BrokerClosed):
        await broker.publish_many([("c", "x")])
    with pytest.raises(BrokerClosed):
        await broker.acquire_lease("L", "me", 1)
    with pytest.raises(BrokerClosed):
        async with broker.subscribe("c"):
            pass
    await broker.aclose()  # idempotent


async def test_closing_the_broker_ends_subscriptions(make_broker: MakeBroker) -> None:
    broker = await make_broker()
    received: list[object] = []
    entered = asyncio.Event()

    async def consume() -> None:
        async with broker.subscribe("c") as sub:
            entered.set()
            async for event in sub:
                received.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(entered.wait(), 2)
    await broker.publish("c", "last")
    await eventually(lambda: received == [Message("c", b"last")], what="the consumer has the message")
    await broker.aclose()
    await asyncio.wait_for(task, 2)
    assert received == [Message("c", b"last")]


# --- leases ---


async def test_lease_acquire_and_conflicting_acquire(broker: Broker) -> None:
    token = await broker.acquire_lease("table:7", "proc-a", 5)
    assert isinstance(token, int)
    assert await broker.acquire_lease("table:7", "proc-b", 5) is None
    assert await broker.acquire_lease("table:7", "proc-a", 5) == token  # re-acquire is idempotent
    assert await broker.lease_holder("table:7") == LeaseHolder("proc-a", token)
    assert await broker.lease_holder("table:8") is None


async def test_lease_renew_only_by_holder_and_it_extends(broker: Broker, lease_time: LeaseTime) -> None:
    token = await broker.acquire_lease("L", "a", 0.4)
    assert token is not None
    assert not await broker.renew_lease("L", "b", token, 5)
    assert not await broker.renew_lease("L", "a", token + 1, 5)
    await lease_time.advance(0.25)
    assert await broker.renew_lease("L", "a", token, 0.4)
    await lease_time.advance(0.25)  # past the first expiry, within the renewed one
    assert await broker.lease_holder("L") == LeaseHolder("a", token)
    await lease_time.advance(0.25)  # past the renewed one too
    assert await broker.lease_holder("L") is None
    assert not await broker.renew_lease("L", "a", token, 0.4)


async def test_renew_many_leases_at_once(broker: Broker, lease_time: LeaseTime) -> None:
    mine = [await broker.acquire_lease(f"M{i}", "a", 0.4) for i in range(3)]
    theirs = await broker.acquire_lease("M3", "b", 5)
    assert None not in mine and theirs is not None
    leases = [("M0", mine[0]), ("M1", mine[1] + 1), ("M2", mine[2]), ("M3", theirs), ("M4", 1)]
    await lease_time.advance(0.25)
    assert await broker.renew_leases("a", leases, 0.4) == [True, False, True, False, False]
    await lease_time.advance(0.25)  # past the first expiry: only the renewed ones are still held
    assert await broker.lease_holder("M0") == LeaseHolder("a", mine[0])
    assert await broker.lease_holder("M1") is None
    assert await broker.lease_holder("M2") == LeaseHolder("a", mine[2])
    assert await broker.lease_holder("M3") == LeaseHolder("b", theirs)
    assert await broker.renew_leases("a", [], 0.4) == []


async def test_the_holders_of_many_leases_at_once(broker: Broker, lease_time: LeaseTime) -> None:
    names = [f"H{i}" for i in range(40)]  # on a cluster, in many slots of every master
    held = {
        name: await broker.acquire_lease(name, "ab"[i % 2], 0.4 if i % 3 == 0 else 5)
        for i, name in enumerate(names)
        if i % 4  # every fourth lease is never taken
    }
    await lease_time.advance(0.5)  # those taken for 0.4 s have lapsed
    expected = [
        None if name not in held or i % 3 == 0 else LeaseHolder("ab"[i % 2], held[name])  # type: ignore[arg-type]
        for i, name in enumerate(names)
    ]
    assert await broker.lease_holders(names) == expected
    assert await broker.lease_holders([]) == []


async def test_renew_leases_in_several_batches(broker: Broker, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(redis_keys, "RENEW_BATCH", 2)  # the Redis backend's script calls: 3 of them
    mine = [await broker.acquire_lease(f"B{i}", "a", 5) for i in range(5)]
    leases = [(f"B{i}", token if i != 3 else -1) for i, token in enumerate(mine) if token is not None]
    assert await broker.renew_leases("a", leases, 5) == [True, True, True, False, True]


async def test_lease_expiry_then_takeover_with_larger_token(broker: Broker, lease_time: LeaseTime) -> None:
    first = await broker.acquire_lease("L", "a", 0.4)
    assert first is not None
    await lease_time.advance(0.1)
    assert await broker.lease_holder("L") == LeaseHolder("a", first)
    await lease_time.advance(0.4)
    assert await broker.lease_holder("L") is None
    second = await broker.acquire_lease("L", "b", 5)
    assert second is not None and second > first
    assert not await broker.renew_lease("L", "a", first, 5)
    assert not await broker.release_lease("L", "a", first)
    assert await broker.lease_holder("L") == LeaseHolder("b", second)


async def test_lease_release_only_by_holder(broker: Broker) -> None:
    token = await broker.acquire_lease("L", "a", 5)
    assert token is not None
    assert not await broker.release_lease("L", "b", token)
    assert not await broker.release_lease("L", "a", token + 1)
    assert await broker.lease_holder("L") == LeaseHolder("a", token)
    assert await broker.release_lease("L", "a", token)
    assert await broker.lease_holder("L") is None
    assert not await broker.release_lease("L", "a", token)
    later = await broker.acquire_lease("L", "b", 5)
    assert later is not None and later > token


async def test_owner_names_may_contain_colons(broker: Broker) -> None:
    token = await broker.acquire_lease("L", "host:1234:abc", 5)
    assert token is not None
    assert await broker.lease_holder("L") == LeaseHolder("host:1234:abc", token)
    assert await broker.acquire_lease("L", "host", 5) is None


async def test_lease_contention_across_brokers_has_one_winner(make_broker: MakeBroker) -> None:
    brokers = [await make_broker() for _ in range(4)]
    results = await asyncio.gather(*(b.acquire_lease("table:1", f"proc-{i}", 5) for i, b in enumerate(brokers)))
    winners = [i for i, token in enumerate(results) if token is not None]
    assert len(winners) == 1
    holder = await brokers[-1].lease_holder("table:1")
    assert holder == LeaseHolder(f"proc-{winners[0]}", results[winners[0]])


async def test_lease_arguments_are_checked(broker: Broker) -> None:
    with pytest.raises(ValueError):
        await broker.acquire_lease("L", "a", 0)
    with pytest.raises(ValueError):
        await broker.acquire_lease("", "a", 1)
    with pytest.raises(ValueError):
        await broker.acquire_lease("L", "", 1)


# --- lists ---


async def test_delete(make_broker: MakeBroker) -> None:
    first, second = await make_broker(), await make_broker()
    await first.push_capped("chat:{T1}", "a line", 5)
    await first.push_capped("chat:{T2}", "another", 5)
    assert await second.delete() == 0
    assert await second.delete("chat:{T1}", "absent") == 1
    assert await first.read_list("chat:{T1}") == []
    assert await first.read_list("chat:{T2}") == [b"another"]


async def test_capped_lists(make_broker: MakeBroker) -> None:
    first, second = await make_broker(), await make_broker()
    assert await first.read_list("chat:{T1}") == []
    for n in range(7):
        await (first if n % 2 else second).push_capped("chat:{T1}", f"line {n}", 5)
    assert await second.read_list("chat:{T1}") == [f"line {n}".encode() for n in range(2, 7)]
    await first.push_capped("chat:{T1}", b"\xff raw", 5)  # bytes are kept as they are
    assert (await second.read_list("chat:{T1}"))[-2:] == [b"line 6", b"\xff raw"]
    await first.push_capped("chat:{T1}", "only", 1)  # a smaller cap trims what is there
    assert await first.read_list("chat:{T1}") == [b"only"]
    with pytest.raises(ValueError):
        await first.push_capped("chat:{T1}", "x", 0)
    assert await first.delete("chat:{T1}", "absent") == 1
    assert await second.read_list("chat:{T1}") == []


async def test_a_capped_list_expires_after_its_last_push(make_broker: MakeBroker, lease_time: LeaseTime) -> None:
    """On every backend (memory:// too, issue 35.20: a table's chat leaves memory in time)."""
    broker = await make_broker()
    await broker.push_capped("short", "a", 3, ttl_s=0.3)
    await lease_time.advance(0.2)
    await broker.push_capped("short", "b", 3, ttl_s=0.3)  # each push starts the time again
    await lease_time.advance(0.2)
    assert await broker.read_list("short") == [b"a", b"b"]
    await lease_time.advance(0.2)

    async def gone() -> bool:
        return await broker.read_list("short") == []

    await eventually(gone, what="the list expires")


async def test_signal_gap_here_reaches_this_processs_subscribers_of_the_prefix_only(make_broker: MakeBroker) -> None:
    here, there = await make_broker(), await make_broker()
    async with (
        here.subscribe("t:{a}:p:1") as one,
        here.subscribe("t:{a}:watch") as watching,
        here.subscribe("t:{a}:fan") as fan,
        here.subscribe("t:{b}:p:1") as other_table,
        there.subscribe("t:{a}:p:1") as other_process,
    ):
        here.signal_gap_here("t:{a}:", besides="t:{a}:fan")
        for sub in (one, watching):
            async with asyncio.timeout(2):
                assert isinstance(await sub.receive(), Gap)
        assert fan.qsize() == other_table.qsize() == other_process.qsize() == 0
