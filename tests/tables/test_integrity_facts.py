"""What the integrity rules read from a match's action log (app/tables/integrity.py): bouts, the
forfeit exception, throw-in chances per defender. The policy they feed is tested in
tests/test_integrity_policy.py."""

from __future__ import annotations

from typing import Any

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
