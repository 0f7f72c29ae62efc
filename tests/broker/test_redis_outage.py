"""Redis going away and coming back, on a private redis-server that the test kills and restarts.

The shared Redis on 6379 is never touched here.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from app.broker import BrokerOptions, BrokerUnavailable, Gap, GapReason, Message, open_broker
from tests.broker.conftest import OwnRedis, assert_silent, next_event
from tests.support.wait import eventually, loop_turns

pytestmark = pytest.mark.redis


def failed_reconnects(caplog: pytest.LogCaptureFixture) -> int:
    """How many times the broker's supervisor has tried to reconnect, and failed, so far (it logs
    each attempt at debug level)."""
    messages = [record.getMessage() for record in caplog.records]
    return sum(text.startswith("broker: connecting to redis") and " failed (attempt " in text for text in messages)


async def test_crash_raises_then_recovers_by_itself_with_a_gap(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    # Default backoff (0.1 s doubling to 2 s): the outage lasts three failed attempts (~0.7 s),
    # so recovery comes at the fourth.
    caplog.set_level(logging.DEBUG, logger="app.broker.redis")
    broker = open_broker(own_redis.url, BrokerOptions(prefix="outage:"))
    async with broker, broker.subscribe("table:1") as sub, broker.subscribe("table:2") as other:
        await broker.publish("table:1", "before")
        assert await next_event(sub) == Message("table:1", b"before")
        token = await broker.acquire_lease("table:1", "proc-a", 30)
        assert token is not None

        own_redis.kill()
        await eventually(lambda: not broker.healthy, 2, "the broker notices the crash")
        with pytest.raises(BrokerUnavailable):
            await broker.publish("table:1", "lost")
        with pytest.raises(BrokerUnavailable):
            await broker.publish_many([("table:1", "lost"), ("table:2", "lost")])
        with pytest.raises(BrokerUnavailable):
            await broker.renew_lease("table:1", "proc-a", token, 30)
        with pytest.raises(BrokerUnavailable):
            await broker.push_capped("chat:{T1}", "lost", 5)
        with pytest.raises(BrokerUnavailable):
            async with broker.subscribe("table:3"):
                pass
        await eventually(lambda: failed_reconnects(caplog) >= 3, 5, "the broker has failed to reconnect 3 times")
        with pytest.raises(BrokerUnavailable):
            await broker.publish("table:1", "still down")
        assert not broker.healthy

        own_redis.start()  # same port, empty dataset
        await eventually(lambda: broker.healthy, 6, "the broker reconnects by itself")
        for s, channel in ((sub, "table:1"), (other, "table:2")):
            assert await next_event(s) == Gap(channel, GapReason.RECONNECT, None)

        await broker.publish("table:1", "after")
        assert await next_event(sub) == Message("table:1", b"after")
        await assert_silent(other, via=broker)
        await broker.publish_many([("table:2", "both"), ("table:1", "both")])
        assert await next_event(sub) == Message("table:1", b"both")
        assert await next_event(other) == Message("table:2", b"both")

        # The restarted server lost the lease; a new one gets a larger fencing token
        # because the fence counter is reseeded from the server clock.
        assert await broker.lease_holder("table:1") is None
        later = await broker.acquire_lease("table:1", "proc-b", 30)
        assert later is not None and later > token
        async with broker.subscribe("table:3") as third:
            await broker.publish("table:3", "new channel works")
            assert await next_event(third) == Message("table:3", b"new channel works")


async def test_channels_left_during_the_outage_are_not_resubscribed(own_redis: OwnRedis) -> None:
    broker = open_broker(own_redis.url, BrokerOptions(prefix="outage:", reconnect_max_s=0.3))
    async with broker, broker.subscribe("kept") as kept:
        async with broker.subscribe("dropped"):
            own_redis.kill()
            await eventually(lambda: not broker.healthy, 2, "the broker notices the crash")
        own_redis.start()
        await eventually(lambda: broker.healthy, 5, "the broker reconnects")
        assert await next_event(kept) == Gap("kept", GapReason.RECONNECT, None)
        numsub = dict(await broker._redis.pubsub_numsub(b"outage:ch:kept", b"outage:ch:dropped"))  # type: ignore[attr-defined]
        assert numsub == {b"outage:ch:kept": 1, b"outage:ch:dropped": 0}


async def test_a_silent_server_is_detected_by_ping(own_redis: OwnRedis) -> None:
    options = BrokerOptions(
        prefix="outage:", health_interval_s=0.2, connect_timeout_s=0.5, command_timeout_s=0.5, reconnect_max_s=0.4
    )
    async with open_broker(own_redis.url, options) as broker, broker.subscribe("c") as sub:
        own_redis.pause()  # sockets stay open, nothing answers
        try:
            await eventually(lambda: not broker.healthy, 3, "the watchdog notices the silence")
            with pytest.raises(BrokerUnavailable):
                await broker.publish("c", "into the void")
            with pytest.raises(BrokerUnavailable):
                await broker.publish_many([("c", "into"), ("c", "the void")])
        finally:
            own_redis.resume()
        await eventually(lambda: broker.healthy, 5, "the broker reconnects")
        assert await next_event(sub) == Gap("c", GapReason.RECONNECT, None)
        await broker.publish("c", "back")
        assert await next_event(sub) == Message("c", b"back")


async def test_a_publish_in_flight_when_redis_dies_raises(own_redis: OwnRedis) -> None:
    async with open_broker(own_redis.url, BrokerOptions(prefix="outage:", command_timeout_s=1.0)) as broker:
        await broker.publish("c", "warm")  # the command connection is open
        own_redis.pause()
        try:
            pending = asyncio.ensure_future(broker.publish_many([("c", "a"), ("c", "b")]))
            await loop_turns()  # written to the socket of the stopped server (one write, scheduled at once)
            assert not pending.done()  # in flight: no answer comes
            own_redis.kill()
            with pytest.raises(BrokerUnavailable):
                await asyncio.wait_for(pending, 3)
        finally:
            own_redis.kill()
        own_redis.start()
        await eventually(lambda: broker.healthy, 6, "the broker reconnects")
        async with broker.subscribe("c") as sub:
            await broker.publish("c", "again")
            assert await next_event(sub) == Message("c", b"again")


async def test_closing_during_an_outage_leaves_no_tasks_behind(
    own_redis: OwnRedis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="app.broker.redis")
    broker = open_broker(own_redis.url, BrokerOptions(prefix="outage:", reconnect_max_s=0.2))
    await broker.start()
    async with broker.subscribe("c") as sub:
        own_redis.kill()
        await eventually(lambda: not broker.healthy, 2, "the broker notices the crash")
        await eventually(lambda: failed_reconnects(caplog) >= 1, 3, "the supervisor is retrying")
        await asyncio.wait_for(broker.aclose(), 2)
        assert [event async for event in sub] == []
    leftovers = [t for t in asyncio.all_tasks() if t.get_name().startswith("broker-") and not t.done()]
    assert leftovers == []
