"""Property tests: random configurations, random legal play, invariants after every step.

The default run is sized for CI; ``DURAK_PROPERTY_EXAMPLES=1000`` (or more) makes a bigger run."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import (
    Card,
    Rules,
    State,
    apply,
    decision,
    event_to_json,
    legal_actions,
    public_cards,
    replay,
    state_from_json,
    state_to_json,
    view,
)
from app.engine.rules import PRESETS
from app.engine.seating import throwers

from .support import (
    assert_cards_conserved,
    check_listed_and_unlisted,
    env_int,
    make_rules,
    play_random,
)

EXAMPLES = env_int("DURAK_PROPERTY_EXAMPLES", 40)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=EXAMPLES <= 100,  # CI runs are reproducible; bigger runs explore
)

rules_strategy = st.builds(
    make_rules,
    preset=st.sampled_from(PRESETS),
    deck_size=st.sampled_from((24, 36, 52)),
    seats=st.integers(2, 6),
    circle=st.sampled_from(("neighbours", "all")),
    transfer=st.booleans(),
    draws=st.booleans(),
    cheating=st.booleans(),
)
neighbours_rules = st.builds(
    make_rules,
    preset=st.sampled_from(PRESETS),
    deck_size=st.sampled_from((36, 52)),
    seats=st.integers(3, 6),
    circle=st.just("neighbours"),
    transfer=st.booleans(),
    draws=st.booleans(),
    cheating=st.booleans(),
)
seeds = st.integers(0, 2**128 - 1)
play_seeds = st.integers(0, 2**32 - 1)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _strings(item)]
    return []


def _card_texts(value: Any) -> set[Card]:
    found = set()
    for text in _strings(value):
        try:
            found.add(Card.parse(text))
        except ValueError:
            continue
    return found


@SETTINGS
@given(rules=rules_strategy, seed=seeds, play=play_seeds)
def test_cards_are_conserved_after_every_step(rules: Rules, seed: int, play: int) -> None:
    def on_step(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        assert_cards_conserved(after)
        assert all(len(hand) == len(set(hand)) for hand in after.hands)

    state, _ = play_random(rules, seed, random.Random(play), on_step=on_step)
    assert_cards_conserved(state)


@SETTINGS
@given(rules=rules_strategy, seed=seeds, play=play_seeds)
def test_whoever_must_decide_always_has_a_legal_action(rules: Rules, seed: int, play: int) -> None:
    def on_step(before: State, action, after, events, legal) -> None:  # type: ignore[no-untyped-def]
        info = decision(before)
        assert info["kind"] != "none"
        assert info["seats"], "the match waits for nobody"
        for seat in info["seats"]:
            assert legal_actions(before, seat), f"seat {seat} must decide ({info['kind']}) but cannot"
        if after.outcome is None:
            assert decision(after)["seats"]
        else:
            assert decision(after)["kind"] == "none"
            assert all(not legal_actions(after, seat) for seat in range(after.n))

    play_random(rules, seed, random.Random(play), on_step=on_step, forfeit_rate=0.002)


@SETTINGS
@given(rules=rules_strategy, seed=seeds, play=play_seeds)
def test_apply_accepts_listed_actions_and_refuses_the_rest(rules: Rules, seed: int, play: int) -> None:
    rng = random.Random(play ^ 0x5EED)

    def on_step(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        check_listed_and_unlisted(before, legal, rng, listed=12, unlisted=12)

    play_random(rules, seed, random.Random(play), on_step=on_step)


@SETTINGS
@given(rules=rules_strategy, seed=seeds, play=play_seeds)
def test_every_match_ends_with_exactly_one_durak_or_a_draw(rules: Rules, seed: int, play: int) -> None:
    state, _ = play_random(rules, seed, random.Random(play), forfeit_rate=0.001)
    outcome = state.outcome
    assert outcome is not None and state.phase == "over"
    placed = [seat for group in outcome.places for seat in group]
    assert sorted(placed) == list(range(rules.seats)), "every seat has exactly one place"
    if outcome.draw:
        assert outcome.durak is None and rules.draws
        assert all(not hand for hand in state.hands)
        assert outcome.reason is None
    else:
        assert outcome.durak is not None
        assert outcome.places[-1] == (outcome.durak,)
        assert outcome.durak not in outcome.order
        if outcome.reason is None:  # played to the end
            holders = [seat for seat in range(state.n) if state.hands[seat]]
            assert holders in ([outcome.durak], []), holders
            assert sorted(outcome.order) == sorted(set(range(state.n)) - {outcome.durak})
            if not holders:
                assert not rules.draws
    for seat in outcome.order:
        assert not state.hands[seat], "a seat that went out holds no cards"


@SETTINGS
@given(rules=rules_strategy, seed=seeds, play=play_seeds)
def test_replay_from_seed_and_log_reproduces_the_final_state(rules: Rules, seed: int, play: int) -> None:
    rng = random.Random(play)
    checkpoints: list[tuple[int, dict[str, Any]]] = []

    def on_step(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        if rng.random() < 0.05:
            checkpoints.append((after.ply, state_to_json(after)))

    state, log = play_random(rules, seed, random.Random(play), on_step=on_step)
    again = replay(rules, seed, state.dealer, log)
    assert state_to_json(again) == state_to_json(state)
    for ply, data in checkpoints:  # a stored state resumes exactly
        restored = state_from_json(json.loads(json.dumps(data)))
        assert state_to_json(restored) == data
        resumed = restored
        for action in log[ply:]:
            resumed, _ = apply(resumed, action)
        assert state_to_json(resumed) == state_to_json(state)


@SETTINGS
@given(rules=rules_strategy, seed=seeds, play=play_seeds)
def test_no_view_or_event_ever_contains_a_hidden_card(rules: Rules, seed: int, play: int) -> None:
    seen: set[Card] = set()  # cards that have been face up: table cards and every turned trump

    def hidden(state: State, seat: int | None) -> set[Card]:
        cards = set(state.stock)
        for other in range(state.n):
            if other != seat:
                cards.update(state.hands[other])
        return cards

    def on_step(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        seen.add(before.trump_card)
        seen.update(card for pair in before.table for card in pair if card is not None)
        seen.add(after.trump_card)
        seen.update(getattr(action, "cards", ()))  # played face up (lead, throw-in, transfer)
        seen.update([action.card] if hasattr(action, "card") else [])  # a cover
        for seat in [None, *range(after.n)]:
            secret = hidden(after, seat)
            data = view(after, seat)
            json.dumps(data)
            leaked = _card_texts(data) & (secret - {after.trump_card})
            assert not leaked, f"view of {seat} shows {leaked}"
            assert "seed" not in data and "stock_cards" not in data
            if seat is None:
                assert "hand" not in data and "legal" not in data
            for event in events:
                shown = _card_texts(event_to_json(public_cards(event, seat)))
                assert not shown & (secret - seen), f"event {event} shows {shown & secret - seen} to {seat}"

    state, _ = play_random(rules, seed, random.Random(play), on_step=on_step)
    assert state.outcome is not None


@SETTINGS
@given(rules=neighbours_rules, seed=seeds, play=play_seeds)
def test_the_neighbours_circle_is_around_the_current_defender(rules: Rules, seed: int, play: int) -> None:
    """At a ``neighbours`` table the circle is the nearest player on each side of the *current*
    defender (after any transfer) among those still holding cards, and the main attacker is always
    the one on his right while he holds cards."""

    def on_step(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        if after.phase != "bout":
            return
        ring = [s for s in range(after.n) if s == after.defender or (after.hands[s] and s not in after.out)]
        at = ring.index(after.defender)
        right, left = ring[at - 1], ring[(at + 1) % len(ring)]
        expected = {right, left} - {after.defender}
        assert set(throwers(after)) == expected, (after.defender, after.hands, after.out)
        if after.hands[after.attacker]:
            assert after.attacker == right
        for seat in set(range(after.n)) - expected - {after.defender}:
            assert not [a for a in legal_actions(after, seat) if a.kind in ("throw_in", "pass")]

    play_random(rules, seed, random.Random(play), on_step=on_step)
