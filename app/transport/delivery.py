"""Where a table's frames go: this process's connections, or another process's, through the broker.

A table's messages become frames (its outbox: each frame on a person's, the spectators' or a REST
caller's channel, ``frames.py``); :class:`Delivery` (one per table, inside its transport,
``table_transport.py``) knows where each channel's connections live and routes the frames: to this
process's subscribers at once, to each other process in one bundle on its fan channel, and REST
replies on their own channels (docs/architecture.md, "Local delivery" and "One bundle per process
and command"). :class:`Relay` is the receiving end of the bundles in every process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import NamedTuple

from app.broker.base import Broker, BrokerError, Event, Gap
from app.transport import channels

log = logging.getLogger("durak.table")

Outbox = list[tuple[str, str]]  # (channel, frame text), in the order they must arrive


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
