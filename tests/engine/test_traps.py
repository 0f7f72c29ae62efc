"""Known traps other durak engines fell into, one test each."""

from __future__ import annotations

import pytest

from app.engine import (
    Cover,
    Lead,
    Pass,
    Rules,
    Take,
    ThrowIn,
    Transfer,
    allowance,
    decision,
    legal_actions,
    timeout_actions,
    view,
)
from app.engine import errors as err
from app.engine.deal import first_attacker
from app.engine.seating import refill_order, throwers

from .support import C, card_multiset, cs, of_type, pos, refused, run


def test_a_transfer_takes_the_card_out_of_the_transferrers_hand() -> None:
    rules = Rules(seats=3, transfer=True)
    state = pos(["7h Ac Kd", "7c 8h 9h", "10c Jc Qc"], "6s", rules=rules, stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)))
    before = card_multiset(state)
    state, _ = run(state, Transfer(1, (C("7c"),)))
    assert C("7c") not in state.hands[1] and len(state.hands[1]) == 2
    assert (C("7c"), None) in state.table
    assert card_multiset(state) == before  # moved, not copied
    assert view(state, 1)["hand"] == ["8h", "9h"]
    assert view(state, None)["players"][1]["cards"] == 2


@pytest.mark.parametrize("transfer", [False, True])
def test_the_neighbours_circle_does_not_depend_on_the_transfer_switch(transfer: bool) -> None:
    rules = Rules(seats=4, circle="neighbours", transfer=transfer)
    state = pos(["7h Ac", "8h 9h 10h Jh", "7d Ad", "7s Kd"], "6c", rules=rules, stock="6c")
    state, _ = run(state, Lead(0, (C("7h"),)))
    assert throwers(state) == (0, 2)  # both sides of the defender
    assert ThrowIn(2, (C("7d"),)) in legal_actions(state, 2)
    assert isinstance(refused(state, ThrowIn(3, (C("7s"),))), err.NotYourTurn)
    everyone = pos(["7h Ac", "8h 9h 10h Jh", "7d Ad", "7s Kd"], "6c", rules=rules.with_changes(circle="all"))
    everyone, _ = run(everyone, Lead(0, (C("7h"),)))
    assert throwers(everyone) == (0, 2, 3)


EMPTY_AT_ONCE = {
    "two": (Rules(), ["7h", "8h"], [Lead(0, (C("7h"),)), Cover(1, 0, C("8h"))]),
    "four-with-throw-ins": (
        Rules(seats=4),
        ["7h", "8h 6s 8d", "7c", "7d"],
        [
            Lead(0, (C("7h"),)),
            ThrowIn(2, (C("7c"),)),
            ThrowIn(3, (C("7d"),)),
            Cover(1, 0, C("8h")),
            Cover(1, 1, C("6s")),
            Cover(1, 2, C("8d")),
        ],
    ),
    "durac-pair": (
        Rules.for_preset("durac1993", deck=36),
        ["7h 7c", "8h 8c"],
        [Lead(0, cs("7h 7c")), Cover(1, 1, C("8c")), Cover(1, 0, C("8h"))],
    ),
    "after-a-transfer": (
        Rules(transfer=True, seats=3),
        ["7h", "7c", "8h 8c"],
        [Lead(0, (C("7h"),)), Transfer(1, (C("7c"),)), Cover(2, 0, C("8h")), Cover(2, 1, C("8c"))],
    ),
}


@pytest.mark.parametrize("case", list(EMPTY_AT_ONCE))
@pytest.mark.parametrize("draws", [True, False])
def test_every_hand_emptying_at_once_never_crashes(case: str, draws: bool) -> None:
    rules, hands, moves = EMPTY_AT_ONCE[case]
    rules = rules.with_changes(draws=draws)
    state, events = run(pos(hands, "6s", rules=rules), *moves)
    outcome = state.outcome
    assert outcome is not None and all(not hand for hand in state.hands)
    if draws:
        assert outcome.draw and outcome.durak is None
        assert sorted(outcome.order) == list(range(rules.seats))
    else:
        last_defender = of_type(events, "bout_end")[-1]["defender"]
        assert not outcome.draw and outcome.durak == last_defender
        assert outcome.places[-1] == (last_defender,)
        assert last_defender not in [e["seat"] for e in of_type(events, "out")]
    # Every read of the final state still works.
    assert decision(state)["kind"] == "none" and timeout_actions(state) == []
    assert all(legal_actions(state, seat) == [] for seat in range(rules.seats))
    assert view(state, None)["outcome"]["draw"] == draws


def test_refill_order_is_attacker_then_clockwise_then_defender() -> None:
    rules = Rules(seats=5)
    hands = ["7h Kd", "8h 9h 10h Jh", "10c", "9c 10d", "Qc Jc"]
    stock = "6c 6d 6h 7c 7d 8c 8d 9d Jd Qd Kc Ks Qs Js 10s Ac Ad As Ah Kh 6s"
    state = pos(hands, "6s", rules=rules, stock=stock, attacker=3)  # 3 attacks 4
    assert (state.attacker, state.defender) == (3, 4)
    assert refill_order(state) == (3, 0, 1, 2, 4)
    state, events = run(state, Lead(3, (C("9c"),)), Take(4), *[Pass(seat) for seat in (3, 0, 1, 2)])
    assert [d["seat"] for d in of_type(events, "draw")] == [3, 0, 1, 2, 4]
    assert of_type(events, "draw")[0]["cards"] == cs("6c 6d 6h 7c 7d")  # the main attacker first


def test_the_cap_is_five_until_a_defence_succeeds_even_with_six_cards() -> None:
    rules = Rules(seats=3)
    hands = ["7h 7c 7d 8h 8c", "8s Ac Ad As Kh Kc", "8d 7s Jh"]
    state = pos(hands, "6s", rules=rules, stock="6s")
    state, _ = run(
        state,
        Lead(0, (C("7h"),)),
        Cover(1, 0, C("8s")),
        ThrowIn(0, (C("7c"),)),
        ThrowIn(0, (C("7d"),)),
        ThrowIn(2, (C("8d"),)),
        ThrowIn(0, (C("8h"),)),
    )
    assert len(state.table) == 5 and state.bout_limit == 6
    assert allowance(state) == 0 and view(state, 2)["allowance"] == 0
    assert isinstance(refused(state, ThrowIn(0, (C("8c"),))), err.LimitExceeded)
    assert isinstance(refused(state, ThrowIn(2, (C("7s"),))), err.LimitExceeded)


def test_a_taken_bout_does_not_lift_the_cap() -> None:
    state = pos(["7h 7c", "8h 9h 10h 7d 7s Kd"], "6s", stock="Ac Ad Ah Kc Kh Qc Qd Qh 6s")
    state, _ = run(state, Lead(0, (C("7h"),)), Take(1), Pass(0))
    assert not state.defended_once and view(state, 0)["cap"] == 5


def test_throw_ins_never_exceed_the_defenders_hand_at_the_start_of_his_bout() -> None:
    rules = Rules(seats=3)
    hands = ["7h 7c Ac", "8h 9h 10c Jd", "7d 7s Kd"]
    state = pos(hands, "6s", rules=rules, stock="6s", defended_once=True)
    state, _ = run(state, Lead(0, (C("7h"),)), Take(1))
    # He holds four cards and took: at most four attacks in all, not "as many as he holds now".
    assert allowance(state) == 3
    state, _ = run(state, ThrowIn(0, (C("7c"),)), ThrowIn(2, (C("7d"),)), ThrowIn(2, (C("7s"),)))
    assert state.phase == "lead"  # the allowance reached 0: the bout ended and he picked up four
    assert len(state.hands[1]) == 8


def test_the_limit_after_a_transfer_is_the_new_defenders_hand() -> None:
    rules = Rules(seats=3, transfer=True)
    hands = ["7h 7c 7s Ac", "7d 9h", "8h 9c 10d Jd"]
    state = pos(hands, "6c", rules=rules, stock="6c", defended_once=True)
    state, _ = run(state, Lead(0, (C("7h"),)), Transfer(1, (C("7d"),)))
    assert state.bout_limit == 4 and allowance(state) == 2
    state, _ = run(state, ThrowIn(0, (C("7c"),)), ThrowIn(0, (C("7s"),)))
    assert allowance(state) == 0
    assert isinstance(refused(state, ThrowIn(0, (C("Ac"),))), err.RankNotOnTable)


def test_transfer_refused_once_a_card_is_covered() -> None:
    rules = Rules(seats=3, transfer=True)
    state = pos(["7h 7c Ac", "7d 8h 9h", "10c Jc Qc Kc"], "6s", rules=rules, stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(0, (C("7c"),)), Cover(1, 0, C("8h")))
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))
    assert isinstance(refused(state, Transfer(1, (C("7d"),))), err.TransferNotAllowed)


def test_transfer_refused_when_the_next_defender_holds_too_few_cards() -> None:
    rules = Rules(seats=3, transfer=True)
    state = pos(["7h 7c Ac", "7d 8h 9h", "10c"], "6s", rules=rules, stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)))
    assert not any(isinstance(a, Transfer) for a in legal_actions(state, 1))  # 1 card < 2 attacks
    assert isinstance(refused(state, Transfer(1, (C("7d"),))), err.TransferNotAllowed)


def test_the_52_card_low_ranks_compare_correctly() -> None:
    rules = Rules(deck=52, seats=2)
    # The lowest trump is the 2, not the "10" (which sorts first as text).
    state = pos(["10s 3h", "2s 4h"], "Ks", rules=rules, stock="Ks")
    assert first_attacker(state) == 1
    state = pos(["9s 3h", "10s 4h"], "Ks", rules=rules, stock="Ks")
    assert first_attacker(state) == 0
    # A 2 is covered by a 3, a 9 by a 10 - and not the other way round.
    state, _ = run(pos(["2h 9d", "3h 10d 4c"], "Ks", rules=rules, stock="Ks"), Lead(0, (C("2h"),)))
    assert Cover(1, 0, C("3h")) in legal_actions(state, 1)
    state, _ = run(state, Cover(1, 0, C("3h")), Pass(0))
    assert state.discard == cs("2h 3h")
    state, _ = run(pos(["10d", "9d Jd 2d"], "Ks", rules=rules, stock="Ks"), Lead(0, (C("10d"),)))
    covers = {a for a in legal_actions(state, 1) if isinstance(a, Cover)}
    assert covers == {Cover(1, 0, C("Jd"))}
    assert sorted(cs("10c 2c Jc 9c 3c")) == list(cs("2c 3c 9c 10c Jc"))
