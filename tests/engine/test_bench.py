"""The engine benchmark runs and ends with its headline (a smoke test; the figure is not checked)."""

from __future__ import annotations

import random
import re

import pytest

from app.engine import apply, decision, legal_actions, new_match
from app.engine.seating import throwers
from bench import engine as bench


def test_benchmark_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--seconds", "0"])  # the minimum: 20 games per configuration
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 4
    assert all("games/s" in line and "actions/s" in line for line in lines[:3])
    assert re.fullmatch(r"engine: \d+ games/s \(2p/36 random\)", lines[-1])


def test_benchmark_actors_are_the_deciding_seats_plus_throwers() -> None:
    rng = random.Random(2)
    for rules in (config.rules for config in bench.CONFIGS):
        state = new_match(rules, 3)
        while state.outcome is None:
            expected = list(decision(state)["seats"])
            if state.phase == "bout":
                expected += [s for s in throwers(state) if s not in expected and s not in state.passed]
            assert bench.actors(state) == expected
            options = [a for seat in expected for a in legal_actions(state, seat)]
            state, _ = apply(state, rng.choice(options))
