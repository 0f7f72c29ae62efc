"""The seat commands on plain values (seat_commands.py): what each changes and the SeatChange the
actor gets back -- no actor, broker or clock."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from app.engine import Rules
from app.tables.commands import BODIES, Refused
from app.tables.deadlines import REMATCH_WINDOW_S
from app.tables.fair import FairDeals
from app.tables.hooks import MemoryHooks
from app.tables.seat_commands import SEAT_COMMANDS, SeatChange, SeatTable, may_start, rematch_expired
from app.tables.seating import Seating
from app.tables.spec import Principal, Seat, TableSpec

ALICE = Principal("a:1", "alice", 1)
BOB = Principal("a:2", "bob", 2)
CAROL = Principal("a:3", "carol", 3)


def _table(seats: list[Seat], status: str = "waiting", stake: int = 0, hooks: MemoryHooks | None = None) -> SeatTable:
    spec = TableSpec(Rules(seats=len(seats), stake=stake), ALICE)
    return SeatTable(spec, Seating(seats), FairDeals("t"), hooks or MemoryHooks(), status, stake, now=100.0)


async def _run(table: SeatTable, principal: Principal, kind: str, **fields: Any) -> SeatChange:
    body = BODIES[kind](**fields)
    return await SEAT_COMMANDS[type(body)](table, principal, body)  # type: ignore[index]


async def test_joining_takes_the_first_free_seat_and_may_start_the_match() -> None:
    table = _table([Seat(0, "human", ALICE), Seat(1)])
    change = await _run(table, BOB, "join")
    assert change.events == [{"type": "seat", "seat": 1, "name": "bob", "kind": "human"}]
    assert change.seat == 1 and change.start == "if_ready" and not change.waiting
    assert table.seating.seats[1].principal == BOB
    with pytest.raises(Refused) as refused:
        await _run(table, CAROL, "join")
    assert refused.value.code == "table_full"


async def test_a_join_with_a_client_seed_must_answer_the_current_commitment() -> None:
    table = _table([Seat(0), Seat(1)])
    seed = secrets.token_hex(16)
    with pytest.raises(Refused) as refused:
        await _run(table, BOB, "join", client_seed=seed, commitment="0" * 64)
    assert refused.value.code == "stale_commitment" and table.seating.seat_of(BOB) is None  # nothing changed
    await _run(table, BOB, "join", client_seed=seed, commitment=table.fair.commitment)
    assert table.fair.client_seeds[BOB.key] == bytes.fromhex(seed)


async def test_the_hooks_refuse_related_accounts_at_a_staked_table_before_the_seat_changes() -> None:
    hooks = MemoryHooks(related={frozenset((1, 2))})
    table = _table([Seat(0, "human", ALICE), Seat(1)], stake=10, hooks=hooks)
    with pytest.raises(Refused) as refused:
        await _run(table, BOB, "join")
    assert refused.value.code == "related_accounts" and table.seating.seats[1].kind == "empty"


async def test_sitting_down_after_a_match_agrees_and_the_last_vote_sets_the_table_waiting() -> None:
    table = _table([Seat(0, "human", ALICE), Seat(1), Seat(2, "human", CAROL)], status="finished")
    first = await _run(table, ALICE, "rematch")
    assert first.events == [{"type": "rematch", "seat": 0}] and not first.waiting
    assert first.start == "if_ready_or_refuse"
    assert table.seating.rematch is not None and table.seating.rematch.deadline == 100.0 + REMATCH_WINDOW_S
    again = await _run(table, ALICE, "rematch")
    assert again.events == [] and not again.waiting  # asked twice: nothing new
    joined = await _run(table, BOB, "join")
    assert not joined.waiting  # carol has not agreed yet
    last = await _run(table, CAROL, "rematch")
    assert last.waiting and table.seating.rematch is None  # every seat agreed: the table waits to start


async def test_leaving_between_matches_frees_the_seat_and_forgets_the_seed() -> None:
    table = _table([Seat(0, "human", ALICE), Seat(1, "human", BOB, connections={"c2"})], status="finished")
    table.fair.client_seeds[BOB.key] = b"x" * 16
    change = await _run(table, BOB, "leave")
    assert change.events == [{"type": "seat", "seat": 1, "name": None, "kind": "empty"}]
    assert change.watching == [BOB] and BOB.key not in table.fair.client_seeds
    assert table.seating.spectators == {"c2"}
    playing = _table([Seat(0, "human", ALICE), Seat(1, "human", BOB)], status="playing")
    with pytest.raises(Refused) as refused:  # (a player still in the match forfeits: that is the actor's)
        await _run(playing, BOB, "leave")
    assert refused.value.code == "match_running"


async def test_only_the_creator_seats_and_removes_bots_and_only_at_free_tables() -> None:
    table = _table([Seat(0, "human", ALICE), Seat(1)])
    with pytest.raises(Refused) as refused:
        await _run(table, BOB, "add_bot", level="easy")
    assert refused.value.code == "not_creator"
    added = await _run(table, ALICE, "add_bot", level="hard", seat=1)
    assert added.events == [{"type": "seat", "seat": 1, "name": "Bot (hard)", "kind": "bot"}]
    assert added.start == "if_ready"
    removed = await _run(table, ALICE, "remove_bot", seat=1)
    assert removed.events == [{"type": "seat", "seat": 1, "name": None, "kind": "empty"}]
    staked = _table([Seat(0, "human", ALICE), Seat(1)], stake=10)
    with pytest.raises(Refused) as refused:
        await _run(staked, ALICE, "add_bot", level="easy")
    assert refused.value.code == "bots_free_tables_only"


async def test_a_client_seed_only_between_matches_and_from_a_seated_player() -> None:
    table = _table([Seat(0, "human", ALICE), Seat(1)])
    seed = secrets.token_hex(16)
    change = await _run(table, ALICE, "client_seed", seed=seed, commitment=table.fair.commitment)
    assert change.events == [{"type": "client_seed", "seat": 0}]
    with pytest.raises(Refused) as refused:
        await _run(table, BOB, "client_seed", seed=seed, commitment=table.fair.commitment)
    assert refused.value.code == "not_seated"
    table.status = "playing"
    with pytest.raises(Refused) as refused:
        await _run(table, ALICE, "client_seed", seed=seed, commitment=table.fair.commitment)
    assert refused.value.code == "match_running"


def test_a_rematch_that_ran_out_frees_the_seats_of_those_who_did_not_agree() -> None:
    seats = [Seat(0, "human", ALICE), Seat(1, "human", BOB, connections={"c2"}), Seat(2, "bot", level="easy")]
    table = _table(seats, status="finished")
    table.seating.agree(0, 100.0, REMATCH_WINDOW_S)
    table.fair.client_seeds[BOB.key] = b"x" * 16
    change = rematch_expired(table)
    assert change is not None and change.waiting and change.watching == [BOB]
    assert change.events == [{"type": "seat", "seat": 1, "name": None, "kind": "empty"}]
    assert [s.kind for s in table.seating.seats] == ["human", "empty", "bot"]  # alice agreed, the bot stays
    assert BOB.key not in table.fair.client_seeds
    assert rematch_expired(table) is None  # no proposal any more: nothing changes


def test_who_may_start_a_table_early() -> None:
    table = _table([Seat(0, "human", ALICE), Seat(1, "human", BOB), Seat(2)])
    may_start(table, ALICE)
    codes = []
    for principal, status in ((BOB, "waiting"), (ALICE, "playing"), (ALICE, "finished")):
        table.status = status
        with pytest.raises(Refused) as refused:
            may_start(table, principal)
        codes.append(refused.value.code)
    assert codes == ["not_creator", "match_running", "match_over"]
