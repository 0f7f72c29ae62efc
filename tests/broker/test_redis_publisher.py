"""``publish_nowait`` on one Redis: its muted connection (``CLIENT REPLY OFF``), a private
redis-server that the test kills, pauses and restarts. The shared Redis on 6379 is never touched."""

from __future__ import annotations

import asyncio

import pytest

from app.broker import Broker, BrokerOptions, BrokerUnavailable, Gap, GapReason, Message, open_broker
from app.broker.redis_wire import Publisher, RedisTarget, pack_publish
from tests.broker.conftest import OwnRedis, next_event
from tests.support.wait import eventually

pytestmark = pytest.mark.redis


def refused(broker: Broker) -> bool:
    """Whether ``publish_nowait`` raises now (it publishes on a channel nobody listens to if not)."""
    try:
        broker.publish_nowait([("nobody", "probe")])
    except BrokerUnavailable:
        return True
    return False


async def test_redis_sends_no_replies_to_the_publishes(own_redis: OwnRedis) -> None:
    """Nothing comes back for a publish: no reply for the broker to read, so a publish costs it
    one write. Only the health probe's PONG comes back (CLIENT REPLY ON, PING, CLIENT REPLY OFF)."""
    options = BrokerOptions(prefix="muted:", health_interval_s=0.1)
    async with open_broker(own_redis.url, options) as broker, broker.subscribe("c") as sub:
        publisher = broker._publisher  # type: ignore[attr-defined]
        wire = publisher._wire
        received: list[bytes] = []
        original = wire.data_received

        def counting(data: bytes) -> None:
            received.append(data)
            original(data)

        wire.data_received = counting
        for n in range(200):
            broker.publish_nowait([("c", f"m{n}")])
        assert [(await next_event(sub)).data for _ in range(200)] == [f"m{n}".encode() for n in range(200)]  # type: ignore[union-attr]
        await eventually(lambda: len(received) > 0, 2, "a probe's PONG comes back")
        # Only the probes' two replies each, however many probes ran meanwhile: nothing for the
        # publishes (each would have been an integer reply, ":1").
        data = b"".join(received)
        assert data == b"+OK\r\n+PONG\r\n" * data.count(b"+PONG\r\n")
        assert publisher._wire is wire


async def test_publish_nowait_raises_while_redis_is_down_and_works_again_after(own_redis: OwnRedis) -> None:
    options = BrokerOptions(prefix="muted:", health_interval_s=0.2, reconnect_max_s=0.3)
    async with open_broker(own_redis.url, options) as broker, broker.subscribe("c") as sub:
        broker.publish_nowait([("c", "before")])
        assert await next_event(sub) == Message("c", b"before")
        own_redis.kill()
        await eventually(lambda: refused(broker), 2, "publish_nowait raises once the connection is lost")
        with pytest.raises(BrokerUnavailable, match="redis is unreachable"):
            broker.publish_nowait([("c", "lost")])
        own_redis.start()
        await eventually(lambda: broker.healthy and not refused(broker), 6, "both connections are back")
        assert await next_event(sub) == Gap("c", GapReason.RECONNECT, None)
        broker.publish_nowait([("c", "after")])
        assert await next_event(sub) == Message("c", b"after")


async def test_a_silent_server_is_noticed_by_the_probe(own_redis: OwnRedis) -> None:
    options = BrokerOptions(prefix="muted:", health_interval_s=0.1, connect_timeout_s=0.5, reconnect_max_s=0.2)
    async with open_broker(own_redis.url, options) as broker:
        own_redis.pause()  # sockets stay open, nothing answers
        try:
            await eventually(lambda: refused(broker), 3, "the probe's missing PONG is noticed")
            assert "no reply from redis" in broker._publisher.last_error  # type: ignore[attr-defined]
        finally:
            own_redis.resume()
        await eventually(lambda: not refused(broker), 5, "the publisher reconnects")


async def test_a_server_that_stops_reading_is_given_up_before_memory_runs_out(own_redis: OwnRedis) -> None:
    publisher = Publisher(
        RedisTarget.from_url(own_redis.url),
        connect_timeout_s=0.5,
        health_interval_s=0.1,
        reconnect_initial_s=0.1,
        reconnect_max_s=0.2,
        max_buffer=64 * 1024,
    )
    await publisher.start()
    try:
        assert publisher.up
        own_redis.pause()
        try:
            chunk = pack_publish(b"muted:ch:c", b"x" * 60_000)
            for _ in range(100):  # 6 MB: more than the socket takes, so the rest waits in our buffer
                publisher.send(chunk)
                await asyncio.sleep(0)
            await eventually(lambda: not publisher.up, 3, "the publisher gives the connection up")
            assert "redis is not reading" in publisher.last_error
            with pytest.raises(BrokerUnavailable):
                publisher.send(chunk)
        finally:
            own_redis.resume()
        await eventually(lambda: publisher.up, 5, "the publisher reconnects")
    finally:
        await publisher.aclose()
    assert not publisher.up


async def test_ensure_up_cuts_the_backoff_short(own_redis: OwnRedis) -> None:
    """When the broker's pub/sub link is back, it has the publisher connect at once: the gaps it
    then signals make connections publish (requests for snapshots), which must not meet a publisher
    still in its backoff."""
    publisher = Publisher(
        RedisTarget.from_url(own_redis.url),
        connect_timeout_s=0.5,
        health_interval_s=0.1,
        reconnect_initial_s=30,  # without ensure_up, the next attempt would be half a minute away
        reconnect_max_s=30,
    )
    await publisher.start()
    try:
        own_redis.kill()
        await eventually(lambda: not publisher.up, 2, "the publisher notices the crash")
        assert not await publisher.ensure_up(0.5)  # still down: says so within the time given
        assert "cannot connect" in publisher.last_error
        own_redis.start()
        assert await publisher.ensure_up(2)
        publisher.send(pack_publish(b"muted:ch:c", b"back"))
    finally:
        await publisher.aclose()


async def test_publish_nowait_works_as_soon_as_the_broker_is_healthy_again(own_redis: OwnRedis) -> None:
    options = BrokerOptions(prefix="muted:", health_interval_s=0.2, reconnect_initial_s=0.05, reconnect_max_s=1.0)
    async with open_broker(own_redis.url, options) as broker, broker.subscribe("c") as sub:
        broker._publisher._delays = (30, 30)  # type: ignore[attr-defined]  # left alone, it would wait half a minute
        own_redis.kill()
        await eventually(lambda: not broker.healthy, 2, "the broker notices the crash")
        await eventually(lambda: refused(broker), 2, "the publisher has lost its connection")
        own_redis.start()
        assert await next_event(sub, timeout=5) == Gap("c", GapReason.RECONNECT, None)
        broker.publish_nowait([("c", "right after the gap")])  # no waiting for the publisher's own attempt
        assert await next_event(sub) == Message("c", b"right after the gap")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_a_cancel_that_meets_the_end_of_an_attempt_is_not_swallowed() -> None:
    """The broker closing cancels a caller of ``ensure_up`` that may be waiting for an attempt to
    connect; when the attempt ends in the same turn of the loop, the cancel must still stop the
    caller. (On 3.11 ``asyncio.wait_for`` swallowed it: the caller went on trying until its deadline,
    and a broker's supervisor looped for ever, hanging the test that closed it.)"""
    publisher = Publisher(
        RedisTarget.from_url(f"redis://127.0.0.1:{closed_port()}"),
        connect_timeout_s=0.2,
        health_interval_s=1.0,
        reconnect_initial_s=10.0,
        reconnect_max_s=10.0,
    )
    await publisher.start()  # the first attempt is refused; the next waits 10 s or a kick
    try:
        waiting = asyncio.create_task(publisher.ensure_up(5.0))
        while not publisher._tried:  # ensure_up has asked for an attempt and waits for its end
            await asyncio.sleep(0)
        attempt = publisher._tried[0]
        attempt.set_result(None)  # the attempt ends ...
        waiting.cancel()  # ... in the turn the caller is cancelled
        with pytest.raises(asyncio.CancelledError):
            async with asyncio.timeout(2):
                await waiting
    finally:
        await publisher.aclose()
