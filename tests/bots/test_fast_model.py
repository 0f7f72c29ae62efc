"""The bit-mask model the hard bot searches follows the engine move for move."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.bots import make_bot
from app.bots.fast import Game, Pos, Search, from_state, to_action_json
from app.bots.solver import Solver
from app.engine import Rules, action_from_json, action_to_json, apply, decision, legal_actions, new_match, view


def reach(rules: Rules, seed: int, stock_left: int) -> Any:
    """Normal bots play a deal until the stock is down to ``stock_left`` cards."""
    state = new_match(rules, seed)
    bots = [make_bot("normal", s, seed=s) for s in range(2)]
    while state.outcome is None and len(state.stock) > stock_left:
        seat = decision(state)["seats"][0]
        seen = view(state, seat)
        choice = bots[seat].choose(seen, seen["legal"])
        assert choice is not None
        state, _ = apply(state, action_from_json(choice))
    return state


def normal_form(game: Game, p: Pos) -> tuple[Any, ...]:
    return (p[0], p[1], game.stock[p[2] :], *p[3:])


def result_for(state: Any, me: int) -> float:
    if state.outcome.draw:
        return 0.5
    return 0.0 if state.outcome.durak == me else 1.0


RULES = [
    Rules(deck=36, seats=2),
    Rules(deck=36, seats=2, transfer=True),
    Rules(deck=36, seats=2, transfer=True, draws=False),
    Rules(deck=24, seats=2, transfer=True),
    Rules(deck=52, seats=2),
    Rules.for_preset("classic36", seats=2),
]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.preset}-{r.deck}-t{int(r.transfer)}-d{int(r.draws)}")
def test_moves_and_positions_match_the_engine(rules: Rules) -> None:
    rng = random.Random(7)
    for seed in range(6):
        state = reach(rules, seed, stock_left=seed % 4)
        if state.outcome is not None:
            continue
        me = state.attacker
        fast = from_state(state, me)
        assert fast is not None
        game, pos, opp = fast
        seat_of = {0: me, 1: opp}
        p: Pos | float = pos
        while True:
            if isinstance(p, float):
                assert state.outcome is not None
                assert p == result_for(state, me)
                break
            assert state.outcome is None
            mover = seat_of[game.mover(p)]
            assert mover == decision(state)["seats"][0]
            engine_moves = sorted(str(action_to_json(a)) for a in legal_actions(state, mover))
            fast_moves = sorted(str(to_action_json(m, mover)) for m in game.moves(p))
            assert fast_moves == engine_moves
            move = rng.choice(game.moves(p))
            state, _ = apply(state, action_from_json(to_action_json(move, mover)))
            p = game.play(p, move)
            if not isinstance(p, float):
                again = from_state(state, me)
                assert again is not None
                assert normal_form(game, p) == normal_form(again[0], again[1])


def test_fast_search_agrees_with_the_engine_search() -> None:
    compared = 0
    for seed in range(40):
        rules = RULES[seed % 3]
        state = reach(rules, seed, stock_left=0)
        if state.outcome is not None or sum(len(h) for h in state.hands) > 9:
            continue
        me = decision(state)["seats"][0]
        fast = from_state(state, me)
        assert fast is not None
        game, pos, _ = fast
        assert Search(game, 10**6).value(pos) == Solver(me, 10**6).value(state)
        compared += 1
    assert compared >= 5
