"""Views: a seat sees its own hand and public cards only; a spectator sees no hand at all."""

from __future__ import annotations

import json
import random

from app.engine import Cover, Lead, Pass, Rules, ThrowIn, legal_actions, new_match, public_cards, view

from .support import C, all_legal, choose, of_type, pos, run


def _all_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [str(key), *_all_strings(item)]]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _all_strings(item)]
    return []


def test_a_seat_sees_its_own_hand_and_counts_of_the_others() -> None:
    state = new_match(Rules(deck=36, seats=3), 11)
    for seat in range(3):
        data = view(state, seat)
        assert sorted(data["hand"]) == sorted(str(card) for card in state.hands[seat])
        texts = set(_all_strings(data))
        for other in range(3):
            if other != seat:
                assert not texts & {str(card) for card in state.hands[other]}
        assert [player["cards"] for player in data["players"]] == [6, 6, 6]
        assert data["legal"] == [
            {"type": a.kind, "seat": a.seat, "cards": [str(c) for c in a.cards]}  # type: ignore[union-attr]
            for a in legal_actions(state, seat)
        ]


def test_views_hide_the_stock_order_and_the_seed() -> None:
    state = new_match(Rules(deck=52, seats=2), 123456789)
    hidden = {str(card) for card in state.stock} - {str(state.trump_card)}
    for seat in (None, 0, 1):
        data = view(state, seat)
        texts = _all_strings(data)
        assert not set(texts) & hidden
        assert data["stock"] == len(state.stock) == 40
        assert str(state.seed) not in json.dumps(data)
        assert "seed" not in data
        assert data["trump_card"] == str(state.trump_card) and data["trump_card_in_stock"] is True


def test_the_spectator_view_has_no_hand_and_no_legal_actions() -> None:
    state = new_match(Rules(seats=4), 5)
    data = view(state, None)
    assert data["seat"] is None and "hand" not in data and "legal" not in data
    all_hands = {str(card) for hand in state.hands for card in hand}
    assert not set(_all_strings(data)) & all_hands


def test_public_cards_redacts_other_seats_draws() -> None:
    state = pos(["7h", "8h 9h"], "6s", stock="Kd Qd Jd 10d 9d 6s")
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))  # seat 0 has no card to add
    draws = of_type(events, "draw")
    assert [d["seat"] for d in draws] == [0]  # the stock runs out before the defender's turn
    mine = public_cards(draws[0], 0)
    theirs = public_cards(draws[0], 1)
    spectator = public_cards(draws[0], None)
    assert mine["cards"] == draws[0]["cards"] == (C("Kd"), C("Qd"), C("Jd"), C("10d"), C("9d"), C("6s"))
    assert "cards" not in theirs and "cards" not in spectator
    assert theirs["count"] == 6 and theirs["seat"] == 0
    # The turned trump was face up: its holder stays public.
    assert theirs["trump_card"] == C("6s") and spectator["trump_card"] == C("6s")
    assert draws[0] == {**mine}  # the original event is not changed


def test_public_events_pass_through_unchanged() -> None:
    _, events = run(pos(["7h 7c", "8h 9h"], "6s", stock="6s"), Lead(0, (C("7h"),)), ThrowIn(0, (C("7c"),)))
    _, more = run(pos(["7h 7c", "8h 9h"], "6s", stock="6s"), Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(0))
    assert {e["type"] for e in events + more} >= {"move", "bout_end", "bout_start", "pass"}
    for event in events + more:
        if event["type"] == "draw":
            assert public_cards(event, event["seat"]) == event
        else:
            assert public_cards(event, 1) == event and public_cards(event, None) == event


def test_views_during_random_play_never_contain_another_hand() -> None:
    rng = random.Random(9)
    for seed in range(6):
        state = new_match(Rules(deck=36, seats=rng.randint(2, 6), transfer=True), seed)
        while state.outcome is None:
            for seat in (None, *range(state.n)):
                data = view(state, seat)
                texts = set(_all_strings(data))
                for other in range(state.n):
                    if other != seat:
                        secret = {str(card) for card in state.hands[other]} - {str(state.trump_card)}
                        assert not texts & secret
                json.dumps(data)
            state, _ = run(state, choose(rng, all_legal(state), state))
        assert view(state, 0)["outcome"] == state.outcome.to_json()
