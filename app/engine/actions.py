"""Actions a seat (or the server, for forfeits) can take, with JSON round-trips."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NotRequired, TypedDict

from app.engine.cards import CARD_TEXT, Card, CardParseError

ForfeitReason = Literal["timeout", "left", "disconnected"]  # the timer ran out, the player left, his grace ran out
FORFEIT_REASONS: tuple[ForfeitReason, ...] = ("timeout", "left", "disconnected")


@dataclass(frozen=True, slots=True)
class Lead:
    """The main attacker opens a bout (several cards of a rank only under Durac 1993)."""

    seat: int
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "lead"


@dataclass(frozen=True, slots=True)
class ThrowIn:
    """An attacker adds card(s) of a rank already on the table."""

    seat: int
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "throw_in"


@dataclass(frozen=True, slots=True)
class Cover:
    """The defender covers the attack at index ``attack`` with ``card``."""

    seat: int
    attack: int
    card: Card
    kind: ClassVar[str] = "cover"


@dataclass(frozen=True, slots=True)
class Transfer:
    """The defender passes the attack on with card(s) of the attacking rank(s)."""

    seat: int
    cards: tuple[Card, ...]
    kind: ClassVar[str] = "transfer"


@dataclass(frozen=True, slots=True)
class Take:
    """The defender declares he will pick up the table."""

    seat: int
    kind: ClassVar[str] = "take"


@dataclass(frozen=True, slots=True)
class Pass:
    """An attacker has nothing (more) to add to this bout ("bito" when all is covered)."""

    seat: int
    kind: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True)
class Challenge:
    """At a cheating table: claim that move number ``move`` of the current bout broke a rule."""

    seat: int
    move: int
    kind: ClassVar[str] = "challenge"


@dataclass(frozen=True, slots=True)
class ExchangeTrump:
    """Durac 1993: swap the lowest trump in hand for the turned trump before the first attack."""

    seat: int
    kind: ClassVar[str] = "exchange_trump"


@dataclass(frozen=True, slots=True)
class Forfeit:
    """Applied by the server: the seat ran out of time or left; it becomes the durak (§8)."""

    seat: int
    reason: ForfeitReason = "left"
    kind: ClassVar[str] = "forfeit"


Action = Lead | ThrowIn | Cover | Transfer | Take | Pass | Challenge | ExchangeTrump | Forfeit
ACTION_TYPES: dict[str, type[Action]] = {
    cls.kind: cls for cls in (Lead, ThrowIn, Cover, Transfer, Take, Pass, Challenge, ExchangeTrump, Forfeit)
}


class ActionJson(TypedDict):
    """An action as JSON (``action_to_json``): its kind, its seat and what the kind needs."""

    type: str
    seat: int
    cards: NotRequired[list[str]]  # lead, throw_in, transfer
    attack: NotRequired[int]  # cover: the attack's index on the table
    card: NotRequired[str]  # cover
    move: NotRequired[int]  # challenge
    reason: NotRequired[ForfeitReason]  # forfeit


class ActionParseError(ValueError):
    """JSON that does not describe an action."""


_WITH_CARDS = (Lead, ThrowIn, Transfer)  # a tuple: isinstance is quicker with it than with a union


def action_to_json(action: Action) -> ActionJson:
    # One dict literal per kind (keys in the order type, seat, details): this runs for every legal
    # action and every move of the bout in every view.
    if isinstance(action, _WITH_CARDS):
        return {"type": action.kind, "seat": action.seat, "cards": [CARD_TEXT[card] for card in action.cards]}
    if isinstance(action, Cover):
        return {"type": action.kind, "seat": action.seat, "attack": action.attack, "card": CARD_TEXT[action.card]}
    if isinstance(action, Challenge):
        return {"type": action.kind, "seat": action.seat, "move": action.move}
    if isinstance(action, Forfeit):
        return {"type": action.kind, "seat": action.seat, "reason": action.reason}
    return {"type": action.kind, "seat": action.seat}


def _int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ActionParseError(f"action field {key!r} must be an integer, got {value!r}")
    return value


def _cards(data: dict[str, Any]) -> tuple[Card, ...]:
    raw = data.get("cards")
    if not isinstance(raw, list) or not raw or not all(isinstance(c, str) for c in raw):
        raise ActionParseError(f"action field 'cards' must be a non-empty list of card strings, got {raw!r}")
    try:
        return tuple(Card.parse(text) for text in raw)
    except CardParseError as exc:
        raise ActionParseError(str(exc)) from exc


def action_from_json(data: Mapping[str, Any]) -> Action:
    if not isinstance(data, dict):
        raise ActionParseError(f"an action is a JSON object, got {data!r}")
    kind = data.get("type")
    cls = ACTION_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ActionParseError(f"unknown action type {kind!r}; expected one of {', '.join(ACTION_TYPES)}")
    seat = _int(data, "seat")
    if cls is Lead:
        return Lead(seat, _cards(data))
    if cls is ThrowIn:
        return ThrowIn(seat, _cards(data))
    if cls is Transfer:
        return Transfer(seat, _cards(data))
    if cls is Cover:
        card = data.get("card")
        if not isinstance(card, str):
            raise ActionParseError(f"action field 'card' must be a card string, got {card!r}")
        try:
            parsed = Card.parse(card)
        except CardParseError as exc:
            raise ActionParseError(str(exc)) from exc
        return Cover(seat, _int(data, "attack"), parsed)
    if cls is Challenge:
        return Challenge(seat, _int(data, "move"))
    if cls is Forfeit:
        reason = data.get("reason", "left")
        known = next((known for known in FORFEIT_REASONS if known == reason), None)
        if known is None:
            raise ActionParseError(f"forfeit reason must be one of {', '.join(FORFEIT_REASONS)}")
        return Forfeit(seat, known)
    if cls is Take:
        return Take(seat)
    if cls is Pass:
        return Pass(seat)
    return ExchangeTrump(seat)


def action_text(action: Action) -> str:
    """A short human description, used in error messages and logs."""
    if isinstance(action, _WITH_CARDS):
        return f"{action.kind} {' '.join([CARD_TEXT[c] for c in action.cards])} by seat {action.seat}"
    if isinstance(action, Cover):
        return f"cover attack #{action.attack} with {action.card} by seat {action.seat}"
    if isinstance(action, Challenge):
        return f"challenge of move #{action.move} by seat {action.seat}"
    if isinstance(action, Forfeit):
        return f"forfeit ({action.reason}) of seat {action.seat}"
    return f"{action.kind} by seat {action.seat}"
