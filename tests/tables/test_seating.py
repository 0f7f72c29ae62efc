"""Seats, connections, series and the rematch proposal on plain values (seating.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.engine import Rules
from app.tables.commands import Refused
from app.tables.seating import Seating, require_creator
from app.tables.spec import Principal, Seat, TableSpec

ALICE = Principal("a:1", "alice", 1)
BOB = Principal("a:2", "bob", 2)
GUEST = Principal("g:9", "gus")


def _code(call: Callable[[], object]) -> str:
    """The code ``call`` is refused with."""
    try:
        call()
    except Refused as refused:
        return refused.code
    raise AssertionError("not refused")


def test_a_connection_watches_until_its_player_sits_and_watches_again_when_he_leaves() -> None:
    seating = Seating([Seat(0), Seat(1)])
    assert seating.connect("c1", ALICE) == (None, True)
    assert seating.connect("c1", ALICE) == (None, False)  # said hello again: not new here
    assert seating.spectators == {"c1"} and seating.players() == ()
    seat = seating.sit(ALICE, None, {"rating": 1500})
    assert seat.seat == 0 and seat.connections == {"c1"} and not seating.spectators
    assert seat.rating == {"rating": 1500} and seating.players() == ((0, "a:1"),)
    assert seating.vacate(seat) is True  # he had a connection: it watches now
    assert seating.spectators == {"c1"} and seat.kind == "empty" and seat.principal is None
    assert seating.seat_of(ALICE) is None and seating.players() == ()


def test_a_player_with_no_connection_left_is_gone_only_while_a_match_runs() -> None:
    seating = Seating([Seat(0, "human", ALICE), Seat(1, "human", BOB)])
    seat, arrived = seating.connect("c1", ALICE)
    assert seat is seating.seats[0] and arrived and seat.connections == {"c1"}
    seating.disconnect("c1", playing=False, now=10.0)
    assert seating.gone_since == {} and not seat.connections
    seating.connect("c1", ALICE)
    seating.disconnect("c1", playing=True, now=20.0)
    assert seating.gone_since == {0: 20.0}
    seating.connect("c2", ALICE)  # back: not gone any more
    assert seating.gone_since == {} and seating.conn_owner == {"c2": "a:1"}


def test_who_may_sit_and_where() -> None:
    seating = Seating([Seat(0, "human", ALICE), Seat(1), Seat(2)])
    assert _code(lambda: seating.may_sit(ALICE, "waiting", 0)) == "already_seated"
    assert _code(lambda: seating.may_sit(BOB, "playing", 0)) == "match_running"
    assert _code(lambda: seating.may_sit(GUEST, "waiting", 10)) == "guests_free_tables_only"
    seating.may_sit(GUEST, "finished", 0)  # a guest at a free table after a match: fine
    assert _code(lambda: seating.sit(BOB, 0, None)) == "seat_taken"
    for wanted in (3, -1, True, "1"):
        assert _code(lambda wanted=wanted: seating.sit(BOB, wanted, None)) == "bad_seat"
    assert seating.sit(BOB, 2, {"rating": 1}).seat == 2
    assert seating.sit(GUEST, None, {"rating": 1}).rating is None  # guests have no rating
    assert _code(lambda: seating.free_seat(None)) == "table_full"


def test_bots_sit_only_at_free_tables_between_matches_and_only_creators_seat_them() -> None:
    seating = Seating([Seat(0, "human", ALICE), Seat(1)])
    spec = TableSpec(Rules(), ALICE)
    require_creator(spec, ALICE)
    assert _code(lambda: require_creator(spec, BOB)) == "not_creator"
    assert _code(lambda: seating.seat_bot("hard", None, "playing", 0)) == "match_running"
    assert _code(lambda: seating.seat_bot("genius", None, "waiting", 0)) == "bad_level"
    assert _code(lambda: seating.seat_bot("hard", None, "waiting", 5)) == "bots_free_tables_only"
    bot = seating.seat_bot("hard", None, "waiting", 0)
    assert (bot.seat, bot.kind, bot.level, bot.name) == (1, "bot", "hard", "Bot (hard)")
    assert _code(lambda: seating.unseat_bot(1, "playing")) == "match_running"
    assert _code(lambda: seating.unseat_bot(0, "waiting")) == "bad_seat"  # a person, not a bot
    assert seating.unseat_bot(1, "waiting") == 1 and seating.seats[1].kind == "empty"


def test_a_match_closes_the_gaps_between_the_seats_and_staked_tables_need_accounts() -> None:
    seating = Seating([Seat(0, "human", ALICE), Seat(1), Seat(2, "bot", level="easy")])
    rules = seating.for_match(Rules(seats=3))
    assert rules.seats == 2 and [(s.seat, s.kind) for s in seating.seats] == [(0, "human"), (1, "bot")]
    assert seating.for_match(rules) is rules  # nothing to close
    assert _code(lambda: Seating([Seat(0, "human", ALICE), Seat(1)]).for_match(Rules())) == "not_enough_players"
    assert _code(seating.stake_accounts) == "guests_free_tables_only"  # the bot holds no account
    assert Seating([Seat(0, "human", ALICE), Seat(1, "human", BOB)]).stake_accounts() == [1, 2]


def test_a_rematch_starts_once_every_seat_agreed_and_its_end_frees_the_others() -> None:
    seating = Seating([Seat(0, "human", ALICE, connections={"c"}), Seat(1, "human", BOB), Seat(2, "bot")])
    assert seating.agreed() == [2] and not seating.all_agreed()  # bots agree by themselves; none proposed
    seating.agree(0, now=100.0, window_s=60.0)
    assert seating.rematch is not None and seating.rematch.deadline == 160.0
    seating.agree(1, now=130.0, window_s=60.0)
    assert seating.rematch.deadline == 160.0 and seating.agreed() == [0, 1, 2] and seating.all_agreed()
    seating.vacate(seating.seats[1])  # leaving declines
    assert seating.agreed() == [0, 2] and not seating.all_agreed()
    seating.agree(0, now=131.0, window_s=60.0)
    seating.rematch.agreed.discard(0)
    assert seating.expire_rematch(finished=True) == [(0, ALICE, True)]
    assert seating.rematch is None and seating.seats[0].kind == "empty" and seating.spectators == {"c"}
    assert seating.expire_rematch(finished=True) is None  # nothing proposed


def test_a_proposal_that_ends_when_no_match_is_over_frees_nobody() -> None:
    seating = Seating([Seat(0, "human", ALICE), Seat(1, "human", BOB)])
    seating.agree(0, now=0.0, window_s=60.0)
    assert seating.expire_rematch(finished=False) is None
    assert seating.rematch is None and seating.seat_of(BOB) is not None
    seating.agree(1, now=0.0, window_s=60.0)
    seating.gone_since[1] = 5.0
    seating.match_started()
    assert seating.rematch is None and seating.gone_since == {}


def test_seated_names_the_refusal() -> None:
    seating = Seating([Seat(0, "human", ALICE)])
    assert seating.seated(ALICE, "unused").seat == 0
    with pytest.raises(Refused) as refused:
        seating.seated(BOB, "spectators cannot play")
    assert (refused.value.code, refused.value.message) == ("not_seated", "spectators cannot play")
