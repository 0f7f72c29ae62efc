"""N complete random matches across configurations with zero errors.

``DURAK_RANDOM_MATCHES`` sets N (500 by default; 10000 for a long run), ``DURAK_RANDOM_SEED`` the
master seed of the run."""

from __future__ import annotations

import random
import traceback
from collections import Counter

import pytest

from app.engine import Rules, apply, decision, state_to_json
from app.engine.replay import replay

from .support import assert_cards_conserved, env_int, play_random, random_rules

MATCHES = env_int("DURAK_RANDOM_MATCHES", 500)
MASTER_SEED = env_int("DURAK_RANDOM_SEED", 20261129)


def _one_match(rules: Rules, seed: int, rng: random.Random) -> str:
    def on_step(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        for seat in decision(before)["seats"]:
            assert seat in legal, f"seat {seat} must decide but has no legal action"
        assert_cards_conserved(after)

    forfeit_rate = 0.002 if rng.random() < 0.2 else 0.0
    state, log = play_random(rules, seed, rng, on_step=on_step, forfeit_rate=forfeit_rate)
    outcome = state.outcome
    assert outcome is not None
    assert outcome.draw == (outcome.durak is None)
    seats_placed = [seat for group in outcome.places for seat in group]
    assert sorted(seats_placed) == list(range(rules.seats))
    if outcome.durak is not None:
        assert outcome.places[-1] == (outcome.durak,)
    again = replay(rules, seed, state.dealer, log)
    assert state_to_json(again) == state_to_json(state)
    # The match is over: nothing more is accepted.
    try:
        apply(state, log[-1])
    except ValueError:
        pass
    else:
        raise AssertionError("an action was accepted after the end of the match")
    if outcome.draw:
        return "draw"
    return outcome.reason or "durak"


@pytest.mark.timeout(max(300, MATCHES // 5))  # a long run (10,000 matches) takes minutes
def test_random_matches_complete_without_errors() -> None:
    master = random.Random(MASTER_SEED)
    results: Counter[str] = Counter()
    failures: list[str] = []
    for index in range(MATCHES):
        rules = random_rules(master)
        seed = master.getrandbits(128)
        rng = random.Random(master.getrandbits(64))
        try:
            results[_one_match(rules, seed, rng)] += 1
        except Exception:
            failures.append(f"match {index} {rules} seed={seed}:\n{traceback.format_exc(limit=4)}")
            if len(failures) >= 5:
                break
    print(f"\n{MATCHES} random matches: {dict(results)}, {len(failures)} errors")
    assert not failures, "\n".join(failures)
    assert sum(results.values()) == MATCHES
    assert results["durak"] > 0
