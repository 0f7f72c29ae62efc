"""The ``memory://`` broker forgets what belongs to tables that are gone (issue 35.20): nothing of a
lease is kept once it is released or has expired, and capped lists (a table's chat) honour their
time to live, as Redis does. Before, a fence per lease name and every chat list stayed for the
process's life: one of each for every table ever opened."""

from __future__ import annotations

from app.broker.memory import LIST_SWEEP_S, MemoryBroker
from tests.support.clock import FakeClock


async def test_released_and_expired_leases_leave_nothing_behind_and_tokens_still_grow() -> None:
    clock = FakeClock()
    broker = MemoryBroker(clock=clock)
    await broker.start()
    tokens = []
    for i in range(1000):
        token = await broker.acquire_lease(f"table:{i}", "proc-a", 5)
        assert token is not None
        tokens.append(token)
        assert await broker.release_lease(f"table:{i}", "proc-a", token)
    lapsing = await broker.acquire_lease("table:lapsing", "proc-a", 1)
    await clock.advance(2)
    assert await broker.lease_holder("table:lapsing") is None

    hub = broker._hub
    assert hub.leases == {}
    assert not hasattr(hub, "fences")
    # A name used again gets a larger token than it (or any name) ever had: fencing still holds.
    again = await broker.acquire_lease("table:0", "proc-b", 5)
    assert lapsing is not None and again is not None and again > lapsing > max(tokens)
    assert tokens == sorted(tokens)
    await broker.aclose()


async def test_capped_lists_leave_memory_when_their_time_is_up() -> None:
    clock = FakeClock()
    broker = MemoryBroker(clock=clock)
    await broker.start()
    for i in range(100):
        await broker.push_capped(f"chat:{{table{i}}}", f"line {i}", 50, ttl_s=3600)
    await broker.push_capped("kept", "for ever", 50)
    assert await broker.read_list("chat:{table0}") == [b"line 0"]

    await clock.advance(3600 + LIST_SWEEP_S)
    assert await broker.read_list("chat:{table0}") == []  # expired: gone when read
    await broker.push_capped("chat:{fresh}", "hello", 50, ttl_s=3600)  # a push sweeps the others out

    hub = broker._hub
    assert set(hub.lists) == {broker.prefix + "kept", broker.prefix + "chat:{fresh}"}
    assert set(hub.list_expiry) == {broker.prefix + "chat:{fresh}"}
    assert await broker.read_list("kept") == [b"for ever"]
    await broker.aclose()
