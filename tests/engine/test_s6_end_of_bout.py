"""§6 End of a bout: beaten off, taken, refill order, the stock running out, the trump card last."""

from __future__ import annotations

from app.engine import Cover, Lead, Pass, Rules, Take, ThrowIn, view
from app.engine.seating import refill_order

from .support import C, cs, of_type, pos, run


def test_beaten_off_goes_to_the_discard_and_the_defender_leads() -> None:
    hands = ["7h Ac Kd Qd As 10d", "8h 9h 10h Jh Qh Kh", "10c Jc Qc 8d 9d Kc"]
    state = pos(hands, "6s", rules=Rules(seats=3), stock="6c 6d 6h 6s")
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(0), Pass(2))
    end = of_type(events, "bout_end")[0]
    assert end == {"type": "bout_end", "result": "beaten", "defender": 1, "cards": (C("7h"), C("8h"))}
    assert state.discard == (C("7h"), C("8h")) and state.table == ()
    assert (state.attacker, state.defender) == (1, 2)
    assert view(state, None)["discard"] == 2


def test_a_defender_without_cards_hands_the_lead_on() -> None:
    state = pos(["7h Ac", "8h", "9c 10d"], "6s", rules=Rules(seats=3))
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    # His hand is empty: nothing more can be added, the bout is over at once and he is out.
    assert of_type(events, "bout_end")[0]["result"] == "beaten"
    assert of_type(events, "out") == [{"type": "out", "seat": 1, "place": 1}]
    assert (state.attacker, state.defender) == (2, 0)


def test_taken_means_the_next_player_with_cards_after_the_defender_leads() -> None:
    rules = Rules(seats=4)
    state = pos(["7h Ac", "8h 9h", "", "9c 10d"], "6s", rules=rules, out=[2])
    state, events = run(state, Lead(0, (C("7h"),)), Take(1), Pass(0), Pass(3))
    assert of_type(events, "bout_end")[0]["result"] == "taken"
    assert set(state.hands[1]) == set(cs("8h 9h 7h"))
    assert (state.attacker, state.defender) == (3, 0)  # seat 2 is out: seat 3 leads
    assert state.discard == ()


def test_refill_order_main_attacker_then_clockwise_defender_last() -> None:
    rules = Rules(seats=4)
    hands = ["7h Ac Kd", "8h 9h 10h Jh", "10c Jc", "9c 10d Qd 7s"]
    stock = "6c 6d 6h 7c 7d 8c 8d 9d Jd Qc Kc Ks Qs 6s"
    state = pos(hands, "6s", rules=rules, stock=stock)
    assert refill_order(state) == (0, 2, 3, 1)
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(0), Pass(2), Pass(3))
    draws = of_type(events, "draw")
    assert [(d["seat"], d["cards"]) for d in draws] == [
        (0, cs("6c 6d 6h 7c")),  # main attacker: 2 left -> 6
        (2, cs("7d 8c 8d 9d")),  # then clockwise from the defender's left
        (3, cs("Jd Qc")),
        (1, cs("Kc Ks Qs")),  # the defender last
    ]
    assert state.stock == cs("6s")
    assert all(len(hand) == 6 for hand in state.hands)


def test_refill_order_wraps_around_the_table() -> None:
    state = pos(["7h", "8h", "9h", "10h", "Jh"], "6s", rules=Rules(seats=5), attacker=3, stock="6s")
    assert state.defender == 4
    assert refill_order(state) == (3, 0, 1, 2, 4)


def test_the_stock_runs_out_in_the_middle_of_the_refill() -> None:
    rules = Rules(seats=4)
    hands = ["7h Ac Kd Qd As", "8h 9h 10h Jh", "10c Jc 9d Qc", "9c 10d Qh 7s"]
    state = pos(hands, "6s", rules=rules, stock="6c 6d 6s")
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(0), Pass(2), Pass(3))
    draws = of_type(events, "draw")
    assert [(d["seat"], d["cards"]) for d in draws] == [(0, cs("6c 6d")), (2, cs("6s"))]
    assert draws[-1]["trump_card"] == C("6s")  # the turned trump is the last card anybody takes
    assert "trump_card" not in draws[0]
    assert state.stock == ()
    assert [len(hand) for hand in state.hands] == [6, 3, 5, 4]
    assert view(state, None)["trump_card_in_stock"] is False
    assert view(state, None)["trump_card"] == "6s"


def test_nobody_draws_from_an_empty_stock() -> None:
    state = pos(["7h Ac", "8h 9h", "9c 10d"], "6s", rules=Rules(seats=3))
    state, events = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("8h")), Pass(0), Pass(2))
    assert of_type(events, "draw") == []
    assert [len(hand) for hand in state.hands] == [1, 1, 2]


def test_attackers_draw_after_a_take_too_and_the_taker_last() -> None:
    hands = ["7h 7c Kd", "8h 9h", "10c Jc Qc"]
    state = pos(hands, "6s", rules=Rules(seats=3), stock="6c 6d 6h 7d 8d 9d Ad Ac Ah Jd Qd 6s")
    # Two attacks on a defender who held two cards: the bout ends as soon as the limit is reached.
    state, events = run(state, Lead(0, (C("7h"),)), Take(1), ThrowIn(0, (C("7c"),)))
    assert [(d["seat"], d["count"]) for d in of_type(events, "draw")] == [(0, 5), (2, 3), (1, 2)]
    assert [len(hand) for hand in state.hands] == [6, 6, 6]
    assert state.stock == cs("Qd 6s")
