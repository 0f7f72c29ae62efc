"""A lapsed lease is not taken over while nobody could have renewed it (app/tables/takeover_hold.py): after
a stall of the broker, the supervisor waits until the broker has answered promptly for ``HOLD_S``;
a living owner takes its lease back meanwhile."""

from __future__ import annotations

from app.engine import Rules
from app.tables.registry import lease_name
from app.tables.spec import TableSpec
from app.tables.takeover_hold import HOLD_S, SLOW_RUN_S, STALL_S, TakeoverHold
from tests.tables.actors import ALICE, two_processes


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_takeovers_wait_after_a_slow_or_failed_look_until_the_broker_answered_promptly_long_enough() -> None:
    clock = Clock()
    hold = TakeoverHold(clock)
    clock.now += 0.1
    assert hold.looked(clock.now - 0.1)  # prompt, no stall ever: at once
    started = clock.now
    clock.now += STALL_S + 0.1  # the broker stalled during this look
    assert not hold.looked(started)
    clock.now += 1.0  # the first prompt answer after the stall: the hold runs from here
    assert not hold.looked(clock.now)
    clock.now += HOLD_S - 0.1
    assert not hold.looked(clock.now)
    clock.now += 0.2
    assert hold.looked(clock.now)
    hold.failed()  # the broker was unreachable: a hold from its next prompt answer
    clock.now += 10.0
    assert not hold.looked(clock.now)
    clock.now += HOLD_S
    assert hold.looked(clock.now)
    # Looks slow for longer than SLOW_RUN_S in a row are how things are now, not a stall: a dead
    # owner's tables are taken over anyway.
    held = []
    for _ in range(int(SLOW_RUN_S / 0.5) + 5):
        started = clock.now
        clock.now += 0.5 + STALL_S  # each look slow, with its second's wait after it
        held.append(not hold.looked(started))
    assert held[0] and not held[-1]


async def test_after_a_stall_the_living_owner_takes_its_lapsed_lease_back_before_anyone_takes_the_table() -> None:
    clock = Clock()
    async with two_processes() as (first, second):
        second.leases.takeover_hold = TakeoverHold(clock)
        actor = await first.create(TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0))
        code, token = actor.code, actor.recorder.token
        # Redis stalled: the lease expired meanwhile, and the other process's look took long.
        await first.broker.release_lease(lease_name(code), "proc-a", token)
        lease_holders = second.broker.lease_holders

        async def stalled(names):  # type: ignore[no-untyped-def]
            clock.now += STALL_S + 1.0
            return await lease_holders(names)

        second.broker.lease_holders = stalled  # type: ignore[method-assign]
        await second.adopt_orphans()
        second.broker.lease_holders = lease_holders  # type: ignore[method-assign]
        assert code not in second.tables
        await second.adopt_orphans()  # prompt now, but not for long enough
        assert code not in second.tables
        await first.keep_leases()  # the owner's renewal finds its lease gone and takes it again
        holder = await first.broker.lease_holder(lease_name(code))
        assert holder is not None and holder.owner == "proc-a" and actor.recorder.token > token
        clock.now += HOLD_S + 0.1
        await second.adopt_orphans()
        assert code not in second.tables and first.tables[code] is actor and not actor.recorder.fenced
        # An owner that really died: its lapsed lease is taken over once the hold is over.
        await first.close(release=False)
        await first.broker.release_lease(lease_name(code), "proc-a", actor.recorder.token)
        await second.adopt_orphans()
        assert code in second.tables
