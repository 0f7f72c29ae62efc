"""§8 Timer, leaving, forfeits: the forfeiter is the durak; the others ranked; what the timer does."""

from __future__ import annotations

import pytest

from app.engine import (
    Cover,
    Forfeit,
    Lead,
    Pass,
    Rules,
    Take,
    ThrowIn,
    action_from_json,
    action_to_json,
    decision,
    timeout_actions,
)
from app.engine import errors as err

from .support import C, of_type, pos, refused, run

FIVE = Rules(seats=5)


def test_forfeit_makes_the_forfeiter_durak_and_ranks_the_others() -> None:
    # Seat 3 already went out; seats 0 and 2 hold two cards each, seat 4 five cards.
    hands = ["7h Ac", "8h 9h 10h Jh", "9c 10d", "", "Qc Kc Qd Kd Qs"]
    state = pos(hands, "6s", rules=FIVE, out=[3], attacker=0)
    state, events = run(state, Forfeit(1, "left"))
    outcome = state.outcome
    assert outcome is not None and state.phase == "over"
    assert outcome.durak == 1 and outcome.forfeit == 1 and outcome.reason == "left"
    assert outcome.order == (3,)
    assert outcome.places == ((3,), (0, 2), (4,), (1,))  # out order, then fewest cards; ties share
    assert [outcome.place_of(s) for s in range(5)] == [2, 5, 2, 1, 4]
    assert of_type(events, "forfeit") == [{"type": "forfeit", "seat": 1, "reason": "left"}]
    assert "forfeited" in outcome.detail
    assert isinstance(refused(state, Lead(0, (C("7h"),))), err.MatchOver)


@pytest.mark.parametrize("reason", ["timeout", "left", "disconnected"])
def test_any_seat_still_in_the_match_may_forfeit_at_any_time(reason: str) -> None:
    state = pos(["7h Ac", "8h 9h", "9c 10d"], "6s", rules=Rules(seats=3))
    state, _ = run(state, Lead(0, (C("7h"),)))
    after, _ = run(state, Forfeit(2, reason))  # not his decision, but he may leave
    assert after.outcome is not None and after.outcome.durak == 2 and after.outcome.reason == reason
    assert action_from_json(action_to_json(Forfeit(2, reason))) == Forfeit(2, reason)


def test_a_player_who_went_out_cannot_forfeit() -> None:
    state = pos(["7h Ac", "8h 9h", ""], "6s", rules=Rules(seats=3), out=[2])
    error = refused(state, Forfeit(2, "left"))
    assert isinstance(error, err.BadPlay) and "already safe" in str(error)


def test_timeout_of_the_leader_is_a_forfeit() -> None:
    state = pos(["7h Ac", "8h 9h"], "6s")
    assert decision(state) == {"kind": "lead", "seats": [0], "forfeits": True}
    assert timeout_actions(state) == [Forfeit(0, "timeout")]
    after, _ = run(state, *timeout_actions(state))
    assert after.outcome is not None and after.outcome.durak == 0 and after.outcome.reason == "timeout"


def test_timeout_of_the_defender_is_a_forfeit() -> None:
    state, _ = run(pos(["7h Ac", "8h 9h"], "6s"), Lead(0, (C("7h"),)))
    assert decision(state) == {"kind": "defend", "seats": [1], "forfeits": True}
    assert timeout_actions(state) == [Forfeit(1, "timeout")]


def test_timeout_of_throwers_is_a_pass_not_a_forfeit() -> None:
    rules = Rules(seats=3)
    hands = ["7h 7c Ac", "8h 9h 10h Jh", "9c 10d 7d"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="6s"), Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    assert decision(state) == {"kind": "throw_in", "seats": [0, 2], "forfeits": False}
    assert timeout_actions(state) == [Pass(0), Pass(2)]
    after, events = run(state, *timeout_actions(state))
    assert after.outcome is None
    assert of_type(events, "bout_end")[0]["result"] == "beaten"  # the timer passed for them


def test_timeout_after_a_take_passes_the_throwers() -> None:
    rules = Rules(seats=3)
    hands = ["7h 7c Ac", "8h 9h 10h Jh", "9c 10d 7d"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="6s"), Lead(0, (C("7h"),)), Take(1), ThrowIn(2, (C("7d"),)))
    assert decision(state) == {"kind": "throw_in_after_take", "seats": [0, 2], "forfeits": False}
    state, _ = run(state, Pass(2))
    assert timeout_actions(state) == [Pass(0)]
    after, events = run(state, *timeout_actions(state))
    assert of_type(events, "bout_end")[0]["result"] == "taken"
    assert {C("7h"), C("7d")} <= set(after.hands[1])


def test_no_timeout_once_the_match_is_over() -> None:
    state, _ = run(pos(["7h", "8h"], "6s"), Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    assert state.outcome is not None
    assert decision(state) == {"kind": "none", "seats": [], "forfeits": False}
    assert timeout_actions(state) == []
    assert isinstance(refused(state, Forfeit(0, "left")), err.MatchOver)
