"""The shape of the table facts (``table`` in every welcome, update and presence message, ``info``
replies and the stored record) and of a connection's snapshot; ``facts.py`` builds them."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from app.engine import RulesJson, ViewJson
from app.tables.fair import FairnessInfo
from app.tables.spec import PublicSeat, TableStatus
from app.tables.table_events import MatchResults

__all__ = ["FairnessInfo", "ReadyCheckFacts", "RematchFacts", "Snapshot", "TableFacts"]


class RematchFacts(TypedDict):
    agreed: list[int]
    deadline_ms: int


class ReadyCheckFacts(TypedDict):
    ready: list[int]
    deadline_ms: int


class TableFacts(TypedDict):
    """``table`` in every welcome, update and presence message (docs/protocol.md)."""

    code: str | None  # None for a spectator: a spectator link never reveals the invite code
    name: str
    private: bool
    chat: bool
    status: TableStatus
    rules: RulesJson
    creator: str
    seats: list[PublicSeat]
    spectators: int
    series: dict[int, tuple[int, int]]  # seat -> (wins, losses)
    deadline_ms: int | None
    grace_s: float
    rematch: RematchFacts | None
    ready_check: ReadyCheckFacts | None
    fairness: FairnessInfo
    match_id: str | None
    results: MatchResults | None
    version: int
    you: NotRequired[str | None]  # the asker's key (not in what every recipient shares)


class Snapshot(TypedDict):
    """The table as one connection sees it."""

    version: int
    seat: int | None
    view: ViewJson | None  # the engine's ``view`` for the seat (or a spectator)
    table: TableFacts
