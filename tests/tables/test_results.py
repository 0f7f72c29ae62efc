"""A finished match on plain values (results.py) and its settlement, and the actor's queue
(inbox.py)."""

from __future__ import annotations

import asyncio

from app.broker import Gap, GapReason, Message
from app.engine import Forfeit, Rules, apply, new_match
from app.tables import commands as cmd
from app.tables.commands import Command, command_to_json
from app.tables.hooks import FinishedMatch, MemoryHooks
from app.tables.inbox import Inbox
from app.tables.results import SETTLE_TRIES, match_end, settle
from app.tables.spec import Principal, Seat, TableSpec
from tests.support.clock import FakeClock

ALICE = Principal(key="a:1", name="alice", account_id=1)
GUEST = Principal(key="g:9", name="gus")


def test_a_forfeit_pays_the_other_seat_counts_in_the_series_and_records_who_sat_where() -> None:
    game, _ = apply(new_match(Rules(stake=10), seed=3, dealer=0), Forfeit(1, "left"))
    seats = [Seat(0, "human", ALICE), Seat(1, "human", GUEST)]
    spec = TableSpec(Rules(stake=10), ALICE, private=True, code="tbl")
    end = match_end(game, Rules(stake=10), seats, {"a:1": (4, 0)}, spec, match_id="m", actions=[{"a": 1}])
    assert end.results["coin_changes"] == {0: 10, 1: -10} and end.results["match_id"] == "m"
    assert end.series == {"a:1": (5, 0), "g:9": (0, 1)} and end.next_dealer == 1
    assert end.record.payouts == {1: 20}  # only accounts are paid; the guest has none
    assert [s["account_id"] for s in end.record.seats] == [1, None]
    assert [s["guest_name"] for s in end.record.seats] == [None, "gus"]
    assert end.record.private and end.record.actions == [{"a": 1}] and end.record.table_code == "tbl"


async def test_a_deadline_that_has_come_goes_before_queued_commands() -> None:
    clock = FakeClock()
    inbox = Inbox(clock)
    due: list[float | None] = [None]
    inbox.post(Command(cmd.Wake()))
    assert await inbox.next(lambda: due[0]) == Command(cmd.Wake())
    inbox.post(Command(cmd.Info()))
    due[0] = clock.now  # the deadline has come: it goes first
    assert await inbox.next(lambda: due[0]) is None
    due[0] = None
    assert await inbox.next(lambda: due[0]) == Command(cmd.Info())
    waiting = asyncio.ensure_future(inbox.next(lambda: due[0]))
    await asyncio.sleep(0)
    assert not waiting.done()  # nothing queued, no deadline: it waits
    inbox.post(Command(cmd.Bye()))
    assert await asyncio.wait_for(waiting, 1) == Command(cmd.Bye())
    inbox.close()


class _FlakyLedger(MemoryHooks):
    """Fails the first ``failures`` settlements, as a database that is briefly away."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures
        self.tries = 0

    async def match_finished(self, match: FinishedMatch) -> None:
        self.tries += 1
        if self.tries <= self.failures:
            raise ConnectionError("database away")
        await super().match_finished(match)


async def test_settling_a_match_is_retried_with_growing_pauses_until_the_ledger_takes_it() -> None:
    game, _ = apply(new_match(Rules(), seed=3, dealer=0), Forfeit(1, "left"))
    seats = [Seat(0, "human", ALICE), Seat(1, "human", GUEST)]
    record = match_end(game, Rules(), seats, {}, TableSpec(Rules(), ALICE), "m", []).record
    pauses: list[float] = []

    async def pause(seconds: float) -> None:
        pauses.append(seconds)

    ledger = _FlakyLedger(failures=6)
    assert await settle(ledger, record, pause) is True
    assert ledger.tries == 7 and "m" in ledger.finished and pauses == [0.2, 0.4, 0.8, 1.6, 3.2, 5.0]
    pauses.clear()
    assert await settle(_FlakyLedger(failures=100), record, pause) is False  # gives up after SETTLE_TRIES
    assert len(pauses) == SETTLE_TRIES


async def test_the_inbox_queues_the_broker_commands_and_drops_what_is_no_command() -> None:
    inbox = Inbox(FakeClock(), "x")
    for event in (
        Message("t:x:in", command_to_json(Command(cmd.Info(), principal=ALICE))),
        Gap("t:x:in", GapReason.RECONNECT),  # commands lost in a gap are answered by the clients' own timeouts
        Message("t:x:in", b"not json"),
        Message("t:x:in", command_to_json(Command(cmd.Wake()))),
    ):
        inbox.heard(event)
    assert await inbox.next(lambda: None) == Command(cmd.Info(), principal=ALICE, remote=True)
    assert await inbox.next(lambda: None) == Command(cmd.Wake(), remote=True)
