"""Backend-independent pieces: the subscription queue, backoff schedule and URL dispatch."""

from __future__ import annotations

import asyncio
import tracemalloc
from itertools import islice

import orjson
import pytest

from app.broker import BrokerOptions, BrokerUnavailable, Gap, GapReason, Message, Subscription, open_broker
from app.broker.base import backoff_delays
from app.broker.memory import MemoryBroker
from app.broker.redis import RedisBroker
from tests.broker.conftest import free_port
from tests.support.wait import loop_turns


def msg(text: str) -> Message:
    return Message("c", text.encode())


async def test_overflow_replaces_the_queue_with_one_counted_gap() -> None:
    sub = Subscription("c", max_queue=3)
    for i in range(4):
        sub._deliver(msg(str(i)))
    assert sub.qsize() == 1
    sub._deliver(msg("4"))
    assert await sub.receive() == Gap("c", GapReason.OVERFLOW, 4)
    assert await sub.receive() == msg("4")


async def test_repeated_overflow_adds_up_dropped() -> None:
    sub = Subscription("c", max_queue=2)
    for i in range(7):
        sub._deliver(msg(str(i)))
    # [0,1] -> 2 overflows: Gap(3); 3 -> [Gap,3]; 4 overflows: Gap(5); 5 -> [Gap,5]; 6: Gap(7)
    assert await sub.receive() == Gap("c", GapReason.OVERFLOW, 7)
    assert sub.qsize() == 0


async def test_reconnect_gap_queues_behind_messages_and_coalesces() -> None:
    sub = Subscription("c", max_queue=10)
    sub._deliver(msg("before"))
    sub._signal_gap(GapReason.RECONNECT)
    sub._signal_gap(GapReason.RECONNECT)
    sub._deliver(msg("after"))
    assert [await sub.receive() for _ in range(3)] == [
        msg("before"),
        Gap("c", GapReason.RECONNECT, None),
        msg("after"),
    ]


async def test_reconnect_gap_on_a_full_queue_replaces_it() -> None:
    sub = Subscription("c", max_queue=2)
    sub._deliver(msg("1"))
    sub._deliver(msg("2"))
    sub._signal_gap(GapReason.RECONNECT)
    assert await sub.receive() == Gap("c", GapReason.RECONNECT, 2)


async def test_closed_subscription_drains_then_stops() -> None:
    sub = Subscription("c", max_queue=5)
    sub._deliver(msg("x"))
    sub._close()
    sub._deliver(msg("ignored"))
    assert [event async for event in sub] == [msg("x")]


async def test_receive_waits_for_delivery() -> None:
    sub = Subscription("c", max_queue=5)
    waiter = asyncio.create_task(sub.receive())
    await loop_turns()  # the waiter runs and waits
    assert not waiter.done()
    sub._deliver(msg("x"))
    assert await asyncio.wait_for(waiter, 1) == msg("x")


def test_max_queue_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Subscription("c", max_queue=0)
    with pytest.raises(ValueError):
        BrokerOptions(max_queue=0)
    with pytest.raises(ValueError):
        BrokerOptions(reconnect_initial_s=3, reconnect_max_s=1)
    with pytest.raises(ValueError):
        BrokerOptions(command_timeout_s=0)


def test_backoff_doubles_up_to_the_cap() -> None:
    assert list(islice(backoff_delays(0.1, 2.0), 8)) == pytest.approx(
        [0.1, 0.2, 0.4, 0.8, 1.6, 2.0, 2.0, 2.0]
    )
    with pytest.raises(ValueError):
        next(backoff_delays(0, 1))
    with pytest.raises(ValueError):
        next(backoff_delays(2, 1))


def test_open_broker_picks_the_backend_by_url() -> None:
    assert isinstance(open_broker("memory://"), MemoryBroker)
    assert isinstance(open_broker("redis://127.0.0.1:6379/0"), RedisBroker)
    assert isinstance(open_broker("rediss://example.invalid:6380/1"), RedisBroker)
    with pytest.raises(ValueError):
        open_broker("kafka://localhost:9092")


async def test_named_memory_hubs_are_shared_and_plain_ones_private() -> None:
    a1, a2, lonely = open_broker("memory://hub-a"), open_broker("memory://hub-a"), open_broker("memory://")
    async with a1, a2, lonely, a2.subscribe("c") as sub:
        await lonely.publish("c", "nobody hears")
        await a1.publish("c", "shared")
        assert await asyncio.wait_for(sub.receive(), 1) == Message("c", b"shared")


async def test_unreachable_redis_fails_fast_at_start() -> None:
    port = free_port()  # nothing listens there
    broker = open_broker(f"redis://127.0.0.1:{port}/0", BrokerOptions(connect_timeout_s=1))
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(BrokerUnavailable):
        await broker.start()
    assert loop.time() - started < 2
    assert not broker.healthy


async def test_a_sink_gets_gaps_too() -> None:
    sub = Subscription("c", 4)
    got: list[object] = []
    sub.set_sink(got.append)
    sub._signal_gap(GapReason.RECONNECT)
    sub._deliver(Message("c", b"m"))
    assert got == [Gap("c", GapReason.RECONNECT, None), Message("c", b"m")]
    sub._close()
    sub._deliver(Message("c", b"late"))
    assert len(got) == 2


async def test_a_memory_capped_list_keeps_each_item_at_its_own_size() -> None:
    # Bytes fresh from orjson keep its 4 KiB buffer for as long as they live; 50 chat lines of a
    # table would hold 200 KiB.
    async with MemoryBroker("memory://capped-size") as broker:
        tracemalloc.start()
        try:
            for n in range(50):  # each line made and handed over, as the chat does
                await broker.push_capped("chat:{T}", orjson.dumps({"n": n, "text": "hello"}), 50)
            kept, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert await broker.read_list("chat:{T}") == [orjson.dumps({"n": n, "text": "hello"}) for n in range(50)]
    assert kept < 50 * 512, kept
