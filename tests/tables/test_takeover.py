"""Table ownership across "processes" (registries sharing a named in-process broker and store): a
table whose owner dies is taken over, rebuilt from seed + log at the same version, and finishes with
its stakes settled exactly once; a fenced-out owner stops writing."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from app.broker import open_broker
from app.engine import Rules, action_to_json, decision, legal_actions, state_to_json
from app.tables.actor import Refused
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore

ALICE = Principal("a:1", "alice", 1)
BOB = Principal("a:2", "bob", 2)


async def _play(registry: TableRegistry, code: str, steps: int, rng: random.Random) -> int:
    """Random legal moves through the table's inbox, as a client on any process would send them."""
    done = 0
    for _ in range(steps):
        actor = registry.tables[code]
        if actor.status != "playing":
            break
        waiting = decision(actor.game)["seats"]
        seat = waiting[0] if waiting else rng.randrange(2)
        options = [a for a in legal_actions(actor.game, seat) if a.kind != "challenge"]
        if not options:
            continue
        action = rng.choice(options)
        body = {k: v for k, v in action_to_json(action).items() if k not in ("seat", "type")}
        reply = await registry.call(code, action.kind, (ALICE, BOB)[seat], id=uuid.uuid4().hex, **body)
        assert reply["type"] == "ack", reply
        done += 1
    return done


async def test_a_dead_owners_table_is_taken_over_and_finishes_once(monkeypatch) -> None:
    monkeypatch.setattr("app.tables.registry.LEASE_TTL_S", 0.6)
    monkeypatch.setattr("app.tables.registry.SUPERVISE_S", 0.1)
    name = f"memory://takeover-{uuid.uuid4().hex}"
    hooks = MemoryHooks(balances={1: 500, 2: 500})
    rng = random.Random(5)
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(broker_a, hooks, store=MemoryStore(name), owner="proc-a")
        second = TableRegistry(broker_b, hooks, store=MemoryStore(name), owner="proc-b")
        await first.__aenter__()
        await second.__aenter__()
        try:
            spec = TableSpec(rules=Rules(stake=100, timer=30), creator=ALICE, bot_delay_ms=0)
            actor = await first.create(spec)
            assert (await first.call(spec.code, "join", ALICE))["type"] == "ack"
            assert (await first.call(spec.code, "join", BOB))["type"] == "ack"
            assert actor.status == "playing" and hooks.balances == {1: 400, 2: 400}
            await _play(first, spec.code, 9, rng)
            before = state_to_json(actor.game)
            version = actor.version
            remaining = actor.deadline - actor.clock()
            # The owner dies: its actors stop, its lease is not released.
            await first.close(release=False)
            for _ in range(100):
                if spec.code in second.tables:
                    break
                await asyncio.sleep(0.05)
            successor = second.tables[spec.code]
            assert successor.version == version
            assert state_to_json(successor.game) == before
            assert successor.deadline - successor.clock() >= remaining - 1.0  # restored (+ grace)
            # A command retried with the same id after the takeover is not applied twice.
            last = successor.log[-1]
            key_principal, key_id = last["k"].split("|", 1)
            who = ALICE if key_principal == ALICE.key else BOB
            body = {k: v for k, v in last["a"].items() if k not in ("seat", "type")}
            again = await second.call(spec.code, last["a"]["type"], who, id=key_id, **body)
            assert again["type"] == "ack" and again.get("duplicate") is True
            assert successor.version == version
            while successor.status == "playing":
                await _play(second, spec.code, 50, rng)
            await asyncio.sleep(0.05)
            assert len(hooks.finished) == 1
            assert sum(hooks.balances.values()) == 1000
        finally:
            await second.close()


async def test_a_fenced_out_owner_stops_writing(monkeypatch) -> None:
    name = f"memory://fence-{uuid.uuid4().hex}"
    hooks = MemoryHooks()
    async with open_broker(name) as broker_a, open_broker(name) as broker_b:
        first = TableRegistry(broker_a, hooks, store=MemoryStore(name), owner="proc-a", supervise=False)
        second = TableRegistry(broker_b, hooks, store=MemoryStore(name), owner="proc-b", supervise=False)
        await first.__aenter__()
        await second.__aenter__()
        try:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await first.create(spec)
            # The lease lapses (e.g. a long pause) and another process takes the table.
            await broker_a.release_lease(f"table:{spec.code}", "proc-a", actor.token)
            taken = await second.take_over(spec.code)
            assert taken is not None and taken.token > actor.token
            # The old owner's next write is refused: it learns it was fenced and stops.
            with pytest.raises(Refused) as refused:
                await actor.save_now()
            assert refused.value.code == "moved" and actor.fenced
            stored = await second.store.load(spec.code)
            assert stored is not None and stored[0]["version"] == taken.version
        finally:
            await first.close()
            await second.close()


async def test_the_stored_log_follows_the_match_without_being_rewritten_at_its_end() -> None:
    name = f"memory://log-{uuid.uuid4().hex}"
    store = MemoryStore(name)
    saved_logs: list[int | None] = []
    original_save = store.save

    async def save(code, token, record, log):  # records how much of the log each save rewrites
        saved_logs.append(None if log is None else len(log))
        await original_save(code, token, record, log)

    store.save = save  # type: ignore[method-assign]
    async with open_broker(name) as broker:
        registry = TableRegistry(broker, MemoryHooks(), store=store, supervise=False)
        async with registry:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            await registry.call(spec.code, "join", ALICE)
            await registry.call(spec.code, "join", BOB)
            rng = random.Random(3)
            while actor.status == "playing":
                await _play(registry, spec.code, 50, rng)
            loaded = await store.load(spec.code)
            assert loaded is not None
            assert loaded[1] == actor.log and len(actor.log) > 10
            assert loaded[0]["status"] == "finished" and loaded[0]["results"] == actor.results
            assert saved_logs[-1] is None  # the results: the record alone, the log was already there
            assert max(n or 0 for n in saved_logs) == 0  # the whole log was never written again
            assert (await registry.call(spec.code, "rematch", ALICE))["type"] == "ack"
            for who in (ALICE, BOB):  # nobody is connected, so both seats were freed: sit again
                if actor.seat_of(who) is None:
                    assert (await registry.call(spec.code, "join", who))["type"] == "ack"
            loaded = await store.load(spec.code)
            assert loaded is not None and loaded[1] == [] and actor.status == "playing"
