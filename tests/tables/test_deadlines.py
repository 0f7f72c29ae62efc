"""The table's deadlines on plain values (RULES §8, §9)."""

from __future__ import annotations

import dataclasses

from app.engine import Forfeit, Pass, Rules, apply, decision, legal_actions, new_match, timeout_actions
from app.tables.deadlines import (
    TableTimers,
    decision_limits,
    first_overdue,
    next_deadline,
    ran_out_action,
    shown_deadlines,
    still_applies,
    timers_after_change,
)
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


def test_the_table_timers_run_from_each_change_and_give_each_waited_for_seat_its_limit() -> None:
    game = new_match(Rules(timer=30), seed=1, dealer=0)
    seats = [Seat(0, "human", connections={"c"}), Seat(1, "human")]
    timers = TableTimers(retry_at=5.0)
    assert timers.own_limits(game, seats, {}, LIMITS) == {}  # no decision yet
    timers.reset(game, "playing", 30, LIMITS, 1000.0)
    assert (timers.deadline, timers.decision_since, timers.retry_at) == (1030.0, 1000.0, None)
    waited = decision(game)["seats"]
    assert timers.deciding(game) == waited and timers.deciding(game) is timers.deciding(game)  # computed once
    assert timers.deciding(None) == []  # no match running
    limits = timers.own_limits(game, seats, {}, LIMITS)
    expected = {0: (1300.0, "idle"), 1: (1060.0, "grace")}
    assert limits == {seat: expected[seat] for seat in waited}
    assert timers.shown(limits, game) == {seat: (1030.0, "timer") for seat in waited}  # the move timer comes first
    assert timers.next(limits, 1010.0) == 1010.0 and timers.next(limits, None) == 1030.0
    timers.reset(None, "finished", 30, LIMITS, 1100.0)
    assert (timers.deadline, timers.decision_since) == (None, None)


def test_after_a_takeover_the_timer_goes_on_and_a_challenge_window_keeps_its_close() -> None:
    game = new_match(Rules(timer=30), seed=1, dealer=0)
    timers = TableTimers()
    timers.taken_over(game, 2000.0, 1990.0)
    assert (timers.deadline, timers.decision_since, timers.window_closes) == (2000.0, 1990.0, None)
    challenged = dataclasses.replace(game, phase="challenge")
    timers.taken_over(challenged, 2003.0, 1991.0)
    assert timers.window_closes == 2003.0


def test_a_seat_out_of_time_forfeits_a_lead_or_a_defence_and_passes_on_a_throw_in() -> None:
    game = new_match(Rules(seats=3), seed=1, dealer=0)
    attacker, defender = game.attacker, game.defender
    bystander = 3 - attacker - defender
    assert ran_out_action(game, attacker, "disconnected") == Forfeit(attacker, "disconnected")
    assert ran_out_action(game, bystander, "timeout") is None  # nothing asked of him
    game, _ = apply(game, next(a for a in legal_actions(game, attacker) if a.kind == "lead"))
    assert ran_out_action(game, defender, "timeout") == Forfeit(defender, "timeout")
    game, _ = apply(game, next(a for a in legal_actions(game, defender) if a.kind == "cover"))
    assert ran_out_action(game, bystander, "disconnected") == Pass(bystander)  # a throw-in: he passes
    assert all(still_applies(game, action) for action in timeout_actions(game))
    after, _ = apply(game, Pass(bystander))
    assert not still_applies(after, Pass(bystander))  # passed already
    assert still_applies(after, Forfeit(bystander, "timeout"))  # a forfeit always applies
