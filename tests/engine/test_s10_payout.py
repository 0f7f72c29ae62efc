"""§10 Stakes, coins, series: the pot split by place, ties, draws, conservation, series score."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import Forfeit, Outcome, Rules, coin_changes, payout, series_update

from .support import play_random, pos, run


def finished(places: list[tuple[int, ...]], *, durak: int | None, order: tuple[int, ...] = ()) -> Outcome:
    return Outcome(draw=durak is None, durak=durak, order=order, places=tuple(places))


def test_one_on_one_the_winner_takes_the_pot() -> None:
    outcome = finished([(1,), (0,)], durak=0, order=(1,))
    assert payout(outcome, 50, 2, dealer=0) == [0, 100]
    assert coin_changes(outcome, 50, 2, dealer=0) == [-50, 50]


def test_shares_by_place_with_weights_n_minus_k() -> None:
    # Six players, stake 100: weights 5 4 3 2 1 0 of 15, pot 600.
    outcome = finished([(3,), (5,), (0,), (1,), (4,), (2,)], durak=2, order=(3, 5, 0, 1, 4))
    assert payout(outcome, 100, 6, dealer=0) == [120, 80, 0, 200, 40, 160]
    # Three players, stake 7: weights 2 1 0, pot 21.
    outcome = finished([(2,), (0,), (1,)], durak=1, order=(2, 0))
    assert payout(outcome, 7, 3, dealer=0) == [7, 0, 14]


@pytest.mark.parametrize(
    ("seats", "stake", "expected_by_place"),
    [
        (4, 10, [21, 13, 6, 0]),  # 40*3//6=20, 13, 6 -> 39, the remainder 1 to the first place
        (4, 1, [3, 1, 0, 0]),  # 2, 1, 0 -> 3, remainder 1
        (5, 3, [7, 4, 3, 1, 0]),  # 6, 4, 3, 1 -> 14, remainder 1
        (3, 1, [2, 1, 0]),
        (6, 7, [16, 11, 8, 5, 2, 0]),  # 14 11 8 5 2 -> 40 of 42, remainder 2
        (6, 1, [4, 1, 1, 0, 0, 0]),  # 2 1 1 0 0 -> 4 of 6, remainder 2
    ],
)
def test_rounding_down_with_the_remainder_to_the_first_place(
    seats: int, stake: int, expected_by_place: list[int]
) -> None:
    outcome = finished([(seat,) for seat in range(seats)], durak=seats - 1, order=tuple(range(seats - 1)))
    assert payout(outcome, stake, seats, dealer=0) == expected_by_place
    assert sum(expected_by_place) == stake * seats


def test_tied_places_share_their_coins() -> None:
    # Places 2 and 3 tied: 13 + 6 = 19 coins, 9 each; the odd coin to seat 1, the dealer's left.
    outcome = finished([(0,), (1, 2), (3,)], durak=3)
    assert payout(outcome, 10, 4, dealer=0) == [21, 10, 9, 0]
    assert payout(outcome, 10, 4, dealer=1) == [21, 9, 10, 0]  # seat 2 sits on dealer 1's left
    # Tied first place: 21 + 13 = 34, 17 each.
    outcome = finished([(1, 2), (0,), (3,)], durak=3)
    assert payout(outcome, 10, 4, dealer=0) == [6, 17, 17, 0]
    # Stake 5: shares 11 6 3 0; the tied first two get 17 -> 8 each and the odd coin goes to the one
    # of them nearest the dealer's left, the dealer himself coming last.
    outcome = finished([(1, 2), (0,), (3,)], durak=3)
    assert payout(outcome, 5, 4, dealer=0) == [3, 9, 8, 0]
    assert payout(outcome, 5, 4, dealer=1) == [3, 8, 9, 0]
    assert payout(outcome, 5, 4, dealer=2) == [3, 9, 8, 0]  # the dealer (seat 2) comes last
    # Three tied with 2 odd coins: one each to the first two from the dealer's left.
    outcome = finished([(0, 1, 3), (2,)], durak=2)
    assert payout(outcome, 5, 4, dealer=0) == [6, 7, 0, 7]  # 20 coins: 6 each, then seats 1 and 3


@pytest.mark.parametrize(("dealer", "expected"), [(0, [31, 32, 0]), (1, [32, 31, 0]), (2, [32, 31, 0])])
def test_a_forfeit_with_two_tied_for_first_splits_63_coins_from_the_dealers_left(
    dealer: int, expected: list[int]
) -> None:
    # Issue 13.5: three players, stake 21 (pot 63); seat 2 forfeits while seats 0 and 1 hold two
    # cards each, so they share first and second place (42 + 21 coins, 31 each and one odd coin).
    state = pos(["7h 8h", "9c 10c", "Jd Qd Kd"], "6s", rules=Rules(seats=3, stake=21), dealer=dealer)
    state, _ = run(state, Forfeit(2, "left"))
    assert state.outcome is not None and state.outcome.places == ((0, 1), (2,))
    assert payout(state.outcome, 21, 3, dealer=state.dealer) == expected
    assert coin_changes(state.outcome, 21, 3, dealer=state.dealer) == [coins - 21 for coins in expected]


def test_a_draw_refunds_every_stake() -> None:
    outcome = Outcome(draw=True, durak=None, order=(0, 2, 1), places=((0,), (2,), (1,)))
    assert payout(outcome, 25, 3, dealer=0) == [25, 25, 25]
    assert coin_changes(outcome, 25, 3, dealer=0) == [0, 0, 0]


def test_free_tables_pay_nothing_and_negative_stakes_are_refused() -> None:
    outcome = finished([(0,), (1,)], durak=1)
    assert payout(outcome, 0, 2, dealer=0) == [0, 0]
    with pytest.raises(ValueError):
        payout(outcome, -1, 2, dealer=0)


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[Outcome, int]:
    seats = draw(st.integers(2, 6))
    order = draw(st.permutations(range(seats)))
    durak = order[-1]
    places: list[tuple[int, ...]] = []
    index = 0
    rest = list(order[:-1])
    while index < len(rest):
        size = draw(st.integers(1, len(rest) - index))
        places.append(tuple(rest[index : index + size]))
        index += size
    places.append((durak,))
    return finished(places, durak=durak), seats


@settings(max_examples=300, deadline=None)
@given(case=outcomes(), stake=st.integers(0, 10_000), dealer_pick=st.integers(0, 5))
def test_coins_are_conserved_and_earlier_places_never_get_less(
    case: tuple[Outcome, int], stake: int, dealer_pick: int
) -> None:
    outcome, seats = case
    dealer = dealer_pick % seats
    paid = payout(outcome, stake, seats, dealer=dealer)
    assert sum(paid) == stake * seats
    assert sum(coin_changes(outcome, stake, seats, dealer=dealer)) == 0
    assert outcome.durak is not None and paid[outcome.durak] == 0
    assert all(coins >= 0 for coins in paid)
    by_place = [min(paid[seat] for seat in group) for group in outcome.places]
    assert by_place == sorted(by_place, reverse=True)
    for group in outcome.places:  # a tie shares equally, the odd coins from the dealer's left
        ordered = sorted(group, key=lambda seat: (seat - dealer - 1) % seats)
        coins = [paid[seat] for seat in ordered]
        assert coins == sorted(coins, reverse=True) and coins[0] - coins[-1] <= 1


def test_real_matches_pay_out_the_whole_pot() -> None:
    rng = random.Random(5)
    for seed in range(20):
        rules = Rules(deck=52, seats=rng.randint(2, 6), stake=30, draws=seed % 2 == 0)
        state, _ = play_random(rules, seed, rng, forfeit_rate=0.002)
        assert state.outcome is not None
        paid = payout(state.outcome, rules.stake, rules.seats, dealer=state.dealer)
        assert sum(paid) == rules.stake * rules.seats
        if not state.outcome.draw:
            assert paid[state.outcome.durak] == 0  # type: ignore[index]


def test_series_score_win_to_the_first_out_loss_to_the_durak() -> None:
    score: dict[int, tuple[int, int]] = {}
    score = series_update(score, finished([(2,), (0,), (1,)], durak=1, order=(2, 0)))
    assert score == {2: (1, 0), 1: (0, 1)}
    score = series_update(score, finished([(1,), (2,), (0,)], durak=0, order=(1, 2)))
    assert score == {2: (1, 0), 1: (1, 1), 0: (0, 1)}
    draw = Outcome(draw=True, durak=None, order=(0, 1, 2), places=((0,), (1,), (2,)))
    assert series_update(score, draw) == score  # a draw changes nothing
    # A forfeit before anybody went out: the single best-placed player gets the win.
    forfeit = Outcome(draw=False, durak=2, order=(), places=((1,), (0,), (2,)), forfeit=2, reason="left")
    assert series_update({}, forfeit) == {1: (1, 0), 2: (0, 1)}
    tied = Outcome(draw=False, durak=2, order=(), places=((0, 1), (2,)), forfeit=2, reason="left")
    assert series_update({}, tied) == {2: (0, 1)}
    assert score is not series_update(score, draw)  # a new dict, the old one untouched
