"""§9 Cheating tables: every cheat accepted there and refused precisely elsewhere; challenges."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.engine import (
    Action,
    Challenge,
    Cover,
    Forfeit,
    Lead,
    Pass,
    Rules,
    State,
    Take,
    ThrowIn,
    Transfer,
    decision,
    legal_actions,
    state_from_json,
    state_to_json,
    timeout_actions,
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


RULES_BROKEN = {
    "cover that does not beat": "does_not_beat",
    "throw-in of a rank not on the table": "rank_not_on_table",
    "throw-in past the allowance": "attack_limit",
    "transfer with a different rank": "transfer_rank",
    "transfer past the next defender's hand": "transfer_limit",
}


@pytest.mark.parametrize("name", list(CHEATS))
def test_an_upheld_challenge_names_the_rule_the_cheat_broke(name: str) -> None:
    setup, move, _, _ = CHEATS[name]
    after, _ = run(setup(True), move)
    assert after.moves[-1].rule == RULES_BROKEN[name]
    assert state_from_json(state_to_json(after)).moves[-1].rule == RULES_BROKEN[name]  # kept across a restart
    challenger = next(seat for seat in range(3) if seat != move.seat)
    _, events = run(after, Challenge(challenger, len(after.moves) - 1))
    ruling = of_type(events, "challenge")[0]
    assert ruling["ruling"] == "upheld" and ruling["rule"] == RULES_BROKEN[name]


def test_honest_moves_at_a_cheating_table_are_not_cheats() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("10h")), ThrowIn(2, (C("10c"),)))
    assert [move.cheat for move in state.moves] == [None, None, None]
    assert [move.rule for move in state.moves] == [None, None, None]


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
    assert challenge == {
        "type": "challenge",
        "seat": 2,
        "move": 1,
        "ruling": "upheld",
        "loser": 1,
        "rule": "does_not_beat",
    }


def test_a_wrong_challenge_makes_the_challenger_the_durak() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("10h")))
    after, events = run(state, Challenge(2, 1))
    outcome = after.outcome
    assert outcome is not None and outcome.durak == 2 and outcome.reason == "challenge"
    assert of_type(events, "challenge")[0]["ruling"] == "rejected"
    assert of_type(events, "challenge")[0]["rule"] is None
    after, _ = run(state, Challenge(1, 0))  # the defender challenges the honest lead
    assert after.outcome is not None and after.outcome.durak == 1


def test_challenges_are_limited_to_other_players_moves_of_the_current_bout() -> None:
    state, _ = run(_bout(True), Cover(1, 0, C("6h")))
    assert Challenge(1, 1) not in legal_actions(state, 1)
    assert isinstance(refused(state, Challenge(1, 1)), err.BadPlay)  # his own move
    assert isinstance(refused(state, Challenge(0, 7)), err.BadPlay)  # no such move
    # The attackers pass: the bout is played out, its challenge window opens; once everyone has
    # passed on it the bout is resolved and its moves can no longer be challenged.
    resolved, _ = run(state, Pass(0), Pass(2), Pass(0), Pass(1), Pass(2))
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


# --------------------------------------------------------------------------- the challenge window


def _last_move_cheat(stock: str = "") -> State:
    """Issue 13.3: the defender's only card does not beat, and it is the bout's last move."""
    rules = Rules(deck=36, seats=2, cheating=True)
    state = pos(["7s Kd", "6s"], "Ah", rules=rules, stock=stock)
    state, _ = run(state, Lead(0, (C("7s"),)), Cover(1, 0, C("6s")))
    return state


@pytest.mark.parametrize("stock", ["", "9c 10c Jd Ah"], ids=["empty stock", "with a stock"])
def test_a_cheat_on_the_bouts_last_move_can_be_challenged(stock: str) -> None:
    state = _last_move_cheat(stock)
    # The bout is played out but not resolved: the table, the moves and the hands are as they were.
    assert state.phase == "challenge" and state.outcome is None
    assert state.table == ((C("7s"), C("6s")),)
    assert [move.action for move in state.moves] == [Lead(0, (C("7s"),)), Cover(1, 0, C("6s"))]
    assert state.out == () and state.discard == ()
    assert Challenge(0, 1) in legal_actions(state, 0)
    after, events = run(state, Challenge(0, 1))
    assert of_type(events, "challenge") == [
        {"type": "challenge", "seat": 0, "move": 1, "ruling": "upheld", "loser": 1, "rule": "does_not_beat"}
    ]
    outcome = after.outcome
    assert outcome is not None
    assert (outcome.durak, outcome.forfeit, outcome.reason) == (1, 1, "challenge")
    assert "6s does not beat 7s" in outcome.detail


def test_once_everyone_passed_on_the_window_the_bout_is_resolved() -> None:
    state = _last_move_cheat("9c 10c Jd 6c 6d 8c 8d 9d Qc Qd Jc Ah")
    assert decision(state) == {"kind": "challenge", "seats": [0, 1], "forfeits": False}
    state, events = run(state, Pass(1))
    assert of_type(events, "pass") == [{"type": "pass", "seat": 1}] and not of_type(events, "bout_end")
    assert state.phase == "challenge" and decision(state)["seats"] == [0]
    assert legal_actions(state, 1) == []  # he passed on it: no challenge any more
    assert isinstance(refused(state, Challenge(1, 0)), err.BadPlay)
    assert isinstance(refused(state, Pass(1)), err.BadPlay)
    state, events = run(state, Pass(0))
    assert of_type(events, "bout_end")[0]["result"] == "beaten"
    assert [event["seat"] for event in of_type(events, "draw")] == [0, 1]  # the refill follows
    assert state.phase == "lead" and state.moves == () and state.passed == frozenset()
    assert (state.attacker, state.defender) == (1, 0)
    assert not any(isinstance(a, Challenge) for seat in (0, 1) for a in legal_actions(state, seat))


def test_the_window_closing_on_the_timer_resolves_the_bout_as_if_everyone_passed() -> None:
    state = _last_move_cheat()
    assert timeout_actions(state) == [Pass(0), Pass(1)]  # the window never forfeits anybody
    state, events = run(state, *timeout_actions(state))
    # The cheat stood: seat 1 went out with it and seat 0 is the durak.
    assert of_type(events, "out") == [{"type": "out", "seat": 1, "place": 1}]
    assert state.outcome is not None and state.outcome.durak == 0 and state.outcome.reason is None


def test_in_the_window_only_a_challenge_a_pass_or_a_forfeit_is_accepted() -> None:
    hands = ["7h 9c 7c Ac", "6h 8c 10h Jh", "9d 10c Qd Kd"]
    state = pos(hands, "6s", rules=_table(True), stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)), Cover(1, 0, C("10h")), Pass(0), Pass(2))
    assert state.phase == "challenge"
    for late in (ThrowIn(0, (C("7c"),)), ThrowIn(2, (C("10c"),)), Lead(1, (C("8c"),))):
        error = refused(state, late)
        assert isinstance(error, err.NotYourTurn) and "challenge window" in str(error)
    assert {type(a) for a in legal_actions(state, 0)} == {Pass, Challenge}
    after, _ = run(state, Forfeit(2, "left"))
    assert after.outcome is not None and after.outcome.durak == 2


def _taken_bout(cheating: bool) -> State:
    state = pos(["7h 9c 7c", "6h 8c 10h", "9d 10c Qd"], "6s", rules=_table(cheating), stock="6s")
    return run(state, Lead(0, (C("7h"),)), Take(1), Pass(0), Pass(2))[0]


def _limit_reached(cheating: bool) -> State:
    state = _bout(cheating, ["7h 9c 7c Ac", "10h 8c 9h", "9d 10c Qd Kd"], bout_limit=2)
    return run(state, ThrowIn(0, (C("7c"),)), Cover(1, 0, C("10h")), Cover(1, 1, C("8c")))[0]


# Every way a bout is played out (none with a cheat), and who may then challenge at a cheating table.
WAYS_TO_PLAY_OUT: dict[str, tuple[Callable[[bool], State], list[int]]] = {
    "every attacker passed on a covered table": (
        lambda cheating: run(_bout(cheating), Cover(1, 0, C("10h")), Pass(0), Pass(2))[0],
        [0, 1, 2],
    ),
    "a cover that empties the defender's hand": (
        lambda cheating: run(_bout(cheating, ["7h 9c 7c Ac", "10h", "9d 10c Qd Kd"]), Cover(1, 0, C("10h")))[0],
        [0, 1, 2],
    ),
    "the limit reached and covered": (_limit_reached, [0, 1, 2]),
    # Only seat 0 made a card move (the lead): seat 0 has nothing of another seat to challenge.
    "a take once the attackers passed": (_taken_bout, [1, 2]),
}


@pytest.mark.parametrize("name", list(WAYS_TO_PLAY_OUT))
def test_every_played_out_bout_waits_for_its_challenge_window(name: str) -> None:
    setup, challengers = WAYS_TO_PLAY_OUT[name]
    state = setup(True)
    assert state.phase == "challenge" and state.table and state.moves
    assert decision(state) == {"kind": "challenge", "seats": challengers, "forfeits": False}
    for seat in range(3):
        offered = legal_actions(state, seat)
        assert (Pass(seat) in offered) == (seat in challengers)
        assert all(isinstance(a, Pass | Challenge) for a in offered)
    public = view(state, None)
    assert public["phase"] == "challenge" and public["allowance"] == 0
    assert not [p for p in public["players"] if p["role"] == "thrower"]
    data = state_to_json(state)  # a stored window resumes exactly
    assert state_to_json(state_from_json(data)) == data
    taking = state.taking
    after, events = run(state, *(Pass(seat) for seat in challengers))
    assert of_type(events, "bout_end")[0]["result"] == ("taken" if taking else "beaten")
    assert after.phase in ("lead", "over")


@pytest.mark.parametrize("name", list(WAYS_TO_PLAY_OUT))
def test_an_honest_table_resolves_the_bout_on_its_last_move(name: str) -> None:
    setup, _ = WAYS_TO_PLAY_OUT[name]
    state = setup(False)
    assert state.phase in ("lead", "over") and state.moves == () and state.table == ()


def test_the_window_closes_at_once_when_nobody_could_challenge() -> None:
    # Two players, the only card move is seat 0's lead and seat 0 says nothing more after the
    # take: seat 1 may challenge the lead; seat 0 has nothing to challenge and is not asked.
    state = pos(["7h 9c", "6h 8c"], "6s", rules=Rules(seats=2, cheating=True), stock="6s")
    state, _ = run(state, Lead(0, (C("7h"),)), Take(1), Pass(0))
    assert decision(state)["seats"] == [1] and legal_actions(state, 0) == []
    assert isinstance(refused(state, Pass(0)), err.NotYourTurn)
