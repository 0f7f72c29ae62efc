"""How many players one server process carries at a human pace.

    python -m bench.capacity            # 1,000 -> 2,000 -> 4,000 -> 6,000 -> 8,000 -> 10,000 players; under 4 min
    python -m bench.capacity --quick    # 250 -> 500 -> 1,000 players, short windows; under 60 s

It starts the server (``python -m app`` on a temporary SQLite file and the memory:// broker by
default; ``--database postgres`` for a scratch PostgreSQL database, ``--broker redis`` for a
redis-server of its own) as its own process and drives it from one separate client process (uvloop,
picows websockets, a hand-written keep-alive HTTP/1.1 client for the REST calls, and one heap of
timers for every player's thinking instead of a task or timer each). Every table is public (so that
the lobby feed has something to say) and seats four guests, who sign in the way ``bench.load``'s do
(``POST /api/auth/guest``; the per-address sign-in limits are raised, since everybody comes from
127.0.0.1; the per-connection command rate limit is the default one). Each player thinks a random
0..2x ``--think-ms`` (1 s by default) before each decision, throws in now and then when it may
(as ``bench.load``'s do), and asks for a rematch, after thinking, when a match ends. One spectator
watches every fourth table, and 200 lobby viewers follow ``/api/lobby/stream``.

The number of players goes up step by step (the server keeps running; each step adds tables); after
a warm-up each step measures over a window. The warm-up (12 s) outlasts the transient of a step's
flash crowd: a thousand players who arrive within seconds sit down at tables that all deal at once,
and for the next few seconds their decisions come in step (measured in docs/performance.md: p99
152 ms right after 2,000 players arrived, 12 ms once they had played 15 s). What the window measures
is a crowd that arrived over time, as players do.

* commands/s (acknowledged commands) and the command-to-push latency (from sending a command to
  receiving the pushed update that reflects it, the one whose version the ack names), p50/p99;
* the server's CPU (% of one core) and its memory per connection (RSS growth over the server before
  anybody connected, divided by every connection: players, spectators, lobby viewers);
* the load client's CPU per command (it has the other core).

The capacity is the largest step where p99 < 50 ms, the server stays under 85% of its core and no
command was refused for rate; the run stops at the first step that misses one of these, and begins
no step (nor a repeated window) that would end past its budget (``--budget``: 230 s for the default
steps, 55 s with ``--quick``), so the whole run stays under 4 minutes (1 with ``--quick``). Last line:
``capacity: <N> players per process at p99 <L> ms (think 1000 ms), <K> KiB per connection``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import heapq
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bench._server import (
    ROOT,
    SAYING_WHERE_FROM,
    ServerProcess,
    app_dir_of,
    checkout,
    cpu_pressure_total,
    described,
    durak_server,
    proc_cpu_split_s,
    proc_switches,
    proc_syscalls,
    revision,
)
from bench.harness import RedisServer, database, print_profile, speed_probe_note, wait_for_file
from bench.reference import SpeedProbe

PY = sys.executable
P99_LIMIT_MS = 50.0
CPU_LIMIT_PCT = 85.0

# A durak update is ``{"type":"update","version":N,"seat":S,"events":[...],"view":{...},"table":{...}}``
# (``app/api/protocol.py``; the server serializes it in this order) and ``legal`` is the view's last
# key (the same facts ``bench.load`` reads).
_UPDATE = b'{"type":"update","version":'
_VIEW = b',"view":'
_TABLE = b',"table":{'
_NO_LEGAL = b'"legal":[]}'
_FINISHED = b'"status":"finished"'
_RECENT = 15  # an ack finds the arrival time of the update it names among the last 16 versions
_COOKIE = re.compile(rb"durak_session=([^;\r\n]+)")
_LENGTH = re.compile(rb"\r\ncontent-length: *(\d+)", re.IGNORECASE)


# ------------------------------------------------------------------------------------- client side


def _pct(values: list[float], p: float) -> float:
    """The ``p`` quantile of sorted ``values`` (nan when empty)."""
    return values[min(len(values) - 1, int(p * len(values)))] if values else float("nan")


class Scheduler:
    """Every player's next action in one heap, and one loop timer armed for the earliest of them.

    ``at(when, fn, arg)`` costs a heap push (and re-arms the one timer only when ``when`` is earlier
    than the armed one); when the timer fires, every entry that is due runs, then the timer is armed
    for the next. A player that no longer wants a queued entry ignores it when it comes (its
    ``due`` token no longer matches): nothing is ever cancelled."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.heap: list[tuple[float, int, Callable[[Any], None], Any]] = []
        self.seq = 0
        self.armed_at = math.inf
        self.handle: asyncio.TimerHandle | None = None
        self.lateness: list[float] | None = None  # while measuring: how late each entry ran (s)

    def at(self, when: float, fn: Callable[[Any], None], arg: Any) -> int:
        self.seq += 1
        heapq.heappush(self.heap, (when, self.seq, fn, arg))
        if when < self.armed_at:
            if self.handle is not None:
                self.handle.cancel()
            self.armed_at = when
            self.handle = self.loop.call_at(when, self._fire)
        return self.seq

    def _fire(self) -> None:
        self.handle, self.armed_at = None, math.inf
        heap = self.heap
        now = self.loop.time()
        limit = now + 0.0005  # within half a millisecond: now (the loop's clock is coarse)
        lateness = self.lateness
        while heap and heap[0][0] <= limit:
            when, _, fn, arg = heapq.heappop(heap)
            if lateness is not None:
                lateness.append(now - when)
            fn(arg)
        if heap:
            self.armed_at = heap[0][0]
            self.handle = self.loop.call_at(self.armed_at, self._fire)


class HttpConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: a request, then its response (``content-length`` bodies
    only, which is what the server sends for the JSON routes used here)."""

    def __init__(self) -> None:
        self.transport: Any = None
        self.buffer = bytearray()
        self.waiter: asyncio.Future[tuple[bytes, bytes]] | None = None
        self.closed = False

    def connection_made(self, transport: Any) -> None:  # uvloop's transports are not asyncio.Transport
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.waiter is None:
            return
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end])
        match = _LENGTH.search(head)
        length = int(match[1]) if match else 0
        if len(self.buffer) < end + 4 + length:
            return
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        del self.buffer[: end + 4 + length]
        waiter, self.waiter = self.waiter, None
        if not waiter.done():
            waiter.set_result((head, body))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError("the server closed the connection"))


class Http:
    """A small pool of keep-alive connections to one server (httpx costs the client more CPU per
    request than the server's whole route)."""

    def __init__(self, host: str, port: int, size: int) -> None:
        self.host, self.port = host, port
        self.origin = f"http://{host}:{port}"
        self.idle: list[HttpConnection] = []
        self.gate = asyncio.Semaphore(size)

    async def _connection(self) -> HttpConnection:
        while self.idle:
            conn = self.idle.pop()
            if not conn.closed:
                return conn
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(HttpConnection, self.host, self.port)
        return conn

    async def post(self, path: str, body: dict[str, Any], cookie: str | None = None) -> tuple[int, bytes, bytes]:
        """(status, head, body); retried on a fresh connection when a kept-alive one was closed."""
        payload = orjson.dumps(body)
        request = (
            f"POST {path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\norigin: {self.origin}\r\n"
            + (f"cookie: durak_session={cookie}\r\n" if cookie else "")
            + f"content-type: application/json\r\ncontent-length: {len(payload)}\r\n\r\n"
        ).encode() + payload
        async with self.gate:
            for attempt in range(3):
                conn = await self._connection()
                conn.waiter = asyncio.get_running_loop().create_future()
                assert conn.transport is not None
                conn.transport.write(request)
                try:
                    head, data = await asyncio.wait_for(conn.waiter, 120)
                except ConnectionError:
                    if attempt == 2:
                        raise
                    continue
                if b"connection: close" in head.lower():
                    conn.closed = True
                    assert conn.transport is not None
                    conn.transport.close()
                else:
                    self.idle.append(conn)
                return int(head[9:12]), head, data
        raise AssertionError("unreachable")

    def close(self) -> None:
        for conn in self.idle:
            if conn.transport is not None:
                conn.transport.close()
        self.idle.clear()


class LobbyViewer(asyncio.Protocol):
    """One ``/api/lobby/stream`` follower: counts what it receives (bytes and events)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.transport: Any = None
        self.snapshot: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: Any) -> None:  # uvloop's transports are not asyncio.Transport
        self.transport = transport
        transport.write(b"GET /api/lobby/stream HTTP/1.1\r\nhost: bench\r\naccept: text/event-stream\r\n\r\n")

    def data_received(self, data: bytes) -> None:
        stats = self.client.stats
        if self.client.measuring:
            stats.lobby_bytes += len(data)
            stats.lobby_events += data.count(b"\nevent: ") + data.startswith(b"event: ")
        if not self.snapshot.done() and b"event: snapshot" in data:
            self.snapshot.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.snapshot.done():
            self.snapshot.set_exception(ConnectionError("the lobby stream closed"))
        elif not self.client.stopping:
            self.client.emit("viewer_lost")


class Player:
    """One websocket: a seated guest (``cookie`` set) or a spectator."""

    __slots__ = (
        "acted",
        "at_end",
        "code",
        "cookie",
        "due",
        "name",
        "outstanding",
        "parts",
        "raw",
        "recv_at",
        "recv_version",
        "seat",
        "sent_at",
        "server",
        "throwing",
        "version",
        "wants_rematch",
        "welcome",
        "ws",
    )

    def __init__(self, name: str, cookie: str | None, seat: int | None, server: Http) -> None:
        self.name = name
        self.cookie = cookie
        self.seat = seat
        self.server = server  # the server process this player's connection (and REST calls) go to
        self.code = ""
        self.ws: Any = None  # the picows transport
        self.welcome: asyncio.Future[None] | None = None
        self.parts: list[bytes] | None = None  # a fragmented message being assembled
        self.raw: bytes | None = None  # the latest update; its view is parsed only to act on it
        self.version = -1
        self.acted = -1  # the version this player last decided on
        self.due = 0  # the scheduler entry this player waits for (0: none)
        self.outstanding: str | None = None
        self.sent_at = 0.0
        self.at_end = False  # the latest update shows the match finished
        self.throwing = False  # thinking about a throw-in it chose to make
        self.wants_rematch = False  # ... and this player has not asked for the next one yet
        self.recv_version = [-1] * (_RECENT + 1)
        self.recv_at = [0.0] * (_RECENT + 1)


@dataclass
class Stats:
    messages: int = 0
    bytes: int = 0
    acks: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    unmatched_acks: int = 0
    matches: int = 0
    lobby_bytes: int = 0
    lobby_events: int = 0
    lateness: list[float] = field(default_factory=list)  # the client's own delay in acting (s)


_LINK: Any = None


def _link_class() -> Any:
    """The picows listener of one connection; every message is handled in its frame callback."""
    global _LINK
    if _LINK is not None:
        return _LINK
    from picows import WSListener

    from bench._client import picows_messages

    read = picows_messages()

    class Link(WSListener):  # type: ignore[misc]
        def __init__(self, client: Client, player: Player) -> None:
            super().__init__()
            self.client = client
            self.player = player

        def on_ws_frame(self, transport: Any, frame: Any) -> None:
            player = self.player
            try:
                raw = read(player, transport, frame)
                if raw is not None:
                    self.client.on_message(player, raw)
            except Exception as exc:
                if not self.client.stopping:
                    self.client.emit("player_error", player=player.name, error=repr(exc))
                transport.disconnect()

        def on_ws_disconnected(self, transport: Any) -> None:
            player = self.player
            if player.welcome is not None and not player.welcome.done():
                player.welcome.set_exception(ConnectionError(f"{player.name}: closed before the welcome"))
            elif not self.client.stopping:
                self.client.emit("player_error", player=player.name, error="connection closed")

    _LINK = Link
    return Link


class Client:
    """Every simulated player, spectator and lobby viewer, in one process, driven by the commands
    the orchestrator writes on stdin (one JSON object a line)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from bench._client import choose, command

        self.args = args
        self.servers: list[Http] = []  # tables are opened on these in turn
        for url in args.url:
            host, port = url.rstrip("/").split("//", 1)[1].rsplit(":", 1)
            self.servers.append(Http(host, int(port), args.http_connections))
        self.rng = random.Random(args.seed)
        self.think_s = args.think_ms / 1000
        self.choose = choose
        self.command = command
        self.stats = Stats()
        self.measuring = False
        self.stopping = False
        self.players: list[Player] = []
        self.spectators: list[Player] = []
        self.viewers: list[LobbyViewer] = []
        self.tables = 0
        self.guests = 0
        self.signed: list[str] = []  # cookies of guests signed in ahead, not seated yet
        self.ids = 0
        self.loop = asyncio.get_running_loop()
        self.scheduler = Scheduler(self.loop)
        self.text_type: Any = None
        self.clock = time.perf_counter
        self.profile: Any = None

    def emit(self, event: str, **data: Any) -> None:
        sys.stdout.write(json.dumps({"event": event, **data}) + "\n")
        sys.stdout.flush()

    # --- messages

    def on_message(self, player: Player, raw: bytes) -> None:
        now = self.clock()
        measuring = self.measuring
        if measuring:
            stats = self.stats
            stats.messages += 1
            stats.bytes += len(raw)
        if raw.startswith(_UPDATE):
            if player.cookie is None:
                return  # a spectator only listens
            version = int(raw[27 : raw.index(b",", 27)])
            if version <= player.version:
                return
            player.version = version
            player.raw = raw
            slot = version & _RECENT
            player.recv_version[slot] = version
            player.recv_at[slot] = now
            if _FINISHED in raw and orjson.loads(raw)["table"]["status"] == "finished":
                if not player.at_end:  # the match just ended: think, then ask for the next one
                    player.at_end = player.wants_rematch = True
                    if measuring and player.seat == 0:
                        self.stats.matches += 1
                    if player.due == 0:
                        self.think(player)
                return
            player.at_end = player.wants_rematch = False
            if player.outstanding is None and player.due == 0:
                self.think(player)
            return
        message = orjson.loads(raw)
        kind = message["type"]
        if kind == "ack" or kind == "error":
            if message.get("id") != player.outstanding:
                return
            player.outstanding = None
            if measuring:
                stats = self.stats
                if kind == "ack":
                    stats.acks += 1
                    acked = message.get("version")
                    slot = acked & _RECENT if isinstance(acked, int) else 0
                    pushed = player.recv_at[slot] if player.recv_version[slot] == acked else None
                    if pushed is not None and pushed >= player.sent_at:
                        stats.latencies.append(pushed - player.sent_at)
                    else:
                        stats.unmatched_acks += 1
                else:
                    code = message["code"]
                    stats.errors[code] = stats.errors.get(code, 0) + 1
            if player.due == 0:
                self.think(player)
        elif kind == "welcome":
            player.version = max(player.version, int(message["version"]))
            if player.welcome is not None and not player.welcome.done():
                player.welcome.set_result(None)

    def think(self, player: Player) -> None:
        """If the player has something to decide on its latest update, decide after thinking."""
        raw = player.raw
        if raw is None or player.version <= player.acted or self.stopping:
            return
        player.throwing = False
        if not player.wants_rematch:
            end = raw.rfind(_TABLE)
            if end > 0 and raw.endswith(_NO_LEGAL, 0, end):
                return
            if not _deciding(raw, player.seat):
                # A throw-in on offer: taken with its probability, decided now, so that the
                # updates nobody acts on cost no parsing (``choose`` then need not roll again).
                if self.rng.random() >= self.args.throw_in_p:
                    player.acted = player.version
                    return
                player.throwing = True
        delay = self.rng.uniform(0.0, 2.0 * self.think_s)
        player.due = self.scheduler.at(self.loop.time() + delay, self.decide, player)

    def decide(self, player: Player) -> None:
        """A player's thinking is over: act on the latest update (which may be newer than the one
        that started the thinking)."""
        player.due = 0
        if player.outstanding is not None or self.stopping:
            return
        raw = player.raw
        assert raw is not None
        version = player.version
        player.acted = version
        if player.wants_rematch:
            player.wants_rematch = False
            payload: dict[str, Any] = {"type": "rematch"}
        else:
            view = _view_of(raw)
            if view is None or not view.get("legal"):
                return
            action = self.choose(view, self.rng, throw_in_p=1.0 if player.throwing else self.args.throw_in_p)
            if action is None:
                return
            payload = self.command(action, "", version)
        self.ids += 1
        payload["id"] = player.outstanding = f"c{self.ids}"
        player.sent_at = self.clock()
        player.ws.send(self.text_type, orjson.dumps(payload))

    # --- growing

    def server_of(self, table: int, seat: int | None) -> Http:
        """The owner of table ``table`` (tables go to the servers in turn); with ``--split``, the
        second half of its seats (and its spectator) connect to the next server."""
        index = table
        if self.args.split and (seat is None or seat >= self.args.seats // 2):
            index += 1
        return self.servers[index % len(self.servers)]

    async def guest(self, server: Http, number: int) -> str:
        """A guest signs in (``POST /api/auth/guest``, as in ``bench.load``): its session cookie."""
        status, head, body = await server.post("/api/auth/guest", {"name": f"cap{number}"})
        if status != 200:
            raise RuntimeError(f"guest sign-in: {status} {body[:200]!r}")
        found = _COOKIE.search(head)
        assert found is not None, head
        return found[1].decode()

    async def sign_in_ahead(self, count: int, urls: list[str]) -> dict[str, float]:
        """Sign ``count`` guests in now, spread over ``urls`` (any process of the deployment signs
        guests in: the cookie is signed with the shared key), for the steps to seat later."""
        t0 = time.perf_counter()
        servers = []
        for url in urls:
            host, port = url.rstrip("/").split("//", 1)[1].rsplit(":", 1)
            servers.append(Http(host, int(port), self.args.http_connections))
        first = self.guests
        self.guests += count
        cookies = await asyncio.gather(*(self.guest(servers[i % len(servers)], first + i) for i in range(count)))
        self.signed.extend(cookies)
        for server in servers:
            server.close()
        return {"sign_in_s": time.perf_counter() - t0, "guests": count}

    async def sign_in(self, first_table: int, tables: int) -> list[str]:
        seats = self.args.seats
        ahead = min(len(self.signed), tables * seats)
        cookies, self.signed = self.signed[:ahead], self.signed[ahead:]
        first = self.guests
        self.guests += tables * seats - ahead
        cookies += await asyncio.gather(
            *(
                self.guest(self.server_of(first_table + index // seats, index % seats), first + index)
                for index in range(ahead, tables * seats)
            )
        )
        return cookies

    async def connect(self, player: Player, code: str) -> None:
        from picows import ws_connect

        base = player.server.origin
        headers = {"origin": base}
        if player.cookie is not None:
            headers["cookie"] = f"durak_session={player.cookie}"
        player.code = code
        player.welcome = self.loop.create_future()
        link = _link_class()
        player.ws, _ = await ws_connect(
            lambda: link(self, player),
            f"ws{base[4:]}/ws/tables/{code}",
            extra_headers=headers,
            max_frame_size=2**20,
            websocket_handshake_timeout=120,
            use_aiofastnet=False,
        )
        player.ws.send(self.text_type, b'{"type":"hello"}')
        await asyncio.wait_for(player.welcome, 120)

    async def open_table(self, number: int, cookies: list[str], gate: asyncio.Semaphore) -> None:
        """A public four-seat table: opened by its first player, joined by three, every player and
        (every fourth table) a spectator connected; the fourth join starts the match."""
        async with gate:
            seats = self.args.seats
            body = {"seats": seats, "timer": self.args.timer, "bot_delay_ms": 0, "name": f"capacity {number}"}
            status, _, data = await self.server_of(number, 0).post("/api/tables", body, cookies[0])
            if status != 201:
                raise RuntimeError(f"open a table: {status} {data[:200]!r}")
            created = orjson.loads(data)
            code = created["code"]
            players = [Player(f"t{number}s{i}", c, i, self.server_of(number, i)) for i, c in enumerate(cookies)]
            for player in players[:-1]:
                await self.join(code, player)
            spectator = number % self.args.tables_per_spectator == 0
            watchers = [Player(f"t{number}w", None, None, self.server_of(number, None))] if spectator else []
            await asyncio.gather(*(self.connect(p, code) for p in players))
            await asyncio.gather(*(self.connect(w, created["watch_code"]) for w in watchers))
            self.players.extend(players)
            self.spectators.extend(watchers)
            await self.join(code, players[-1])

    async def join(self, code: str, player: Player) -> None:
        path = f"/api/tables/{code}/join"
        status, _, data = await player.server.post(path, {"seat": player.seat}, player.cookie)
        if status != 200:
            raise RuntimeError(f"join: {status} {data[:200]!r}")

    async def grow(self, players: int) -> dict[str, float]:
        seats = self.args.seats
        new_tables = max(0, players // seats - self.tables)
        t0, cpu0 = time.perf_counter(), time.process_time()
        first = self.tables
        cookies = await self.sign_in(first, new_tables)
        t1 = time.perf_counter()
        gate = asyncio.Semaphore(self.args.parallel_tables)
        self.tables += new_tables
        await asyncio.gather(
            *(self.open_table(first + i, cookies[i * seats : (i + 1) * seats], gate) for i in range(new_tables))
        )
        t2 = time.perf_counter()
        gc.collect()
        gc.freeze()  # what setup made stays; the collector need not walk it again
        return {
            "sign_in_s": t1 - t0,
            "tables_s": t2 - t1,
            "client_cpu_s": time.process_time() - cpu0,
            "players": len(self.players),
            "spectators": len(self.spectators),
            "tables": self.tables,
        }

    async def add_viewers(self, count: int) -> None:
        host, port = self.servers[0].host, self.servers[0].port  # the lobby is every process's
        for _ in range(count):
            _, viewer = await self.loop.create_connection(lambda: LobbyViewer(self), host, port)
            self.viewers.append(viewer)
        await asyncio.gather(*(v.snapshot for v in self.viewers))

    # --- measuring

    def window_start(self) -> None:
        self.stats = Stats()
        self.scheduler.lateness = self.stats.lateness
        self.measuring = True
        self.mark = (time.perf_counter(), time.process_time(), os.times())
        if os.environ.get("BENCH_CLIENT_PROFILE"):  # where the client's own CPU goes (CPU clock)
            import cProfile

            self.profile = cProfile.Profile(time.thread_time)
            self.profile.enable()

    def window_end(self) -> dict[str, Any]:
        self.measuring = False
        self.scheduler.lateness = None
        if self.profile is not None:
            self.profile.disable()
            self.profile.dump_stats(os.environ["BENCH_CLIENT_PROFILE"])
            self.profile = None
        t0, cpu0, times0 = self.mark
        t1, cpu1, times1 = time.perf_counter(), time.process_time(), os.times()
        window = t1 - t0
        stats = self.stats
        lat = sorted(stats.latencies)
        late = sorted(stats.lateness)

        def pct(p: float) -> float:
            return _pct(lat, p) * 1000

        return {
            "window_s": window,
            "players": len(self.players),
            "spectators": len(self.spectators),
            "viewers": len(self.viewers),
            "commands_per_s": stats.acks / window,
            "commands": stats.acks,
            "errors": stats.errors,
            "unmatched_acks": stats.unmatched_acks,
            "messages_per_s": stats.messages / window,
            "mean_message_bytes": stats.bytes / max(1, stats.messages),
            "matches_per_s": stats.matches / window,
            "lobby_bytes_per_s": stats.lobby_bytes / window,
            "lobby_events_per_s": stats.lobby_events / window,
            "latency_ms": {
                "p50": pct(0.50),
                "p90": pct(0.90),
                "p99": pct(0.99),
                "max": lat[-1] * 1000 if lat else float("nan"),
            },
            # How late the client acted on its own schedule (its loop busy with other players): a
            # late client sends its due players together, so the server sees bursts of commands.
            "client_lateness_ms": {
                "p50": _pct(late, 0.50) * 1000,
                "p99": _pct(late, 0.99) * 1000,
            },
            "client_cpu_pct": 100 * (cpu1 - cpu0) / window,
            "client_cpu_us_per_command": 1e6 * (cpu1 - cpu0) / max(1, stats.acks),
            "client_sys_share": (times1.system - times0.system) / max(1e-9, cpu1 - cpu0),
        }

    async def stop(self) -> None:
        self.stopping = True
        links = [p.ws for p in (*self.players, *self.spectators) if p.ws is not None]
        for ws in links:
            with contextlib.suppress(Exception):
                ws.send_close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.gather(*(ws.wait_disconnected() for ws in links)), 10)
        for ws in links:
            ws.disconnect()
        for viewer in self.viewers:
            if viewer.transport is not None:
                viewer.transport.close()
        for server in self.servers:
            server.close()

    async def run(self) -> None:
        from picows import WSMsgType

        self.text_type = WSMsgType.TEXT
        reader = asyncio.StreamReader()
        await self.loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        self.emit("ready")
        while True:
            line = await reader.readline()
            if not line:
                break
            order = json.loads(line)
            what = order["cmd"]
            if what == "viewers":
                await self.add_viewers(order["count"])
                self.emit("viewers", count=len(self.viewers))
            elif what == "sign_in":
                self.emit("signed_in", **await self.sign_in_ahead(order["count"], order["urls"]))
            elif what == "grow":
                self.emit("grown", **await self.grow(order["players"]))
            elif what == "window_start":
                self.window_start()
                self.emit("window_started")
            elif what == "window_end":
                self.emit("result", result=self.window_end())
            elif what == "stop":
                break
        await self.stop()
        self.emit("stopped")


_DECISION = b'"decision":{"kind":"'
_SEATS = b'"seats":['


def _deciding(raw: bytes, seat: int | None) -> bool:
    """Whether the match waits for ``seat`` (``view.decision.seats``), read from the bytes."""
    start = raw.find(_DECISION)
    if start < 0 or seat is None:
        return True  # not found: let ``choose`` read the view
    first = raw.find(_SEATS, start) + len(_SEATS)
    return str(seat).encode() in raw[first : raw.find(b"]", first)].split(b",")


def _view_of(raw: bytes) -> dict[str, Any] | None:
    """The view of a durak update, parsing only that part."""
    end = raw.rfind(_TABLE)
    start = raw.find(_VIEW)
    if 0 < start < end:
        with contextlib.suppress(orjson.JSONDecodeError):
            view: dict[str, Any] | None = orjson.loads(raw[start + len(_VIEW) : end])
            return view
    found: dict[str, Any] | None = orjson.loads(raw).get("view")
    return found


def client_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench.capacity client")
    parser.add_argument("--url", required=True, action="append", help="a server; repeat to spread the tables")
    parser.add_argument(
        "--split", action="store_true", help="half of each table's seats (and its spectator) on the next server"
    )
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--think-ms", type=float, default=1000)
    parser.add_argument("--throw-in-p", type=float, default=0.2)
    parser.add_argument("--timer", type=int, default=30)
    parser.add_argument("--tables-per-spectator", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--http-connections", type=int, default=16)
    parser.add_argument("--parallel-tables", type=int, default=48)
    args = parser.parse_args(argv)
    import uvloop

    gc.set_threshold(50_000, 50, 100)  # the client's garbage is short-lived messages

    async def main() -> None:
        await Client(args).run()

    uvloop.run(main())


# ------------------------------------------------------------------------------------- orchestrator


@dataclass
class Step:
    players: int
    result: dict[str, Any]
    server_cpu_pct: float
    rss_kib: int
    kib_per_connection: float
    grow: dict[str, float]
    loopstats: dict[str, Any] | None = None

    @property
    def refused_for_rate(self) -> int:
        return int(self.result["errors"].get("rate_limited", 0))

    @property
    def server_ms_per_command(self) -> float:
        return 10 * self.server_cpu_pct / max(1e-9, self.result["commands_per_s"])

    @property
    def passed(self) -> bool:
        p99 = self.result["latency_ms"]["p99"]
        return p99 < P99_LIMIT_MS and self.server_cpu_pct < CPU_LIMIT_PCT and self.refused_for_rate == 0


class ClientProcess:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def say(self, **order: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(order) + "\n")
        self.proc.stdin.flush()

    def wait_for(self, kind: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            event = json.loads(line)
            if event["event"] == kind:
                return event
            if event["event"] in ("player_error", "viewer_lost"):
                print(f"  client: {event}", file=sys.stderr)
        raise RuntimeError(f"the client ended before {kind!r} (exit {self.proc.wait()})")

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self) -> None:
        """Ask the client to stop, give it 30 s to end, then kill it."""
        with contextlib.suppress(Exception):
            self.say(cmd="stop")
            self.wait_for("stopped")
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(30)
        if self.proc.poll() is None:
            self.proc.kill()


@dataclass
class Window:
    """One measured window: the client's figures and the CPU of the servers (and redis-server)."""

    result: dict[str, Any]
    seconds: float
    server_cpu_pct: list[float]  # each server process, % of one core
    redis_cpu_pct: float | None
    cpu_pressure_pct: float | None  # time some task waited for a CPU, machine-wide (Linux PSI)
    machine_ms: float | None = None  # the speed probe's CPU ms per reference match (bench/reference.py)


def run_delay_s(pid: int) -> float:
    """Seconds the threads of a process have spent runnable but waiting for a CPU (schedstat)."""
    total = 0
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[1])
    return total / 1e9


def measure_window(
    client: ClientProcess, server_pids: list[int], duration: float, redis_pid: int | None, probe_cpu: int | None = None
) -> Window:
    """Tell the client to start counting, read the processes' CPU clocks, wait ``duration`` (while
    the speed probe times the machine on ``probe_cpu``), read them again and collect the client's
    figures."""
    client.say(cmd="window_start")
    client.wait_for("window_started")
    split0 = [proc_cpu_split_s(pid) for pid in server_pids]
    calls0 = [proc_syscalls(pid) for pid in server_pids]
    switches0 = [proc_switches(pid) for pid in server_pids]
    cpu0 = [sum(split) for split in split0]
    delay0 = [run_delay_s(pid) for pid in server_pids]
    redis0 = sum(proc_cpu_split_s(redis_pid)) if redis_pid else 0.0
    t0, pressure0 = time.perf_counter(), cpu_pressure_total()
    with SpeedProbe(probe_cpu) as probe:
        time.sleep(duration)
    split1 = [proc_cpu_split_s(pid) for pid in server_pids]
    calls1 = [proc_syscalls(pid) for pid in server_pids]
    switches1 = [proc_switches(pid) for pid in server_pids]
    cpu1 = [sum(split) for split in split1]
    delay1 = [run_delay_s(pid) for pid in server_pids]
    redis1 = sum(proc_cpu_split_s(redis_pid)) if redis_pid else 0.0
    t1, pressure1 = time.perf_counter(), cpu_pressure_total()
    client.say(cmd="window_end")
    result: dict[str, Any] = client.wait_for("result")["result"]
    seconds = t1 - t0
    kernel = sum(b[1] - a[1] for a, b in zip(split0, split1, strict=True))
    result["server_kernel_share"] = kernel / max(1e-9, sum(cpu1) - sum(cpu0))
    commands = max(1, result["commands"])
    result["server_syscalls_per_command"] = [
        sum(b[i] - a[i] for a, b in zip(calls0, calls1, strict=True)) / commands for i in (0, 1)
    ]
    # How often the servers' event loops were switched out (mostly: went to sleep, then woke for
    # what arrived), all servers together: a table split over processes wakes each of them.
    result["server_switches_per_command"] = sum(b - a for a, b in zip(switches0, switches1, strict=True)) / commands
    # Time the servers were ready to run but another process had their CPU: on a shared machine,
    # where the latency a busy neighbour adds shows.
    result["server_waited_pct"] = [100 * (b - a) / seconds for a, b in zip(delay0, delay1, strict=True)]
    pressure = None
    if pressure0 is not None and pressure1 is not None:
        pressure = 100 * (pressure1 - pressure0) / 1e6 / seconds
    return Window(
        result=result,
        seconds=seconds,
        server_cpu_pct=[100 * (b - a) / seconds for a, b in zip(cpu0, cpu1, strict=True)],
        redis_cpu_pct=100 * (redis1 - redis0) / seconds if redis_pid else None,
        cpu_pressure_pct=pressure,
        machine_ms=probe.ms_per_match,
    )


def _steps(args: argparse.Namespace) -> list[int]:
    if args.steps:
        return [int(x) for x in args.steps.split(",")]
    if args.quick:
        return [250, 500, 1000]
    return [1000, 2000, 4000, 6000, 8000, 10000]


@contextlib.contextmanager
def _services(args: argparse.Namespace, workdir: Path) -> Any:
    """The database URL and broker URL the server runs on (and their own processes, if any)."""
    with contextlib.ExitStack() as stack:
        if args.database == "postgres":
            database_url = stack.enter_context(database(workdir))
            if database_url.startswith("sqlite"):
                raise SystemExit("bench.capacity --database postgres: PostgreSQL is not reachable on 127.0.0.1:5432")
            from app.db import migrate

            migrate.upgrade_sync(database_url)
        else:
            database_url = f"sqlite+aiosqlite:///{workdir / 'durak.sqlite3'}"
        redis_pid = None
        if args.broker == "redis":
            redis = stack.enter_context(RedisServer(workdir))
            broker_url = redis.url("unix")
            assert redis.proc is not None
            redis_pid = redis.proc.pid
        else:
            broker_url = "memory://"
        yield database_url, broker_url, redis_pid


def pin(pid: int, cpu: int | None) -> None:
    """Keep a process (every thread it has now, and those it starts later) on one CPU."""
    if cpu is None:
        return
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(task), {cpu})


def _cpus(args: argparse.Namespace) -> tuple[int | None, int | None]:
    """The CPUs of the server and of the load (client, redis-server): the first two this process
    may use, unless ``--no-pin`` or there is only one. On loopback a server's write to a socket
    wakes the reader; on a shared CPU the woken client then takes the CPU from the server in the
    middle of its work, which no remote client does."""
    allowed = sorted(os.sched_getaffinity(0))
    if args.no_pin or len(allowed) < 2:
        return None, None
    return allowed[0], allowed[1]


def run(args: argparse.Namespace, tree: Path = ROOT, side: str | None = None) -> list[Step]:
    """The steps, on a server (and its replica) running the code of ``tree``; ``side``: the side of
    an ``--against`` comparison, whose servers say where their ``app`` comes from, which must be
    ``tree``."""
    args.run_started = time.perf_counter()  # the budget is each run's
    workdir = Path(tempfile.mkdtemp(prefix="durak-capacity-"))
    steps: list[Step] = []
    try:
        with _services(args, workdir) as (database_url, broker_url, redis_pid):
            args.database_url = database_url
            extra_env = {
                "DURAK_DATABASE_URL": database_url,
                "DURAK_BROKER_URL": broker_url,
                "DURAK_LOG_LEVEL": "warning",
                "DURAK_MAX_WAITING_TABLES_PER_IP": "1000000",
                "DURAK_MAX_TABLE_SOCKETS_PER_IP": "1000000",
                "DURAK_MAX_LOBBY_STREAMS_PER_IP": "1000000",
                "DURAK_GUESTS_PER_IP": "1000000",
            }
            argv = None
            if args.loopstats or args.cprofile is not None or args.patch or args.sample:
                argv = [PY, "-m", "bench.instrumented_server"]
                extra_env["BENCH_PATCHES"] = args.patch
                if args.sample:
                    extra_env["BENCH_SAMPLE"] = str(workdir / "sample.json")
                if args.loopstats:
                    extra_env["BENCH_LOOPSTATS"] = str(workdir / "loopstats.json")
                if args.cprofile is not None:
                    extra_env["BENCH_CPROFILE_CPU"] = "1"
                    extra_env["BENCH_CPROFILE"] = str(args.cprofile.resolve())
            if side is not None:
                argv = [PY, "-c", SAYING_WHERE_FROM]  # both sides started alike, saying from where
            server = durak_server(workdir, extra_env=extra_env, argv=argv, tree=tree).spawn()
            server_cpu, client_cpu = _cpus(args)
            pin(server.pid, server_cpu)  # before it starts any thread: they inherit it
            if redis_pid is not None:
                pin(redis_pid, client_cpu)
            server.wait_ready(timeout=60)  # (it applies the migrations: the replica comes after)
            # A second process of the same deployment (same database, broker and key) on the load's
            # CPU, to sign guests in alongside the server: a sign-in is the costliest request of all,
            # and without help the setup would take most of the run.
            (workdir / "replica").mkdir()
            replica_argv = [PY, "-c", SAYING_WHERE_FROM] if side is not None else None
            replica = durak_server(workdir / "replica", extra_env=extra_env, argv=replica_argv, tree=tree).spawn()
            pin(replica.pid, client_cpu)
            client = ClientProcess(
                [
                    *(PY, "-m", "bench.capacity", "client", "--url", server.base_url),
                    *("--think-ms", str(args.think_ms), "--seed", str(args.seed)),
                ]
            )
            pin(client.pid, client_cpu)
            try:
                replica.wait_ready(timeout=60)
                for process in (server, replica) if side is not None else ():
                    if app_dir_of(process) != tree / "app":
                        raise RuntimeError(f"the {side} server runs the app of {app_dir_of(process)}, not {tree}")
                steps = _drive(args, server, client, workdir, redis_pid, replica)
            except Exception:
                print(f"  the server's log ends:\n{server.log_tail(60)}", file=sys.stderr)
                raise
            finally:
                replica.stop()
                client.stop()
                server.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return steps


def _drive(
    args: argparse.Namespace,
    server: ServerProcess,
    client: ClientProcess,
    workdir: Path,
    redis_pid: int | None,
    replica: ServerProcess,
) -> list[Step]:
    client.wait_for("ready")
    rss_base = server.rss_kib()
    client.say(cmd="viewers", count=args.viewers)
    client.wait_for("viewers")
    steps: list[Step] = []
    for players in _steps(args):
        had = steps[-1].players if steps else 0
        if steps and args.budget:
            grow_s = _growth_estimate_s(steps, players)
            if _run_elapsed(args) + grow_s + args.warmup + args.duration + TEARDOWN_S > args.budget:
                print(
                    f"  {players} players not measured: growing to them would take about {grow_s:.0f} s, and the "
                    f"step would end past the run's budget of {args.budget:g} s (--budget 0 measures every step)",
                    flush=True,
                )
                break
        if args.loopstats:
            os.kill(server.pid, signal.SIGUSR1)
        started = time.perf_counter()
        client.say(cmd="sign_in", count=max(0, players - had), urls=[server.base_url, replica.base_url])
        signed = client.wait_for("signed_in")
        before = server.cpu_s()
        client.say(cmd="grow", players=players)
        grown = client.wait_for("grown")
        added = max(1, grown["players"] - had)
        grown["sign_in_s"] = signed["sign_in_s"]
        grown["server_ms_per_player"] = 1000 * (server.cpu_s() - before) / added
        grown["seconds"] = time.perf_counter() - started
        if args.loopstats:
            with contextlib.suppress(OSError):
                (workdir / "loopstats.json").unlink()
            os.kill(server.pid, signal.SIGUSR2)
            wait_for_file(workdir / "loopstats.json")
            try:
                stats = json.loads((workdir / "loopstats.json").read_text())
            except (OSError, ValueError) as exc:
                print(f"  no loop stats: {exc}", file=sys.stderr)
            else:
                lag = stats["loop_lag_ms"]
                print(
                    f"  while growing to {players}: loop lag p50 {lag['p50']:.1f} / p99 {lag['p99']:.1f} / "
                    f"max {lag['max']:.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )
                _print_stalls(stats)
        if args.verbose:
            print(
                f"  [{_elapsed():6.1f}s] {players} players: signed in in {grown['sign_in_s']:.1f} s "
                f"(on two processes), tables opened, joined and connected in {grown['tables_s']:.1f} s; server CPU "
                f"{grown['server_ms_per_player']:.1f} ms per player seated (while the others play), "
                f"client CPU {grown['client_cpu_s']:.1f} s",
                file=sys.stderr,
            )
        time.sleep(args.warmup)
        step = _measure_step(args, server, client, workdir, redis_pid, rss_base, grown)
        for _ in range(args.retries):
            # A window in which the machine's other work kept the server off its CPU says little
            # about the server: measure again (the players keep playing), keep the best window.
            if step.passed or step.result["server_waited_pct"][0] < WAITED_RETRY_PCT:
                break
            if args.budget and _run_elapsed(args) + args.duration + 2 > args.budget:
                print(f"         (no window measured again: the run's budget is {args.budget:g} s)", flush=True)
                break
            print(
                f"         (the server waited for its CPU {step.result['server_waited_pct'][0]:.0f}% of that window: "
                "measuring again)",
                flush=True,
            )
            again = _measure_step(args, server, client, workdir, redis_pid, rss_base, grown)
            if again.passed or again.result["latency_ms"]["p99"] < step.result["latency_ms"]["p99"]:
                step = again
        steps.append(step)
        if not step.passed and not args.keep_going:
            break
    return steps


START = time.perf_counter()
TEARDOWN_S = 5.0  # stopping the server, its replica and the client at the end of a run


def _growth_estimate_s(steps: list[Step], players: int) -> float:
    """How long growing from the last step to ``players`` will take: as long per player as the last
    growth, scaled by how much of the server's core the players already there leave free (seating
    players on a busy server is slower: 2,000 more took 44 s at 53% and 101 s at 77% of the core)."""
    last = steps[-1]
    before = steps[-2] if len(steps) > 1 else None
    per_player = last.grow["seconds"] / max(1, last.players - (before.players if before else 0))
    free_then = 1 - min(0.95, (before.server_cpu_pct if before else 0.0) / 100)
    free_now = 1 - min(0.95, last.server_cpu_pct / 100)
    return per_player * (players - last.players) * free_then / free_now


def _elapsed() -> float:
    return time.perf_counter() - START


def _run_elapsed(args: argparse.Namespace) -> float:
    """Seconds since this run began (``--against`` makes two or more runs, each with its budget)."""
    return time.perf_counter() - float(getattr(args, "run_started", START))


WAITED_RETRY_PCT = 5.0  # a step missed while its server waited this long for its CPU is measured again


def _measure_step(
    args: argparse.Namespace,
    server: ServerProcess,
    client: ClientProcess,
    workdir: Path,
    redis_pid: int | None,
    rss_base: int,
    grown: dict[str, Any],
) -> Step:
    """One window at the current number of players, printed."""
    if args.loopstats or args.cprofile is not None or args.sample:
        os.kill(server.pid, signal.SIGUSR1)
    database0 = _database_counters(args)
    window = measure_window(client, [server.pid], args.duration, redis_pid, _cpus(args)[0])
    result = window.result
    database1 = _database_counters(args)
    if database0 and database1:
        result["database"] = {key: (database1[key] - database0[key]) / window.seconds for key in database0}
    loopstats = None
    if args.loopstats or args.cprofile is not None or args.sample:
        with contextlib.suppress(OSError):
            (workdir / "loopstats.json").unlink()
        os.kill(server.pid, signal.SIGUSR2)
        wait_for_file(workdir / "loopstats.json" if args.loopstats else None)
        if args.sample:
            _print_sample(workdir / "sample.json", result["players"])
        if args.loopstats:
            with contextlib.suppress(OSError, ValueError):
                loopstats = json.loads((workdir / "loopstats.json").read_text())
    rss = server.rss_kib()
    connections = result["players"] + result["spectators"] + result["viewers"]
    result["redis_cpu_pct"] = window.redis_cpu_pct
    result["cpu_pressure_pct"] = window.cpu_pressure_pct
    result["machine_ms"] = window.machine_ms
    step = Step(
        players=result["players"],
        result=result,
        server_cpu_pct=window.server_cpu_pct[0],
        rss_kib=rss,
        kib_per_connection=(rss - rss_base) / max(1, connections),
        grow=grown,
        loopstats=loopstats,
    )
    _print_step(step)
    if args.cprofile is not None:
        print_profile(args.cprofile, f"the server at {step.players} players")
    return step


def _print_step(step: Step) -> None:
    r = step.result
    lat = r["latency_ms"]
    errors = ", ".join(f"{k} {v}" for k, v in sorted(r["errors"].items())) or "none"
    verdict = "ok" if step.passed else "over"
    pressure = r.get("cpu_pressure_pct")
    print(
        f"  {step.players:6d} players ({r['spectators']} spectators, {r['viewers']} lobby viewers): "
        f"{r['commands_per_s']:6.0f} commands/s, "
        f"p50 {lat['p50']:.1f} / p99 {lat['p99']:.1f} / max {lat['max']:.0f} ms, "
        f"server CPU {step.server_cpu_pct:.0f}% ({step.server_ms_per_command:.2f} ms per command, "
        f"{100 * r['server_kernel_share']:.0f}% of it in the kernel; "
        f"{r['server_syscalls_per_command'][1]:.1f} write and {r['server_syscalls_per_command'][0]:.1f} read "
        "system calls per command), "
        f"{step.kib_per_connection:.1f} KiB per connection, client {r['client_cpu_us_per_command']:.0f} us per command "
        f"({r['client_cpu_pct']:.0f}% CPU, acting late by p50 {r['client_lateness_ms']['p50']:.1f} / "
        f"p99 {r['client_lateness_ms']['p99']:.1f} ms); refused: {errors}; "
        + (f"redis {r['redis_cpu_pct']:.0f}%; " if r.get("redis_cpu_pct") is not None else "")
        + f"{r['matches_per_s']:.1f} matches/s, lobby {r['lobby_events_per_s'] / max(1, r['viewers']):.1f} events/s "
        f"per viewer; the server waited for its CPU {r['server_waited_pct'][0]:.0f}% of the window "
        f"(machine CPU pressure {'n/a' if pressure is None else f'{pressure:.0f}%'}; "
        f"{speed_probe_note(r.get('machine_ms'))}) [{verdict}]",
        flush=True,
    )
    database = r.get("database")
    if database is not None:
        matches = max(1e-9, r["matches_per_s"])
        print(
            f"         PostgreSQL: {database['commits']:.0f} commits/s, rows inserted {database['inserted']:.0f}/s, "
            f"updated {database['updated']:.0f}/s ({database['commits'] / matches:.1f} commits and "
            f"{database['inserted'] / matches:.0f} rows inserted per finished match)",
            flush=True,
        )
    if step.loopstats is not None:
        _print_stalls(step.loopstats)
        lag = step.loopstats["loop_lag_ms"]
        gcs = step.loopstats["gc"]
        print(
            f"         loop lag p50 {lag['p50']:.1f} / p99 {lag['p99']:.1f} / max {lag['max']:.1f} ms "
            f"({lag['over_20ms']} over 20 ms); GC gen0 {gcs['0']['count']} x, max {gcs['0']['max_ms']:.0f} ms; "
            f"gen1 {gcs['1']['count']} x, max {gcs['1']['max_ms']:.0f} ms; "
            f"gen2 {gcs['2']['count']} x, max {gcs['2']['max_ms']:.0f} ms; "
            f"{step.loopstats['gc_objects_tracked']} objects tracked, {step.loopstats['gc_objects_frozen']} frozen",
            flush=True,
        )
        by_type = step.loopstats.get("tracked_by_type") or {}
        kinds = ", ".join(f"{name} {count}" for name, count in by_type.items())
        print(f"         tracked by type: {kinds}", flush=True)


def _database_counters(args: argparse.Namespace) -> dict[str, int] | None:
    """PostgreSQL's counters for the run's database (transactions, rows written), if it is one."""
    if not args.database_url.startswith("postgresql"):
        return None
    import psycopg

    time.sleep(0.6)  # PostgreSQL publishes a backend's counters within a second
    url = args.database_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit, tup_inserted, tup_updated, tup_deleted FROM pg_stat_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    return dict(zip(("commits", "inserted", "updated", "deleted"), (int(x) for x in row), strict=True))


def _print_sample(path: Path, players: int, top: int = 30) -> None:
    """The server's loop thread sampled every millisecond in the window (``--sample``)."""
    try:
        sample = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        print(f"  no samples: {exc}", file=sys.stderr)
        return
    print(
        f"  samples of the server's loop at {players} players: {sample['samples']}, "
        f"{sample['in_loop_c_pct']}% in the loop's C code; % of all samples, including callees:",
        file=sys.stderr,
    )
    for name, pct in list(sample["inclusive_pct"].items())[:top]:
        print(f"    {pct:6.2f}%  {name}", file=sys.stderr)
    print("  innermost frame:", file=sys.stderr)
    for name, pct in list(sample["exclusive_pct"].items())[:20]:
        print(f"    {pct:6.2f}%  {name}", file=sys.stderr)
    sys.stderr.flush()


def _print_stalls(stats: dict[str, Any], top: int = 4) -> None:
    """Where the server's loop was while it stalled (bench/instrumented_server.py samples it)."""
    samples = stats.get("stall_samples", 0)
    if not samples:
        return
    print(f"         stalled loop, {samples} samples of 10 ms; the most frequent stacks:", file=sys.stderr)
    for stack, count in list(stats["stall_stacks"].items())[:top]:
        print(f"         {count:5d}  {stack[:600]}", file=sys.stderr)
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["client"]:
        client_main(argv[1:])
        return
    parser = argparse.ArgumentParser(prog="python -m bench.capacity", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="250, 500, 1,000 players; short windows (< 60 s)")
    parser.add_argument("--steps", default="", help="comma-separated player counts (default 1000,...,10000)")
    parser.add_argument("--think-ms", type=float, default=1000, help="mean think time (uniform 0..2x)")
    parser.add_argument("--viewers", type=int, default=200, help="lobby stream viewers")
    parser.add_argument("--warmup", type=float, default=None, help="seconds after a step grows (default 12, quick 4)")
    parser.add_argument("--duration", type=float, default=None, help="seconds measured a step (default 10, quick 4)")
    parser.add_argument("--database", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--broker", choices=("memory", "redis"), default="memory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-going", action="store_true", help="measure every step, also after one is over")
    parser.add_argument(
        "--retries",
        type=int,
        default=None,
        help="windows measured again when a step misses while its server waited for its CPU (default 2, quick 1)",
    )
    parser.add_argument(
        "--no-pin", action="store_true", help="processes on any CPU (default: the server on one, the load on another)"
    )
    parser.add_argument("--loopstats", action="store_true", help="the server's loop lag and GC pauses per window")
    parser.add_argument("--cprofile", type=Path, default=None, help="cProfile the server's windows (CPU clock)")
    parser.add_argument("--sample", action="store_true", help="sample the server's loop thread every ms in windows")
    parser.add_argument("--patch", default="", help="bench/instrumented_server.py patches to apply")
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds the run may take: no step or repeated window is begun that would end later "
        "(default 230 for the default steps, 55 with --quick, none with --steps; 0: none)",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        default=None,
        help="compare with the code of this git revision (its server from a temporary worktree): "
        "a run of each per round, old first in odd rounds; the players each carried",
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --against: runs of each side (default 1)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.against is not None and (args.loopstats or args.cprofile or args.patch or args.sample):
        parser.error("--against starts both servers as python -m app: no --loopstats, --cprofile, --patch, --sample")
    if args.budget is None:
        args.budget = 0.0 if args.steps else (55.0 if args.quick else 230.0)
    args.warmup = args.warmup if args.warmup is not None else (4.0 if args.quick else 12.0)
    args.duration = args.duration if args.duration is not None else (4.0 if args.quick else 10.0)
    args.retries = args.retries if args.retries is not None else (1 if args.quick else 2)
    print(
        f"bench.capacity: 4 seats per table, think 0-{2 * args.think_ms:.0f} ms, a spectator per 4 tables, "
        f"{args.viewers} lobby viewers; {args.database}, {args.broker} broker; steps {_steps(args)}; "
        f"{args.warmup:g} s warm-up, {args.duration:g} s window; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    if args.against is not None:
        _against(args)
        return
    steps = run(args)
    took = _elapsed()
    print(f"  {took:.0f} s in all; load average {os.getloadavg()[0]:.1f} at the end", flush=True)
    print(_last_line(args, steps))


def _best(steps: list[Step]) -> Step | None:
    passed = [s for s in steps if s.passed]
    return max(passed, key=lambda s: s.players) if passed else None


def _last_line(args: argparse.Namespace, steps: list[Step]) -> str:
    best = _best(steps)
    if best is None:
        first = steps[0] if steps else None
        return (
            "capacity: 0 players per process (no step met p99 < 50 ms, CPU < 85%, no rate refusals"
            + (f"; first step p99 {first.result['latency_ms']['p99']:.1f} ms" if first else "")
            + ")"
        )
    return (
        f"capacity: {best.players} players per process at p99 {best.result['latency_ms']['p99']:.1f} ms "
        f"(think {args.think_ms:.0f} ms), {best.kib_per_connection:.1f} KiB per connection"
    )


def _against(args: argparse.Namespace) -> None:
    """Old (``--against``) and new code in one session: a whole run of each per round, old first in
    odd rounds and new first in even ones. The last line is the new code's (its median run by
    players), with the old code's players appended (the median over the rounds)."""
    commit = revision(args.against)
    new_code = described()
    runs: dict[str, list[list[Step]]] = {"old": [], "new": []}
    with checkout(commit) as tree:
        print(f"  old: {args.against} = {described(tree)} (a temporary worktree, {tree})", flush=True)
        print(f"  new: {new_code} ({ROOT})", flush=True)
        for round_no in range(args.rounds):
            sides = [("old", tree), ("new", ROOT)]
            if round_no % 2:
                sides.reverse()
            for side, code in sides:
                print(f"  round {round_no + 1} of {args.rounds}: {side} code", flush=True)
                steps = run(args, code, side)
                runs[side].append(steps)
                print(f"  {side}: {_last_line(args, steps)}", flush=True)
    print(f"  {_elapsed():.0f} s in all; load average {os.getloadavg()[0]:.1f} at the end", flush=True)

    def players(steps: list[Step]) -> int:
        best = _best(steps)
        return best.players if best else 0

    old = [players(steps) for steps in runs["old"]]
    new = sorted(runs["new"], key=players)[len(runs["new"]) // 2]
    print(f"  players per run: old {old}, new {[players(steps) for steps in runs['new']]}")
    print(f"{_last_line(args, new)}; against {args.against}: {statistics.median_low(old)} players")


if __name__ == "__main__":
    main()
