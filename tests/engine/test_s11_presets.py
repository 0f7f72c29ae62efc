"""§11 House-rule presets: Classic 36 and Durac 1993, each listed rule."""

from __future__ import annotations

import pytest

from app.engine import (
    Cover,
    ExchangeTrump,
    Lead,
    Pass,
    Rules,
    Take,
    ThrowIn,
    Transfer,
    allowance,
    legal_actions,
    new_match,
    view,
)
from app.engine import errors as err
from app.engine.deal import first_attacker

from .support import C, cs, of_type, pos, refused, run

CLASSIC = Rules.for_preset("classic36", seats=3)


# --------------------------------------------------------------------------- Classic 36


def test_classic36_parameters() -> None:
    rules = Rules.for_preset("classic36", seats=6)
    assert (rules.deck, rules.transfer, rules.draws, rules.circle) == (36, False, True, "all")
    assert rules.first_bout_cap == 6
    with pytest.raises(ValueError):
        Rules.for_preset("classic36", seats=7)
    state = new_match(rules.with_changes(seats=3), 3)
    assert state.stock[-1] == state.trump_card  # the standard deal: the turned card is drawn last
    assert state.attacker == first_attacker(state)


def test_classic36_six_attacks_from_the_first_bout() -> None:
    hands = ["8c 8d 8s 9h 9c 9d", "Ah Ac Ad As Kh Kc Qh", "Jc"]
    table = [("7h", None), ("7c", None), ("7d", None), ("8h", None), ("7s", None)]
    state = pos(hands, "6s", rules=CLASSIC, stock="6s", table=table)
    assert not state.defended_once
    assert view(state, 0)["cap"] == 6 and allowance(state) == 1
    state, _ = run(state, ThrowIn(0, (C("8c"),)))
    assert len(state.table) == 6 and allowance(state) == 0
    assert isinstance(refused(state, ThrowIn(0, (C("8d"),))), err.LimitExceeded)


def test_classic36_never_more_than_the_defenders_hand() -> None:
    state = pos(["7h 7c 7d 7s", "8h 9h 10h", "Jc"], "6s", rules=CLASSIC, stock="6s")
    assert allowance(state) == 3
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(0, (C("7c"),)), ThrowIn(0, (C("7d"),)))
    assert isinstance(refused(state, ThrowIn(0, (C("7s"),))), err.LimitExceeded)


def test_classic36_no_transfer_throw_ins_allowed() -> None:
    state = pos(["7h 7c", "7d 9h 10h", "7s Jc"], "6s", rules=CLASSIC, stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)))
    assert isinstance(refused(state, Transfer(1, (C("7d"),))), err.NotAllowedHere)
    assert ThrowIn(2, (C("7s"),)) in legal_actions(state, 2)


def test_classic36_all_hands_empty_together_is_void() -> None:
    state = pos(["7h", "8h 8c", "7c"], "6s", rules=CLASSIC)
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(2, (C("7c"),)), Cover(1, 0, C("8h")), Cover(1, 1, C("8c")))
    assert state.outcome is not None and state.outcome.draw and state.outcome.durak is None


# --------------------------------------------------------------------------- Durac 1993

DURAC = Rules.for_preset("durac1993", seats=3)  # 52 cards, transfer on


def test_durac_top_card_is_trump_and_drawn_first() -> None:
    for seed in range(5):
        state = new_match(DURAC, seed)
        assert state.stock[0] == state.trump_card  # the top card, face up
        assert all(state.trump_card not in hand for hand in state.hands)
        lead = next(a for a in legal_actions(state, state.attacker) if len(a.cards) == 1)  # type: ignore[union-attr]
        _, events = run(state, lead)
        draw = of_type(events, "draw")[0]
        assert draw["seat"] == state.attacker and draw["cards"] == (state.trump_card,)
        assert draw["trump_card"] == state.trump_card


def test_durac_player_after_the_dealer_leads() -> None:
    differs = 0
    for seed in range(30):
        state = new_match(DURAC, seed)
        assert state.attacker == (state.dealer + 1) % 3
        differs += state.attacker != first_attacker(state)
    assert differs > 0  # not the lowest-trump rule


def test_durac_lowest_trump_may_be_swapped_for_the_turned_card() -> None:
    hands = ["3c 4c 5c", "2s 9d 10d", "Jh Qh Kh"]
    state = pos(hands, "Ks", rules=DURAC, stock="Ks 6c 7c 8c", dealer=2)
    assert state.exchange_open and view(state, None)["exchange_open"]
    assert legal_actions(state, 1) == [ExchangeTrump(1)]  # any holder, not only the leader
    assert ExchangeTrump(0) not in legal_actions(state, 0)
    assert isinstance(refused(state, ExchangeTrump(0)), err.CardNotInHand)
    state, events = run(state, ExchangeTrump(1))
    assert set(state.hands[1]) == set(cs("Ks 9d 10d"))
    assert state.trump_card == C("2s") and state.stock[0] == C("2s") and state.trump == "s"
    assert of_type(events, "exchange_trump") == [{"type": "exchange_trump", "seat": 1, "gave": C("2s"), "got": C("Ks")}]
    assert not state.exchange_open
    assert isinstance(refused(state, ExchangeTrump(1)), err.NotAllowedHere)  # once


def test_durac_no_swap_after_the_first_attack() -> None:
    hands = ["3c 4c 5c", "2s 9d 10d", "Jh Qh Kh"]
    state = pos(hands, "Ks", rules=DURAC, stock="Ks 6c 7c 8c")
    state, _ = run(state, Lead(0, (C("3c"),)))
    assert ExchangeTrump(1) not in legal_actions(state, 1)
    assert isinstance(refused(state, ExchangeTrump(1)), err.NotAllowedHere)


@pytest.mark.parametrize(
    ("lead", "ok"),
    [
        ("7h", True),
        ("7h 7c", True),  # a pair
        ("7h 7c 7d", True),  # three
        ("7h 7c 7d 7s", True),  # four
        ("7h 7c 9h 9c", True),  # two pairs
        ("7h 7c 9h 9c 9d", True),  # a pair and three
        ("7h 9h", False),  # two singles
        ("7h 7c 9h", False),  # a pair and a single
    ],
)
def test_durac_group_leads(lead: str, ok: bool) -> None:
    hands = ["7h 7c 7d 7s 9h 9c 9d", "Ah Ac Ad As Kh Kc Kd", "Jh Qh"]
    state = pos(hands, "2s", rules=DURAC, stock="2s 3c", defended_once=False)
    action = Lead(0, cs(lead))
    assert (action in legal_actions(state, 0)) == ok
    if ok:
        after, _ = run(state, action)
        assert [attack for attack, _ in after.table] == list(cs(lead))
    else:
        assert isinstance(refused(state, action), err.BadPlay)


def test_durac_groups_at_most_six_and_within_the_allowance() -> None:
    hands = ["7h 7c 7d 7s 9h 9c 9d", "Ah Ac Ad As Kh Kc Kd", "Jh Qh"]
    state = pos(hands, "2s", rules=DURAC, stock="2s")
    error = refused(state, Lead(0, cs("7h 7c 7d 7s 9h 9c 9d")))
    assert isinstance(error, err.BadPlay) and "at most 6" in str(error)
    assert Lead(0, cs("7h 7c 7d 7s 9h 9c")) in legal_actions(state, 0)  # six from the first bout
    small = pos(["7h 7c 7d 9h", "Ah Ac", "Jh Qh"], "2s", rules=DURAC, stock="2s")
    assert isinstance(refused(small, Lead(0, cs("7h 7c 7d"))), err.LimitExceeded)  # defender holds 2
    assert Lead(0, cs("7h 7c")) in legal_actions(small, 0)


def test_durac_group_throw_ins() -> None:
    hands = ["7h 9c", "Ah Ac Ad As Kh Kc Kd", "7c 7d 9h 9d 5c"]
    state = pos(hands, "2s", rules=DURAC, stock="2s 3c 3d 3h 4c 4d")
    state, _ = run(state, Lead(0, cs("7h")))
    assert ThrowIn(2, cs("7c 7d")) in legal_actions(state, 2)
    state, _ = run(state, Cover(1, 0, C("Ah")))  # ace is now on the table too
    state, _ = run(state, ThrowIn(2, cs("7c 7d")))
    assert [attack for attack, _ in state.table] == list(cs("7h 7c 7d"))
    assert isinstance(refused(state, ThrowIn(2, cs("9h 5c"))), err.RankNotOnTable)


def test_durac_transfer_adds_one_card_to_each_led_rank() -> None:
    hands = ["7h 7c 9h 9c", "7d 9d Ah Kh", "7s 9s Qh Jh 10h 8h"]
    state = pos(hands, "2s", rules=DURAC, stock="2s 3c 3d 3h 4c 4d 4h 5c 5d 5h")
    state, _ = run(state, Lead(0, cs("7h 7c 9h 9c")))
    assert Transfer(1, cs("7d 9d")) in legal_actions(state, 1)
    error = refused(state, Transfer(1, cs("7d")))
    assert isinstance(error, err.BadPlay) and "one card for each of 2 rank" in str(error)
    state, _ = run(state, Transfer(1, cs("7d 9d")))
    assert (state.attacker, state.defender) == (1, 2)
    assert [attack for attack, _ in state.table] == list(cs("7h 7c 9h 9c 7d 9d"))
    assert len(state.hands[1]) == 6  # the transferrer, now an attacker, refilled at once


def test_durac_transfer_must_come_before_any_throw_in() -> None:
    hands = ["7h 8c", "7d 9d Ah Kh", "7s 9s Qh Jh 10h 8h"]
    state = pos(hands, "2s", rules=DURAC, stock="2s 3c 3d 3h 4c 4d 4h 5c 5d 5h 6c")
    state, _ = run(state, Lead(0, cs("7h")))
    assert Transfer(1, cs("7d")) in legal_actions(state, 1)
    state, _ = run(state, ThrowIn(2, cs("7s")))
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))
    error = refused(state, Transfer(1, cs("7d")))
    assert isinstance(error, err.TransferNotAllowed) and "too late" in str(error)


def test_durac_transfer_respects_the_cap_of_six() -> None:
    hands = ["7h 7c 9h 9c 9d", "7d 9s Ah Kh Qd", "Qh Jh 10h 8h Qc Jc Kc"]
    state = pos(hands, "2s", rules=DURAC, stock="2s")
    state, _ = run(state, Lead(0, cs("7h 7c 9h 9c 9d")))
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))
    error = refused(state, Transfer(1, cs("7d 9s")))
    assert isinstance(error, err.TransferNotAllowed) and "over the limit of 6" in str(error)


def test_durac_attackers_refill_during_the_bout_the_defender_after() -> None:
    hands = ["7h 7c 5d", "8h 8c 8d", "7d 5c"]
    stock = "2s 3c 3d 3h 4c 4d 4h 5h 6c 6d 6h 10c 10d 10h Jc Jd"
    state = pos(hands, "2s", rules=DURAC, stock=stock)
    state, events = run(state, Lead(0, cs("7h 7c")))
    assert of_type(events, "draw") == [
        {"type": "draw", "seat": 0, "count": 5, "cards": cs("2s 3c 3d 3h 4c"), "trump_card": C("2s")}
    ]
    state, events = run(state, Cover(1, 0, C("8h")))
    assert of_type(events, "draw") == [] and len(state.hands[1]) == 2  # the defender waits
    state, events = run(state, ThrowIn(2, cs("7d")))
    assert [(d["seat"], d["count"]) for d in of_type(events, "draw")] == [(2, 5)]
    state, events = run(state, Cover(1, 1, C("8c")), Cover(1, 2, C("8d")))
    assert of_type(events, "bout_end")[0]["result"] == "beaten"
    # After the bout only the defender is short of six: he draws now.
    assert of_type(events, "draw") == [{"type": "draw", "seat": 1, "count": 6, "cards": cs("6h 10c 10d 10h Jc Jd")}]
    assert [len(hand) for hand in state.hands] == [6, 6, 6]


def test_durac_a_player_who_picks_up_loses_his_turn() -> None:
    hands = ["7h 7c", "8d Ah", "7d 5c"]
    state = pos(hands, "Ks", rules=DURAC, stock="Ks")
    state, _ = run(state, Lead(0, cs("7h")), Take(1))
    state, _ = run(state, *[Pass(seat) for seat in (0, 2)])
    assert (state.attacker, state.defender) == (2, 0)
