"""§5 Transfer (perevodnoy)."""

from __future__ import annotations

from app.engine import Cover, Lead, Pass, Rules, Take, ThrowIn, Transfer, legal_actions, view
from app.engine import errors as err
from app.engine.seating import throwers

from .support import C, hand_text, of_type, pos, refused, run

T3 = Rules(seats=3, transfer=True)


def test_transfer_passes_the_whole_attack_to_the_left() -> None:
    hands = ["7h Ac Kd Qd", "7c 8h 9h", "10c Jc Qc 8d"]
    state, _ = run(pos(hands, "6s", rules=T3, stock="6s"), Lead(0, (C("7h"),)))
    assert Transfer(1, (C("7c"),)) in legal_actions(state, 1)
    state, events = run(state, Transfer(1, (C("7c"),)))
    assert state.table == ((C("7h"), None), (C("7c"), None))
    assert (state.attacker, state.defender) == (1, 2)  # the transferrer is the main attacker now
    assert "7c" not in hand_text(state, 1)
    assert state.bout_limit == 4  # the new defender's hand when the attack reached him
    assert of_type(events, "transferred") == [{"type": "transferred", "attacker": 1, "defender": 2, "limit": 4}]
    assert view(state, None)["defender"] == 2 and view(state, None)["attacker"] == 1
    assert isinstance(refused(state, Cover(1, 0, C("8h"))), err.NotYourTurn)  # no longer defending


def test_the_new_defender_may_transfer_again() -> None:
    hands = ["7h Ac Kd Qd As", "7c 8h 9h", "7d 10c Jc Qc"]
    state, _ = run(pos(hands, "6s", rules=T3, stock="6s"), Lead(0, (C("7h"),)), Transfer(1, (C("7c"),)))
    state, _ = run(state, Transfer(2, (C("7d"),)))
    assert (state.attacker, state.defender) == (2, 0)
    assert len(state.table) == 3 and state.bout_limit == 4


def test_no_transfer_once_a_card_is_covered() -> None:
    hands = ["7h 7s Ac", "7c 8h 9h 7d", "10c Jc Qc 8d"]
    state, _ = run(pos(hands, "6s", rules=T3, stock="6s"), Lead(0, (C("7h"),)), ThrowIn(0, (C("7s"),)))
    assert Transfer(1, (C("7c"),)) in legal_actions(state, 1)
    state, _ = run(state, Cover(1, 0, C("8h")))
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))
    error = refused(state, Transfer(1, (C("7c"),)))
    assert isinstance(error, err.TransferNotAllowed) and "covered" in str(error)


def test_no_transfer_after_a_take() -> None:
    hands = ["7h 7s Ac", "7c 8h 9h 7d", "10c Jc Qc 8d"]
    state, _ = run(pos(hands, "6s", rules=T3, stock="6s"), Lead(0, (C("7h"),)), Take(1))
    assert isinstance(refused(state, Transfer(1, (C("7c"),))), err.TransferNotAllowed)


def test_no_transfer_when_the_next_defender_holds_too_few_cards() -> None:
    hands = ["7h 7s Ac", "7c 8h 9h 7d", "10c Jc"]
    state, _ = run(pos(hands, "6s", rules=T3, stock="6s"), Lead(0, (C("7h"),)))
    assert Transfer(1, (C("7c"),)) in legal_actions(state, 1)  # seat 2 holds 2, two attacks after it
    state, _ = run(state, ThrowIn(0, (C("7s"),)))  # now three attacks after a transfer
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))
    error = refused(state, Transfer(1, (C("7c"),)))
    assert isinstance(error, err.TransferNotAllowed)
    assert "seat 2 holds 2 cards, fewer than the 3 attacks" in str(error)


def test_transfer_must_match_the_attacking_rank() -> None:
    hands = ["7h Ac", "8h 9h 7c", "10c Jc Qc"]
    state, _ = run(pos(hands, "6s", rules=T3, stock="6s"), Lead(0, (C("7h"),)))
    transfers = {a for a in legal_actions(state, 1) if isinstance(a, Transfer)}
    assert transfers == {Transfer(1, (C("7c"),))}
    error = refused(state, Transfer(1, (C("8h"),)))
    assert isinstance(error, err.BadPlay) and "does not match the attacking rank" in str(error)
    assert isinstance(refused(state, Transfer(1, (C("7d"),))), err.CardNotInHand)
    assert isinstance(refused(state, Transfer(1, (C("7c"), C("8h")))), err.BadPlay)  # one card


def test_no_transfer_at_a_table_without_transfer() -> None:
    hands = ["7h Ac", "8h 9h 7c", "10c Jc Qc"]
    state, _ = run(pos(hands, "6s", rules=Rules(seats=3), stock="6s"), Lead(0, (C("7h"),)))
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))
    error = refused(state, Transfer(1, (C("7c"),)))
    assert isinstance(error, err.NotAllowedHere) and error.code == "not_allowed_here"


def test_with_two_players_the_attack_goes_back() -> None:
    state = pos(["7h Ac Kd", "7c 8h 9h"], "6s", rules=Rules(transfer=True), stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)), Transfer(1, (C("7c"),)))
    assert (state.attacker, state.defender) == (1, 0)
    assert state.bout_limit == 2
    assert {a.kind for a in legal_actions(state, 0)} == {"cover", "take"}
    state, events = run(state, Take(0))  # two attacks on a two-card limit: nothing can be added
    assert of_type(events, "bout_end")[0]["result"] == "taken"
    assert {C("7h"), C("7c")} <= set(state.hands[0])
    assert (state.attacker, state.defender) == (1, 0)  # the taker loses his turn


def test_transfer_skips_players_out_and_without_cards() -> None:
    rules = Rules(seats=4, transfer=True)
    hands = ["7h Ac Kd", "7c 8h 9h", "", "10c Jc Qc"]
    state, _ = run(pos(hands, "6s", rules=rules, out=[2]), Lead(0, (C("7h"),)))
    state, _ = run(state, Transfer(1, (C("7c"),)))
    assert state.defender == 3


def test_the_throw_in_circle_moves_with_the_attack() -> None:
    rules = Rules(seats=4, circle="neighbours", transfer=True)
    hands = ["7h Ac Kd", "7c 8h 9h", "10c Jc Qc", "7d Ad"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="6s"), Lead(0, (C("7h"),)))
    assert throwers(state) == (0, 2)
    state, _ = run(state, Transfer(1, (C("7c"),)))
    assert throwers(state) == (1, 3)  # around the new defender, seat 2
    assert ThrowIn(3, (C("7d"),)) in legal_actions(state, 3)
    assert legal_actions(state, 0) == []


def test_the_transferrer_refills_first_as_main_attacker() -> None:
    hands = ["7h Ac Kd Qd As 10d", "7c 8h 9h 10h Jh Qh", "10c Jc Qc 8d 9d Kc"]
    stock = "6c 6d 6h 8c 9c 6s"
    state, _ = run(pos(hands, "6s", rules=T3, stock=stock), Lead(0, (C("7h"),)), Transfer(1, (C("7c"),)))
    state, events = run(state, Take(2), Pass(1), Pass(0))
    assert [event["seat"] for event in of_type(events, "draw")] == [1, 0]  # the taker had 8 cards
    assert of_type(events, "draw")[0]["cards"] == (C("6c"),)
    assert of_type(events, "draw")[1]["cards"] == (C("6d"),)


def test_after_a_transfer_the_circle_is_the_new_defenders_neighbours_skipping_empty_hands() -> None:
    # Issue 13.4: seat 2 threw in its last card, then seat 1 transferred past it to seat 3.
    rules = Rules(deck=36, seats=4, circle="neighbours", transfer=True)
    state = pos(["7s Ks Kd", "7d 9c 10c Jc", "7c", "8h 9h 10d 7h"], "Ah", rules=rules)
    state, _ = run(
        state,
        Lead(0, (C("7s"),)),
        ThrowIn(2, (C("7c"),)),
        Transfer(1, (C("7d"),)),
        Cover(3, 0, C("7h")),
        Cover(3, 1, C("8h")),
        Cover(3, 2, C("10d")),
    )
    assert (state.attacker, state.defender) == (1, 3) and view(state, None)["allowance"] == 1
    # Seat 2 takes no further part; the neighbours of seat 3 holding cards are seats 1 and 0.
    assert set(throwers(state)) == {0, 1}
    assert ThrowIn(1, (C("10c"),)) in legal_actions(state, 1)
    assert Pass(1) in legal_actions(state, 1)
    assert [p["role"] for p in view(state, None)["players"]] == ["thrower", "attacker", None, "defender"]
    state, _ = run(state, ThrowIn(1, (C("10c"),)))
    assert state.table[-1] == (C("10c"), None)
