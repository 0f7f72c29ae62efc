"""What the integrity rules read from a match's action log (app/tables/integrity.py) and the pure
formulas of app/db/integrity.py: bouts, the forfeit exception, throw-in chances per defender, the
coin flows of a pair, the soft-play test."""

from __future__ import annotations

from typing import Any

import pytest

from app.db.integrity import IntegrityRules, MatchFacts, coin_flows, soft_play_score
from app.engine import Rules, State, action_to_json, apply, legal_actions, new_match
from app.tables.integrity import bouts_of, dealt_deck, forfeit_after_acting, throw_in_chances


def first_bout_with_a_throw_in(seats: int = 2) -> tuple[Rules, int, State, list[dict[str, Any]]]:
    """A seed whose first lead can be covered and then leaves the attacker a legal throw-in: the
    rules, the seed, the state at that decision and the log so far (lead, cover)."""
    rules = Rules(deck=36, seats=seats, timer=0)
    for seed in range(500):
        state = new_match(rules, seed, 0)
        log: list[dict[str, Any]] = []
        for lead in (a for a in legal_actions(state, state.attacker) if a.kind == "lead"):
            led, _ = apply(state, lead)
            covers = [a for a in legal_actions(led, led.defender) if a.kind == "cover"]
            for cover in covers:
                covered, _ = apply(led, cover)
                if any(a.kind == "throw_in" for a in legal_actions(covered, covered.attacker)):
                    log = [action_to_json(lead), action_to_json(cover)]
                    return rules, seed, covered, log
    raise AssertionError("no seed with a coverable lead followed by a legal throw-in")


def test_a_pass_with_a_legal_throw_in_is_a_chance_passed_up() -> None:
    rules, seed, state, log = first_bout_with_a_throw_in()
    attacker, defender = state.attacker, state.defender
    passed = [*log, {"type": "pass", "seat": attacker}]
    assert throw_in_chances(rules.to_json(), seed, 0, passed) == {(attacker, defender): (1, 1)}
    throw = next(a for a in legal_actions(state, attacker) if a.kind == "throw_in")
    thrown = [*log, action_to_json(throw)]
    assert throw_in_chances(rules.to_json(), seed, 0, thrown) == {(attacker, defender): (1, 0)}
    assert throw_in_chances(rules.to_json(), seed, 0, log) == {}  # the lead and the cover are no chance


def test_a_pass_without_a_legal_throw_in_is_no_chance() -> None:
    rules = Rules(deck=36, seats=2, timer=0)
    for seed in range(500):
        state = new_match(rules, seed, 0)
        lead = next(a for a in legal_actions(state, state.attacker) if a.kind == "lead")
        led, _ = apply(state, lead)
        for cover in (a for a in legal_actions(led, led.defender) if a.kind == "cover"):
            covered, _ = apply(led, cover)
            options = legal_actions(covered, covered.attacker)
            if not any(a.kind == "throw_in" for a in options):
                log = [action_to_json(lead), action_to_json(cover), {"type": "pass", "seat": covered.attacker}]
                assert throw_in_chances(rules.to_json(), seed, 0, log) == {}
                return
    raise AssertionError("no seed where the attacker cannot throw in after the first cover")


def test_cheating_tables_are_left_out() -> None:
    rules, seed, state, log = first_bout_with_a_throw_in()
    cheating = {**rules.to_json(), "cheating": True}
    assert throw_in_chances(cheating, seed, 0, [*log, {"type": "pass", "seat": state.attacker}]) == {}


def test_bouts_and_the_forfeit_exception() -> None:
    log = [
        {"type": "lead", "seat": 0, "cards": ["6h"]},
        {"type": "take", "seat": 1},
        {"type": "lead", "seat": 0, "cards": ["7h"]},
        {"type": "forfeit", "seat": 1, "reason": "timeout"},
    ]
    assert bouts_of(log) == 2
    assert forfeit_after_acting(log, {"forfeit": 1, "reason": "timeout"})  # seat 1 took before
    assert forfeit_after_acting(log, {"forfeit": 1, "reason": "disconnected"})
    assert not forfeit_after_acting(log, {"forfeit": 1, "reason": "left"})  # leaving is no exception
    assert not forfeit_after_acting(log[2:], {"forfeit": 1, "reason": "timeout"})  # never moved
    assert not forfeit_after_acting(log, {"forfeit": None, "reason": None})


@pytest.mark.parametrize(
    ("bouts", "seconds", "forfeit", "long_enough", "may_rate"),
    [
        (3, 60.0, False, True, True),
        (2, 600.0, False, False, False),  # too few bouts
        (10, 59.0, False, False, False),  # too short
        (1, 5.0, True, False, True),  # a timer forfeit of a player who had moved
        (3, None, False, True, True),  # duration unknown (taken over): the bouts decide
    ],
)
def test_matches_that_count(
    bouts: int, seconds: float | None, forfeit: bool, long_enough: bool, may_rate: bool
) -> None:
    facts = MatchFacts(bouts=bouts, seconds=seconds, forfeit_after_acting=forfeit)
    assert (facts.long_enough, facts.may_rate) == (long_enough, may_rate)
    lenient = MatchFacts(bouts=bouts, seconds=seconds, rules=IntegrityRules(rated_min_bouts=0, rated_min_seconds=0))
    assert lenient.long_enough


def test_the_signals_of_a_real_match_played_to_the_end() -> None:
    rules = Rules(deck=24, seats=2, timer=0)
    state, log = new_match(rules, 11, 0), []
    while state.outcome is None:
        seat = next(s for s in range(state.n) if legal_actions(state, s))
        options = legal_actions(state, seat)
        action = next((a for a in options if a.kind in ("cover", "lead", "throw_in")), options[0])
        log.append(action_to_json(action))
        state, _ = apply(state, action)
    assert bouts_of(log) >= 3
    assert not forfeit_after_acting(log, state.outcome.to_json())
    # this player always throws in when he can: chances, none passed up
    chances = throw_in_chances(rules.to_json(), 11, 0, log, dealt_deck(None))
    assert chances and all(passes == 0 for _, passes in chances.values())


def test_coin_flows_share_each_loss_among_the_gainers() -> None:
    assert coin_flows({1: 100, 2: -100}) == {(1, 2): 100}
    assert coin_flows({1: 0, 2: 0}) == {}
    flows = coin_flows({1: 60, 2: 30, 3: -50, 4: -40})
    assert sum(v for (w, lo), v in flows.items() if lo == 3) == 50
    assert sum(v for (w, lo), v in flows.items() if lo == 4) == 40
    assert flows[(1, 3)] > flows[(2, 3)]


def test_the_soft_play_test() -> None:
    rules = IntegrityRules(soft_play_min_chances=20, soft_play_margin=0.25)
    assert soft_play_score((20, 10), (40, 4), rules) is not None  # 50% against him, 10% against others
    assert soft_play_score((19, 19), (40, 0), rules) is None  # too few chances against him
    assert soft_play_score((20, 10), (19, 0), rules) is None  # too few against the others
    assert soft_play_score((20, 6), (40, 4), rules) is None  # 30% vs 10%: below the margin
    assert soft_play_score((20, 20), (20, 20), rules) is None  # passes everything against everyone
    assert soft_play_score((20, 7), (200, 30), rules) is None  # 35% vs 15%: margin short
    z = soft_play_score((40, 30), (80, 10), rules)
    assert z is not None and z > 5
