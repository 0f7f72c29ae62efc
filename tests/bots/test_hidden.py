"""A bot reaches no hidden card: structurally (no engine State in app/bots) and on recorded inputs."""

from __future__ import annotations

import ast
import contextlib
import json
from pathlib import Path
from typing import Any

from app.bots import make_bot
from app.engine import Card, CardParseError, Rules, event_to_json, new_match, public_cards
from bench._common import play_match

BOTS = Path(__file__).resolve().parents[2] / "app" / "bots"
FORBIDDEN_NAMES = {
    "State",
    "state_from_json",
    "state_to_json",
    "replay",
    "replay_views",
    "new_match",
    "view",
    "timeout_actions",
}


def test_bot_modules_never_import_the_engine_state() -> None:
    files = sorted(BOTS.glob("*.py"))
    assert files
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert not alias.name.startswith("app.engine.state"), f"{path.name} imports {alias.name}"
                    assert not alias.name.startswith("app.engine.deal"), f"{path.name} imports {alias.name}"
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                assert module not in ("app.engine.state", "app.engine.deal", "app.engine.codec", "app.engine.replay"), (
                    f"{path.name} imports from {module}"
                )
                for alias in node.names:
                    assert alias.name not in FORBIDDEN_NAMES, f"{path.name} imports {alias.name} from {module}"
            elif isinstance(node, ast.Attribute):
                assert node.attr not in ("state_from_json", "state_to_json"), f"{path.name} uses {node.attr}"


def cards_in(value: Any) -> set[str]:
    """Every string in a JSON value that names a card."""
    found: set[str] = set()
    if isinstance(value, str):
        with contextlib.suppress(CardParseError):
            found.add(str(Card.parse(value)))
    elif isinstance(value, dict):
        for item in value.values():
            found |= cards_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= cards_in(item)
    return found


class Recorder:
    """Wraps a bot: checks every input is plain JSON and keeps it."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.inputs: list[Any] = []

    def observe(self, event_json: dict[str, Any]) -> None:
        assert json.loads(json.dumps(event_json)) == event_json
        self.inputs.append(event_json)
        self.bot.observe(event_json)

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        assert json.loads(json.dumps(view)) == view
        assert json.loads(json.dumps(legal)) == legal
        self.inputs.append(view)
        self.inputs.append(legal)
        return self.bot.choose(view, legal)


def test_recorded_inputs_hold_no_card_the_seat_may_not_see() -> None:
    configs = [
        Rules(deck=36, seats=2),
        Rules(deck=36, seats=3, transfer=True),
        Rules(deck=24, seats=4),  # the whole deck is dealt; the turned trump stays in a hand
        Rules.for_preset("durac1993", seats=3),
    ]
    for index, rules in enumerate(configs):
        check_match(rules, 300 + index)


def check_match(rules: Rules, seed: int) -> None:
    state = new_match(rules, seed)
    n = rules.seats
    allowed: list[set[str]] = [set() for _ in range(n)]
    current = [state]
    checked = [0]

    def learn() -> None:
        st = current[0]
        public = {str(st.trump_card)} | {str(c) for pair in st.table for c in pair if c is not None}
        for seat in range(n):
            allowed[seat] |= public | {str(c) for c in st.hands[seat]}

    def watch(st: Any, events: list[dict[str, Any]]) -> None:
        current[0] = st
        for event in events:  # what a spectator receives is public
            spectator = cards_in(event_to_json(public_cards(event, None)))
            for seat in range(n):
                allowed[seat] |= spectator
        learn()

    def tap(seat: int, kind: str, payload: Any) -> None:
        learn()
        leaked = cards_in(payload) - allowed[seat]
        assert not leaked, f"seat {seat} was shown hidden cards {leaked} in a {kind}: {payload}"
        checked[0] += 1

    learn()
    levels = ("hard", "normal", "easy", "hard")[:n]
    players = [Recorder(make_bot(level, s, seed=s, time_budget_ms=10)) for s, level in enumerate(levels)]
    play_match(rules, 0, players, state=state, tap=tap, watch=watch)
    assert checked[0] > 50
    # What the bots remember is built from these inputs only.
    for seat, player in enumerate(players):
        memory = player.bot.memory
        remembered = {str(c) for cards in memory.known.values() for c in cards} | {str(c) for c in memory.discard}
        assert remembered <= allowed[seat]
