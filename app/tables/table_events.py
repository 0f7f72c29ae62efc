"""The table's own events (seats, readiness, a match's start and results, the fairness commitment),
which go out with the engine's (``app.engine.events``) in one list per version.

They hold no cards, so they are JSON as they are: one form for the table and the wire (where, like
the engine's, each also carries the table ``version``).
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from typing_extensions import TypeIs

from app.engine import Event, EventJson, OutcomeJson, event_to_json
from app.engine.fairness import FairnessRecord
from app.tables.hooks import RatingChange


class SeatEvent(TypedDict):
    type: Literal["seat"]
    seat: int
    name: str | None
    kind: Literal["human", "bot", "empty"]
    version: NotRequired[int]


class ClientSeedEvent(TypedDict):
    type: Literal["client_seed"]
    seat: int
    version: NotRequired[int]


class RematchEvent(TypedDict):
    type: Literal["rematch"]
    seat: int
    version: NotRequired[int]


class ReadyEvent(TypedDict):
    type: Literal["ready"]
    seat: int
    version: NotRequired[int]


class ReadyCheckEvent(TypedDict):
    type: Literal["ready_check"]
    ready: list[int]
    version: NotRequired[int]


class MatchStartEvent(TypedDict):
    type: Literal["match_start"]
    match_id: str
    dealer: int
    attacker: int
    defender: int
    version: NotRequired[int]


class MatchResults(TypedDict):
    """What the players are told of a finished match (and the table keeps until the next one)."""

    outcome: OutcomeJson
    coin_changes: dict[int, int]  # seat -> net change
    match_id: str
    fairness: FairnessRecord | None  # the revealed deal
    ratings: NotRequired[dict[str, RatingChange]]  # seat (as text) -> its change, once the ledger says


class ResultsEvent(MatchResults):
    type: Literal["results"]
    version: NotRequired[int]


class CommitmentEvent(TypedDict):
    type: Literal["commitment"]
    match_number: int
    commitment: str
    version: NotRequired[int]


class RatingsEvent(TypedDict):
    type: Literal["ratings"]
    match_id: str
    ratings: dict[str, RatingChange]
    version: NotRequired[int]


TableEvent = (
    SeatEvent
    | ClientSeedEvent
    | RematchEvent
    | ReadyEvent
    | ReadyCheckEvent
    | MatchStartEvent
    | ResultsEvent
    | CommitmentEvent
    | RatingsEvent
)
AnyEvent = Event | TableEvent  # what one version of a table says happened
AnyEventJson = EventJson | TableEvent  # the same as clients and bots receive it

TABLE_EVENT_TYPES = frozenset(
    {"seat", "client_seed", "rematch", "ready", "ready_check", "match_start", "results", "commitment", "ratings"}
)


def is_table_event(event: AnyEvent | AnyEventJson) -> TypeIs[TableEvent]:
    return event["type"] in TABLE_EVENT_TYPES


def event_json(event: AnyEvent) -> AnyEventJson:
    """A new dict: the event as JSON (a table event is JSON already)."""
    if is_table_event(event):
        return event.copy()
    return event_to_json(event)


def results_event(results: MatchResults) -> ResultsEvent:
    event: ResultsEvent = {
        "type": "results",
        "outcome": results["outcome"],
        "coin_changes": results["coin_changes"],
        "match_id": results["match_id"],
        "fairness": results["fairness"],
    }
    if "ratings" in results:
        event["ratings"] = results["ratings"]
    return event


def seat_event(seat: int, name: str | None, kind: Literal["human", "bot", "empty"]) -> SeatEvent:
    return {"type": "seat", "seat": seat, "name": name, "kind": kind}
