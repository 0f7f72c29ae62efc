"""JSON for states, events and outcomes: everything round-trips through ``json``."""

from __future__ import annotations

from typing import Any, cast

from app.engine.actions import ACTION_TYPES, Action, action_from_json, action_to_json
from app.engine.cards import CARD_TEXT, Card
from app.engine.events import Event, EventJson
from app.engine.rules import Rules
from app.engine.state import PHASES, Move, Outcome, Phase, State


def _cards(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [CARD_TEXT[card] for card in cards]


def _parse(texts: list[str]) -> tuple[Card, ...]:
    return tuple(Card.parse(text) for text in texts)


_AS_IS = frozenset({str, int, bool, float, type(None)})
_ACTION_CLASSES = frozenset(ACTION_TYPES.values())


def jsonable(value: Any) -> Any:
    """Cards become strings, actions their JSON; tuples become lists (for events)."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is Card:
        return CARD_TEXT[value]
    if kind is tuple:  # usually cards: spare a call per card
        return [CARD_TEXT[item] if type(item) is Card else jsonable(item) for item in value]
    if kind in _ACTION_CLASSES:
        return action_to_json(value)
    # The general rules (the cases above are their quick paths for the values events hold):
    if isinstance(value, Card):
        return CARD_TEXT[value]
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [jsonable(item) for item in value]
    if hasattr(value, "kind") and hasattr(value, "seat"):
        return action_to_json(value)
    return value


def event_to_json(event: Event) -> EventJson:
    """A new dict: the event with its cards as strings and a move's action as its JSON."""
    # The same keys with JSON values: what distinguishes the two forms (events.py).
    if type(event) is not dict:  # a Mapping of another kind
        return cast(EventJson, jsonable(dict(event)))
    return cast(EventJson, {key: value if type(value) in _AS_IS else jsonable(value) for key, value in event.items()})


def state_to_json(state: State) -> dict[str, Any]:
    """The full server-side state, secrets included: for persistence, never for a client."""
    return {
        "rules": state.rules.to_json(),
        "seed": str(state.seed),
        "dealer": state.dealer,
        "hands": [_cards(hand) for hand in state.hands],
        "stock": _cards(state.stock),
        "trump_card": CARD_TEXT[state.trump_card],
        "discard": _cards(state.discard),
        "table": [[CARD_TEXT[a], None if c is None else CARD_TEXT[c]] for a, c in state.table],
        "attacker": state.attacker,
        "defender": state.defender,
        "bout_limit": state.bout_limit,
        "defended_once": state.defended_once,
        "phase": state.phase,
        "taking": state.taking,
        "thrown_in": state.thrown_in,
        "passed": sorted(state.passed),
        "moves": [
            {"seat": m.seat, "action": action_to_json(m.action), "cheat": m.cheat, "rule": m.rule} for m in state.moves
        ],
        "emptied": list(state.emptied),
        "out": list(state.out),
        "exchange_open": state.exchange_open,
        "outcome": state.outcome.to_json() if state.outcome else None,
        "ply": state.ply,
    }


def state_from_json(data: dict[str, Any]) -> State:
    moves: list[Move] = []
    for m in data["moves"]:
        action: Action = action_from_json(m["action"])
        moves.append(Move(m["seat"], action, m["cheat"], m.get("rule")))
    return State(
        rules=Rules.from_json(data["rules"]),
        seed=int(data["seed"]),
        dealer=data["dealer"],
        hands=tuple(_parse(hand) for hand in data["hands"]),
        stock=_parse(data["stock"]),
        trump_card=Card.parse(data["trump_card"]),
        discard=_parse(data["discard"]),
        table=tuple((Card.parse(a), None if c is None else Card.parse(c)) for a, c in data["table"]),
        attacker=data["attacker"],
        defender=data["defender"],
        bout_limit=data["bout_limit"],
        defended_once=data["defended_once"],
        phase=_phase(data["phase"]),
        taking=data["taking"],
        thrown_in=data["thrown_in"],
        passed=frozenset(data["passed"]),
        moves=tuple(moves),
        emptied=tuple(data["emptied"]),
        out=tuple(data["out"]),
        exchange_open=data["exchange_open"],
        outcome=Outcome.from_json(data["outcome"]) if data["outcome"] else None,
        ply=data["ply"],
    )


def _phase(text: object) -> Phase:
    for phase in PHASES:
        if text == phase:
            return phase
    raise ValueError(f"unknown phase {text!r}")
