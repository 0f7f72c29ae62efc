"""Same seed, same inputs: same choices. And the bots keep to their time budget."""

from __future__ import annotations

from typing import Any

from app.bots import make_bot
from app.engine import Rules
from bench._common import play_match


def run(rules: Rules, levels: tuple[str, ...], seed: int, budget: int) -> tuple[list[dict[str, Any]], list[Any]]:
    players = [make_bot(level, s, seed=seed + s, time_budget_ms=budget) for s, level in enumerate(levels)]
    for player in players:
        # The wall-clock guard is a safety net that only fires on a starved machine; with it off the
        # search is bounded by node counts alone, which is what makes it reproducible.
        if hasattr(player, "clock_guard"):
            player.clock_guard = False
    result = play_match(rules, seed, players)
    return result.actions, players


def test_same_seed_same_match() -> None:
    cases = [
        (Rules(deck=36, seats=2), ("hard", "normal")),
        (Rules(deck=36, seats=3, transfer=True), ("hard", "easy", "normal")),
        (Rules.for_preset("durac1993", seats=2), ("hard", "normal")),
    ]
    for rules, levels in cases:
        first, bots = run(rules, levels, 21, 40)
        second, _ = run(rules, levels, 21, 40)
        assert first == second
        hard = bots[0]
        assert sum(hard.stats.values()) > 0


def test_different_seeds_can_differ() -> None:
    a, _ = run(Rules(deck=36, seats=2), ("random", "random"), 1, 10)
    b, _ = run(Rules(deck=36, seats=2), ("random", "random"), 2, 10)
    assert a != b


def test_hard_searches_and_keeps_to_its_budget() -> None:
    budget = 60
    configs = [
        (Rules(deck=36, seats=2), 2, {"playouts", "endgame"}),
        (Rules(deck=36, seats=4), 4, {"engine playouts"}),
        (Rules.for_preset("durac1993", seats=2), 2, {"endgame"}),
    ]
    for rules, n, expected in configs:
        # Which searches it uses, from node counts alone: the wall-clock guard, which cuts a search
        # short on a busy machine (so that none is tried at all), is off.
        players = [make_bot("hard" if s == 0 else "normal", s, seed=s, time_budget_ms=budget) for s in range(n)]
        players[0].clock_guard = False  # type: ignore[attr-defined]
        play_match(rules, 5, players)
        used = {how for how, count in players[0].stats.items() if count}
        assert expected <= used, used
        # With the guard on, as in play, no decision takes much over its budget of CPU time (CPU
        # time, not wall time: other processes on the machine must not fail this test).
        players = [make_bot("hard" if s == 0 else "normal", s, seed=s, time_budget_ms=budget) for s in range(n)]
        result = play_match(rules, 5, players)
        cpu = sorted(ms for seat, _, must, ms in result.times if seat == 0 and must)
        assert cpu[-1] <= budget * 1.5, cpu[-5:]
