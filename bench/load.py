"""Load benchmark of the live tables over real websockets on loopback.

    python -m bench.load            # 250 tables x 4 seats = 1,000 connections, 20 s measured
    python -m bench.load --quick    # 25 tables, a few seconds; under 30 s in all

It starts the server (``python -m app``: a temporary SQLite file, the memory:// broker, the
websocket rate limit raised) as its own process and drives it from one separate client process
(uvloop, picows websockets, orjson; every message is handled in the websocket's frame callback and
an update's view is parsed only when its seat acts on it, so that the client costs the shared CPUs
as little as it can; it never sleeps between messages unless ``--sleeping-client`` or ``--think-ms``, so
that the server does not pay on loopback for waking it, which a remote client would not cost; thinking
players wait in one heap of timers, ``bench.capacity.Scheduler``): every table is
four guests who play random legal moves as fast as the server answers, each seat acting when the
table waits for it (``decision.seats``) and now and then throwing in when it may; when a match ends
every player asks for a rematch (it starts when all have). Measured over a window
after a warm-up:

* commands/s (acked commands) and the command-to-push latency: from sending a command to receiving
  the pushed update that reflects it (the update whose version the ack names);
* messages/s delivered to the clients (updates, acks, errors) and their mean size;
* the server's RSS, the server's and the client process's CPU use (and the client's CPU per command);
* the server's memory per idle connection: the RSS growth from connecting and greeting every
  websocket (before any match starts), divided by their number.

Then it runs the same client against ``bench/bare_fanout.py`` (plain FastAPI/uvicorn websockets,
no game: each command fans a same-size JSON update out to the same number of connections), the
floor of what Python does, and prints the ratio of delivered messages per second.

``--profile`` additionally samples the server with py-spy during the window (a separate, fourth
process on a two-core machine, so its numbers are not the headline ones).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
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
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
    free_port,
    revision,
)

PY = sys.executable
START = time.perf_counter()
SETUP_ATTEMPTS = 3  # the client's set-up over REST, from the start again when a request of it fails
SETUP_BATCH = 25  # tables opened (and their guests made) at a time
SETUP_RETRY_S = 1.0  # the pause before the set-up starts again

# ------------------------------------------------------------------------------------- client side


@dataclass
class Stats:
    messages: int = 0
    bytes: int = 0
    updates: int = 0
    update_bytes: int = 0
    acks: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    matches: int = 0
    unmatched_acks: int = 0


class Seat:
    __slots__ = (
        "acted",
        "base",
        "code",
        "cookie",
        "creator",
        "name",
        "outstanding",
        "parts",
        "recv_at",
        "recv_version",
        "sent_at",
        "update",
        "version",
        "view",
        "welcome",
        "ws",
    )

    def __init__(self, code: str, name: str, cookie: str | None, creator: bool, base: str = "") -> None:
        self.base = base  # the server this seat's table lives on (http://host:port)
        self.code = code
        self.name = name
        self.cookie = cookie
        self.creator = creator
        self.ws: Any = None  # the picows transport
        self.welcome: asyncio.Future[None] | None = None  # set while waiting for the welcome
        self.parts: list[bytes] | None = None  # a fragmented message being assembled
        self.update: bytes | None = None  # the latest update (durak), its view parsed only to act on it
        self.view: dict[str, Any] | None = None  # the head of the latest update (bare)
        self.version = -1
        self.acted = -1
        self.outstanding: str | None = None
        self.sent_at = 0.0
        # When the updates of the last versions arrived (version & _RECENT -> version, time).
        self.recv_version = [-1] * (_RECENT + 1)
        self.recv_at = [0.0] * (_RECENT + 1)


_LISTENER: Any = None
_RECENT = 15  # an ack finds the arrival time of the update it names among the last 16 versions


def _listener_class() -> Any:
    """The picows listener of one seat (imported lazily: only the client process needs picows).

    Every text message is handled right in picows' frame callback: no task, queue or coroutine per
    message; the command it prompts is written to the socket from there."""
    global _LISTENER
    if _LISTENER is not None:
        return _LISTENER
    from picows import WSListener

    from bench._client import picows_messages

    read = picows_messages()

    class Link(WSListener):  # type: ignore[misc]
        def __init__(self, client: Client, seat: Seat) -> None:
            super().__init__()
            self.client = client
            self.seat = seat

        def on_ws_frame(self, transport: Any, frame: Any) -> None:
            seat = self.seat
            try:
                raw = read(seat, transport, frame)
                if raw is None:
                    return
                if seat.welcome is None:
                    self.client.on_message(seat, raw)
                elif orjson.loads(raw)["type"] == "welcome":  # (at the table, updates about others come first)
                    welcome, seat.welcome = seat.welcome, None  # from now on every message is played
                    welcome.set_result(None)
            except Exception as exc:  # a broken message or connection ends this seat
                if not self.client.stopping:
                    self.client.emit("seat_error", seat=seat.name, error=repr(exc))
                transport.disconnect()

        def on_ws_disconnected(self, transport: Any) -> None:
            seat = self.seat
            if seat.welcome is not None:
                seat.welcome.set_exception(ConnectionError(f"{seat.name}: closed before the welcome"))
            elif not self.client.stopping:
                self.client.emit("seat_error", seat=seat.name, error="connection closed")

    _LISTENER = Link
    return Link


class Client:
    """All the simulated players, in one process."""

    def __init__(self, args: argparse.Namespace) -> None:
        from bench._client import choose, command

        self.args = args
        self.bases = [url.rstrip("/") for url in args.url]  # tables are spread over these servers
        self.rng = random.Random(args.seed)
        self.stats = Stats()
        self.measuring = False
        self.stopping = False
        self.live = False  # seats act from "go" on
        self.seats: list[Seat] = []
        self.http: Any = None
        self.ids = 0
        self.tasks: set[asyncio.Task[Any]] = set()
        self.durak = args.mode == "durak"
        self.think = args.think_ms > 0
        self.choose = choose
        self.command = command
        self.text_type: Any = None
        self.scheduler: Any = None  # bench.capacity.Scheduler, made in run()

    def emit(self, event: str, **data: Any) -> None:
        print(json.dumps({"event": event, **data}), flush=True)

    # --- setup over REST (durak mode) ---

    async def prepare_durak_retried(self, attempts: int = SETUP_ATTEMPTS) -> None:
        """:meth:`prepare_durak`, from the start again (new guests, new tables) when it fails: a
        server that has just started sometimes refuses a request of the first burst (SQLite's
        ``QueuePool limit`` at 250 tables)."""
        for attempt in range(1, attempts + 1):
            try:
                await self.prepare_durak(attempt)
                return
            except Exception as exc:
                if attempt == attempts:
                    raise
                print(f"bench.load: set-up attempt {attempt} failed ({exc!r:.300}); again", file=sys.stderr)
                self.seats.clear()
                if self.http is not None:
                    await self.http.aclose()
                await asyncio.sleep(SETUP_RETRY_S)

    async def prepare_durak(self, attempt: int = 1) -> None:
        import httpx

        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        self.http = httpx.AsyncClient(timeout=60, limits=limits)
        sem = asyncio.Semaphore(64)

        async def post(base: str, path: str, body: dict[str, Any], cookie: str | None = None) -> httpx.Response:
            headers = {"origin": base}
            if cookie:
                headers["cookie"] = f"durak_session={cookie}"
            for try_no in range(3):
                try:
                    async with sem:
                        response = await self.http.post(base + path, json=body, headers=headers)
                    if response.status_code not in (500, 503) or try_no == 2:
                        break
                    if response.status_code == 500:  # e.g. SQLite's QueuePool limit at a start: a pause
                        await asyncio.sleep(SETUP_RETRY_S)
                        continue
                    # The table did not answer within the server's 10 s (a machine shared with
                    # busier neighbours, all tables starting at once): ask again.
                except httpx.TransportError:  # a kept-alive connection the server closed meanwhile
                    if try_no == 2:
                        raise
            self.http.cookies.clear()
            if response.status_code == 409 and try_no and "already_seated" in response.text:
                return response  # the first attempt did get through
            if response.status_code >= 300:
                raise RuntimeError(f"{path}: {response.status_code} {response.text}")
            return response

        n_seats = self.args.seats

        def base_of(table: int) -> str:
            return self.bases[table % len(self.bases)]

        async def guest(i: int) -> str:
            name = f"p{i}" if attempt == 1 else f"p{i}a{attempt}"
            response = await post(base_of(i // n_seats), "/api/auth/guest", {"name": name})
            return str(response.cookies["durak_session"])

        cookies: list[str] = []
        for first in range(0, self.args.tables, SETUP_BATCH):  # a batch of tables' guests at a time
            guests = range(first * n_seats, min(first + SETUP_BATCH, self.args.tables) * n_seats)
            cookies += await asyncio.gather(*(guest(i) for i in guests))
        self.emit("guests")

        async def table(t: int) -> list[Seat]:
            mine = cookies[t * n_seats : (t + 1) * n_seats]
            body = {"seats": n_seats, "timer": self.args.timer, "bot_delay_ms": 0, "private": True}
            base = base_of(t)
            created = (await post(base, "/api/tables", body, mine[0])).json()
            code = created["code"]
            seats = [Seat(code, f"t{t}s{i}", c, i == 0, base) for i, c in enumerate(mine)]
            for i, seat in enumerate(seats[:-1]):  # the last seat joins on "go": that starts the match
                await post(base, f"/api/tables/{code}/join", {"seat": i}, seat.cookie)
            # Spectators: anonymous connections through the table's watch link.
            watchers = range(self.args.spectators)
            return seats + [Seat(created["watch_code"], f"t{t}w{k}", None, False, base) for k in watchers]

        for first in range(0, self.args.tables, SETUP_BATCH):  # opened SETUP_BATCH tables at a time
            batch = range(first, min(first + SETUP_BATCH, self.args.tables))
            for seats in await asyncio.gather(*(table(t) for t in batch)):
                self.seats.extend(seats)
        self.post = post

    def prepare_bare(self) -> None:
        for t in range(self.args.tables):
            base = self.bases[t % len(self.bases)]
            self.seats.extend(Seat(f"g{t}", f"t{t}s{i}", None, i == 0, base) for i in range(self.args.seats))
            self.seats.extend(Seat(f"g{t}", f"t{t}w{k}", None, False, base) for k in range(self.args.spectators))

    # --- websockets ---

    async def connect_all(self) -> None:
        from picows import WSMsgType, ws_connect

        self.text_type = WSMsgType.TEXT
        link = _listener_class()
        loop = asyncio.get_running_loop()
        sem = asyncio.Semaphore(100)

        async def one(seat: Seat) -> None:
            ws_base = "ws" + seat.base[4:]
            if self.durak:
                url = f"{ws_base}/ws/tables/{seat.code}"
                headers = {"origin": seat.base}
                if seat.cookie:
                    headers["cookie"] = f"durak_session={seat.cookie}"
            else:
                url = f"{ws_base}/ws/{seat.code}?n={self.args.seats}&bytes={self.args.update_bytes}"
                headers = {}
            async with sem:
                welcome = seat.welcome = loop.create_future()
                seat.ws, _ = await ws_connect(
                    lambda: link(self, seat),
                    url,
                    extra_headers=headers,
                    max_frame_size=2**20,
                    websocket_handshake_timeout=60,
                    use_aiofastnet=False,  # uvloop's own transport: a little cheaper here
                )
                seat.ws.send(self.text_type, b'{"type":"hello"}')
                await welcome

        # Seats in order, so that each seat's connection exists when it plays.
        await asyncio.gather(*(one(seat) for seat in self.seats))

    async def go(self) -> None:
        self.live = True
        for seat in self.seats:  # whatever arrived since the welcome (nothing to play yet)
            self.act(seat)
        if self.durak:
            last = [s for s in self.seats if s.name.endswith(f"s{self.args.seats - 1}")]
            seat_no = {"seat": self.args.seats - 1}
            for first in range(0, len(last), SETUP_BATCH):  # SETUP_BATCH matches start at a time
                batch = last[first : first + SETUP_BATCH]
                joins = (self.post(s.base, f"/api/tables/{s.code}/join", seat_no, s.cookie) for s in batch)
                await asyncio.gather(*joins)
        else:
            for seat in self.seats:
                if seat.creator:
                    seat.ws.send(self.text_type, b'{"type":"start"}')

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def send_now(self, item: tuple[Seat, bytes]) -> None:
        """A player who thought before acting (``--think-ms``) acts: called by the one scheduler of
        every player's thinking (``bench.capacity.Scheduler``), not by a task or timer of its own."""
        seat, data = item
        if self.stopping:
            return
        seat.sent_at = time.perf_counter()
        with contextlib.suppress(Exception):
            seat.ws.send(self.text_type, data)

    async def rematch(self, seat: Seat) -> None:
        """``POST /api/tables/{code}/rematch`` as one of the players: the same request as through
        httpx, written by hand on a connection of its own (``Connection: close``), since an httpx
        request costs the client more CPU than a whole match's moves. As before, a refusal is
        ignored."""
        with contextlib.suppress(Exception):
            url = urlsplit(seat.base)
            host, port = url.hostname, url.port or 80
            request = (
                f"POST /api/tables/{seat.code}/rematch HTTP/1.1\r\nhost: {host}:{port}\r\n"
                f"origin: {seat.base}\r\ncookie: durak_session={seat.cookie}\r\n"
                "content-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}"
            )
            reader, writer = await asyncio.open_connection(host, port)
            try:
                writer.write(request.encode())
                await reader.read()  # the response, up to the server's close
            finally:
                writer.close()

    def on_message(self, seat: Seat, raw: bytes, clock: Any = time.perf_counter) -> None:
        """One message pushed to a seat (called from its picows listener), then maybe its move.

        An update is read only as far as needed: its version from the head; its view only when the
        seat acts on it (``act``), and the whole of it only for a player when the update may
        finish the match. The floor's clients read only the head of an update (what they need to
        play it). Acks and refusals are parsed whole."""
        now = clock()
        stats = self.stats
        measuring = self.measuring
        if measuring:
            stats.messages += 1
            stats.bytes += len(raw)
        message: dict[str, Any] | None = None
        if raw.startswith(_UPDATE):
            version = int(raw[27 : raw.index(b",", 27)])
        else:
            message = orjson.loads(raw)
            kind = message["type"]
            if kind != "update":
                if (kind == "ack" or kind == "error") and message.get("id") == seat.outstanding:
                    seat.outstanding = None
                    if measuring:
                        if kind == "ack":
                            stats.acks += 1
                            acked = message["version"]
                            slot = acked & _RECENT
                            pushed = seat.recv_at[slot] if seat.recv_version[slot] == acked else None
                            if pushed is not None and pushed >= seat.sent_at:
                                stats.latencies.append(pushed - seat.sent_at)
                            else:
                                stats.unmatched_acks += 1
                        else:
                            stats.errors[message["code"]] = stats.errors.get(message["code"], 0) + 1
                if self.live and seat.outstanding is None:
                    self.act(seat)
                return
            version = message["version"]
        if measuring:
            stats.updates += 1
            stats.update_bytes += len(raw)
        if version >= seat.version:
            seat.version = version
            slot = version & _RECENT
            seat.recv_version[slot] = version
            seat.recv_at[slot] = now
            if not self.durak:
                seat.view = _bare_parse(raw)
            else:
                seat.update = raw  # its view is read when the seat acts on it
                if seat.cookie is not None and version > seat.acted and _FINISHED in raw:
                    message = message or orjson.loads(raw)
                    if message["table"]["status"] == "finished":  # every player asks: a rematch is a proposal
                        seat.acted = version
                        if measuring and message["events"] and seat.creator:
                            stats.matches += 1
                        if not self.stopping:
                            self.spawn(self.rematch(seat))
        if self.live and seat.outstanding is None:
            self.act(seat)

    def act(self, seat: Seat) -> None:
        """The seat's move on its latest view, if it has none in flight and the view is new."""
        if seat.outstanding is not None or self.stopping or seat.version <= seat.acted:
            return
        seat.acted = seat.version
        if self.durak:
            raw = seat.update
            if raw is None or seat.cookie is None:  # a spectator's view has no legal actions
                return
            end = raw.rfind(_TABLE)
            if end > 0 and raw.endswith(_NO_LEGAL, 0, end):  # no legal action: nothing to read
                return
            view = _view_of(raw, end)
            if view is None or not view.get("legal"):
                return
            action = self.choose(view, self.rng, throw_in_p=self.args.throw_in_p)
            if action is None:
                return
            self.ids += 1
            seat.outstanding = f"c{self.ids}"
            data = orjson.dumps(self.command(action, seat.outstanding, seat.version))
        else:
            view = seat.view
            if view is None or view["turn"] != view["seat"]:
                return
            self.ids += 1
            seat.outstanding = f"c{self.ids}"
            data = f'{{"type":"cmd","id":"{seat.outstanding}","version":{seat.version}}}'.encode()
        if self.think:
            delay = self.rng.uniform(0, 2 * self.args.think_ms) / 1000
            self.scheduler.at(self.scheduler.loop.time() + delay, self.send_now, (seat, data))
            return
        seat.sent_at = time.perf_counter()
        seat.ws.send(self.text_type, data)

    async def spin(self) -> None:
        """Keep this process running instead of sleeping in epoll between messages (``--spin``).

        On loopback, a server writing to a client that sleeps pays for waking it (the kernel's
        ``try_to_wake_up`` runs in the sender's system call); a remote client costs the server no such
        thing. A client that never sleeps keeps that cost out of the server's figures, at the price
        of a whole core on the client's side, so it suits ``bench.load`` (server and client on a core
        each), not ``bench.scale`` (which needs the second core for the second server)."""
        while not self.stopping:
            await asyncio.sleep(0)

    async def tick(self, seconds: float) -> None:
        """Sleep ``seconds`` at a time, then handle everything that arrived meanwhile (``--tick-ms``).

        The client never waits in epoll, so a server's write never has to wake it (as with a remote
        client or a spinning one), yet it uses a fraction of a core: it wakes once per tick, not once
        per message, and reads many messages per wake-up. A message waits at most one tick, which
        the measured latency includes. Made for ``bench.scale``, where the client must leave the
        cores to the servers."""
        while not self.stopping:
            time.sleep(seconds)  # blocks the loop on purpose: it polls without waiting afterwards
            await asyncio.sleep(0)

    async def run(self) -> None:
        from bench.capacity import Scheduler

        self.scheduler = Scheduler(asyncio.get_running_loop())
        self.emit("started")
        if self.args.mode == "durak":
            await self.prepare_durak_retried()
        else:
            self.prepare_bare()
        self.emit("prepared", connections=len(self.seats))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.readline)  # "connect"
        await self.connect_all()
        self.emit("connected", connections=len(self.seats))
        await loop.run_in_executor(None, sys.stdin.readline)  # "go"
        if self.args.spin:
            self.spawn(self.spin())
        elif self.args.tick_ms > 0:
            self.spawn(self.tick(self.args.tick_ms / 1000))
        await self.go()
        await asyncio.sleep(self.args.warmup)
        self.measuring = True
        cpu0, t0, times0 = time.process_time(), time.perf_counter(), os.times()
        self.emit("window_start")
        await asyncio.sleep(self.args.duration)
        self.measuring = False
        cpu1, t1, times1 = time.process_time(), time.perf_counter(), os.times()
        self.emit("window_end")
        self.stopping = True
        lat = sorted(self.stats.latencies)
        window = t1 - t0

        def pct(p: float) -> float:
            return lat[min(len(lat) - 1, int(p * len(lat)))] * 1000 if lat else float("nan")

        s = self.stats
        result = {
            "mode": self.args.mode,
            "tables": self.args.tables,
            "connections": len(self.seats),
            "window_s": window,
            "commands_per_s": s.acks / window,
            "errors": s.errors,
            "messages_per_s": s.messages / window,
            "mean_message_bytes": s.bytes / max(1, s.messages),
            "mean_update_bytes": s.update_bytes / max(1, s.updates),
            "updates_per_s": s.updates / window,
            "matches_per_s": s.matches / window,
            "latency_ms": {
                "p50": pct(0.50),
                "p90": pct(0.90),
                "p99": pct(0.99),
                "max": lat[-1] * 1000 if lat else float("nan"),
                "mean": statistics.fmean(lat) * 1000 if lat else float("nan"),
            },
            "unmatched_acks": s.unmatched_acks,
            "client_cpu_pct": 100 * (cpu1 - cpu0) / window,
            "client_cpu_ms_per_command": 1000 * (cpu1 - cpu0) / max(1, s.acks),
            "client_sys_share": (times1.system - times0.system) / max(1e-9, cpu1 - cpu0),
        }
        self.emit("result", result=result)
        for task in list(self.tasks):
            task.cancel()
        links = [seat.ws for seat in self.seats if seat.ws is not None]
        for ws in links:
            with contextlib.suppress(Exception):
                ws.send_close()
        with contextlib.suppress(Exception):  # the server answers the close; then the link disconnects
            await asyncio.wait_for(asyncio.gather(*(ws.wait_disconnected() for ws in links)), 10)
        for ws in links:
            ws.disconnect()
        if self.http is not None:
            await self.http.aclose()


# A durak update is ``{"type":"update","version":N,"seat":S,"events":[...],"view":{...},"table":{...}}``
# (``app/api/protocol.py``; the server serializes it in this order) and ``legal`` is the view's last
# key. Quotes inside strings are escaped, so these byte strings are structure, never part of a name.
_UPDATE = b'{"type":"update","version":'
_VIEW = b',"view":'
_TABLE = b',"table":{'
_NO_LEGAL = b'"legal":[]}'  # just before the table: the seat has no legal action
_FINISHED = b'"status":"finished"'  # a table status that ends a match (else no need to read the table)


def _view_of(raw: bytes, end: int) -> dict[str, Any] | None:
    """The view of a durak update (``end``: where its table starts), parsing only that part."""
    start = raw.find(_VIEW)
    if 0 < start < end:
        with contextlib.suppress(orjson.JSONDecodeError):
            view: dict[str, Any] | None = orjson.loads(raw[start + len(_VIEW) : end])
            return view
    return orjson.loads(raw)["view"]  # some other layout: the whole message


_BARE_HEAD = re.compile(rb'^\{"type":"update","version":(\d+),"seat":(\d+),"turn":(\d+),')


def _bare_parse(raw: bytes) -> dict[str, Any]:
    head = _BARE_HEAD.match(raw)
    if head is None:
        message: dict[str, Any] = orjson.loads(raw)
        return message
    return {"type": "update", "version": int(head[1]), "seat": int(head[2]), "turn": int(head[3])}


def client_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench.load client")
    parser.add_argument("--mode", choices=("durak", "bare"), required=True)
    parser.add_argument("--url", required=True, action="append", help="a server; repeat to spread the tables")
    parser.add_argument("--tables", type=int, required=True)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--timer", type=int, default=30)
    parser.add_argument("--throw-in-p", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spectators", type=int, default=0)
    parser.add_argument("--think-ms", type=float, default=0)
    parser.add_argument("--update-bytes", type=int, default=2000, help="bare mode: size of an update")
    parser.add_argument("--settle", type=float, default=1.0)
    parser.add_argument("--spin", action="store_true", help="never sleep in the event loop (see Client.spin)")
    parser.add_argument("--tick-ms", type=float, default=0, help="sleep this long, then poll (see Client.tick)")
    args = parser.parse_args(argv)
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - plain asyncio works too, a little slower
        pass
    asyncio.run(Client(args).run())


# ------------------------------------------------------------------------------------- orchestrator


@dataclass
class Run:
    mode: str
    result: dict[str, Any]
    rss_before_kib: int
    rss_connected_kib: int
    rss_end_kib: int
    server_cpu_pct: float
    server_sys_share: float
    idle_kib_per_connection: float
    cpu_pressure: str = ""
    profile: str | None = None

    @property
    def server_cpu_us_per_message(self) -> float:
        """Server CPU time per delivered message: robust when other processes share the CPUs."""
        return 1e4 * self.server_cpu_pct / max(1e-9, self.result["messages_per_s"])

    @property
    def server_cpu_ms_per_command(self) -> float:
        return 10 * self.server_cpu_pct / max(1e-9, self.result["commands_per_s"])


def _bare_server(workdir: Path) -> ServerProcess:
    port = free_port()
    argv = [PY, "-m", "bench.bare_fanout", str(port)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return ServerProcess(argv, env, port, workdir / "bare.log")


def _drive(
    server: ServerProcess,
    mode: str,
    args: argparse.Namespace,
    profile: Path | None,
    update_bytes: int = 2000,
    cprofile: bool = False,
    tracemalloc: bool = False,
    loopstats: bool = False,
) -> Run:
    """One measured run of the client process against a started server."""
    argv = [
        PY,
        "-m",
        "bench.load",
        "client",
        "--mode",
        mode,
        "--url",
        server.base_url,
        "--tables",
        str(args.tables),
        "--seats",
        str(args.seats),
        "--warmup",
        str(args.warmup),
        "--duration",
        str(args.duration),
        "--throw-in-p",
        str(args.throw_in_p),
        "--seed",
        str(args.seed),
        "--spectators",
        str(args.spectators),
        "--think-ms",
        str(args.think_ms),
        "--update-bytes",
        str(update_bytes),
        *(["--spin"] if args.spin and not args.think_ms else []),  # a thinking client sleeps between messages
    ]
    client = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert client.stdin is not None and client.stdout is not None
    spy: subprocess.Popen[bytes] | None = None
    marks: dict[str, Any] = {}
    try:
        for line in client.stdout:
            event = json.loads(line)
            kind = event["event"]
            if args.verbose:
                print(f"  [{time.perf_counter() - START:6.2f}s] {mode}: {kind}", file=sys.stderr)
            if kind == "prepared":
                time.sleep(args.settle)
                marks["rss_before"] = server.rss_kib()
                if tracemalloc:
                    os.kill(server.pid, signal.SIGUSR1)
                client.stdin.write("connect\n")
                client.stdin.flush()
            elif kind == "connected":
                time.sleep(args.settle)  # let the greetings' pushes finish before measuring memory
                marks["rss_connected"] = server.rss_kib()
                if tracemalloc:
                    os.kill(server.pid, signal.SIGUSR2)
                client.stdin.write("go\n")
                client.stdin.flush()
            elif kind == "window_start":
                if cprofile or loopstats:
                    os.kill(server.pid, signal.SIGUSR1)
                marks["cpu0"], marks["t0"] = server.cpu_split_s(), time.perf_counter()
                marks["pressure0"] = cpu_pressure_total()
                if profile is not None:
                    spy = _py_spy(server.pid, profile, args.duration)
            elif kind == "window_end":
                marks["cpu1"], marks["t1"] = server.cpu_split_s(), time.perf_counter()
                if cprofile or loopstats:
                    os.kill(server.pid, signal.SIGUSR2)
                marks["pressure1"] = cpu_pressure_total()
                marks["rss_end"] = server.rss_kib()
            elif kind == "result":
                marks["result"] = event["result"]
            elif kind == "seat_error":
                print(f"  client: {event}", file=sys.stderr)
    finally:
        client.wait(60)
        if spy is not None:
            spy.wait(args.duration + 60)
    if "result" not in marks:
        raise RuntimeError(f"the {mode} client ended without a result (exit {client.returncode})")
    connections = marks["result"]["connections"]
    return Run(
        mode=mode,
        result=marks["result"],
        rss_before_kib=marks["rss_before"],
        rss_connected_kib=marks["rss_connected"],
        rss_end_kib=marks["rss_end"],
        server_cpu_pct=100 * (sum(marks["cpu1"]) - sum(marks["cpu0"])) / (marks["t1"] - marks["t0"]),
        server_sys_share=(marks["cpu1"][1] - marks["cpu0"][1]) / max(1e-9, sum(marks["cpu1"]) - sum(marks["cpu0"])),
        idle_kib_per_connection=(marks["rss_connected"] - marks["rss_before"]) / connections,
        cpu_pressure=_pressure_text(marks, marks["t1"] - marks["t0"]),
        profile=str(profile) if profile else None,
    )


def _pressure_text(marks: dict[str, Any], window: float) -> str:
    if marks.get("pressure0") is None or marks.get("pressure1") is None:
        return "n/a"
    return f"{100 * (marks['pressure1'] - marks['pressure0']) / 1e6 / window:.0f}%"


def _py_spy(pid: int, out: Path, duration: float) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy") or str(Path(PY).with_name("py-spy"))
    if not Path(spy).exists():
        print("  py-spy not found: pip install py-spy", file=sys.stderr)
        return None
    fmt = "speedscope" if out.suffix == ".json" else ("raw" if out.suffix == ".txt" else "flamegraph")
    argv = [
        spy,
        "record",
        "--pid",
        str(pid),
        "--duration",
        str(int(duration)),
        "--rate",
        "100",
        "--format",
        fmt,
        "--output",
        str(out),
        "--nonblocking",  # pausing the server for every sample would distort it more than torn stacks
    ]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _print_run(run: Run, label: str | None = None) -> None:
    r = run.result
    lat = r["latency_ms"]
    print(
        f"  {label or run.mode:5s}: {r['commands_per_s']:8.0f} commands/s, {r['messages_per_s']:8.0f} msg/s delivered "
        f"(mean {r['mean_message_bytes']:.0f} B, updates {r['mean_update_bytes']:.0f} B), "
        f"latency p50 {lat['p50']:.1f} / p90 {lat['p90']:.1f} / p99 {lat['p99']:.1f} / max {lat['max']:.1f} ms"
    )
    print(
        f"         server CPU {run.server_cpu_pct:.0f}% ({100 * run.server_sys_share:.0f}% of it in the kernel; "
        f"{run.server_cpu_ms_per_command:.2f} ms per command, "
        f"{run.server_cpu_us_per_message:.0f} us per delivered message), client CPU {r['client_cpu_pct']:.0f}% "
        f"({r['client_cpu_ms_per_command']:.3f} ms per command, {100 * r['client_sys_share']:.0f}% in the kernel), "
        f"CPU pressure (time some task waited for a CPU) {run.cpu_pressure}"
    )
    print(
        f"         "
        f"server RSS {run.rss_before_kib / 1024:.1f} MiB before connecting, "
        f"{run.rss_connected_kib / 1024:.1f} MiB with {r['connections']} idle connections "
        f"({run.idle_kib_per_connection:.1f} KiB each), {run.rss_end_kib / 1024:.1f} MiB at the end"
    )
    if r.get("errors"):
        print(f"         refused commands: {r['errors']}")
    if r["mode"] == "durak":
        print(f"         matches finished: {r['matches_per_s']:.1f}/s")


def _as_json(run: Run) -> dict[str, Any]:
    return {
        **asdict(run),
        "server_cpu_us_per_message": run.server_cpu_us_per_message,
        "server_cpu_ms_per_command": run.server_cpu_ms_per_command,
    }


def _round(
    args: argparse.Namespace, tree: Path = ROOT, label: str | None = None, with_bare: bool = True
) -> tuple[Run, Run | None]:
    """The durak server (the code of ``tree``), then the bare app, each started fresh and driven by
    the same client (this tree's). ``label``: the side of an ``--against`` comparison, printed with
    the run; its server says where its ``app`` comes from, and that must be ``tree``."""
    with tempfile.TemporaryDirectory(prefix="durak-load-") as tmp:
        workdir = Path(tmp)
        extra_env = {"DURAK_WS_RATE_PER_S": "100000", "DURAK_WS_BURST": "100000", "DURAK_LOG_LEVEL": "warning"}
        argv = None
        if args.cprofile is not None or args.patch or args.tracemalloc is not None or args.loopstats is not None:
            argv = [PY, "-m", "bench.instrumented_server"]
            extra_env["BENCH_PATCHES"] = args.patch
        if args.cprofile is not None:
            extra_env["BENCH_CPROFILE"] = str(args.cprofile.resolve())
        if args.tracemalloc is not None:
            extra_env["BENCH_TRACEMALLOC"] = str(args.tracemalloc.resolve())
        if args.loopstats is not None:
            extra_env["BENCH_LOOPSTATS"] = str(args.loopstats.resolve())
        if label is not None:
            argv = [PY, "-c", SAYING_WHERE_FROM]  # both sides started alike: python -m app, saying from where
        server = durak_server(workdir, extra_env=extra_env, argv=argv, tree=tree)
        floor = None if args.skip_bare or not with_bare else _bare_server(workdir).spawn()  # idle until its turn
        try:
            server.start(timeout=60)
            if label is not None:
                code = app_dir_of(server)
                if code != tree / "app":
                    raise RuntimeError(f"the {label} server runs the app of {code}, not of {tree}")
                if args.verbose:
                    print(f"  [{time.perf_counter() - START:6.2f}s] {label} server: app from {code}", file=sys.stderr)
            if floor is not None:
                floor.wait_ready("/health", timeout=60)
            if args.verbose:
                print(f"  [{time.perf_counter() - START:6.2f}s] servers up", file=sys.stderr)
            try:
                durak = _drive(
                    server,
                    "durak",
                    args,
                    args.profile,
                    cprofile=args.cprofile is not None,
                    tracemalloc=args.tracemalloc is not None,
                    loopstats=args.loopstats is not None,
                )
            except RuntimeError:
                print(f"  the {label or 'durak'} server's log ends:\n{server.log_tail(30)}", file=sys.stderr)
                raise
            finally:
                server.stop()
            _print_run(durak, label)
            bare: Run | None = None
            if floor is not None:
                bare = _drive(floor, "bare", args, None, int(durak.result["mean_update_bytes"]))
                _print_run(bare)
        finally:
            server.stop()
            if floor is not None:
                floor.stop()
    return durak, bare


def _median_run(runs: list[Run]) -> Run:
    """The run with the median delivered messages per second."""
    return sorted(runs, key=lambda run: run.result["messages_per_s"])[len(runs) // 2]


# What an --against comparison puts side by side: (heading, width, the figure of a run).
COMPARED: list[tuple[str, int, Any]] = [
    ("commands/s", 11, lambda run: run.result["commands_per_s"]),
    ("msg/s", 9, lambda run: run.result["messages_per_s"]),
    ("CPU us/msg", 11, lambda run: run.server_cpu_us_per_message),
    ("p50 ms", 8, lambda run: run.result["latency_ms"]["p50"]),
    ("p99 ms", 8, lambda run: run.result["latency_ms"]["p99"]),
]


def _change(new: float, old: float) -> float:
    """``new`` against ``old``, in percent (+: more)."""
    return 100 * (new / old - 1) if old else float("nan")


def _compare(old: list[Run], new: list[Run]) -> float:
    """Print the medians of old and new side by side (each figure's own median over the rounds) and
    each round's change of the CPU per delivered message; return the change of its medians (%)."""
    print(f"  {len(new)} rounds, medians:  " + "".join(f"{name:>{width}}" for name, width, _ in COMPARED))
    medians = {}
    for side, runs in (("old", old), ("new", new)):
        medians[side] = [statistics.median(figure(run) for run in runs) for _, _, figure in COMPARED]
        print(f"  {side:20s}" + "".join(f"{m:{w}.1f}" for m, (_, w, _) in zip(medians[side], COMPARED, strict=True)))
    changes = [_change(n, o) for n, o in zip(medians["new"], medians["old"], strict=True)]
    print(
        f"  {'new vs old':20s}" + "".join(f"{c:+{w - 1}.1f}%" for c, (_, w, _) in zip(changes, COMPARED, strict=True))
    )
    per_round = ", ".join(
        f"{_change(n.server_cpu_us_per_message, o.server_cpu_us_per_message):+.1f}%"
        for o, n in zip(old, new, strict=True)
    )
    print(f"  CPU per delivered message, new vs old, round by round: {per_round}")
    return changes[2]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["client"]:
        client_main(argv[1:])
        return
    parser = argparse.ArgumentParser(prog="python -m bench.load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="25 tables, 1.5 s warm-up, 4 s window")
    parser.add_argument("--tables", type=int, default=None, help="tables (default 250, quick 25)")
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=None, help="seconds before measuring (default 5)")
    parser.add_argument("--duration", type=float, default=None, help="seconds measured (default 20)")
    parser.add_argument("--throw-in-p", type=float, default=0.2, help="chance a free seat throws in")
    parser.add_argument("--spectators", type=int, default=0, help="spectator connections per table")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0,
        help="players think a random 0..2x this long before each command (default 0: as fast as answered)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rounds", type=int, default=None, help="durak then bare, this many times; medians (default 3, quick 1)"
    )
    parser.add_argument("--skip-bare", action="store_true", help="measure only the durak server")
    parser.add_argument(
        "--against",
        metavar="REV",
        default=None,
        help="compare with the code of this git revision: its server runs from a temporary worktree, "
        "old and new alternate within each round (old first in odd rounds); medians of both and the change",
    )
    parser.add_argument(
        "--sleeping-client",
        dest="spin",
        action="store_false",
        help="let the client sleep between messages (the server then pays to wake it on loopback)",
    )
    parser.add_argument("--profile", type=Path, default=None, help="py-spy output (.svg, .json or .txt)")
    parser.add_argument(
        "--cprofile",
        type=Path,
        default=None,
        help="profile the server with cProfile (bench/instrumented_server.py) during the window; pstats output",
    )
    parser.add_argument(
        "--loopstats",
        type=Path,
        default=None,
        help="record the server's event-loop stalls and GC pauses during the window (JSON)",
    )
    parser.add_argument(
        "--tracemalloc",
        type=Path,
        default=None,
        help="report where the server's Python memory for the idle connections goes (slows everything)",
    )
    parser.add_argument(
        "--patch",
        default="",
        help="measure a proposed change: comma-separated patches of bench/instrumented_server.py "
        "(gc_freeze, gc_threshold, sequential_publish, one_subscription)",
    )
    parser.add_argument("--verbose", action="store_true", help="time stamps of each phase on stderr")
    parser.add_argument("--json", type=Path, default=None, help="write the measurements here")
    args = parser.parse_args(argv)
    args.tables = args.tables or (25 if args.quick else 250)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.warmup = args.warmup if args.warmup is not None else (1.5 if args.quick else 5.0)
    args.duration = args.duration if args.duration is not None else (4.0 if args.quick else 20.0)
    args.settle = 0.5 if args.quick else 1.5
    instrumented = args.cprofile or args.patch or args.tracemalloc or args.loopstats
    if args.against is not None and instrumented:
        parser.error(
            "--against starts both servers as python -m app: no --cprofile, --patch, --tracemalloc, --loopstats"
        )

    connections = args.tables * (args.seats + args.spectators)
    watchers = f" + {args.spectators} spectators" if args.spectators else ""
    watchers += f", {args.think_ms:.0f} ms mean think time" if args.think_ms else ""
    print(
        f"bench.load: {args.tables} tables x {args.seats} seats{watchers} = {connections} connections, "
        + (f"server patched with {args.patch}, " if args.patch else "")
        + f"{args.warmup:.0f} s warm-up, {args.duration:.0f} s window, {os.cpu_count()} CPUs"
    )
    if args.against is not None:
        _against(args)
        return
    rounds: list[tuple[Run, Run | None]] = []
    for round_no in range(args.rounds):
        if args.rounds > 1:
            print(f"  round {round_no + 1} of {args.rounds}")
        rounds.append(_round(args))
    durak, bare = rounds[0]
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "args": {k: str(v) for k, v in vars(args).items()},
                    "rounds": [{"durak": _as_json(d), "bare": _as_json(b) if b else None} for d, b in rounds],
                },
                indent=2,
            )
        )
    if args.rounds > 1:
        durak = _median_run([d for d, _ in rounds])
        bare = None if bare is None else _median_run([b for _, b in rounds if b is not None])
        ratios = ", ".join(
            f"{d.result['messages_per_s'] / b.result['messages_per_s']:.2f}" for d, b in rounds if b is not None
        )
        print(f"  {args.rounds} rounds (durak, then bare, each round); ratio per round {ratios}; medians below")
    print(_last_line(args, durak, bare))


def _last_line(args: argparse.Namespace, durak: Run, bare: Run | None) -> str:
    d = durak.result
    bare_rate = bare.result["messages_per_s"] if bare else float("nan")
    ratio = d["messages_per_s"] / bare_rate if bare else float("nan")
    if bare is not None:
        print(
            f"  server CPU per delivered message: durak {durak.server_cpu_us_per_message:.0f} us, "
            f"bare {bare.server_cpu_us_per_message:.0f} us; CPU-normalised ratio "
            f"{bare.server_cpu_us_per_message / durak.server_cpu_us_per_message:.2f}"
        )
    return (
        f"load: {d['commands_per_s']:.0f} commands/s, p99 {d['latency_ms']['p99']:.1f} ms at {args.tables} tables / "
        f"{d['connections']} connections; bare fan-out {bare_rate:.0f} msg/s; ratio {ratio:.2f}"
    )


def _against(args: argparse.Namespace) -> None:
    """Old (``--against``) and new code in one run: every round runs both, old first in odd rounds
    and new first in even ones, so that a machine getting busier or quieter favours neither; the
    bare app after both, unless ``--skip-bare``. The last line is the usual one of the new code's
    median run, with the change of the median CPU per delivered message appended."""
    commit = revision(args.against)
    new_code = described()
    with checkout(commit) as tree:
        print(f"  old: {args.against} = {described(tree)} (a temporary worktree, {tree})")
        print(f"  new: {new_code} ({ROOT})")
        rounds: list[dict[str, Run | None]] = []
        for round_no in range(args.rounds):
            print(f"  round {round_no + 1} of {args.rounds}")
            sides = [("old", tree), ("new", ROOT)]
            if round_no % 2:
                sides.reverse()
            runs: dict[str, Run | None] = {}
            for side, code in sides:
                try:
                    runs[side], bare = _round(args, code, side, with_bare=side == sides[-1][0])
                except RuntimeError as exc:  # one failed set-up (a crowded machine) loses no round
                    print(f"  the {side} run failed ({str(exc)[:100]}): once more", flush=True)
                    runs[side], bare = _round(args, code, side, with_bare=side == sides[-1][0])
                runs["bare"] = runs.get("bare") or bare
            rounds.append(runs)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "args": {k: str(v) for k, v in vars(args).items()},
                    "rounds": [{side: _as_json(run) if run else None for side, run in r.items()} for r in rounds],
                },
                indent=2,
            )
        )
    old = [r["old"] for r in rounds if r["old"] is not None]
    new = [r["new"] for r in rounds if r["new"] is not None]
    cpu_change = _compare(old, new)
    bares = [r["bare"] for r in rounds if r["bare"] is not None]
    line = _last_line(args, _median_run(new), _median_run(bares) if bares else None)
    print(f"{line}; against {args.against}: CPU per message {cpu_change:+.1f}%")


if __name__ == "__main__":
    main()
