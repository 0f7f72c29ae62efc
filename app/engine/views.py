"""What one seat (or a spectator) may see: ``view(state, seat)``, and events redacted per recipient."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict, TypeVar, cast

from app.engine.actions import Action, ActionJson, action_to_json
from app.engine.cards import CARD_TEXT, HAND_ORDER, Card, hand_key
from app.engine.play import legal_actions
from app.engine.rules import RulesJson
from app.engine.seating import all_covered, allowance, cap, pending, throwers, window_pending
from app.engine.state import BOUT, CHALLENGE, LEAD, OVER, OutcomeJson, Phase, State

_Event = TypeVar("_Event", bound=Mapping[str, object])

DecisionKind = Literal["none", "lead", "challenge", "defend", "throw_in", "throw_in_after_take"]
Role = Literal["attacker", "defender", "thrower"]


class DecisionJson(TypedDict):
    """``decision(state)``: whose decision the game waits for, what kind, whether the timer forfeits it."""

    kind: DecisionKind
    seats: list[int]
    forfeits: bool


class PlayerJson(TypedDict):
    """A seat as every view shows it (``players``): never its cards, only how many."""

    seat: int
    cards: int
    out: bool
    place: int | None
    role: Role | None
    passed: bool


class TablePairJson(TypedDict):
    """An attack on the table and the card that covers it (None: not covered yet)."""

    attack: str
    cover: str | None


class PublicViewJson(TypedDict):
    """``public_view(state)``: the part of every view that is the same for all recipients."""

    phase: Phase
    ply: int
    rules: RulesJson
    dealer: int
    trump: str
    trump_card: str
    trump_card_in_stock: bool
    stock: int
    discard: int
    players: list[PlayerJson]
    table: list[TablePairJson]
    attacker: int | None
    defender: int | None
    taking: bool
    cap: int
    allowance: int
    decision: DecisionJson
    moves: list[ActionJson]
    order: list[int]
    exchange_open: bool
    outcome: OutcomeJson | None


class SeatViewJson(TypedDict):
    """``seat_view(state, seat)``: what only that seat sees, its hand and its legal actions."""

    hand: list[str]
    legal: list[ActionJson]


class ViewJson(PublicViewJson):
    """``view(state, seat)``: the public view, the seat (None: a spectator) and, for a seat, its own part."""

    seat: int | None
    hand: NotRequired[list[str]]
    legal: NotRequired[list[ActionJson]]


def sort_hand(hand: tuple[Card, ...], trump: str) -> list[Card]:
    """Non-trumps by rank then suit, trumps last by rank."""
    try:
        return sorted(hand, key=HAND_ORDER[trump].__getitem__)
    except KeyError:  # a card (or trump) outside the deck
        return sorted(hand, key=lambda card: hand_key(card, trump))


def decision(state: State) -> DecisionJson:
    """Whose decision the game waits for, what kind, and whether the timer forfeits it (§8)."""
    if state.phase == OVER:
        return {"kind": "none", "seats": [], "forfeits": False}
    if state.phase == LEAD:
        return {"kind": "lead", "seats": [state.attacker], "forfeits": True}
    if state.phase == CHALLENGE:  # cheating tables: challenge a move of the bout, or pass
        return {"kind": "challenge", "seats": list(window_pending(state)), "forfeits": False}
    if not state.taking and not all_covered(state):
        return {"kind": "defend", "seats": [state.defender], "forfeits": True}
    kind: DecisionKind = "throw_in_after_take" if state.taking else "throw_in"
    return {"kind": kind, "seats": list(pending(state)), "forfeits": False}


def timeout_actions(state: State) -> list[Action]:
    """What the server applies when the decision timer runs out: a forfeit for a seat that must
    lead or defend, a pass for every attacker who could still throw in (§8); when the challenge
    window of a cheating table closes, a pass for everyone who has not passed on it (§9)."""
    from app.engine.actions import Forfeit, Pass

    info = decision(state)
    if info["kind"] == "none":
        return []
    if info["forfeits"]:
        return [Forfeit(info["seats"][0], "timeout")]
    return [Pass(seat) for seat in info["seats"]]


def view(state: State, seat: int | None) -> ViewJson:
    """The state as ``seat`` sees it (``None``: a spectator). Never another hand, the stock order
    or the seed."""
    data = cast(ViewJson, public_view(state))  # made here: it becomes the view, its seat set below
    data["seat"] = seat
    if seat is not None:
        mine = seat_view(state, seat)
        data["hand"], data["legal"] = mine["hand"], mine["legal"]
    return data


def seat_view(state: State, seat: int) -> SeatViewJson:
    """What only ``seat`` sees on top of the public view: its hand and its legal actions."""
    return {
        "hand": [CARD_TEXT[card] for card in sort_hand(state.hands[seat], state.trump)],
        "legal": [action_to_json(action) for action in legal_actions(state, seat)],
    }


def public_view(state: State) -> PublicViewJson:
    """The part of every view that is the same for all recipients (no ``seat`` key)."""
    phase = state.phase
    over = phase == OVER
    out = state.out
    passed = state.passed
    outcome = state.outcome
    roles: dict[int, Role] = {}
    if phase in (LEAD, BOUT, CHALLENGE):
        for other in throwers(state) if phase == BOUT else ():
            roles[other] = "thrower"
        roles[state.attacker] = "attacker"
        roles[state.defender] = "defender"
    if outcome is not None:
        places: list[int | None] = [outcome.place_of(other) for other in range(state.n)]
    else:
        places = [out.index(other) + 1 if other in out else None for other in range(state.n)]
    players: list[PlayerJson] = [
        {
            "seat": other,
            "cards": len(hand),
            "out": other in out,
            "place": places[other],
            "role": roles.get(other),
            "passed": other in passed,
        }
        for other, hand in enumerate(state.hands)
    ]
    data: PublicViewJson = {
        "phase": phase,
        "ply": state.ply,
        "rules": state.rules.to_json(),
        "dealer": state.dealer,
        "trump": state.trump_card.suit,
        "trump_card": CARD_TEXT[state.trump_card],
        "trump_card_in_stock": state.trump_card in state.stock,
        "stock": len(state.stock),
        "discard": len(state.discard),
        "players": players,
        "table": [
            {"attack": CARD_TEXT[attack], "cover": None if cover is None else CARD_TEXT[cover]}
            for attack, cover in state.table
        ],
        "attacker": None if over else state.attacker,
        "defender": None if over else state.defender,
        "taking": state.taking,
        "cap": cap(state),
        "allowance": allowance(state) if phase in (LEAD, BOUT) else 0,
        "decision": decision(state),
        "moves": [action_to_json(move.action) for move in state.moves],
        "order": list(out),
        "exchange_open": state.exchange_open,
        "outcome": None if outcome is None else outcome.to_json(),
    }
    return data


def public_cards(event: _Event, seat: int | None) -> _Event:
    """The event as ``seat`` may receive it: another seat's drawn cards become a count (the turned
    trump card, which everybody saw, stays visible). Either form of an event (``Event``,
    ``EventJson``), or a table's own event, which passes unchanged."""
    if event.get("type") != "draw" or event.get("seat") == seat:
        return event
    # A draw without its cards: ``cards`` is not required in either form of a draw.
    return cast(_Event, {key: value for key, value in event.items() if key != "cards"})
