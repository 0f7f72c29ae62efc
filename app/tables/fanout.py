"""From a table's change to the frames each recipient gets, and where they go.

The actor describes what happened as a :class:`Change` (a plain value); :func:`update_frames` and
:func:`presence_frames` turn it into per-recipient redacted frames (channel, frame text), and
:class:`Delivery` routes them: frames on channels no other process has used go to this process's
subscribers at once, the rest through the broker (docs/architecture.md, "Local delivery").

The parts every recipient shares (the public view, the table facts, the events when nobody drew a
card) are encoded once and spliced into each recipient's JSON text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from app.broker import Broker, BrokerError, Event, Gap
from app.engine import State, event_to_json, public_cards, public_view, seat_view
from app.tables import channels
from app.tables.channels import dumps
from app.tables.commands import Command
from app.tables.spec import Seat

log = logging.getLogger("durak.table")

Outbox = list[tuple[str, str]]  # (channel, frame text), in the order they must arrive


@dataclass(frozen=True, slots=True)
class Change:
    """One new state of a table, as its recipients must hear it."""

    code: str
    version: int
    events: list[dict[str, Any]]  # engine events, unredacted
    table: dict[str, Any]  # the table facts (``TableActor.info()`` without ``you``)
    game: State | None
    players: tuple[tuple[int, str], ...]  # (seat, principal key) of each player with a connection
    spectators: bool  # somebody watches


def events_for(events: list[dict[str, Any]], version: int, recipient: int | None) -> list[dict[str, Any]]:
    """The events as ``recipient`` (a seat, or None for spectators) may see them."""
    return [{**event_to_json(public_cards(e, recipient)), "version": version} for e in events]


class History:
    """The events of a table's last ``size`` versions, oldest first: what a client that resumes
    missed, or what a fresh page shows in its log (the welcome). Each version's events are kept as
    their JSON text. As dicts and lists, a table's 64 versions were about 180 objects that every pass
    of the garbage collector walked; strings are not tracked (docs/performance.md)."""

    def __init__(self, size: int) -> None:
        self._kept: deque[tuple[int, str]] = deque(maxlen=size)

    def __len__(self) -> int:
        return len(self._kept)

    def append(self, version: int, events: list[dict[str, Any]]) -> None:
        # As text: the bytes orjson returns keep its 4 KiB buffer for as long as they live.
        self._kept.append((version, dumps([event_to_json(event) for event in events])))

    def versions(self) -> list[tuple[int, list[dict[str, Any]]]]:
        """Each kept version and its events (unredacted, in their JSON form), oldest first."""
        return [(version, orjson.loads(text)) for version, text in self._kept]


def recent_events(history: Sequence[tuple[int, list[dict[str, Any]]]], seat: int | None) -> list[dict[str, Any]]:
    """The current (or last) match's events still in ``history``, redacted for ``seat``: a fresh
    page fills its log with them (the welcome's ``recent``)."""
    out: list[dict[str, Any]] = []
    for version, events in history:
        for event in events:
            if event.get("type") == "match_start":
                out = []
            out.append({**event_to_json(public_cards(event, seat)), "version": version})
    return out


def events_since(
    history: Sequence[tuple[int, list[dict[str, Any]]]], version: int, last_version: int, seat: int | None
) -> list[dict[str, Any]] | None:
    """The events after ``last_version`` as ``seat`` may see them (``history``: the recent versions
    and their events, oldest first; ``version``: the table's), or None when they cannot be replayed:
    too old, or a version this table never had (the client then takes the snapshot alone)."""
    if last_version > version or last_version < 0:
        return None
    if last_version == version:
        return []
    if not history or history[0][0] > last_version + 1:
        return None
    out: list[dict[str, Any]] = []
    for at, events in history:
        if at > last_version:
            out.extend(events_for(events, at, seat))
    return out


def update_frames(change: Change) -> Outbox:
    """An ``update`` frame for every connected player and one for the spectators."""
    version = change.version
    table_json = dumps(change.table)
    game = change.game
    public_json = dumps(public_view(game))[:-1] if game is not None else ""
    # Only drawn cards differ between recipients; without a draw everybody gets the same events.
    events = change.events
    shared_events = None if any(e.get("type") == "draw" for e in events) else dumps(events_for(events, version, None))
    outbox: Outbox = []
    for seat, key in change.players:
        if game is not None:
            private = dumps({"seat": seat, **seat_view(game, seat)})
            view_json = public_json + "," + private[1:]
        else:
            view_json = "null"
        events_json = shared_events or dumps(events_for(events, version, seat))
        text = (
            f'{{"type":"update","version":{version},"seat":{seat},"events":{events_json},'
            f'"view":{view_json},"table":{table_json[:-1]},"you":{dumps(key)}}}}}'
        )
        frame = channels.frame_text("update", text, version=version, seat=seat)
        outbox.append((channels.person(change.code, key), frame))
    if change.spectators:
        view_json = public_json + ',"seat":null}' if game is not None else "null"
        events_json = shared_events or dumps(events_for(events, version, None))
        watch_table = dumps({**change.table, "code": None})  # a spectator link never reveals the invite code
        text = (
            f'{{"type":"update","version":{version},"seat":null,"events":{events_json},'
            f'"view":{view_json},"table":{watch_table}}}'
        )
        outbox.append((channels.watch(change.code), channels.frame_text("update", text, version=version)))
    return outbox


def presence_frames(change: Change) -> Outbox:
    """Who is here changed, not the table's state: every connection gets the table facts again."""
    head = f'{{"type":"presence","version":{change.version},"table":'
    outbox: Outbox = []
    for seat, key in change.players:
        text = head + dumps({**change.table, "you": key}) + "}"
        frame = channels.frame_text("presence", text, version=change.version, seat=seat)
        outbox.append((channels.person(change.code, key), frame))
    if change.spectators:
        text = head + dumps({**change.table, "code": None}) + "}"  # never the invite code to a watcher
        outbox.append((channels.watch(change.code), channels.frame_text("presence", text, version=change.version)))
    return outbox


def rehello_frames(code: str, seats: Iterable[Seat]) -> Outbox:
    """After a takeover: every connection, on any process, is asked to say ``hello`` again (the
    spectators' channel and each seated person's)."""
    rehello = channels.frame({"type": "_rehello"})
    people = {seat.principal.key for seat in seats if seat.principal is not None}
    return [(channels.watch(code), rehello), *((channels.person(code, key), rehello) for key in people)]


def answer_frames(code: str, command: Command, principal_key: str, answer: dict[str, Any]) -> Outbox:
    """Where the answer to ``command`` goes: to its REST caller's reply channel, or to the sender's
    connection (on his person channel, marked for that connection); nowhere for a command with
    neither (a bot's decision)."""
    if command.reply:
        return [reply_frame(command.reply, answer)]
    if command.conn:
        return [reply_frame(channels.person(code, principal_key), answer, command.conn)]
    return []


def reply_frame(channel: str, payload: dict[str, Any], conn: str | None = None) -> tuple[str, str]:
    """Person and spectator channels carry frames; reply channels (REST calls) plain JSON."""
    return channel, dumps(payload) if channel.startswith("reply:") else channels.frame(payload, conn)


class Route(NamedTuple):
    """Where a channel's frames go: to this process's subscribers (``here``), in a bundle to each of
    ``processes`` (their fan channels), or, when a sender's process is unknown (``direct``), on the
    channel itself through the broker, which reaches every process (this one too) and nothing else."""

    here: bool
    processes: tuple[str, ...]
    direct: bool


class Delivery:
    """Routes a table's frames. While the actor handles one command, what it sends is held and goes
    out together, in order, when the command is done (the updates, then the ack: one write to a
    remote broker).

    A person's channel goes where that person's connections are: every command of a connection
    (its ``hello`` first) says which process holds it (``heard``: ``process``, the registry's owner
    id, is this one), and its ``bye`` takes it off again (``gone``). The spectators' channel goes
    wherever any connection is. A channel nobody has been heard on is delivered here only (nobody
    elsewhere has said hello, and a connection gets nothing before its welcome anyway). A connection
    that moves to another process (its own died) says hello from there, so the channel follows it,
    back to local delivery when it is the owner's own process. Each connection gets a channel's
    frames one way only (this process's subscribers directly, another's through its fan channel),
    so frames never overtake each other."""

    def __init__(self, code: str, broker: Broker, process: str = "") -> None:
        self.code = code
        self.broker = broker
        self.process = process  # this process (the registry's owner id): its connections are served here
        # Connection id -> (person key, process of the connection; "" when unknown: a REST call made
        # on behalf of a connection, whose channel is then published on itself, for good).
        self.connections: dict[str, tuple[str, str]] = {}
        self.routes: dict[str, Route] = {}  # channels heard of; any other channel is delivered here
        self._unknown: set[str] = set()  # person keys heard from a process not named
        self._prefix = channels.of_table(code)
        self._held: Outbox | None = None

    def heard(self, conn: str, principal_key: str, process: str) -> None:
        """Connection ``conn`` of ``principal_key``, held by ``process``, sent a command."""
        where = (principal_key, process)
        if self.connections.get(conn) == where:
            return  # the common case: nothing changes
        self.connections[conn] = where
        self._reroute(principal_key)

    def gone(self, conn: str) -> None:
        """Connection ``conn`` closed: its channels no longer go to its process for it."""
        where = self.connections.pop(conn, None)
        if where is not None:
            self._reroute(where[0])

    def heard_from_afar(self, principal_key: str, via: str | None = None) -> None:
        """A connection of ``principal_key`` in process ``via`` (None: unknown) is listening, whose
        connection id is not known (tests of the routing)."""
        self.heard(f"~{principal_key}~{via or ''}", principal_key, via or "")

    def _reroute(self, principal_key: str) -> None:
        if any(process == "" for key, process in self.connections.values() if key == principal_key):
            self._unknown.add(principal_key)
        person = channels.person(self.code, principal_key)
        self.routes[person] = self._route(
            {process for key, process in self.connections.values() if key == principal_key},
            principal_key in self._unknown,
        )
        self.routes[channels.watch(self.code)] = self._route(
            {process for _, process in self.connections.values()}, bool(self._unknown)
        )

    def _route(self, processes: set[str], direct: bool) -> Route:
        others = tuple(sorted(p for p in processes if p and p != self.process))
        return Route(self.process in processes or not processes, others, direct)

    def hold(self) -> None:
        self._held = []

    def send(self, outbox: Outbox) -> None:
        if self._held is not None:
            self._held.extend(outbox)
            return
        self.deliver(outbox)

    def flush(self) -> None:
        held, self._held = self._held, None
        if held:
            self.deliver(held)

    def split(self, outbox: Outbox, *, everywhere: bool = False) -> tuple[Outbox, Outbox]:
        """(frames for this process, frames for the broker); a frame may be in both, for connections
        here and elsewhere. Replies to REST calls, which may come from anywhere, always go through
        the broker; ``everywhere``: every frame goes on its own channel through the broker."""
        routes = self.routes
        prefix = self._prefix
        here: Outbox = []
        there: Outbox = []
        for item in outbox:
            channel = item[0]
            if everywhere or not channel.startswith(prefix):
                there.append(item)
                continue
            route = routes.get(channel)
            if route is None:
                here.append(item)
            elif route.direct:
                there.append(item)  # on the channel itself: every process's subscribers, ours too
            else:
                if route.here:
                    here.append(item)
                if route.processes:
                    there.append(item)
        return here, there

    def deliver(self, outbox: Outbox, *, everywhere: bool = False) -> None:
        """Frames for this process's connections straight to them; the rest through the broker,
        without waiting for it (``publish_nowait``: the actor goes on with its next command)."""
        here, there = self.split(outbox, everywhere=everywhere)
        try:
            if here:
                self.broker.deliver_here(here)
            if there:
                self.broker.publish_nowait(self.bundled(there, everywhere=everywhere))
        except Exception as exc:  # broker down: clients resync when it returns
            log.warning("table %s: publish failed (%d messages): %s", self.code[:8], len(outbox), exc)

    def bundled(self, there: Outbox, *, everywhere: bool = False) -> list[tuple[str, str | bytes]]:
        """The table's frames for other processes as one bundle per process, on that process's fan
        channel (its :class:`Relay` hands them to its subscribers), ahead of the rest (REST replies,
        channels of unknown processes), so that a reply never overtakes the update it answers."""
        routes = self.routes
        prefix = self._prefix
        bundles: dict[str, list[tuple[str, str]]] = {}
        direct: list[tuple[str, str | bytes]] = []
        for item in there:
            route = None if everywhere or not item[0].startswith(prefix) else routes.get(item[0])
            if route is None or route.direct:
                direct.append(item)
                continue
            for process in route.processes:
                bundles.setdefault(process, []).append(item)
        if not bundles:
            return direct
        fanned: list[tuple[str, str | bytes]] = [
            (channels.fan(self.code, process), channels.pack_bundle(items)) for process, items in bundles.items()
        ]
        return fanned + direct


@dataclass(slots=True)
class _Listening:
    task: asyncio.Task[None]
    live: asyncio.Future[None]
    connections: int = 0


@dataclass(slots=True)
class Relay:
    """The receiving end of :meth:`Delivery.bundled`: while this process (``process``, its
    registry's owner id) has a connection to a table, it listens on its own fan channel of the table
    and hands each bundle's frames to its subscribers (``deliver_here``). A gap on the fan channel is
    a gap on every channel of the table here, so the connections resync."""

    broker: Broker
    process: str
    _tables: dict[str, _Listening] = field(default_factory=dict)

    @contextlib.asynccontextmanager
    async def joined(self, code: str) -> AsyncIterator[None]:
        """Listening on ``code``'s fan channel for the body (raises :class:`BrokerError` when the
        subscription cannot be made)."""
        listening = self._tables.get(code)
        if listening is None or listening.task.done():
            live = asyncio.get_running_loop().create_future()
            task = asyncio.create_task(self._listen(code, live), name=f"relay-{code[:8]}")
            listening = self._tables[code] = _Listening(task, live)
        listening.connections += 1
        try:
            await asyncio.shield(listening.live)
            yield
        finally:
            listening.connections -= 1
            if listening.connections == 0 and self._tables.get(code) is listening:
                del self._tables[code]
                listening.task.cancel()

    def listening(self, code: str) -> bool:
        return code in self._tables

    async def _listen(self, code: str, live: asyncio.Future[None]) -> None:
        prefix, fan = channels.of_table(code), channels.fan(code, self.process)
        fans = channels.fan(code, "")

        def on_bundle(event: Event) -> None:
            if isinstance(event, Gap):
                self.broker.signal_gap_here(prefix, besides=fan)
                return
            try:
                items = channels.unpack_bundle(event.data)
            except ValueError:
                log.warning("table %s: a malformed bundle was dropped", code[:8])
                self.broker.signal_gap_here(prefix, besides=fan)
                return
            # Only this table's channels: a bundle never reaches another table's subscribers.
            mine = [item for item in items if item[0].startswith(prefix) and not item[0].startswith(fans)]
            self.broker.deliver_here(mine)

        def on_live(after_outage: bool) -> None:
            if not live.done():
                live.set_result(None)
            if after_outage:
                self.broker.signal_gap_here(prefix, besides=fan)

        try:
            await self.broker.follow(fan, on_bundle, on_live=on_live, give_up_at_first=True)
        except BrokerError as exc:
            if not live.done():
                live.set_exception(exc)
            listening = self._tables.get(code)
            if listening is not None and listening.task is asyncio.current_task():
                del self._tables[code]
