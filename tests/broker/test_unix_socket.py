"""Redis reached over its unix socket (``unix:///path/redis.sock?db=0``): the same broker and
table store as over TCP, for processes on the machine that runs Redis."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from app.broker import BrokerOptions, open_broker
from app.broker.redis import RedisBroker
from app.config import Settings
from app.store import open_store
from app.store.redis import RedisStore
from app.tables.store import LogGap
from tests.broker.conftest import OwnRedis


def test_settings_and_factories_accept_a_unix_socket_url() -> None:
    url = "unix:///run/redis/redis.sock?db=0"
    assert Settings(broker_url=url).storage.broker_url == url
    assert isinstance(open_broker(url), RedisBroker)
    assert isinstance(open_store(url), RedisStore)
    with pytest.raises(ValidationError, match=r"unix:///path/redis\.sock"):
        Settings(broker_url="amqp://127.0.0.1")


async def test_pubsub_and_the_fenced_log_work_over_the_unix_socket(own_redis: OwnRedis) -> None:
    options = BrokerOptions(prefix="unix-test:")
    async with open_broker(own_redis.unix_url, options) as one, open_broker(own_redis.unix_url, options) as two:
        async with two.subscribe("t:x:watch") as sub:
            await one.publish_many([("t:x:watch", "a"), ("t:x:watch", b"b")])
            got = [await asyncio.wait_for(sub.receive(), 2) for _ in range(2)]
        assert [item.data for item in got] == [b"a", b"b"]
        assert await one.acquire_lease("table:x", "me", 5) is not None

    store = RedisStore(own_redis.unix_url, prefix="unix-test:")
    try:
        record = {"spec": {"code": "x", "watch_code": "w", "private": False}, "version": 0}
        await store.save("x", 1, record, [], create=True)
        await store.append("x", 1, {"version": 1, "deadline": None}, '{"a":{"type":"take","seat":1}}', 0)
        with pytest.raises(LogGap):
            await store.append("x", 1, {"version": 3, "deadline": None}, '{"a":{"type":"pass","seat":0}}', 2)
        loaded = await store.load("x")
        assert loaded is not None and loaded[1] == ['{"a":{"type":"take","seat":1}}']
    finally:
        await store.close()
