"""docs/protocol.md is generated from the protocol models and must be current; every message type
has a valid example; and what the code actually produces (view fields, event types, error codes:
derived from the engine and the actor, never from a list kept here) is all in the models, hence in
the document."""

from __future__ import annotations

import ast
import functools
import random
import typing
from pathlib import Path
from typing import Any

import pytest

import app
from app.api import protocol, protocol_examples
from app.api.protocol_docs import DOC, render
from app.engine import Forfeit, Rules, apply, event_to_json, legal_actions, new_match, public_cards, view
from app.engine import events as engine_events
from app.tables import table_events

APP = Path(app.__file__).parent


def test_protocol_doc_is_generated_from_the_models() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), "run: python -m app.api.protocol_docs"


def _types(union: object) -> set[str]:
    annotated = typing.get_args(union)[0]
    return {typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(annotated)}


def test_every_message_type_has_an_example_that_validates() -> None:
    client_models = typing.get_args(typing.get_args(protocol.ClientMessage)[0])
    examples = [(type(e) in client_models, e.model_dump()["type"], e) for e in protocol_examples.examples()]
    client, server = _types(protocol.ClientMessage), _types(protocol.ServerMessage)
    assert client == {kind for sent_by_client, kind, _ in examples if sent_by_client}
    assert server == {kind for sent_by_client, kind, _ in examples if not sent_by_client}  # chat is both
    for sent_by_client, kind, example in examples:
        adapter = protocol.client_message if sent_by_client else protocol.server_message
        assert adapter.validate_python(example.model_dump()).type == kind


# ---------------------------------------------------------------------------- derived from the code


def _strings(node: ast.AST | None) -> set[str]:
    """The string constants an expression can be: "x", or a conditional between such."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body) | _strings(node.orelse)
    return set()


def _dict_value(node: ast.Dict, key: str) -> ast.AST | None:
    for k, v in zip(node.keys, node.values, strict=True):
        if isinstance(k, ast.Constant) and k.value == key:
            return v
    return None


def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def event_types_in_code() -> set[str]:
    """The ``type`` of every kind of event the code makes: the typed events of the engine
    (``app.engine.events.Event``) and of the table (``app.tables.table_events.TableEvent``). mypy holds
    every event the code builds to one of them; a check below holds the engine's to its literals."""
    found: set[str] = set()
    for kind in (*typing.get_args(engine_events.Event), *typing.get_args(table_events.TableEvent)):
        found |= set(typing.get_args(typing.get_type_hints(kind)["type"]))
    return found


def test_every_event_the_engine_builds_is_one_of_its_typed_events() -> None:
    built: set[str] = set()
    for path in sorted((APP / "engine").glob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Dict):
                built |= _strings(_dict_value(node, "type"))
    typed = {typing.get_args(typing.get_type_hints(kind)["type"])[0] for kind in typing.get_args(engine_events.Event)}
    assert built == typed


@functools.cache
def error_codes_in_code() -> set[str]:
    """Codes of ``Refused``/``CannotStart`` (and the integrity rules' ``Refusal``) anywhere, of the
    socket's own ``error`` frames, and of the engine's ``IllegalAction`` classes."""
    found: set[str] = set()
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in ("Refused", "CannotStart", "Refusal") and node.args:
                    found |= _strings(node.args[0])
                elif name == "error" and len(node.args) >= 2 and path.name == "table_connection.py":
                    found |= _strings(node.args[1])
                elif name in ("wire", "wire_text") and getattr(getattr(node.func, "value", 0), "id", 0) == "Error":
                    found |= {s for k in node.keywords if k.arg == "code" for s in _strings(k.value)}  # its writer
            elif isinstance(node, ast.Dict) and _strings(_dict_value(node, "type")) == {"error"}:
                found |= _strings(_dict_value(node, "code"))
            elif isinstance(node, ast.ClassDef) and path.parent.name == "engine":
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and [getattr(t, "id", None) for t in statement.targets] == [
                        "code"
                    ]:
                        found |= _strings(statement.value)
    return found


def test_the_derivations_see_the_code() -> None:
    """A derivation that found nothing would make the tests below vacuous."""
    assert {"move", "draw", "bout_start", "seat", "client_seed", "match_start", "results"} <= event_types_in_code()
    assert {"moved", "bad_json", "rate_limited", "not_your_turn", "stale_version"} <= error_codes_in_code()


def test_every_event_type_the_code_makes_is_documented_with_an_example() -> None:
    documented = {
        typing.get_args(m.model_fields["type"].annotation)[0]
        for m in typing.get_args(typing.get_args(protocol.Event)[0])
    }
    assert event_types_in_code() == documented, "describe the event in app/api/protocol.py (Event)"
    assert {event.type for event in protocol_examples.event_examples()} == documented  # type: ignore[attr-defined]
    doc = DOC.read_text(encoding="utf-8")
    assert [kind for kind in sorted(documented) if f"### event `{kind}`" not in doc] == []


def test_every_error_code_the_code_gives_is_documented() -> None:
    assert error_codes_in_code() == set(protocol.ERROR_CODES), "add it to ERROR_CODES in app/api/protocol.py"
    doc = DOC.read_text(encoding="utf-8")
    assert [code for code in protocol.ERROR_CODES if f"| `{code}` |" not in doc] == []


# ---------------------------------------------------------------------------- real views and events

RULES = [
    Rules(timer=30),
    Rules(deck=52, seats=4, transfer=True, circle="neighbours"),
    Rules(deck=52, seats=3, preset="durac1993", transfer=True),
    Rules(deck=36, seats=3, cheating=True, transfer=True),
    Rules(deck=36, seats=2, preset="classic36"),
    Rules(deck=24, seats=2, draws=False),
]


def _play(rules: Rules, seed: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A random match: every view (each seat's and the spectator's) and every event as sent."""
    rng = random.Random(seed)
    state = new_match(rules, seed, 0)
    views: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for ply in range(2000):
        views += [view(state, seat) for seat in (*range(rules.seats), None)]
        if state.outcome is not None:
            break
        options = [action for seat in range(rules.seats) for action in legal_actions(state, seat)]
        exchanges = [action for action in options if action.kind == "exchange_trump"]
        challenges = [action for action in options if action.kind == "challenge"]
        honest = [action for action in options if action.kind != "challenge"]
        action: Any
        if seed == 0 and ply == 5:
            action = Forfeit(0, "timeout")
        elif exchanges:
            action = exchanges[0]
        elif seed == 1 and ply >= 8 and challenges:
            action = challenges[-1]
        else:
            action = rng.choice(honest or options)
        state, new_events = apply(state, action)
        for recipient in (*range(rules.seats), None):
            events += [{**event_to_json(public_cards(e, recipient)), "version": ply + 1} for e in new_events]
    assert state.outcome is not None
    return views, events


@pytest.fixture(scope="module")
def played() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    views: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    for rules in RULES:
        for seed in range(3):
            more_views, more_events = _play(rules, seed)
            views += more_views
            events += more_events
    return views, events


def test_every_view_field_is_documented_and_every_documented_field_is_sent(played: Any) -> None:
    views, _ = played
    for sample in views:
        protocol.View.model_validate(sample)  # extra="forbid": an undocumented field fails here
    seen = set().union(*(sample.keys() for sample in views))
    assert seen == set(protocol.View.model_fields)
    nested = {
        protocol.Decision: [sample["decision"] for sample in views],
        protocol.PlayerView: [player for sample in views for player in sample["players"]],
        protocol.TablePair: [pair for sample in views for pair in sample["table"]],
        protocol.OutcomeView: [sample["outcome"] for sample in views if sample["outcome"]],
    }
    for model, items in nested.items():
        assert set().union(*(item.keys() for item in items)) == set(model.model_fields), model.__name__
    kinds = {sample["decision"]["kind"] for sample in views}
    assert kinds == set(typing.get_args(protocol.Decision.model_fields["kind"].annotation))
    doc = DOC.read_text(encoding="utf-8")
    view_section = doc[doc.index("### `view`") : doc.index("### `view.players[]`")]
    assert [name for name in protocol.View.model_fields if f"| `{name}` |" not in view_section] == []


def test_every_engine_event_as_sent_matches_its_documented_shape(played: Any) -> None:
    _, events = played
    for event in events:
        protocol.event_adapter.validate_python(event)  # extra="forbid" on every event model
    engine_kinds = {event["type"] for event in events}
    assert engine_kinds >= {"move", "draw", "bout_start", "bout_end", "take", "pass", "out", "match_end"}
    assert engine_kinds >= {"transferred", "challenge", "forfeit", "exchange_trump"}
