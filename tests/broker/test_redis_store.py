"""``RedisStore``'s per-move append (its own pipelined connection and EVALSHA), on a private
redis-server: fencing, the log-gap signal, a server that forgot its scripts, and outages."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from redis.asyncio import Redis

from app.broker import BrokerUnavailable
from app.store.redis import RedisStore
from app.tables.store import Fenced, LogGap
from tests.broker.conftest import OwnRedis

pytestmark = pytest.mark.redis


def record(version: int = 0) -> dict[str, Any]:
    return {"spec": {"watch_code": "W1", "private": False}, "version": version, "deadline": None, "seats": {1: "x"}}


def entry(n: int) -> str:
    """A log entry: the JSON text of a move, kept and given back as it is."""
    move = {"a": {"type": "attack", "seat": n % 4, "card": "QS"}, "k": f"key-{n}", "note": "козырь"}
    return orjson.dumps(move).decode()


async def test_append_then_load(own_redis: OwnRedis) -> None:
    store = RedisStore(own_redis.url, prefix="st:")
    try:
        await store.save("T1", 3, record(), [], create=True)
        await store.append("T1", 3, {"version": 1, "deadline": None}, entry(0), 0)
        for n in range(1, 20):
            await store.append("T1", 3, {"version": n + 1, "deadline": 1760000000.5 + n}, entry(n), n)
        loaded = await store.load("T1")
        assert loaded is not None
        rec, log = loaded
        assert log == [entry(n) for n in range(20)]
        assert rec["version"] == 20 and rec["deadline"] == 1760000019.5
        assert rec["seats"] == {"1": "x"}  # JSON object keys are strings
        # Appending at an earlier index replaces the tail (a move the owner retried).
        await store.append("T1", 3, {"version": 21, "deadline": None}, entry(99), 18)
        assert (await store.load("T1"))[1] == [*(entry(n) for n in range(18)), entry(99)]  # type: ignore[index]
    finally:
        await store.close()


async def test_append_is_fenced_and_reports_gaps(own_redis: OwnRedis) -> None:
    store = RedisStore(own_redis.url, prefix="st:")
    try:
        with pytest.raises(LogGap):  # no record yet
            await store.append("T2", 1, {"version": 1, "deadline": None}, entry(0), 0)
        await store.save("T2", 5, record(), [entry(0)], create=True)
        with pytest.raises(LogGap):  # the stored log is shorter than the owner's
            await store.append("T2", 5, {"version": 3, "deadline": None}, entry(2), 2)
        with pytest.raises(Fenced):
            await store.append("T2", 4, {"version": 2, "deadline": None}, entry(1), 1)
        await store.append("T2", 5, {"version": 2, "deadline": None}, entry(1), 1)
        assert (await store.load("T2"))[1] == [entry(0), entry(1)]  # type: ignore[index]
    finally:
        await store.close()


async def test_a_claim_fences_the_old_owner_without_touching_the_data(own_redis: OwnRedis) -> None:
    store = RedisStore(own_redis.url, prefix="st:")
    try:
        await store.save("T5", 5, record(), [entry(0)], create=True)
        await store.claim("T5", 9)  # the new owner, before it loads
        assert (await store.load("T5"))[1] == [entry(0)]  # type: ignore[index]
        with pytest.raises(Fenced):  # the old owner's next move is refused
            await store.append("T5", 5, {"version": 2, "deadline": None}, entry(1), 1)
        with pytest.raises(Fenced):
            await store.save("T5", 5, record(), None)
        with pytest.raises(Fenced):  # an older claim loses too
            await store.claim("T5", 7)
        await store.claim("T5", 9)  # claiming again with the same token is fine
        await store.append("T5", 9, {"version": 2, "deadline": None}, entry(1), 1)
        await store.claim("T6", 1)  # a table the store has never seen: only the fence is set
        assert await store.load("T6") is None
    finally:
        await store.close()


async def test_append_survives_a_flushed_script_cache(own_redis: OwnRedis) -> None:
    store = RedisStore(own_redis.url, prefix="st:")
    admin = Redis.from_url(own_redis.url)
    try:
        await store.save("T3", 1, record(), [], create=True)
        await store.append("T3", 1, {"version": 1, "deadline": None}, entry(0), 0)
        await admin.script_flush()
        await store.append("T3", 1, {"version": 2, "deadline": None}, entry(1), 1)  # NOSCRIPT -> EVAL
        await store.append("T3", 1, {"version": 3, "deadline": None}, entry(2), 2)
        assert (await store.load("T3"))[1] == [entry(0), entry(1), entry(2)]  # type: ignore[index]
    finally:
        await admin.aclose()
        await store.close()


async def test_append_during_an_outage_raises_then_works_again(own_redis: OwnRedis) -> None:
    store = RedisStore(own_redis.url, prefix="st:")
    try:
        await store.save("T4", 1, record(), [], create=True)
        await store.append("T4", 1, {"version": 1, "deadline": None}, entry(0), 0)
        own_redis.kill()
        with pytest.raises(BrokerUnavailable):
            await store.append("T4", 1, {"version": 2, "deadline": None}, entry(1), 1)
        own_redis.start()  # empty: the log is gone, which the owner learns as a gap
        with pytest.raises(LogGap):
            await store.append("T4", 1, {"version": 2, "deadline": None}, entry(1), 1)
        # Writing the table back takes a "create" write (after the owner took its lease again): a
        # plain write finds the table missing and says so, instead of recreating it lease-less.
        try:
            with pytest.raises(LogGap):
                await store.save("T4", 1, record(), [entry(0), entry(1)])
        except BrokerUnavailable:  # save's pooled redis-py connection may still be the dead one
            with pytest.raises(LogGap):
                await store.save("T4", 1, record(), [entry(0), entry(1)])
        with pytest.raises(LogGap):
            await store.save("T4", 1, record(), None)
        assert not await store.exists("T4")
        await store.save("T4", 2, record(), [entry(0), entry(1)], create=True)
        with pytest.raises(Fenced):  # the fence came back with it
            await store.save("T4", 1, record(), None)
        await store.append("T4", 2, {"version": 3, "deadline": None}, entry(2), 2)
        assert (await store.load("T4"))[1] == [entry(0), entry(1), entry(2)]  # type: ignore[index]
    finally:
        await store.close()
