"""§9 Cheating tables: every cheat accepted there and refused precisely elsewhere; challenges."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.engine import (
    Action,
    Challenge,
    Cover,
    Lead,
    Pass,
    Rules,
    State,
    Take,
    ThrowIn,
    Transfer,
    legal_actions,
    view,
)
from app.engine import errors as err

from .support import C, of_type, pos, refused, run


def _table(cheating: bool, transfer: bool = True) -> Rules:
    return Rules(seats=3, transfer=transfer, cheating=cheating)


def _bout(cheating: bool, hands: list[str] | None = None, **kw) -> State:  # type: ignore[no-untyped-def]
    hands = hands or ["7h 9c 7c Ac", "6h 8c 10h Jh", "9d 10c Qd Kd"]
    state = pos(hands, "6s", rules=_table(cheating), stock="6s", **kw)
    state, _ = run(state, Lead(0, (C("7h"),)))
    return state


# Each cheat: (how to reach the position, the cheating move, the error at an honest table, why).
CHEATS: dict[str, tuple[Callable[[bool], State], Action, type[err.IllegalAction], str]] = {
    "cover that does not beat": (
        lambda cheating: _bout(cheating),
        Cover(1, 0, C("6h")),
        err.DoesNotBeat,
        "6h does not beat 7h",
    ),
    "throw-in of a rank not on the table": (
        lambda cheating: _bout(cheating),
        ThrowIn(2, (C("9d"),)),
        err.RankNotOnTable,
        "rank not on the table",
    ),
    "throw-in past the allowance": (
        lambda cheating: _bout(cheating, ["7h 9c 7c Ac", "8h", "9d 10c Qd Kd"]),
        ThrowIn(0, (C("7c"),)),
        err.LimitExceeded,
        "only 0 allowed",
    ),
    "transfer with a different rank": (
        lambda cheating: _bout(cheating),
        Transfer(1, (C("8c"),)),
        err.BadPlay,
        "does not match the attacking rank",
    ),
    "transfer past the next defender's hand": (
        lambda cheating: _bout(cheating, ["7h 7d Ac", "7c 8c 10h Jh", "9d"]),
        Transfer(1, (C("7c"),)),
        err.TransferNotAllowed,
        "fewer than the 2 attacks",
    ),
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_each_cheat_is_refused_precisely_at_an_honest_table(name: str) -> None:
    setup, move, error_type, why = CHEATS[name]
    state = setup(False)
    assert move not in legal_actions(state, move.seat)
    error = refused(state, move)
    assert type(error) is error_type, error
    assert why in str(error)


@pytest.mark.parametrize("name", list(CHEATS))
def test_each_cheat_is_accepted_at_a_cheating_table_and_recorded(name: str) -> None:
    setup, move, _, why = CHEATS[name]
    state = setup(True)
    assert move in legal_actions(state, move.seat)
    after, events = run(state, move)
    recorded = after.moves[-1]
    assert recorded.action == move and recorded.seat == move.seat
    assert recorded.cheat is not None and why in recorded.cheat
    assert of_type(events, "move")[0]["index"] == len(after.moves) - 1
    # The cheat is not shown to anybody.
    for seat in (None, 0, 1, 2):
        assert "cheat" not in str(view(after, seat)["moves"])
        assert why not in str(view(after, seat))


def test_honest_moves_at_a_cheating_table_are_not_cheats() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("10h")), ThrowIn(2, (C("10c"),)))
    assert [move.cheat for move in state.moves] == [None, None, None]


def test_never_a_card_not_in_hand_even_at_a_cheating_table() -> None:
    state = _bout(True)
    assert isinstance(refused(state, Cover(1, 0, C("Ah"))), err.CardNotInHand)
    assert isinstance(refused(state, ThrowIn(2, (C("7d"),))), err.CardNotInHand)
    assert isinstance(refused(state, Transfer(1, (C("7d"),))), err.CardNotInHand)
    fresh = pos(["7h 9c", "6h 8c", "9d 10c"], "6s", rules=_table(True), stock="6s")
    assert isinstance(refused(fresh, Lead(0, (C("As"),))), err.CardNotInHand)


def test_never_out_of_turn_even_at_a_cheating_table() -> None:
    state = _bout(True)
    assert isinstance(refused(state, Cover(2, 0, C("Qd"))), err.NotYourTurn)  # not the defender
    assert isinstance(refused(state, ThrowIn(1, (C("8c"),))), err.NotYourTurn)  # the defender
    assert isinstance(refused(state, Lead(2, (C("9d"),))), err.NotYourTurn)
    assert isinstance(refused(state, Pass(0)), err.NotYourTurn)  # uncovered attack
    neighbours = Rules(seats=4, circle="neighbours", cheating=True)
    four = pos(["7h 9c", "6h 8c", "9d 10c", "7d Kd"], "6s", rules=neighbours, stock="6s")
    four, _ = run(four, Lead(0, (C("7h"),)))
    assert isinstance(refused(four, ThrowIn(3, (C("7d"),))), err.NotYourTurn)  # outside the circle


def test_rules_that_cannot_be_broken_even_at_a_cheating_table() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("10h")))
    assert isinstance(refused(state, Transfer(1, (C("8c"),))), err.TransferNotAllowed)  # after a cover
    assert isinstance(refused(state, Take(1)), err.BadPlay)  # a covered table
    no_transfer = pos(["7h 9c", "7c 8c", "9d 10c"], "6s", rules=_table(True, transfer=False), stock="6s")
    no_transfer, _ = run(no_transfer, Lead(0, (C("7h"),)))
    assert isinstance(refused(no_transfer, Transfer(1, (C("7c"),))), err.NotAllowedHere)
    assert isinstance(refused(state, ThrowIn(2, (C("9d"), C("10c")))), err.BadPlay)  # one card a time


def test_a_correct_challenge_makes_the_cheater_the_durak() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("6h")))
    assert Challenge(0, 1) in legal_actions(state, 0)
    assert Challenge(2, 1) in legal_actions(state, 2)  # any other player may challenge
    after, events = run(state, Challenge(2, 1))
    outcome = after.outcome
    assert outcome is not None
    assert outcome.durak == 1 and outcome.forfeit == 1 and outcome.reason == "challenge"
    assert "caught" in outcome.detail
    challenge = of_type(events, "challenge")[0]
    assert challenge == {"type": "challenge", "seat": 2, "move": 1, "ruling": "upheld", "loser": 1}


def test_a_wrong_challenge_makes_the_challenger_the_durak() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("10h")))
    after, events = run(state, Challenge(2, 1))
    outcome = after.outcome
    assert outcome is not None and outcome.durak == 2 and outcome.reason == "challenge"
    assert of_type(events, "challenge")[0]["ruling"] == "rejected"
    after, _ = run(state, Challenge(1, 0))  # the defender challenges the honest lead
    assert after.outcome is not None and after.outcome.durak == 1


def test_challenges_are_limited_to_other_players_moves_of_the_current_bout() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("6h")))
    assert Challenge(1, 1) not in legal_actions(state, 1)
    assert isinstance(refused(state, Challenge(1, 1)), err.BadPlay)  # his own move
    assert isinstance(refused(state, Challenge(0, 7)), err.BadPlay)  # no such move
    resolved, _ = run(state, Pass(0), Pass(2))  # the bout is over: its moves can no longer be challenged
    assert resolved.moves == ()
    assert not any(isinstance(a, Challenge) for a in legal_actions(resolved, 0))
    assert isinstance(refused(resolved, Challenge(0, 1)), err.BadPlay)


def test_no_challenges_at_an_honest_table() -> None:
    state = _bout(False)
    assert not any(isinstance(a, Challenge) for s in range(3) for a in legal_actions(state, s))
    error = refused(state, Challenge(1, 0))
    assert isinstance(error, err.NotAllowedHere)


def test_cheat_transfer_is_a_single_card_under_durac() -> None:
    rules = Rules.for_preset("durac1993", deck=36, seats=3, cheating=True)
    hands = ["7h 7c 9h 9c Ac", "7d 9d 8s 8h 6h", "Kd Qd Jd 10d 10h"]
    state = pos(hands, "6c", rules=rules, stock="6c")
    state, _ = run(state, Lead(0, (C("7h"), C("7c"), C("9h"), C("9c"))))
    legal = legal_actions(state, 1)
    assert Transfer(1, (C("7d"), C("9d"))) not in legal  # honest, but seat 2 holds 5 < 6 attacks
    error = refused(state, Transfer(1, (C("7d"), C("9d"))))
    assert isinstance(error, err.TransferNotAllowed)  # multi-card plays must be honest
    assert isinstance(refused(state, Transfer(1, (C("8s"), C("8h")))), err.BadPlay)
    assert Transfer(1, (C("8s"),)) in legal  # a single-card cheat is possible
    after, _ = run(state, Transfer(1, (C("8s"),)))
    assert after.moves[-1].cheat is not None and after.defender == 2
