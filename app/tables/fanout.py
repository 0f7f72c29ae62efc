"""From a table's change to the frames each recipient gets.

The actor describes what happened as a :class:`Change` (a plain value); :func:`update_frames` and
:func:`presence_frames` turn it into per-recipient redacted frames (channel, frame text), which the
table's transport routes (``TableTransport``, ports.py; ``app/transport/delivery.py``).

The parts every recipient shares (the public view, the table facts, the events when nobody drew a
card) are encoded once and spliced into each recipient's JSON text.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

import orjson

from app.engine import State, public_cards, public_view, seat_view
from app.tables.answers import Answer, WelcomeMessage
from app.tables.commands import Command
from app.tables.messages import Presence, Rehello, Update
from app.tables.ports import Outbox
from app.tables.spec import Seat
from app.tables.table_events import AnyEvent, AnyEventJson, event_json
from app.tables.table_facts import TableFacts
from app.transport import channels
from app.transport.channels import dumps

log = logging.getLogger("durak.table")


@dataclass(frozen=True, slots=True)
class Change:
    """One new state of a table, as its recipients must hear it."""

    code: str
    version: int
    events: Sequence[AnyEvent]  # unredacted
    table: TableFacts  # ``TableActor.info()`` without ``you``
    game: State | None
    players: tuple[tuple[int, str], ...]  # (seat, principal key) of each player with a connection
    spectators: bool  # somebody watches


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


def update_frames(change: Change) -> Outbox:
    """An ``update`` for every connected player and one for the spectators, each redacted for its
    recipient; what they share is encoded once (the writer, ``Update.spliced``, splices it)."""
    version = change.version
    table_json = dumps(change.table)
    game = change.game
    public_json = dumps(public_view(game))[:-1] if game is not None else ""
    # Only drawn cards differ between recipients; without a draw everybody gets the same events.
    events = change.events
    shared_events = None if any(e["type"] == "draw" for e in events) else dumps(events_for(events, version, None))
    outbox: Outbox = []
    for seat, key in change.players:
        view_json = Update.joined_view(public_json, seat, seat_view(game, seat)) if game is not None else "null"
        events_json = shared_events or dumps(events_for(events, version, seat))
        text = Update.spliced(version, seat, events_json, view_json, table_json, key)
        frame = channels.frame_text("update", text, version=version, seat=seat)
        outbox.append((channels.person(change.code, key), frame))
    if change.spectators:
        view_json = Update.joined_view(public_json, None) if game is not None else "null"
        events_json = shared_events or dumps(events_for(events, version, None))
        watch_table = dumps({**change.table, "code": None})  # a spectator link never reveals the invite code
        text = Update.spliced(version, None, events_json, view_json, watch_table)
        outbox.append((channels.watch(change.code), channels.frame_text("update", text, version=version)))
    return outbox


def presence_frames(change: Change) -> Outbox:
    """Who is here changed, not the table's state: every connection gets the table facts again."""
    table_json = dumps(change.table)
    outbox: Outbox = []
    for seat, key in change.players:
        text = Presence.spliced(change.version, table_json, key)
        frame = channels.frame_text("presence", text, version=change.version, seat=seat)
        outbox.append((channels.person(change.code, key), frame))
    if change.spectators:
        text = Presence.spliced(change.version, dumps({**change.table, "code": None}))  # never the invite code
        outbox.append((channels.watch(change.code), channels.frame_text("presence", text, version=change.version)))
    return outbox


def rehello_frames(code: str, seats: Iterable[Seat]) -> Outbox:
    """After a takeover: every connection, on any process, is asked to say ``hello`` again (the
    spectators' channel and each seated person's)."""
    rehello = channels.frame(Rehello.wire())
    people = {seat.principal.key for seat in seats if seat.principal is not None}
    return [(channels.watch(code), rehello), *((channels.person(code, key), rehello) for key in people)]


def answer_frames(code: str, command: Command, principal_key: str, answer: Answer | WelcomeMessage) -> Outbox:
    """Where the answer to ``command`` goes: to its REST caller's reply channel, or to the sender's
    connection (on his person channel, marked for that connection); nowhere for a command with
    neither (a bot's decision)."""
    if command.reply:
        return [reply_frame(command.reply, answer)]
    if command.conn:
        return [reply_frame(channels.person(code, principal_key), answer, command.conn)]
    return []


def reply_frame(channel: str, payload: Answer | WelcomeMessage, conn: str | None = None) -> tuple[str, str]:
    """Person and spectator channels carry frames; reply channels (REST calls) plain JSON."""
    return channel, dumps(payload) if channel.startswith("reply:") else channels.frame(payload, conn)
