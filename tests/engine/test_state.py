"""The State value: ``copy`` (hand-written for speed) copies every field; ``apply`` never mutates."""

from __future__ import annotations

import dataclasses
import random

from app.engine import Rules, apply, new_match, state_to_json

from .support import all_legal, choose, play_random


def test_copy_copies_every_field() -> None:
    rng = random.Random(4)
    states = []

    def keep(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        states.append(after)

    play_random(Rules(deck=36, seats=4, transfer=True, cheating=True), 8, rng, on_step=keep)
    assert states
    names = [field.name for field in dataclasses.fields(states[0])]
    for state in states:
        twin = state.copy()
        assert twin is not state and twin == state
        for name in names:  # an unset slot (a field copy() forgot) raises AttributeError here
            assert getattr(twin, name) is getattr(state, name)


def test_apply_never_changes_the_state_it_is_given() -> None:
    rng = random.Random(5)
    state = new_match(Rules(deck=52, seats=3, transfer=True), 12)
    while state.outcome is None:
        frozen = state_to_json(state)
        action = choose(rng, all_legal(state), state)
        after, _ = apply(state, action)
        assert state_to_json(state) == frozen
        assert after.ply == state.ply + 1
        state = after
