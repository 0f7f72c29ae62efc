"""Table ownership across "processes" (registries sharing a named in-process broker and store): a
table whose owner dies is taken over, rebuilt from seed + log at the same version, and finishes with
its stakes settled exactly once; a fenced-out owner stops writing."""

from __future__ import annotations

import asyncio
import random
import uuid

import orjson
import pytest

from app.broker import open_broker
from app.broker.memory import MemoryBroker
from app.config import LeaseSettings
from app.engine import Rules, fairness, legal_actions, state_to_json
from app.engine.views import decision
from app.tables import commands as cmd
from app.tables.actor import Refused, TableActor
from app.tables.hooks import MemoryHooks
from app.tables.record import TAKEOVER_GRACE_S
from app.tables.registry import TableRegistry, lease_name
from app.tables.spec import TableSpec
from app.tables.store import MemoryStore
from app.tables.takeover_queue import TakeoverQueue
from app.transport.table_transport import BrokerTransport
from tests.support.clock import FakeClock
from tests.support.wait import eventually, loop_turns
from tests.tables.actors import (
    ALICE,
    BOB,
    CAROL,
    HeldTakeovers,
    forget_table,
    play_moves,
    seated_table,
    two_processes,
)


@pytest.mark.parametrize("leases", [LeaseSettings(), LeaseSettings(lease_ttl_s=6, takeover_sweep_s=2)])
async def test_a_dead_owners_table_is_taken_over_and_finishes_once(leases: LeaseSettings) -> None:
    """On one fake clock (the leases' expiry, the renewals and the supervisors): the table is taken
    over once its lease has lapsed and the next supervision comes, not a moment before (with the
    default timings and others set)."""
    name, clock = f"memory://takeover-{uuid.uuid4().hex}", FakeClock()
    hooks = MemoryHooks(balances={1: 500, 2: 500})
    rng = random.Random(5)
    async with MemoryBroker(name, clock=clock) as broker_a, MemoryBroker(name, clock=clock) as broker_b:
        first = TableRegistry(
            broker_a,
            hooks,
            store=MemoryStore(name),
            owner="proc-a",
            lease_settings=leases,
            clock=clock,
            sleep=clock.sleep,
            transport=BrokerTransport,
        )
        second = TableRegistry(
            broker_b,
            hooks,
            store=MemoryStore(name),
            owner="proc-b",
            lease_settings=leases,
            clock=clock,
            sleep=clock.sleep,
            transport=BrokerTransport,
        )
        await first.__aenter__()
        await second.__aenter__()
        try:
            spec = TableSpec(rules=Rules(stake=100, timer=30), creator=ALICE, bot_delay_ms=0)
            actor = await first.create(spec)
            for who in (ALICE, BOB):  # at the table: the staked match starts once both are ready (§8)
                await first.call(spec.code, cmd.Hello(), who, conn=f"{who.name}-1")
                assert (await first.call(spec.code, cmd.Join(), who))["type"] == "ack"
            assert (await first.call(spec.code, cmd.Ready(), ALICE))["type"] == "ack"
            assert actor.status == "playing" and hooks.balances == {1: 400, 2: 400}
            await play_moves(first, spec.code, 9, rng)
            before = state_to_json(actor.game)
            version = actor.version
            remaining = actor.timers.deadline - actor.clock()
            # The owner dies: its actors stop, its lease is not released.
            await first.close(release=False)
            ttl_s, sweep_s = leases.lease_ttl_s, leases.takeover_sweep_s
            for _ in range(int(ttl_s / sweep_s)):  # supervisions while the dead owner's lease holds
                await clock.advance(sweep_s * 0.99)
                for _ in range(20):
                    await asyncio.sleep(0)
            assert spec.code not in second.tables
            await clock.advance(sweep_s)  # lapsed: the next supervision takes it over
            await eventually(lambda: spec.code in second.tables, what="the other process took the table over")
            successor = second.tables[spec.code]
            assert successor.version == version
            assert state_to_json(successor.game) == before
            assert successor.fair.commitment == actor.fair.commitment  # the fair deal too
            assert successor.fair.deal == actor.fair.deal
            assert successor.timers.deadline - successor.clock() >= remaining - 1.0  # restored (+ grace)
            # A command retried with the same id after the takeover is not applied twice.
            last = orjson.loads(successor.log[-1])
            key_principal, key_id = last["k"].split("|", 1)
            who = ALICE if key_principal == ALICE.key else BOB
            again = await second.call(spec.code, cmd.body_from_json(last["a"]), who, id=key_id)
            assert again["type"] == "ack" and again.get("duplicate") is True
            assert successor.version == version
            while successor.status == "playing":
                await play_moves(second, spec.code, 50, rng)
            await eventually(lambda: len(hooks.finished) == 1, what="the match is settled")
            assert sum(hooks.balances.values()) == 1000
            revealed = next(iter(hooks.finished.values())).fairness
            assert revealed is not None and fairness.verify(revealed)[0] == []
            assert revealed["commitment"] == actor.fair.commitment
        finally:
            await second.close()


async def test_a_fenced_out_owner_stops_writing() -> None:
    async with two_processes() as (first, second):
        spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
        actor = await first.create(spec)
        # The lease lapses (e.g. a long pause) and another process takes the table.
        await first.broker.release_lease(lease_name(spec.code), "proc-a", actor.recorder.token)
        taken = await second.take_over(spec.code)
        assert taken is not None and taken.recorder.token > actor.recorder.token
        # The old owner's next write is refused: it learns it was fenced and stops.
        with pytest.raises(Refused) as refused:
            await actor.save_now()
        assert refused.value.code == "moved" and actor.recorder.fenced
        stored = await second.store.load(spec.code)
        assert stored is not None and stored[0]["version"] == taken.version


async def test_the_stored_log_follows_the_match_without_being_rewritten_at_its_end() -> None:
    name = f"memory://log-{uuid.uuid4().hex}"
    store = MemoryStore(name)
    saved_logs: list[int | None] = []
    original_save = store.save

    async def save(code, token, record, log, *, create=False):  # records how much of the log each save rewrites
        saved_logs.append(None if log is None else len(log))
        await original_save(code, token, record, log, create=create)

    store.save = save  # type: ignore[method-assign]
    async with seated_table(Rules(timer=0), name=name, store=store) as (_, registry, actor):
        rng = random.Random(3)
        while actor.status == "playing":
            await play_moves(registry, actor.code, 50, rng)
        loaded = await store.load(actor.code)
        assert loaded is not None
        assert loaded[1] == actor.log and len(actor.log) > 10
        assert loaded[0]["status"] == "finished" and loaded[0]["results"] == actor.results
        assert saved_logs[-1] is None  # the results: the record alone, the log was already there
        assert max(n or 0 for n in saved_logs) == 0  # the whole log was never written again
        for who in (ALICE, BOB):  # both agree to the rematch
            assert (await registry.call(actor.code, cmd.Rematch(), who))["type"] == "ack"
        loaded = await store.load(actor.code)
        assert loaded is not None and loaded[1] == [] and actor.status == "playing"


async def _playing_without_its_lease(first: TableRegistry, rng: random.Random) -> tuple[TableSpec, TableActor]:
    """A two-player match of "proc-a", five moves in, whose lease is gone while its actor lives on."""
    spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
    actor = await first.create(spec)
    await first.call(spec.code, cmd.Join(), ALICE)
    await first.call(spec.code, cmd.Join(), BOB)
    await play_moves(first, spec.code, 5, rng)
    await first.broker.release_lease(lease_name(spec.code), "proc-a", actor.recorder.token)
    return spec, actor


async def test_a_takeover_loses_no_move_the_old_owner_acknowledged() -> None:
    """The old owner still runs (it lost only its lease, say to a Redis restart) and accepts a move
    while the new owner is loading the table. The new owner claims the table before loading, so that
    move is refused ("moved") instead of acknowledged and then lost."""
    rng = random.Random(11)
    async with two_processes() as (first, second):
        spec, actor = await _playing_without_its_lease(first, rng)

        replies: list[dict] = []
        real_load = second.store.load

        async def load_then_old_owner_moves(code: str):  # the old owner moves during the takeover
            loaded = await real_load(code)
            seat = decision(actor.game)["seats"][0]
            move = next(a for a in legal_actions(actor.game, seat) if a.kind != "challenge")
            replies.append(await first.call(code, cmd.move_of(move), (ALICE, BOB)[seat], id="late"))
            return loaded

        second.store.load = load_then_old_owner_moves  # type: ignore[method-assign]
        taken = await second.take_over(spec.code)
        assert taken is not None
        assert replies[0]["type"] == "error" and replies[0]["code"] == "moved", replies
        assert actor.recorder.fenced
        assert [orjson.loads(entry)["k"] for entry in taken.log] == [orjson.loads(entry)["k"] for entry in actor.log]
        assert taken.version == actor.version


async def test_a_table_the_store_lost_is_not_taken_from_its_living_owner() -> None:
    """A Redis node restarted empty took the table's record and lease with it, while its owner lives
    on. Another process must not claim it (it has nothing to rebuild it from, and the claim would
    fence the owner out): the owner takes its lease again and writes the table whole."""
    async with two_processes() as (first, second):
        spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
        actor = await first.create(spec)
        await first.call(spec.code, cmd.Join(), ALICE)
        await first.call(spec.code, cmd.Join(), BOB)
        await play_moves(first, spec.code, 5, random.Random(5))
        await first.store.remove(spec.code, actor.recorder.token)  # what the restarted node lost
        await first.broker.release_lease(lease_name(spec.code), "proc-a", actor.recorder.token)
        assert await second.take_over(spec.code) is None
        assert await second.broker.lease_holder(lease_name(spec.code)) is None

        async def written_again() -> bool:  # by the owner's lease keeper (every lease_ttl_s / 3)
            loaded = await second.store.load(spec.code)
            return loaded is not None and loaded[1] == actor.log

        await eventually(written_again, what="the owner takes its lease again and writes the table whole")
        holder = await second.broker.lease_holder(lease_name(spec.code))
        assert holder is not None and holder.owner == "proc-a" and not actor.recorder.fenced
        assert (await first.call(spec.code, cmd.Info(), ALICE))["type"] == "info"


async def test_a_table_whose_first_lease_lapsed_while_it_opened_stays_with_its_process(monkeypatch) -> None:
    name = f"memory://opening-{uuid.uuid4().hex}"
    async with open_broker(name) as broker:
        registry = TableRegistry(
            broker, MemoryHooks(), store=MemoryStore(name), owner="proc-a", supervise=False, transport=BrokerTransport
        )
        async with registry:
            start = TableActor.start
            opened: list[TableActor] = []

            async def slow_start(actor: TableActor) -> None:
                opened.append(actor)
                if len(opened) == 1:
                    # So busy a process that the new table's lease lapses before the table is
                    # served, and the supervisor comes round meanwhile.
                    await broker.release_lease(lease_name(actor.code), "proc-a", actor.recorder.token)
                    await registry.adopt_orphans()
                await start(actor)

            monkeypatch.setattr(TableActor, "start", slow_start)
            actor = await registry.create(TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0))
            assert opened == [actor]  # no second actor: nobody took the table over
            assert registry.tables[actor.code] is actor and not actor.recorder.fenced
            await registry.keep_leases()  # the lapsed lease is taken again, with a new token
            holder = await broker.lease_holder(lease_name(actor.code))
            assert holder is not None and holder.owner == "proc-a" and holder.token == actor.recorder.token
            assert (await registry.call(actor.code, cmd.Join(), ALICE))["type"] == "ack"  # not "moved"
            assert not actor.recorder.fenced


async def test_a_store_that_restarted_empty_never_hands_a_living_owners_table_to_another_process() -> None:
    """A Redis without persistence restarts: the table's record, log and lease are gone while its
    owner lives on. No other process may take the table over: the owner takes its lease again
    before it writes the table back (docs/broker.md, "A master that comes back empty")."""
    rng = random.Random(13)
    async with two_processes() as (first, second):
        spec, actor = await _playing_without_its_lease(first, rng)
        forget_table(first.store, spec.code)  # type: ignore[arg-type]
        await second.adopt_orphans()  # nothing stored to rebuild it from
        assert spec.code not in second.tables
        version = actor.version
        await play_moves(first, spec.code, 3, rng)  # the next move takes the lease again, then writes back
        assert actor.version == version + 3 and not actor.recorder.fenced
        holder = await first.broker.lease_holder(lease_name(spec.code))
        assert holder is not None and holder[0] == "proc-a"
        stored = await first.store.load(spec.code)
        assert stored is not None and stored[1] == actor.log
        await second.adopt_orphans()
        assert spec.code not in second.tables and spec.code in first.tables


async def test_looking_for_orphans_asks_for_every_lease_in_one_call() -> None:
    """Each process looks for orphaned tables every second: the leases of every table another
    process owns, in one round trip (one ``lease_holders`` call), not one call per table."""
    async with two_processes() as (first, second):
        codes = []
        for creator in (ALICE, ALICE, BOB, BOB, CAROL):  # at most three waiting tables each
            spec = TableSpec(rules=Rules(timer=0), creator=creator, bot_delay_ms=0)
            await first.create(spec)
            codes.append(spec.code)
        broker = second.broker
        asked: list[list[str]] = []
        one_by_one = 0
        lease_holders, lease_holder = broker.lease_holders, broker.lease_holder

        async def spy_many(names):
            asked.append(list(names))
            return await lease_holders(names)

        async def spy_one(name):
            nonlocal one_by_one
            one_by_one += 1
            return await lease_holder(name)

        broker.lease_holders = spy_many  # type: ignore[method-assign]
        broker.lease_holder = spy_one  # type: ignore[method-assign]
        await second.adopt_orphans()
        assert [sorted(names) for names in asked] == [sorted(lease_name(code) for code in codes)]
        assert one_by_one == 0 and not second.tables  # every lease is held: nothing taken over
        await first.broker.release_lease(lease_name(codes[2]), "proc-a", first.tables[codes[2]].recorder.token)
        await second.adopt_orphans()
        assert list(second.tables) == [codes[2]]  # the one whose lease lapsed


async def _taken_over_by_second(first: TableRegistry, second: TableRegistry, actor: TableActor) -> TableActor:
    """The first process dies (its actors stop, its lease is not released by it but runs out)."""
    await first.close(release=False)
    await first.broker.release_lease(lease_name(actor.code), "proc-a", actor.recorder.token)
    taken = await second.take_over(actor.code)
    assert taken is not None
    return taken


async def test_a_rematch_agreed_before_a_takeover_is_kept_and_the_series_counts_the_match_once() -> None:
    async with two_processes() as (first, second):
        spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
        actor = await first.create(spec)
        await first.call(spec.code, cmd.Join(), ALICE)
        await first.call(spec.code, cmd.Join(), BOB)
        assert (await first.call(spec.code, cmd.Leave(), BOB))["type"] == "ack"  # a forfeit ends the match
        assert actor.status == "finished"
        assert (await first.call(spec.code, cmd.Rematch(), ALICE))["type"] == "ack"
        proposal = actor.seating.rematch
        assert proposal is not None
        left = proposal.deadline - actor.clock()
        series, version = dict(actor.seating.series), actor.version
        taken = await _taken_over_by_second(first, second, actor)
        assert taken.status == "finished" and taken.version == version
        assert taken.seating.series == series  # not counted again when the match is settled again
        assert taken.seating.rematch is not None and taken.seating.rematch.agreed == {0}
        assert left < taken.seating.rematch.deadline - taken.clock() <= left + TAKEOVER_GRACE_S + 0.5
        assert (await second.call(spec.code, cmd.Info(), ALICE))["table"]["rematch"]["agreed"] == [0]
        # Bob agrees on the new owner: the rematch starts.
        assert (await second.call(spec.code, cmd.Rematch(), BOB))["type"] == "ack"
        assert taken.status == "playing" and taken.match_id != actor.match_id


async def test_a_match_whose_owner_died_after_its_last_move_is_ended_by_the_new_owner(monkeypatch) -> None:
    """The last move was saved, the match's end was not (the owner died in between): the new owner
    ends it (results, series, settlement) instead of leaving a finished game "playing"."""
    async with two_processes() as (first, second):
        spec = TableSpec(rules=Rules(timer=0, deck=24), creator=ALICE, bot_delay_ms=0)
        actor = await first.create(spec)
        await first.call(spec.code, cmd.Join(), ALICE)
        await first.call(spec.code, cmd.Join(), BOB)

        async def died_first(bump: bool = True) -> None:
            return None

        monkeypatch.setattr(actor, "_finish_match", died_first)
        rng = random.Random(8)
        while actor.game.outcome is None:
            assert await play_moves(first, spec.code, 1, rng) == 1
        assert actor.status == "playing"
        taken = await _taken_over_by_second(first, second, actor)
        assert taken.status == "finished" and taken.version == actor.version + 1
        assert taken.results is not None and taken.results["match_id"] == actor.match_id
        assert sorted(taken.seating.series.values()) in ([(0, 1), (1, 0)], [(0, 0), (0, 0)])
        await taken._settle_task
        hooks = second.hooks
        assert isinstance(hooks, MemoryHooks) and list(hooks.finished) == [actor.match_id]


async def test_two_takeovers_of_one_table_at_once_in_one_process_serve_it_once() -> None:
    """A handover's takeover and the supervisor's, under way together: the lease is the process's
    for both (same token), so both would rebuild the table, two actors writing with one token."""
    async with two_processes() as (first, second):
        actor = await first.create(TableSpec(rules=Rules(deck=36, seats=2, timer=0), creator=ALICE, bot_delay_ms=0))
        await first.call(actor.code, cmd.Join(), ALICE)
        await first.close()  # its process stops: lease released
        taken = await asyncio.gather(second.take_over(actor.code), second.take_over(actor.code))
        assert len([t for t in taken if t is not None]) == 1
        assert second.tables[actor.code] in taken


async def test_after_a_kill_the_playing_tables_are_taken_over_first() -> None:
    """A killed process's lapsed tables: its running matches are taken over before its waiting and
    finished tables, whatever order the store lists them in."""
    async with two_processes() as (first, second):
        others = [await first.create(TableSpec(rules=Rules(timer=0), creator=ALICE)) for _ in range(2)]
        ended = await first.create(TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0))
        playing = [ended]
        for _ in range(3):
            playing.append(await first.create(TableSpec(rules=Rules(timer=0), creator=BOB, bot_delay_ms=0)))
        for actor in playing:
            await first.call(actor.code, cmd.Join(), ALICE)
            await first.call(actor.code, cmd.Join(), BOB)
        await first.call(ended.code, cmd.Leave(), BOB)  # a forfeit ends it
        playing.remove(ended)
        others.append(ended)
        tokens = {code: actor.recorder.token for code, actor in first.tables.items()}
        await first.close(release=False)  # killed: its leases run out
        for code, token in tokens.items():
            await first.broker.release_lease(lease_name(code), "proc-a", token)

        async def codes() -> list[str]:  # the waiting and finished tables listed first
            return [actor.code for actor in others + playing]

        second.store.codes = codes  # type: ignore[method-assign]
        started: list[str] = []
        take_over = second.leases.take_over

        async def spy(code: str) -> TableActor | None:
            started.append(code)
            return await take_over(code)

        second.leases.take_over = spy  # type: ignore[method-assign]
        await second.adopt_orphans()  # returns once the running matches are taken over
        assert {actor.code for actor in playing} <= set(second.tables)
        # The others follow in the slow lane (not waited for).
        await eventually(lambda: set(second.tables) == set(tokens), 5.0, what="every table taken over")
        assert set(started[:3]) == {actor.code for actor in playing}
        assert set(started) == set(tokens)


async def test_tables_without_a_match_wait_in_a_slow_lane_of_the_takeover_queue() -> None:
    """Waiting and finished tables are taken over only while no live one waits, LATER_AT_ONCE at a
    time; a table of the slow lane asked for again as urgent moves up."""
    held = HeldTakeovers()
    started = held.started
    queue = TakeoverQueue(4, held.take)
    slow = [queue.ask(f"idle{n}", "handover", later=True) for n in range(6)]
    await loop_turns()
    assert started == ["idle0", "idle1"]  # nothing urgent: the slow lane, two at a time
    urgent = [queue.ask(f"live{n}", "handover") for n in range(3)]
    assert queue.ask("idle5", "handover") is None  # moves up
    await loop_turns()
    assert started == ["idle0", "idle1", "live0", "live1"]  # at most 4 in all
    held.go_on.set()
    await asyncio.wait_for(asyncio.gather(*(done for done in slow + urgent if done is not None)), 5)
    assert started[4:6] == ["live2", "idle5"]  # the urgent ones before the rest of the slow lane
    assert started[6:] == ["idle2", "idle3", "idle4"]
    assert held.most == 4
