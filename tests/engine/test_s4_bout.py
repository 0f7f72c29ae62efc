"""§4 A bout: the compulsory lead, covering, throw-ins (rank rule, circles), take."""

from __future__ import annotations

import pytest

from app.engine import Cover, Lead, Pass, Rules, Take, ThrowIn, Transfer, legal_actions, view
from app.engine import errors as err
from app.engine.seating import throwers

from .support import C, hand_text, of_type, pos, refused, run

TWO = ["7h 9h 7c 8d Ks 6c", "8h 6s 10h Jd 7d Qc"]  # trump spades, seat 0 leads to seat 1


def test_the_lead_is_compulsory() -> None:
    state = pos(TWO, "As")
    assert state.phase == "lead" and (state.attacker, state.defender) == (0, 1)
    legal = legal_actions(state, 0)
    assert set(legal) == {Lead(0, (card,)) for card in state.hands[0]}
    assert not any(isinstance(action, Pass) for action in legal)
    assert legal_actions(state, 1) == []
    assert isinstance(refused(state, Pass(0)), err.NotYourTurn)
    assert isinstance(refused(state, Take(1)), err.NotYourTurn)
    assert isinstance(refused(state, Lead(1, (C("8h"),))), err.NotYourTurn)
    assert isinstance(refused(state, ThrowIn(0, (C("7c"),))), err.NotYourTurn)
    assert isinstance(refused(state, Lead(0, (C("7h"), C("7c")))), err.BadPlay)  # one card at a time
    assert isinstance(refused(state, Lead(0, (C("Ah"),))), err.CardNotInHand)


def test_lead_puts_the_card_on_the_table() -> None:
    state, events = run(pos(TWO, "As"), Lead(0, (C("7h"),)))
    assert state.table == ((C("7h"), None),)
    assert "7h" not in hand_text(state, 0)
    assert state.phase == "bout"
    assert of_type(events, "move")[0]["action"] == Lead(0, (C("7h"),))


@pytest.mark.parametrize(
    ("attack", "cover", "ok"),
    [
        ("7h", "8h", True),  # higher, same suit
        ("7h", "10h", True),
        ("7h", "6s", True),  # any trump on a plain card
        ("7h", "Jd", False),  # another plain suit
        ("8d", "7d", False),  # lower, same suit
        ("Ks", "6s", False),  # trump attack: only a higher trump
        ("7c", "Qc", True),
        ("6c", "6s", True),
    ],
)
def test_cover_rules(attack: str, cover: str, ok: bool) -> None:
    hands = ["7h 9h 7c 8d Ks 6c", "8h 6s 10h Jd 7d Qc"]
    state, _ = run(pos(hands, "As"), Lead(0, (C(attack),)))
    action = Cover(1, 0, C(cover))
    assert (action in legal_actions(state, 1)) == ok
    if ok:
        after, _ = run(state, action)
        assert after.table == ((C(attack), C(cover)),)
        assert cover not in hand_text(after, 1)
    else:
        error = refused(state, action)
        assert isinstance(error, err.DoesNotBeat)
        assert error.code == "does_not_beat"
        assert f"{cover} does not beat {attack}" in str(error)


def test_trump_on_trump_needs_a_higher_trump() -> None:
    state, _ = run(pos(["9s 7h", "8s Js 6h"], "6s", stock="6s"), Lead(0, (C("9s"),)))
    assert isinstance(refused(state, Cover(1, 0, C("8s"))), err.DoesNotBeat)
    assert isinstance(refused(state, Cover(1, 0, C("6h"))), err.DoesNotBeat)
    assert {a for a in legal_actions(state, 1) if isinstance(a, Cover)} == {Cover(1, 0, C("Js"))}
    after, _ = run(state, Cover(1, 0, C("Js")))
    assert after.table == ((C("9s"), C("Js")),)


def test_covers_in_any_order_one_per_attack() -> None:
    state, _ = run(pos(TWO, "As"), Lead(0, (C("7h"),)), ThrowIn(0, (C("7c"),)))
    assert state.table == ((C("7h"), None), (C("7c"), None))
    covers = {a for a in legal_actions(state, 1) if isinstance(a, Cover)}
    assert {Cover(1, 0, C("8h")), Cover(1, 0, C("6s")), Cover(1, 1, C("Qc")), Cover(1, 1, C("6s"))} <= covers
    # The defender chooses which card covers which attack: the second one first.
    state, _ = run(state, Cover(1, 1, C("Qc")))
    assert state.table == ((C("7h"), None), (C("7c"), C("Qc")))
    assert isinstance(refused(state, Cover(1, 1, C("8h"))), err.BadPlay)  # already covered
    assert isinstance(refused(state, Cover(1, 5, C("8h"))), err.BadPlay)  # no such attack
    state, _ = run(state, Cover(1, 0, C("8h")))
    assert state.table == ((C("7h"), C("8h")), (C("7c"), C("Qc")))


def test_throw_in_ranks_come_from_attacks_and_covers() -> None:
    hands = ["7h Ac", "9c 9h Kd", "9d 7c 8c Ad"]
    state, _ = run(pos(hands, "6s", rules=Rules(seats=3)), Lead(0, (C("7h"),)), Cover(1, 0, C("9h")))
    # 7 (attack) and 9 (cover) are on the table; 8 is not.
    legal = set(legal_actions(state, 2))
    assert ThrowIn(2, (C("9d"),)) in legal and ThrowIn(2, (C("7c"),)) in legal
    assert ThrowIn(2, (C("8c"),)) not in legal and ThrowIn(2, (C("Ad"),)) not in legal
    error = refused(state, ThrowIn(2, (C("8c"),)))
    assert isinstance(error, err.RankNotOnTable) and "rank not on the table" in str(error)
    after, _ = run(state, ThrowIn(2, (C("9d"),)))
    assert after.table[-1] == (C("9d"), None)
    after, _ = run(state, ThrowIn(2, (C("7c"),)))
    assert after.table[-1] == (C("7c"), None)


def test_throw_ins_are_allowed_while_the_defender_is_still_covering() -> None:
    hands = ["7h 7c", "9c 9h Kd Kc", "7d 8c"]
    state, _ = run(pos(hands, "6s", rules=Rules(seats=3)), Lead(0, (C("7h"),)))
    assert ThrowIn(2, (C("7d"),)) in legal_actions(state, 2)
    assert ThrowIn(0, (C("7c"),)) in legal_actions(state, 0)
    state, _ = run(state, ThrowIn(2, (C("7d"),)))
    assert len(state.table) == 2


FOUR = ["7h 7c Ac", "8h 9h 10h Jh Qh", "7d Ad", "7s Kd"]


def test_neighbours_circle_is_both_sides_of_the_defender() -> None:
    rules = Rules(seats=4, circle="neighbours")
    state, _ = run(pos(FOUR, "6s", rules=rules, stock="6s"), Lead(0, (C("7h"),)))
    assert throwers(state) == (0, 2)
    assert ThrowIn(2, (C("7d"),)) in legal_actions(state, 2)
    assert legal_actions(state, 3) == []
    assert isinstance(refused(state, ThrowIn(3, (C("7s"),))), err.NotYourTurn)
    assert view(state, None)["players"][3]["role"] is None
    assert view(state, None)["players"][2]["role"] == "thrower"


def test_all_circle_is_every_player_but_the_defender() -> None:
    rules = Rules(seats=4, circle="all")
    state, _ = run(pos(FOUR, "6s", rules=rules, stock="6s"), Lead(0, (C("7h"),)))
    assert throwers(state) == (0, 2, 3)
    state, _ = run(state, ThrowIn(3, (C("7s"),)))
    assert state.table[-1] == (C("7s"), None)


@pytest.mark.parametrize("circle", ["neighbours", "all"])
def test_with_two_players_only_the_attacker_throws_in(circle: str) -> None:
    state, _ = run(pos(TWO, "As", rules=Rules(circle=circle)), Lead(0, (C("7h"),)))  # type: ignore[arg-type]
    assert throwers(state) == (0,)


def test_neighbours_skip_players_who_are_out() -> None:
    rules = Rules(seats=5, circle="neighbours")
    hands = ["7h 7c", "8h 9h 10h", "", "7d Ad", "7s Kd"]
    state, _ = run(pos(hands, "6s", rules=rules, out=[2], attacker=0), Lead(0, (C("7h"),)))
    assert state.defender == 1
    assert throwers(state) == (0, 3)  # seat 2 is out: seat 3 sits next to the defender now


def test_a_player_without_cards_cannot_throw_in() -> None:
    rules = Rules(seats=3)
    hands = ["7h Ac", "8h 9h 10h Jh", "7d"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="Kc Kd 6s"), Lead(0, (C("7h"),)))
    state, _ = run(state, ThrowIn(2, (C("7d"),)))  # seat 2 plays his last card
    assert state.hands[2] == ()
    assert throwers(state) == (0,)
    assert legal_actions(state, 2) == []
    assert isinstance(refused(state, Pass(2)), err.NotYourTurn)


def test_pass_only_when_all_covered_and_a_cover_reopens_the_bout() -> None:
    rules = Rules(seats=3)
    hands = ["7h Ac", "8h 9c 10h Jh", "8c Kd"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="Qc Qd 6s"), Lead(0, (C("7h"),)))
    error = refused(state, Pass(0))
    assert isinstance(error, err.NotYourTurn) and "covered or taken" in str(error)
    state, _ = run(state, Cover(1, 0, C("8h")), Pass(0))
    assert state.passed == {0}
    assert isinstance(refused(state, Pass(0)), err.BadPlay)  # passed already: no more actions
    assert legal_actions(state, 0) == []
    state, _ = run(state, ThrowIn(2, (C("8c"),)), Cover(1, 1, C("9c")))
    assert state.passed == frozenset()  # the cover may have brought a new rank: everyone again
    assert Pass(0) in legal_actions(state, 0)


def test_beaten_off_when_every_attack_is_covered_and_everybody_passed() -> None:
    state, events = run(pos(TWO, "As"), Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    assert state.phase == "bout"  # the attacker may still add a 7 or an 8
    state, events = run(state, Pass(0))
    ends = of_type(events, "bout_end")
    assert ends and ends[0]["result"] == "beaten"
    assert set(state.discard) == {C("7h"), C("8h")}


def test_take_then_throw_ins_then_pickup() -> None:
    rules = Rules(seats=3)
    hands = ["7h 7c 9d", "8h 9h 10h Jh Qh", "7d Kd"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="Ac Ad As Qc Qd Qs 6s"), Lead(0, (C("7h"),)))
    state, events = run(state, Take(1))
    assert state.taking and of_type(events, "take") == [{"type": "take", "seat": 1}]
    assert view(state, None)["decision"]["kind"] == "throw_in_after_take"
    # Nothing covers any more, and there is no transfer after a take.
    assert isinstance(refused(state, Cover(1, 0, C("8h"))), err.NotYourTurn)
    assert isinstance(refused(state, Take(1)), err.NotYourTurn | err.BadPlay)
    assert legal_actions(state, 1) == []
    # The attackers still throw in eligible cards, then pass.
    state, _ = run(state, ThrowIn(0, (C("7c"),)), ThrowIn(2, (C("7d"),)))
    assert isinstance(refused(state, ThrowIn(0, (C("9d"),))), err.RankNotOnTable)
    state, _ = run(state, Pass(0))
    assert isinstance(refused(state, ThrowIn(0, (C("9d"),))), err.NotYourTurn)  # a pass after a take is final
    state, events = run(state, Pass(2))
    end = of_type(events, "bout_end")[0]
    assert end["result"] == "taken" and set(end["cards"]) == {C("7h"), C("7c"), C("7d")}
    assert {C("7h"), C("7c"), C("7d")} <= set(state.hands[1])
    assert state.table == () and state.discard == ()
    assert (state.attacker, state.defender) == (2, 0)  # the taker loses his turn


def test_take_picks_up_covers_too() -> None:
    state, _ = run(
        pos(TWO, "As"),
        Lead(0, (C("7h"),)),
        Cover(1, 0, C("8h")),
        ThrowIn(0, (C("8d"),)),
        Take(1),
        Pass(0),
    )
    assert {C("7h"), C("8h"), C("8d")} <= set(state.hands[1])
    assert len(state.hands[1]) == 6 - 1 + 3  # the cover came back with the attacks


def test_take_is_not_possible_on_a_fully_covered_table() -> None:
    state, _ = run(pos(TWO, "As"), Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    assert Take(1) not in legal_actions(state, 1)
    assert isinstance(refused(state, Take(1)), err.BadPlay)


def test_only_the_defender_covers_takes_or_transfers() -> None:
    rules = Rules(seats=3, transfer=True)
    hands = ["7h 7c 9d", "8h 9h 10h", "7d Kd"]
    state, _ = run(pos(hands, "6s", rules=rules, stock="6s"), Lead(0, (C("7h"),)))
    assert isinstance(refused(state, Cover(2, 0, C("Kd"))), err.NotYourTurn)
    assert isinstance(refused(state, Take(0)), err.NotYourTurn)
    assert isinstance(refused(state, Transfer(2, (C("7d"),))), err.NotYourTurn)
    assert isinstance(refused(state, ThrowIn(1, (C("8h"),))), err.NotYourTurn)
    assert isinstance(refused(state, Pass(1)), err.NotYourTurn)


def test_the_bout_never_ends_on_hidden_information() -> None:
    # Seat 0 holds nothing of a rank on the table, but only he knows that: he must pass (or his
    # timer passes for him) before the bout is over.
    state, _ = run(pos(["7h Ac Kd", "8h 9h 10h"], "6s", stock="6s"), Lead(0, (C("7h"),)), Cover(1, 0, C("8h")))
    assert state.phase == "bout" and view(state, None)["decision"] == {
        "kind": "throw_in",
        "seats": [0],
        "forfeits": False,
    }
    assert legal_actions(state, 0) == [Pass(0)]
    state, events = run(state, Pass(0))
    assert of_type(events, "bout_end")[0]["result"] == "beaten"
