"""What ``apply`` reports: one typed dict per kind of event, in two forms.

``Event`` is the engine's form (cards are ``Card`` values, a move holds its ``Action``);
``EventJson`` is what ``event_to_json`` makes of it, the form clients and bots receive (cards are
strings, a move's action is its JSON; on the wire each event also carries the table ``version``).
They are plain dicts at run time, so the wire format is the same as before they were typed.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from app.engine.actions import Action, ForfeitReason
from app.engine.cards import Card
from app.engine.state import OutcomeJson

# --------------------------------------------------------------------------- the engine's form


class MoveEvent(TypedDict):
    type: Literal["move"]
    seat: int
    action: Action
    index: int  # the move's number in this bout (what a challenge names)


class DrawEvent(TypedDict):
    type: Literal["draw"]
    seat: int
    count: int
    cards: NotRequired[tuple[Card, ...]]  # absent once redacted for another seat (``public_cards``)
    trump_card: NotRequired[Card]  # the turned trump, when it was among the cards drawn


class BoutStartEvent(TypedDict):
    type: Literal["bout_start"]
    attacker: int
    defender: int
    limit: int


class BoutEndEvent(TypedDict):
    type: Literal["bout_end"]
    result: Literal["taken", "beaten"]
    defender: int
    cards: tuple[Card, ...]


class TransferredEvent(TypedDict):
    type: Literal["transferred"]
    attacker: int
    defender: int
    limit: int


class TakeEvent(TypedDict):
    type: Literal["take"]
    seat: int


class PassEvent(TypedDict):
    type: Literal["pass"]
    seat: int


class OutEvent(TypedDict):
    type: Literal["out"]
    seat: int
    place: int


class ChallengeEvent(TypedDict):
    type: Literal["challenge"]
    seat: int
    move: int
    ruling: Literal["upheld", "rejected"]
    loser: int
    rule: str | None


class ExchangeTrumpEvent(TypedDict):
    type: Literal["exchange_trump"]
    seat: int
    gave: Card
    got: Card


class ForfeitEvent(TypedDict):
    type: Literal["forfeit"]
    seat: int
    reason: ForfeitReason


class MatchEndEvent(TypedDict):
    type: Literal["match_end"]
    outcome: OutcomeJson


Event = (
    MoveEvent
    | DrawEvent
    | BoutStartEvent
    | BoutEndEvent
    | TransferredEvent
    | TakeEvent
    | PassEvent
    | OutEvent
    | ChallengeEvent
    | ExchangeTrumpEvent
    | ForfeitEvent
    | MatchEndEvent
)


# --------------------------------------------------------------------------- the JSON form
# Only the kinds that hold cards or an action differ; the others are JSON already. ``version`` is
# set by the table when it sends the event.


class MoveJson(TypedDict):
    type: Literal["move"]
    seat: int
    action: dict[str, Any]  # ``action_to_json``
    index: int
    version: NotRequired[int]


class DrawJson(TypedDict):
    type: Literal["draw"]
    seat: int
    count: int
    cards: NotRequired[list[str]]
    trump_card: NotRequired[str]
    version: NotRequired[int]


class BoutEndJson(TypedDict):
    type: Literal["bout_end"]
    result: Literal["taken", "beaten"]
    defender: int
    cards: list[str]
    version: NotRequired[int]


class ExchangeTrumpJson(TypedDict):
    type: Literal["exchange_trump"]
    seat: int
    gave: str
    got: str
    version: NotRequired[int]


class BoutStartJson(BoutStartEvent):
    version: NotRequired[int]


class TransferredJson(TransferredEvent):
    version: NotRequired[int]


class TakeJson(TakeEvent):
    version: NotRequired[int]


class PassJson(PassEvent):
    version: NotRequired[int]


class OutJson(OutEvent):
    version: NotRequired[int]


class ChallengeJson(ChallengeEvent):
    version: NotRequired[int]


class ForfeitJson(ForfeitEvent):
    version: NotRequired[int]


class MatchEndJson(MatchEndEvent):
    version: NotRequired[int]


EventJson = (
    MoveJson
    | DrawJson
    | BoutStartJson
    | BoutEndJson
    | TransferredJson
    | TakeJson
    | PassJson
    | OutJson
    | ChallengeJson
    | ExchangeTrumpJson
    | ForfeitJson
    | MatchEndJson
)
