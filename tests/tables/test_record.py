"""Saving and restoring a table on plain values: a record and its log give back the same match, and
the recorder appends moves, rewrites the record when it must, and stops at a newer owner's fence."""

from __future__ import annotations

import gc
import uuid

import orjson
import pytest

from app.engine import Card, Lead, Pass, Rules, action_from_json, action_to_json, apply, legal_actions, new_match
from app.tables.commands import Refused
from app.tables.record import (
    Recorder,
    TableRecord,
    log_entry,
    logged_actions,
    read_record,
    record_json,
    takeover_deadline,
)
from app.tables.spec import Principal, Seat, TableSpec
from app.tables.store import LogGap, MemoryStore
from tests.tables.actors import forget_table

ALICE = Principal(key="a:1", name="alice", account_id=1)


def _played(moves: int) -> tuple[TableRecord, list[str]]:
    spec = TableSpec(rules=Rules(), creator=ALICE)
    game = new_match(spec.rules, seed=42, dealer=0)
    start = game
    log = []
    for n in range(moves):
        seat = next(s for s in range(2) if legal_actions(game, s))
        action = legal_actions(game, seat)[0]
        game, _ = apply(game, action)
        log.append(log_entry(action, f"{ALICE.key}|cmd-{n}" if n % 2 == 0 else None))
    seats = [Seat(0, "human", ALICE), Seat(1, "bot", None, "easy")]
    table = TableRecord(spec, spec.rules, seats, "playing", 7, "m1", {"a:1": (2, 1)}, 1, None, 5.0, None, start)
    return table, log


def test_a_record_and_its_log_give_back_the_same_match_and_the_answers_of_logged_commands() -> None:
    table, log = _played(4)
    replayed = new_match(table.rules, seed=42, dealer=0)
    for action in logged_actions(log):
        replayed, _ = apply(replayed, action_from_json(action))
    back = read_record(record_json(table, {"facts": 1}), log)
    assert back.game == replayed and back.log == log and back.version == 7
    assert [(s.seat, s.kind, s.principal, s.level) for s in back.seats] == [
        (0, "human", ALICE, None),
        (1, "bot", None, "easy"),
    ]
    assert back.series == {"a:1": (2, 1)} and back.next_dealer == 1 and back.match_id == "m1"
    assert back.done == {
        ("a:1", "cmd-0"): {"type": "ack", "id": "cmd-0", "version": 7},
        ("a:1", "cmd-2"): {"type": "ack", "id": "cmd-2", "version": 7},
    }


def test_a_waiting_table_has_no_game_and_a_takeover_adds_a_grace_to_the_timer() -> None:
    table, _ = _played(0)
    table.status, table.game = "waiting", None
    assert read_record(record_json(table, {}), []).game is None
    assert takeover_deadline(None, 100.0) is None
    import time

    left = takeover_deadline(time.time() + 10, 100.0)
    assert left is not None and 112.5 < left <= 113.0  # 10 s left + the 3 s takeover grace
    # Saved 5 s ago with 10 s left: the owner may have died right then, and the table had no owner
    # since. The player loses none of that time.
    saved = time.time() - 5
    left = takeover_deadline(saved + 10, 100.0, saved)
    assert left is not None and 112.5 < left <= 113.0


async def test_the_recorder_appends_moves_and_rewrites_the_record_only_when_it_must() -> None:
    store = MemoryStore(f"memory://rec-{uuid.uuid4().hex}")
    fenced: list[bool] = []
    recorder = Recorder("tbl", store, 1, on_fenced=lambda: fenced.append(True))
    await store.claim("tbl", 1)
    table, log = _played(3)
    record = lambda: record_json(table, {})  # noqa: E731
    await recorder.save(record, log[:1], None, lambda: {"version": 1, "deadline": None})
    for n in (2, 3):
        await recorder.save(record, log[:n], log[n - 1], lambda: {"version": 7, "deadline": None})
    stored = await store.load("tbl")
    assert stored is not None and stored[1] == log
    # A newer owner claims the table: the next write is refused and the recorder says it was fenced.
    await store.claim("tbl", 2)
    with pytest.raises(Refused) as refused:
        await recorder.save(record, log, None, lambda: {})
    assert refused.value.code == "moved" and recorder.fenced and fenced == [True]
    with pytest.raises(Refused):  # and it never writes again
        await recorder.save(record, log, None, lambda: {})
    assert fenced == [True]


async def test_a_store_that_lost_the_table_gets_it_back_only_after_the_lease_is_taken_again() -> None:
    store = MemoryStore(f"memory://rec-{uuid.uuid4().hex}")
    relocks: list[int] = []

    async def relock() -> int | None:
        relocks.append(1)
        return 5  # the lease again, under a newer token

    recorder = Recorder("tbl", store, 1, on_fenced=lambda: None, relock=relock)
    table, log = _played(3)
    record = lambda: record_json(table, {})  # noqa: E731
    await recorder.save(record, log[:1], None, lambda: {"version": 1, "deadline": None})  # a new table
    assert relocks == [] and await store.exists("tbl")
    forget_table(store, "tbl")
    # A move finds the table gone: the lease is taken again first, then the whole table written back.
    await recorder.save(record, log[:2], log[1], lambda: {"version": 2, "deadline": None})
    stored = await store.load("tbl")
    assert relocks == [1] and recorder.token == 5 and stored is not None and stored[1] == log[:2]
    with pytest.raises(Refused):  # the token of the lapsed lease is fenced out now
        await Recorder("tbl", store, 1, on_fenced=lambda: None).save(record, log, None, lambda: {})
    # A seat change (no move) that finds the table gone does the same.
    forget_table(store, "tbl")
    await recorder.save(record, log[:2], None, lambda: {})
    assert relocks == [1, 1] and await store.exists("tbl")


async def test_a_plain_write_never_recreates_a_lost_table_and_a_lost_lease_means_fenced() -> None:
    store = MemoryStore(f"memory://rec-{uuid.uuid4().hex}")
    fenced: list[bool] = []

    async def taken() -> int | None:
        return None  # another process holds the lease now

    recorder = Recorder("tbl", store, 1, on_fenced=lambda: fenced.append(True), relock=taken)
    table, log = _played(2)
    record = lambda: record_json(table, {})  # noqa: E731
    await recorder.save(record, log[:1], None, lambda: {"version": 1, "deadline": None})
    forget_table(store, "tbl")
    with pytest.raises(Refused) as refused:
        await recorder.save(record, log, log[1], lambda: {"version": 2, "deadline": None})
    assert refused.value.code == "moved" and fenced == [True]
    assert not await store.exists("tbl")  # nothing written back under the lapsed lease
    with pytest.raises(LogGap):
        await store.save("tbl", 9, record(), None)


def test_a_new_table_waits_with_empty_seats_and_comes_back_the_same_from_its_record() -> None:
    spec = TableSpec(Rules(seats=3), Principal("a:1", "alice", 1), name="new")
    table = TableRecord.new(spec)
    assert (table.status, table.version, table.game, table.match_id, table.series) == ("waiting", 0, None, None, {})
    assert [(s.seat, s.kind) for s in table.seats] == [(0, "empty"), (1, "empty"), (2, "empty")]
    back = read_record(record_json(table, {}), [])
    assert (back.spec, back.seats, back.status, back.created) == (spec, table.seats, "waiting", table.created)


def test_a_log_entry_is_the_moves_json_text_which_the_collector_never_walks() -> None:
    lead, timeout = Lead(0, (Card.parse("6s"), Card.parse("6h"))), Pass(1)
    log = [log_entry(lead, f"{ALICE.key}|cmd-1"), log_entry(timeout, None)]
    assert [orjson.loads(entry) for entry in log] == [
        {"a": {"type": "lead", "seat": 0, "cards": ["6s", "6h"]}, "k": f"{ALICE.key}|cmd-1"},
        {"a": {"type": "pass", "seat": 1}, "k": None},
    ]
    assert logged_actions(log) == [action_to_json(lead), action_to_json(timeout)]
    assert not any(gc.is_tracked(entry) for entry in log)
