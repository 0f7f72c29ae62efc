"""Bots play complete matches across table configurations: no errors, only legal honest actions."""

from __future__ import annotations

from typing import Any

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


MORE: list[tuple[str, Rules, tuple[str, ...]]] = [
    ("24 cards, 3 seats, no draws", Rules(deck=24, seats=3, transfer=True, draws=False), ("hard", "normal") * 2),
    ("52 cards, 3 seats, neighbours", Rules(deck=52, seats=3, circle="neighbours", transfer=True), ("hard",) * 3),
    ("52 cards, 5 seats, no draws", Rules(deck=52, seats=5, draws=False), ("normal", "hard", "easy", "hard", "normal")),
    ("36 cards, 6 seats, neighbours", Rules(deck=36, seats=6, circle="neighbours", transfer=True), ("hard",) * 6),
    ("Durac 1993, 24 cards, 2 seats", Rules.for_preset("durac1993", deck=24, seats=2), ("hard", "easy")),
    ("Durac 1993, 6 seats", Rules.for_preset("durac1993", seats=6), ("hard", "normal", "easy") * 2),
]


@pytest.mark.parametrize(("name", "rules", "levels"), MORE, ids=[c[0] for c in MORE])
def test_more_tables_with_searching_hard_bots(name: str, rules: Rules, levels: tuple[str, ...]) -> None:
    levels = levels[: rules.seats]
    players = [make_bot(level, seat, seed=seat, time_budget_ms=40) for seat, level in enumerate(levels)]
    result = play_match(rules, 3, players)
    assert result.outcome and result.cheats == [] and result.challenges == [], name


class JoinsLate:
    """A seat whose bot is replaced by a fresh one (no history) half-way through the match."""

    def __init__(self, level: str, seat: int, switch_at: int) -> None:
        self.level, self.seat, self.switch_at = level, seat, switch_at
        self.bot = make_bot(level, seat, seed=1, time_budget_ms=40)
        self.calls = 0

    def observe(self, event_json: dict[str, Any]) -> None:
        self.bot.observe(event_json)

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        self.calls += 1
        if self.calls == self.switch_at:
            self.bot = make_bot(self.level, self.seat, seed=2, time_budget_ms=40)
        return self.bot.choose(view, legal)


def test_a_bot_that_joins_a_running_match_plays_on() -> None:
    for level in ("easy", "normal", "hard"):
        for switch_at in (5, 25, 45):
            rules = Rules(deck=36, seats=3, transfer=True)
            players = [JoinsLate(level, 0, switch_at), make_bot("normal", 1, seed=1), make_bot("hard", 2, 2, 40)]
            result = play_match(rules, switch_at, players)
            assert result.outcome and result.cheats == []


def test_bots_break_out_of_circles() -> None:
    # Durac 1993 with three hard bots once went round for ever: each led six cards it had picked
    # up, the next took them, nobody drew. Bots now vary their choice when a situation recurs.
    rules = Rules.for_preset("durac1993", seats=3)
    players = [make_bot("hard", s, seed=s, time_budget_ms=10) for s in range(3)]
    for player in players:
        player.clock_guard = False  # type: ignore[attr-defined]
    result = play_match(rules, 3, players, max_steps=3000)
    assert result.outcome


def test_a_recurring_situation_gets_a_different_answer() -> None:
    from app.engine import new_match, view

    state = new_match(Rules(deck=36, seats=2), 4)
    seat = state.attacker
    seen = view(state, seat)
    for level in ("easy", "normal"):  # (hard's first answers come from fresh random deals)
        bot = make_bot(level, seat, seed=1)
        answers = [bot.choose(seen, seen["legal"]) for _ in range(3)]
        assert answers[0] == answers[1]
        assert answers[2] != answers[0] and answers[2] in seen["legal"]
