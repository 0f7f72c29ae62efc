"""What each recipient of a table's change may see.

The actor describes what happened as a :class:`Change` (a plain value) and hands it to its transport
(``TableTransport.send_all``, ports.py); the change says, one call per part, what a recipient may see
of it: the view (:meth:`Change.public_view`, shared, and :meth:`Change.own_view`, a seat's own), the
events (:meth:`Change.events_of`; the same for everybody when nobody drew a card) and the table facts
(:meth:`Change.table_of`). The transport encodes the shared parts once and splices them into each
recipient's message (app/transport/frames.py). The events kept for clients that resume
(:class:`History`) are here too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import orjson

from app.engine import PublicViewJson, SeatViewJson, State, public_cards, public_view, seat_view
from app.tables.messages import dumps
from app.tables.table_events import AnyEvent, AnyEventJson, event_json
from app.tables.table_facts import TableFacts


@dataclass(frozen=True, slots=True)
class Change:
    """One new state of a table (``kind`` "update"), or of who is here (``kind`` "presence": the
    table facts again, no new version), as its recipients must hear it."""

    code: str
    version: int
    events: Sequence[AnyEvent]  # unredacted
    table: TableFacts  # ``TableActor.info()`` without ``you``
    game: State | None
    players: tuple[tuple[int, str], ...]  # (seat, principal key) of each player with a connection
    spectators: bool  # somebody watches
    kind: Literal["update", "presence"] = "update"

    def public_view(self) -> PublicViewJson | None:
        """The part of the view every recipient shares (None before the first match)."""
        return public_view(self.game) if self.game is not None else None

    def own_view(self, seat: int) -> SeatViewJson:
        """What only ``seat`` sees on top of the public view: its hand and its legal actions (only
        with a game: ``public_view`` is not None)."""
        return seat_view(self.game, seat)  # type: ignore[arg-type]

    def events_shared(self) -> bool:
        """Whether every recipient gets the same events: only drawn cards differ between them."""
        return not any(e["type"] == "draw" for e in self.events)

    def events_of(self, seat: int | None) -> list[AnyEventJson]:
        """The events as ``seat`` (None: the spectators) may see them."""
        return events_for(self.events, self.version, seat)

    def table_of(self, seat: int | None) -> TableFacts:
        """The table facts for a player (``seat``: any seat number, the facts are the same for every
        player) or for the spectators (None): a spectator link never reveals the invite code."""
        return self.table if seat is not None else {**self.table, "code": None}


def events_for(events: Sequence[AnyEvent], version: int, recipient: int | None) -> list[AnyEventJson]:
    """The events as ``recipient`` (a seat, or None for spectators) may see them."""
    return [_stamped(event_json(public_cards(e, recipient)), version) for e in events]


def _stamped(event: AnyEventJson, version: int) -> AnyEventJson:
    event["version"] = version
    return event


class History:
    """The events of a table's last ``size`` versions, oldest first: what a client that resumes
    missed, or what a fresh page shows in its log (the welcome). Each version's events are kept as
    their JSON text. As dicts and lists, a table's 64 versions were about 180 objects that every pass
    of the garbage collector walked; strings are not tracked (docs/performance.md)."""

    def __init__(self, size: int) -> None:
        self._kept: deque[tuple[int, str]] = deque(maxlen=size)

    def __len__(self) -> int:
        return len(self._kept)

    def append(self, version: int, events: Sequence[AnyEvent]) -> None:
        # As text: the bytes orjson returns keep its 4 KiB buffer for as long as they live.
        self._kept.append((version, dumps([event_json(event) for event in events])))

    def versions(self) -> list[tuple[int, list[AnyEventJson]]]:
        """Each kept version and its events (unredacted, in their JSON form), oldest first."""
        # Read back what ``append`` wrote: the JSON form of the events, as they were.
        return [(version, cast(list[AnyEventJson], orjson.loads(text))) for version, text in self._kept]


def recent_events(history: Sequence[tuple[int, list[AnyEventJson]]], seat: int | None) -> list[AnyEventJson]:
    """The current (or last) match's events still in ``history``, redacted for ``seat``: a fresh
    page fills its log with them (the welcome's ``recent``)."""
    out: list[AnyEventJson] = []
    for version, events in history:
        for event in events:
            if event["type"] == "match_start":
                out = []
            out.append(_stamped(public_cards(event, seat).copy(), version))
    return out


def events_since(
    history: Sequence[tuple[int, list[AnyEventJson]]], version: int, last_version: int, seat: int | None
) -> list[AnyEventJson] | None:
    """The events after ``last_version`` as ``seat`` may see them (``history``: the recent versions
    and their events, oldest first; ``version``: the table's), or None when they cannot be replayed:
    too old, or a version this table never had (the client then takes the snapshot alone)."""
    if last_version > version or last_version < 0:
        return None
    if last_version == version:
        return []
    if not history or history[0][0] > last_version + 1:
        return None
    out: list[AnyEventJson] = []
    for at, events in history:
        if at > last_version:
            out.extend(_stamped(public_cards(event, seat).copy(), at) for event in events)
    return out
