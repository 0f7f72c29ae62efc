"""Bots play complete matches across table configurations: no errors, only legal honest actions."""

from __future__ import annotations

import pytest

from app.bots import make_bot
from app.engine import Rules
from bench._common import play_match

FAST_MS = 15  # a small budget keeps the suite quick; the search code paths are the same

CONFIGS: list[tuple[str, Rules, tuple[str, ...]]] = [
    ("24 cards, 2 seats", Rules(deck=24, seats=2), ("hard", "normal")),
    ("24 cards, 4 seats, neighbours", Rules(deck=24, seats=4, circle="neighbours"), ("easy", "normal", "hard", "easy")),
    ("36 cards, 2 seats, transfer", Rules(deck=36, seats=2, transfer=True), ("hard", "easy")),
    ("36 cards, 2 seats, no draws", Rules(deck=36, seats=2, draws=False), ("normal", "hard")),
    ("36 cards, 3 seats, transfer", Rules(deck=36, seats=3, transfer=True), ("hard", "normal", "easy")),
    ("36 cards, 4 seats, neighbours", Rules(deck=36, seats=4, circle="neighbours"), ("normal",) * 4),
    ("36 cards, 5 seats", Rules(deck=36, seats=5, transfer=True), ("easy", "hard", "normal", "easy", "hard")),
    ("36 cards, 6 seats (whole deck dealt)", Rules(deck=36, seats=6), ("hard", "normal", "easy") * 2),
    ("52 cards, 2 seats, transfer", Rules(deck=52, seats=2, transfer=True), ("hard", "normal")),
    ("52 cards, 6 seats, neighbours", Rules(deck=52, seats=6, circle="neighbours"), ("normal", "hard") * 3),
    ("Classic 36, 3 seats", Rules.for_preset("classic36", seats=3), ("hard", "normal", "easy")),
    ("Classic 36, 2 seats", Rules.for_preset("classic36", seats=2), ("hard", "normal")),
    ("Durac 1993, 2 seats", Rules.for_preset("durac1993", seats=2), ("hard", "normal")),
    ("Durac 1993, 4 seats", Rules.for_preset("durac1993", seats=4), ("easy", "hard", "normal", "hard")),
    ("Durac 1993, 36 cards", Rules.for_preset("durac1993", deck=36, seats=3), ("normal", "easy", "hard")),
    ("cheating, 2 seats", Rules(deck=36, seats=2, cheating=True), ("hard", "normal")),
    (
        "cheating, 4 seats, transfer",
        Rules(deck=36, seats=4, cheating=True, transfer=True),
        ("hard", "easy", "normal", "hard"),
    ),
    ("cheating Durac 1993", Rules.for_preset("durac1993", seats=3, cheating=True), ("hard", "normal", "easy")),
]


@pytest.mark.parametrize(("name", "rules", "levels"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_bots_finish_matches_honestly(name: str, rules: Rules, levels: tuple[str, ...]) -> None:
    for seed in (1, 2):
        players = [
            make_bot(level, seat, seed=seed * 100 + seat, time_budget_ms=FAST_MS) for seat, level in enumerate(levels)
        ]
        result = play_match(rules, seed, players)  # raises on an illegal or missing action
        assert result.outcome, name
        assert result.cheats == [], f"{name}: a bot cheated: {result.cheats}"
        assert result.challenges == [], f"{name}: a bot challenged an honest move: {result.challenges}"
        assert result.outcome["reason"] is None


def test_levels_finish_against_random_players() -> None:
    rules = Rules(deck=36, seats=3, transfer=True, cheating=True)
    for level in ("easy", "normal", "hard"):
        players = [
            make_bot(level, 0, seed=5, time_budget_ms=FAST_MS),
            make_bot("random", 1, seed=6),
            make_bot("random", 2, seed=7),
        ]
        result = play_match(rules, 11, players)
        assert result.cheats == [] and result.challenges == []
