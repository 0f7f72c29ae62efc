"""The table's deadlines on plain values (RULES §8, §9)."""

from __future__ import annotations

from app.engine import Rules, new_match
from app.tables.deadlines import decision_limits, first_overdue, next_deadline, shown_deadlines, timers_after_change
from app.tables.spec import DecisionLimits, Seat

LIMITS = DecisionLimits(disconnect_grace_s=60, idle_limit_s=300, challenge_window_s=5)


def test_a_connected_player_has_the_idle_limit_and_a_gone_one_the_grace_from_when_he_went() -> None:
    seats = [Seat(0, "human", connections={"c"}), Seat(1, "human"), Seat(2, "bot")]
    limits = decision_limits(seats, [0, 1, 2], 100.0, {1: 150.0}, LIMITS, None)
    assert limits == {0: (400.0, "idle"), 1: (210.0, "grace")}  # bots answer by themselves
    assert decision_limits(seats, [1], 100.0, {}, LIMITS, 170.0) == {1: (170.0, "grace")}
    assert decision_limits(seats, [0], None, {}, LIMITS, None) == {}
    assert first_overdue(limits, 209.0) is None
    assert first_overdue(limits, 210.0) == (1, "disconnected")
    assert first_overdue(limits, 500.0) == (1, "disconnected")  # the earliest first
    assert first_overdue({0: (400.0, "idle")}, 400.0) == (0, "timeout")


def test_the_move_timer_shows_when_it_comes_first_and_the_earliest_deadline_wins() -> None:
    own = {0: (400.0, "idle")}
    assert shown_deadlines(own, [0, 1], 130.0) == {0: (130.0, "timer"), 1: (130.0, "timer")}
    assert shown_deadlines(own, [0], 500.0) == own
    assert next_deadline(own, 500.0, 450.0) == 400.0 and next_deadline({}, None, None) is None


def test_after_a_change_the_decision_gets_its_full_time_and_a_challenge_window_does_not_move() -> None:
    game = new_match(Rules(timer=30), seed=1, dealer=0)
    timers = timers_after_change(game, "playing", 30, LIMITS, None, 1000.0)
    assert (timers.deadline, timers.since, timers.window_closes) == (1030.0, 1000.0, None)
    assert timers_after_change(game, "playing", 0, LIMITS, None, 1000.0).deadline is None
    finished = timers_after_change(None, "finished", 30, LIMITS, None, 1000.0)
    assert (finished.deadline, finished.since, finished.window_closes) == (None, None, None)
