"""§7 Finishing: going out in order, the durak, draws, a player out mid-bout."""

from __future__ import annotations

from app.engine import Cover, Lead, Pass, Rules, Take, ThrowIn, Transfer, legal_actions, view
from app.engine.seating import throwers

from .support import C, of_type, pos, run


def test_players_go_out_in_order_and_the_last_holder_is_the_durak() -> None:
    state = pos(["7h", "8h 9c Kd", "7c 10d"], "6s", rules=Rules(seats=3))
    state, events = run(state, Lead(0, (C("7h"),)), ThrowIn(2, (C("7c"),)))
    state, events = run(state, Cover(1, 0, C("8h")), Cover(1, 1, C("9c")), Pass(2))
    assert of_type(events, "out") == [{"type": "out", "seat": 0, "place": 1}]
    assert state.out == (0,)
    assert view(state, None)["players"][0]["place"] == 1 and view(state, None)["players"][0]["out"]
    assert (state.attacker, state.defender) == (1, 2)
    state, events = run(state, Lead(1, (C("Kd"),)), Take(2))
    assert of_type(events, "out") == [{"type": "out", "seat": 1, "place": 2}]
    outcome = state.outcome
    assert outcome is not None and state.phase == "over"
    assert outcome.durak == 2 and not outcome.draw
    assert outcome.order == (0, 1)
    assert outcome.places == ((0,), (1,), (2,))
    assert [outcome.place_of(seat) for seat in range(3)] == [1, 2, 3]
    assert of_type(events, "match_end")[0]["outcome"] == outcome.to_json()


def test_order_within_a_bout_is_the_order_the_last_cards_hit_the_table() -> None:
    state = pos(["7h 8c", "8h 6s 9s", "7c"], "6s", rules=Rules(seats=3))
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(2, (C("7c"),)))  # seat 2 empties first
    state, _ = run(state, Cover(1, 0, C("8h")), ThrowIn(0, (C("8c"),)))  # then seat 0
    state, events = run(state, Cover(1, 1, C("6s")), Cover(1, 2, C("9s")))
    assert [e["seat"] for e in of_type(events, "out")] == [2, 0, 1]
    outcome = state.outcome
    assert outcome is not None and outcome.draw  # everybody emptied: draws are on
    assert outcome.order == (2, 0, 1)


def test_nobody_left_with_cards_is_a_draw_when_draws_are_allowed() -> None:
    state = pos(["7h", "8h"], "6s", rules=Rules(draws=True))
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    outcome = state.outcome
    assert outcome is not None and outcome.draw and outcome.durak is None
    assert outcome.places == ((0,), (1,))
    assert of_type(events, "match_end")[0]["outcome"]["draw"] is True


def test_without_draws_the_last_defender_is_the_durak() -> None:
    state = pos(["7h", "8h"], "6s", rules=Rules(draws=False))
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    outcome = state.outcome
    assert outcome is not None and not outcome.draw
    assert outcome.durak == 1 and outcome.order == (0,)
    assert outcome.places == ((0,), (1,))
    # The events never announce the durak as safe.
    assert of_type(events, "out") == [{"type": "out", "seat": 0, "place": 1}]
    assert view(state, 1)["players"][1]["out"] is False


def test_without_draws_three_players_emptying_together() -> None:
    state = pos(["7h", "8h 6s", "7c"], "6s", rules=Rules(seats=3, draws=False))
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(2, (C("7c"),)), Cover(1, 1, C("6s")))
    state, events = run(state, Cover(1, 0, C("8h")))
    outcome = state.outcome
    assert outcome is not None
    assert outcome.durak == 1 and outcome.order == (0, 2) and outcome.places == ((0,), (2,), (1,))
    assert [e["seat"] for e in of_type(events, "out")] == [0, 2]


def test_a_player_out_of_cards_mid_bout_takes_no_further_part() -> None:
    rules = Rules(seats=3, transfer=True)
    state = pos(["7h Ac Kd Qd", "7d 8h Jh", "7c"], "6s", rules=rules)
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(2, (C("7c"),)))
    assert state.hands[2] == () and state.out == ()  # out only once the bout is resolved
    assert throwers(state) == (0,)
    assert legal_actions(state, 2) == []
    state, _ = run(state, Transfer(1, (C("7d"),)))
    assert state.defender == 0  # seat 2 is skipped: he cannot be transferred to
    assert throwers(state) == (1,)
    state, events = run(state, Take(0))
    assert of_type(events, "out")[0]["seat"] == 2
    assert (state.attacker, state.defender) == (1, 0)


def test_an_empty_hand_with_stock_left_draws_and_stays_in() -> None:
    state = pos(["7h", "8h 9h", "10c"], "6s", rules=Rules(seats=3), stock="Ac Ad Ah Kc Kd Kh 6s")
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(2))
    assert of_type(events, "out") == []
    assert state.out == () and len(state.hands[0]) == 6


def test_the_match_ends_when_one_player_still_holds_cards() -> None:
    state = pos(["7h", "8h 9h", "10c Jc"], "6s", rules=Rules(seats=3), out=[])
    state, _ = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(2))
    assert state.outcome is None and state.out == (0,)
    state, _ = run(state, Lead(1, (C("9h"),)), Take(2))
    assert state.outcome is not None and state.outcome.durak == 2
    assert legal_actions(state, 2) == [] and view(state, 2)["decision"]["kind"] == "none"
