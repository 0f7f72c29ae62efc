"""§3 Deal and trump: seeded shuffle, six each, the turned trump drawn last, whole-deck deals,
the lowest trump leads, nobody with a trump → the dealer's left leads."""

from __future__ import annotations

import random

import pytest

from app.engine import Rules, apply, deck, new_match, new_seed, shuffled, state_to_json, view
from app.engine.deal import first_attacker, pick_dealer

from .support import all_legal, choose, of_type, pos


def test_seeded_shuffle_is_deterministic_and_seeds_differ() -> None:
    cards = deck(36)
    assert shuffled(cards, 42) == shuffled(cards, 42)
    assert shuffled(cards, 42) != shuffled(cards, 43)
    assert sorted(shuffled(cards, 42)) == sorted(cards)
    assert shuffled(cards, 42) != cards
    orders = {shuffled(cards, seed) for seed in range(50)}
    assert len(orders) == 50
    # Every position receives many different cards: no card is stuck in place.
    firsts = {shuffled(cards, seed)[0] for seed in range(200)}
    assert len(firsts) > 25


def test_same_seed_same_match_and_different_seeds_differ() -> None:
    rules = Rules(deck=36, seats=4)
    assert state_to_json(new_match(rules, 7)) == state_to_json(new_match(rules, 7))
    assert new_match(rules, 7).hands != new_match(rules, 8).hands
    assert new_match(rules).seed != new_match(rules).seed  # fresh secret seeds
    assert 0 <= new_seed() < 2**128


def test_bad_seed_and_dealer_are_refused() -> None:
    with pytest.raises(ValueError):
        shuffled(deck(36), -1)
    with pytest.raises(ValueError):
        new_match(Rules(seats=3), 1, dealer=3)


@pytest.mark.parametrize(("size", "seats"), [(24, 2), (24, 3), (36, 2), (36, 5), (52, 6), (52, 2)])
def test_six_each_dealt_one_at_a_time_from_the_dealers_left(size: int, seats: int) -> None:
    rules = Rules(deck=size, seats=seats)
    for seed in range(5):
        state = new_match(rules, seed)
        order = shuffled(deck(size), seed)
        assert state.dealer == pick_dealer(seed, seats)
        for index in range(6 * seats):
            seat = (state.dealer + 1 + index) % seats
            assert state.hands[seat][index // seats] == order[index]
        rest = order[6 * seats :]
        assert all(len(hand) == 6 for hand in state.hands)
        # The next card is turned for trump and slid under the stock: it is the last card drawn.
        assert state.trump_card == rest[0]
        assert state.stock == (*rest[1:], rest[0])
        assert state.trump == rest[0].suit
        assert view(state, None)["trump_card"] == str(rest[0])


def test_first_dealer_is_random_and_a_rematch_passes_the_dealer() -> None:
    dealers = {new_match(Rules(seats=4), seed).dealer for seed in range(40)}
    assert dealers == {0, 1, 2, 3}
    assert new_match(Rules(seats=4), 1, dealer=2).dealer == 2


def test_the_turned_trump_is_the_last_card_drawn() -> None:
    rng = random.Random(3)
    for seed in range(10):
        state = new_match(Rules(deck=36, seats=3), seed)
        trump_card = state.trump_card
        draws = []
        while state.outcome is None:
            action = choose(rng, all_legal(state), state, challenge_rate=0)
            state, events = apply(state, action)
            draws.extend(card for event in of_type(events, "draw") for card in event["cards"])
            for event in of_type(events, "draw"):
                assert ("trump_card" in event) == (trump_card in event["cards"])
        assert len(draws) == 36 - 18  # a match ends only once the whole stock is drawn
        assert draws[-1] == trump_card


@pytest.mark.parametrize(("size", "seats"), [(24, 4), (36, 6)])
def test_whole_deck_deal_keeps_the_last_dealt_card_in_hand_as_trump(size: int, seats: int) -> None:
    for seed in range(5):
        state = new_match(Rules(deck=size, seats=seats), seed)
        order = shuffled(deck(size), seed)
        assert state.stock == ()
        assert state.trump_card == order[-1]
        assert state.trump_card in state.hands[state.dealer]  # the dealer's sixth card
        assert state.hands[state.dealer][-1] == state.trump_card
        data = view(state, (state.dealer + 1) % seats)
        assert data["trump_card"] == str(order[-1]) and data["trump_card_in_stock"] is False
        assert sum(len(hand) for hand in state.hands) == size


def test_the_lowest_trump_leads() -> None:
    for seats in (2, 3, 4, 6):
        for seed in range(20):
            state = new_match(Rules(deck=36, seats=seats), seed)
            trumps = [
                (card.rank, seat) for seat, hand in enumerate(state.hands) for card in hand if card.suit == state.trump
            ]
            if trumps:
                assert state.attacker == min(trumps)[1]
            assert state.defender == (state.attacker + 1) % seats
            assert state.phase == "lead"


def test_lowest_trump_and_nobody_with_a_trump_in_exact_positions() -> None:
    state = pos(["6h 7h 8h", "9c 10c Jc", "Qd Kd Ad"], "6s", stock="7s 6s", dealer=1)
    assert first_attacker(state) == 2  # no trump in any hand: left of the dealer
    state = pos(["6h 7h 8h", "9c 10c Jc", "Qd Kd Ad"], "6s", stock="7s 6s", dealer=2)
    assert first_attacker(state) == 0
    state = pos(["6h 7h 8s", "9c 10c Jc", "Qd Kd 7s"], "6s", stock="6s", dealer=1)
    assert first_attacker(state) == 2  # 7s is lower than 8s
    state = pos(["6h As 8h", "9c 10c Js", "Qd Kd 7h"], "6s", stock="6s", dealer=2)
    assert first_attacker(state) == 1  # Js is lower than As


def test_no_trump_in_any_hand_after_a_real_deal() -> None:
    rules = Rules(deck=36, seats=2)
    found = 0
    for seed in range(3000):
        state = new_match(rules, seed)
        if not any(card.suit == state.trump for hand in state.hands for card in hand):
            assert state.attacker == (state.dealer + 1) % 2
            found += 1
    assert found > 0
