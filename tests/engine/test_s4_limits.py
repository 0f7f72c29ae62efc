"""§4.4 Limits: the 5-then-6 cap, the defender's hand at the start of his bout, the allowance shown."""

from __future__ import annotations

from app.engine import Cover, Lead, Pass, Rules, Take, ThrowIn, allowance, legal_actions, view
from app.engine import errors as err

from .support import C, cs, of_type, pos, refused, run

STOCK = "Ac Ad Ah Kc Kd Kh Qc Qd Qh Jc Jd Jh 6s"


def _four_on_table(defended_once: bool):  # type: ignore[no-untyped-def]
    """Seat 0 attacks seat 1 (six cards) with four sevens and eights already on the table."""
    return pos(
        ["8c 8d 8s 9h 9c", "Ah Ac Ad As Kh Kc"],
        "6s",
        stock="6s",
        table=[("7h", None), ("7c", None), ("7d", None), ("8h", None)],
        defended_once=defended_once,
    )


def test_five_attacks_until_the_first_successful_defence() -> None:
    state = _four_on_table(defended_once=False)
    assert state.bout_limit == 6
    assert allowance(state) == 1 and view(state, 0)["cap"] == 5 and view(state, 0)["allowance"] == 1
    state, _ = run(state, ThrowIn(0, (C("8c"),)))
    assert allowance(state) == 0 and view(state, 1)["allowance"] == 0
    assert not any(isinstance(a, ThrowIn) for a in legal_actions(state, 0))
    error = refused(state, ThrowIn(0, (C("8d"),)))
    assert isinstance(error, err.LimitExceeded) and error.code == "limit_exceeded"


def test_six_attacks_after_the_first_successful_defence() -> None:
    state = _four_on_table(defended_once=True)
    assert view(state, 0)["cap"] == 6 and allowance(state) == 2
    state, _ = run(state, ThrowIn(0, (C("8c"),)), ThrowIn(0, (C("8d"),)))
    assert allowance(state) == 0
    assert isinstance(refused(state, ThrowIn(0, (C("8s"),))), err.LimitExceeded)


def test_the_cap_rises_only_after_a_bout_ends_beaten_off() -> None:
    hands = ["7h 7c 9d 10c Jd 8s", "8h 9h 10h 7d Qs Ks"]
    state = pos(hands, "6s", stock=STOCK)
    assert view(state, 0)["cap"] == 5
    # Bout 1 is taken: the cap stays at 5.
    state, events = run(state, Lead(0, (C("7h"),)), Take(1), Pass(0))
    assert of_type(events, "bout_end")[0]["result"] == "taken"
    assert view(state, 0)["cap"] == 5 and not state.defended_once
    assert state.attacker == 0  # two players: the taker's left is the attacker again
    # Bout 2 is beaten off: from now on the cap is 6.
    state, events = run(state, Lead(0, (C("9d"),)), Cover(1, 0, C("Qs")), Pass(0))
    assert of_type(events, "bout_end")[0]["result"] == "beaten"
    assert view(state, 0)["cap"] == 6 and state.defended_once


def test_never_more_attacks_than_the_defender_held_at_the_start_of_his_bout() -> None:
    rules = Rules(seats=3)
    hands = ["7h 7c 8d Ac", "8h 8c 9d 9s", "7d 7s Kd"]
    state = pos(hands, "6s", rules=rules, stock="6s", defended_once=True)
    state, _ = run(state, Lead(0, (C("7h"),)))
    assert state.bout_limit == 4 and allowance(state) == 3
    # The defender covers: his hand shrinks, but the limit stays at the four cards he started with.
    state, _ = run(state, Cover(1, 0, C("8h")), ThrowIn(0, (C("7c"),)), Cover(1, 1, C("8c")))
    assert len(state.hands[1]) == 2
    assert allowance(state) == 2 and view(state, 2)["allowance"] == 2
    state, _ = run(state, ThrowIn(2, (C("7d"),)), ThrowIn(0, (C("8d"),)))
    assert len(state.table) == 4 and allowance(state) == 0
    assert isinstance(refused(state, ThrowIn(2, (C("7s"),))), err.LimitExceeded)
    # Both remaining attacks can be covered with the two remaining cards.
    state, events = run(state, Cover(1, 2, C("9d")))
    assert isinstance(refused(state, ThrowIn(2, (C("7s"),))), err.LimitExceeded)
    state, events = run(state, Cover(1, 3, C("9s")))
    assert of_type(events, "bout_end")[0]["result"] == "beaten"  # nothing can be added: over


def test_small_hand_limits_below_the_cap() -> None:
    state = pos(["7h 7c 7d 7s", "8h 9h"], "6s", stock="6s", defended_once=True)
    assert view(state, 0)["allowance"] == 2
    state, _ = run(state, Lead(0, (C("7h"),)), ThrowIn(0, (C("7c"),)))
    assert allowance(state) == 0
    assert isinstance(refused(state, ThrowIn(0, (C("7d"),))), err.LimitExceeded)


def test_the_limit_holds_after_a_take_too() -> None:
    state = pos(["7h 7c 7d 7s", "8h 9h 10c"], "6s", stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)), Take(1))
    assert allowance(state) == 2
    state, _ = run(state, ThrowIn(0, (C("7c"),)))
    assert allowance(state) == 1
    state, events = run(state, ThrowIn(0, (C("7d"),)))
    # Allowance 0: nobody is pending any more, the defender picks up at once.
    assert of_type(events, "bout_end")[0]["cards"] == (C("7h"), C("7c"), C("7d"))
    assert state.phase == "lead" and C("7s") in state.hands[0]
    assert set(state.hands[1]) == set(cs("8h 9h 10c 7h 7c 7d"))


def test_allowance_figure_in_every_view() -> None:
    state = pos(["7h 7c 7d", "8h 9h 10h Jh Qh Kh"], "6s", stock="6s")
    figures = [view(state, seat)["allowance"] for seat in (None, 0, 1)]
    assert figures == [5, 5, 5]
    state, _ = run(state, Lead(0, (C("7h"),)))
    assert [view(state, seat)["allowance"] for seat in (None, 0, 1)] == [4, 4, 4]
    state, _ = run(state, ThrowIn(0, (C("7c"),)))
    assert view(state, None)["allowance"] == 3 == allowance(state)
