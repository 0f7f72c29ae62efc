"""JSON: states, actions, events and views round-trip through json; replay reproduces a match."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from app.engine import (
    Action,
    ActionParseError,
    Challenge,
    Cover,
    ExchangeTrump,
    Forfeit,
    Lead,
    Pass,
    Rules,
    State,
    Take,
    ThrowIn,
    Transfer,
    action_from_json,
    action_to_json,
    apply,
    event_to_json,
    legal_actions,
    new_match,
    replay,
    replay_views,
    state_from_json,
    state_to_json,
    view,
)

from .support import C, all_legal, choose, cs, play_random


def _through_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def _states_of_random_matches() -> list[State]:
    states: list[State] = []
    rng = random.Random(1)
    configs = [
        Rules(deck=36, seats=3, transfer=True, cheating=True),
        Rules.for_preset("durac1993", seats=4),
        Rules(deck=24, seats=4, circle="neighbours", draws=False),
    ]
    for seed, rules in enumerate(configs):

        def keep(before, action, after, events, legal):  # type: ignore[no-untyped-def]
            if rng.random() < 0.2:
                states.append(after)

        final, _ = play_random(rules, seed, rng, on_step=keep, challenge_rate=0.01)
        states.append(final)
    return states


STATES = _states_of_random_matches()


def test_states_round_trip_through_json() -> None:
    assert any(state.moves for state in STATES) and any(state.outcome for state in STATES)
    for state in STATES:
        data = state_to_json(state)
        restored = state_from_json(_through_json(data))
        assert restored == state
        assert state_to_json(restored) == data


def test_a_stored_state_with_an_unknown_phase_is_refused() -> None:
    data = _through_json(state_to_json(STATES[0]))
    data["phase"] = "dealing"
    with pytest.raises(ValueError, match="unknown phase 'dealing'"):
        state_from_json(data)


def test_cheat_notes_survive_the_state_codec() -> None:
    state = new_match(Rules(deck=36, seats=2, cheating=True), 4)
    state, _ = apply(state, legal_actions(state, state.attacker)[0])
    cover = next(a for a in legal_actions(state, state.defender) if isinstance(a, Cover))
    state, _ = apply(state, cover)
    restored = state_from_json(_through_json(state_to_json(state)))
    assert [m.cheat for m in restored.moves] == [m.cheat for m in state.moves]


ACTIONS: list[Action] = [
    Lead(0, (C("10h"),)),
    Lead(2, cs("7h 7c 9d 9s")),
    ThrowIn(1, (C("Qs"),)),
    ThrowIn(3, cs("2c 2d")),
    Cover(1, 0, C("As")),
    Cover(4, 5, C("10d")),
    Transfer(1, (C("6c"),)),
    Transfer(2, cs("7d 9h")),
    Take(1),
    Pass(5),
    Challenge(2, 3),
    ExchangeTrump(0),
    Forfeit(3, "timeout"),
    Forfeit(0, "left"),
    Forfeit(1, "disconnected"),
]


@pytest.mark.parametrize("action", ACTIONS, ids=lambda a: a.kind)
def test_actions_round_trip_through_json(action: Action) -> None:
    data = action_to_json(action)
    assert data["type"] == action.kind and data["seat"] == action.seat
    assert action_from_json(_through_json(data)) == action


@pytest.mark.parametrize(
    "data",
    [
        {"type": "dance", "seat": 0},
        {"seat": 0},
        {"type": "take"},
        {"type": "take", "seat": "0"},
        {"type": "take", "seat": True},
        {"type": "lead", "seat": 0, "cards": []},
        {"type": "lead", "seat": 0, "cards": "7h"},
        {"type": "lead", "seat": 0, "cards": ["7x"]},
        {"type": "lead", "seat": 0, "cards": [7]},
        {"type": "cover", "seat": 1, "card": "7h"},
        {"type": "cover", "seat": 1, "attack": 0, "card": "11h"},
        {"type": "cover", "seat": 1, "attack": 0},
        {"type": "challenge", "seat": 1},
        {"type": "forfeit", "seat": 1, "reason": "bored"},
        ["type", "take"],
    ],
)
def test_bad_action_json_is_refused(data: Any) -> None:
    with pytest.raises(ActionParseError):
        action_from_json(data)
    assert issubclass(ActionParseError, ValueError)


def test_events_round_trip_through_json() -> None:
    rng = random.Random(2)
    kinds: set[str] = set()
    for seed in range(8):
        rules = Rules(deck=36, seats=3, transfer=True, cheating=seed % 2 == 0)
        state = new_match(rules, seed)
        while state.outcome is None:
            state, events = apply(state, choose(rng, all_legal(state), state, challenge_rate=0.01))
            for event in events:
                data = event_to_json(event)
                assert _through_json(data) == data
                kinds.add(data["type"])
                if data["type"] == "draw":
                    assert all(isinstance(card, str) for card in data["cards"])
                if data["type"] == "move":
                    assert action_from_json(data["action"]) == event["action"]
    assert {"move", "draw", "bout_start", "bout_end", "match_end"} <= kinds


def test_views_round_trip_through_json() -> None:
    for state in STATES:
        for seat in (None, *range(state.n)):
            data = view(state, seat)
            assert _through_json(data) == data


def test_replay_from_seed_and_log_reproduces_the_state() -> None:
    rng = random.Random(3)
    for seed in range(10):
        rules = Rules(deck=52, seats=rng.randint(2, 6), transfer=True)
        final, log = play_random(rules, seed, rng)
        dealer = new_match(rules, seed).dealer
        assert state_to_json(replay(rules, seed, dealer, log)) == state_to_json(final)
        # The same through JSON, as stored by the server: rules, seed (a string), actions.
        views = replay_views(
            _through_json(rules.to_json()),
            str(seed),
            dealer,
            _through_json([action_to_json(action) for action in log]),
        )
        assert len(views) == len(log) + 1
        assert views[0] == view(new_match(rules, seed, dealer), None)
        assert views[-1] == view(final, None)


def test_a_big_seed_survives_json() -> None:
    state = new_match(Rules(), 2**127 + 12345)
    data = _through_json(state_to_json(state))
    assert data["seed"] == str(2**127 + 12345)
    assert state_from_json(data).seed == state.seed
