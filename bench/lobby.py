"""The lobby feed and the memory of closed tables, measured against a real server.

    python -m bench.lobby                    # 1,000 open tables, 200 lobby viewers, 200 table changes
    python -m bench.lobby --quick            # 100 tables, 20 viewers, 50 changes; under 30 s
    python -m bench.lobby --memory           # 10,000 tables created and finished: the server's memory
    python -m bench.lobby --memory --quick   # the same with 1,000 tables

It starts the server (``python -m app``: a temporary SQLite file, the memory:// broker, the per-player
and per-address limits raised, since everything comes from 127.0.0.1) as its own process and drives
it from this one.

Feed mode: two guests open the tables (public, six seats, so that a join never starts a match),
then the viewers connect to ``/api/lobby/stream`` (plain HTTP/1.1 sockets; the bytes counted are the
events themselves; the chunked framing adds 6-8 bytes to each) and each waits for its snapshot. Then a third guest
joins ``changes`` tables, one after another, twice: first with no viewer connected, then with all of
them. Each join is one table change: one ``changed`` event per viewer. Reported: the bytes each viewer
received per table change, the snapshot's size (what the old feed sent on every event), and the
server's CPU per lobby event with and without the viewers (the difference is the feed's own cost;
the server's idle CPU over the same time is subtracted from both).

Memory mode: per table, a guest opens it, two guests join (the match starts) and one leaves (a
forfeit: the match is over and settled in the database). Finished tables are closed after
``DURAK_FINISHED_TABLE_TTL_S`` = 1 s (the sweep runs every 5 s); the server's RSS is read before, right
after the last table, and once every table has left memory. With ``--compare``, the same again with
eviction off (the TTL a year).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sys
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench._server import HOST, ServerProcess, durak_server

LIMITS_RAISED = {
    "DURAK_MAX_WAITING_TABLES_PER_ACCOUNT": "1000000",
    "DURAK_MAX_WAITING_TABLES_PER_IP": "1000000",
    "DURAK_MAX_LOBBY_STREAMS_PER_IP": "1000000",
    "DURAK_MAX_TABLE_SOCKETS_PER_IP": "1000000",
    "DURAK_LOG_LEVEL": "warning",
}


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def guest(base: str, name: str) -> httpx.AsyncClient:
    client = httpx.AsyncClient(base_url=base, timeout=30)
    response = await client.post("/api/auth/guest", json={"name": name})
    response.raise_for_status()
    return client


async def checked(request: Awaitable[httpx.Response], expect: int = 200) -> httpx.Response:
    done = await request
    if done.status_code != expect:
        raise RuntimeError(f"{done.request.method} {done.request.url.path}: {done.status_code} {done.text}")
    return done


async def open_tables(creators: list[httpx.AsyncClient], count: int, parallel: int = 16) -> list[str]:
    codes: list[str] = [""] * count
    gate = asyncio.Semaphore(parallel)

    async def one(index: int) -> None:
        async with gate:
            creator = creators[index % len(creators)]
            body = {"seats": 6, "timer": 0, "name": f"bench {index}"}
            codes[index] = (await checked(creator.post("/api/tables", json=body), 201)).json()["code"]

    await asyncio.gather(*(one(i) for i in range(count)))
    return codes


# ------------------------------------------------------------------------------------ feed mode


@dataclass
class Viewer:
    bytes: int = 0
    snapshot_bytes: int = 0
    deltas: int = 0
    delta_bytes: int = 0
    task: asyncio.Task[None] | None = None

    async def run(self, port: int, ready: asyncio.Event) -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        writer.write(b"GET /api/lobby/stream HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        if b" 200 " not in head.split(b"\r\n", 1)[0] or b"chunked" not in head.lower():
            raise RuntimeError(f"lobby stream refused: {head!r}")
        buffer = b""
        try:
            while True:  # chunked transfer coding: the size line, the chunk, CRLF
                size_line = await reader.readline()
                size = int(size_line.split(b";")[0], 16)
                if size == 0:
                    return
                chunk = (await reader.readexactly(size + 2))[:-2]
                self.bytes += len(size_line) + size + 2
                buffer += chunk
                *events, buffer = buffer.split(b"\n\n")
                for event in events:
                    length = len(event) + 2
                    if event.startswith(b"event: snapshot"):
                        self.snapshot_bytes = length
                        ready.set()
                    elif event.startswith(b"event: "):
                        self.deltas += 1
                        self.delta_bytes += length
        finally:
            writer.close()


def idle_cpu_rate(server: ServerProcess, seconds: float) -> float:
    before = server.cpu_s()
    time.sleep(seconds)
    return (server.cpu_s() - before) / seconds


async def change_phase(
    server: ServerProcess, joiner: httpx.AsyncClient, codes: list[str], viewers: list[Viewer], idle_rate: float
) -> tuple[float, float]:
    """Join each table once; (server CPU seconds per change net of idle, wall seconds)."""
    expected = [v.deltas + len(codes) for v in viewers]
    cpu0, wall0 = server.cpu_s(), time.perf_counter()
    for code in codes:
        await checked(joiner.post(f"/api/tables/{code}/join", json={}))
    deadline = time.monotonic() + 60
    while any(v.deltas < want for v, want in zip(viewers, expected, strict=True)):
        if time.monotonic() > deadline:
            got = min(v.deltas - want + len(codes) for v, want in zip(viewers, expected, strict=True))
            raise RuntimeError(f"viewers got only {got} of {len(codes)} deltas")
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.3)  # the last flush and any straggling work
    wall = time.perf_counter() - wall0
    cpu = server.cpu_s() - cpu0 - idle_rate * wall
    return max(cpu, 0.0) / len(codes), wall


async def feed_mode(args: argparse.Namespace, workdir: Path) -> str:
    server = durak_server(workdir, extra_env=LIMITS_RAISED).start(timeout=60)
    try:
        base = server.base_url
        creators = [await guest(base, f"host{i}") for i in range(2)]
        joiner = await guest(base, "joiner")
        t0 = time.perf_counter()
        codes = await open_tables(creators, args.tables)
        log(f"opened {args.tables} tables in {time.perf_counter() - t0:.1f} s")
        await asyncio.sleep(0.5)
        idle = idle_cpu_rate(server, 2.0)
        log(f"server idle CPU: {idle * 100:.1f}% of a core")

        warm = args.changes // 4
        await change_phase(server, joiner, codes[-warm:], [], idle)  # warm-up: first requests cost more
        alone, wall_alone = await change_phase(server, joiner, codes[: args.changes], [], idle)
        log(f"{args.changes} changes, no viewers: {alone * 1000:.2f} ms CPU each ({wall_alone:.1f} s)")

        viewers = [Viewer() for _ in range(args.viewers)]
        ready = [asyncio.Event() for _ in viewers]
        rss_before_viewers = server.rss_kib()
        for viewer, flag in zip(viewers, ready, strict=True):
            viewer.task = asyncio.create_task(viewer.run(server.port, flag))
        await asyncio.wait_for(asyncio.gather(*(flag.wait() for flag in ready)), 120)
        snapshot = viewers[0].snapshot_bytes
        log(
            f"{args.viewers} viewers connected; snapshot {snapshot / 1024:.1f} KiB each; "
            f"server RSS +{(server.rss_kib() - rss_before_viewers) / 1024:.1f} MiB"
        )
        await asyncio.sleep(0.5)
        idle = idle_cpu_rate(server, 2.0)
        before = [v.delta_bytes for v in viewers]
        watched, wall_watched = await change_phase(
            server, joiner, codes[args.changes : 2 * args.changes], viewers, idle
        )
        per_viewer_change = sum(v.delta_bytes - b for v, b in zip(viewers, before, strict=True)) / (
            args.viewers * args.changes
        )
        log(
            f"{args.changes} changes, {args.viewers} viewers: {watched * 1000:.2f} ms CPU each "
            f"({wall_watched:.1f} s); the feed's share {(watched - alone) * 1000:.2f} ms, "
            f"{(watched - alone) / args.viewers * 1e6:.1f} us per viewer"
        )
        for viewer in viewers:
            if viewer.task is not None:
                viewer.task.cancel()
        await asyncio.gather(*(v.task for v in viewers if v.task is not None), return_exceptions=True)
        for client in (*creators, joiner):
            await client.aclose()
    finally:
        server.stop()
    return (
        f"lobby: {per_viewer_change:.0f} bytes/viewer/change, {watched * 1000:.2f} ms CPU/event "
        f"({(watched - alone) * 1000:.2f} ms of it the feed; {alone * 1000:.2f} ms without viewers) "
        f"with {args.tables} open tables and {args.viewers} viewers; snapshot {snapshot / 1024:.0f} KiB"
    )


# ---------------------------------------------------------------------------------- memory mode


async def live_tables(base: str) -> int:
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        text = (await client.get("/metrics")).text
    found = re.search(r"^durak_live_tables (\S+)$", text, re.MULTILINE)
    return int(float(found.group(1))) if found else -1


@dataclass
class MemoryRun:
    start_kib: int = 0
    after_kib: int = 0
    settled_kib: int = 0
    live: int = -1
    finished: int = 0
    seconds: float = 0.0
    error: str = ""


async def create_and_finish(base: str, count: int, run: MemoryRun, parallel: int = 12) -> None:
    host, first, second = [await guest(base, name) for name in ("host", "first", "second")]
    gate = asyncio.Semaphore(parallel)

    async def one(index: int) -> None:
        async with gate:
            body = {"seats": 2, "timer": 0, "name": f"m{index}"}
            code = (await checked(host.post("/api/tables", json=body), 201)).json()["code"]
            await checked(first.post(f"/api/tables/{code}/join", json={}))
            await checked(second.post(f"/api/tables/{code}/join", json={}))  # the match starts
            await checked(second.post(f"/api/tables/{code}/leave"))  # a forfeit: it is over
            run.finished += 1
            if run.finished % 1000 == 0:
                log(f"  {run.finished} tables finished")

    try:
        await asyncio.gather(*(one(i) for i in range(count)))
    finally:
        for client in (host, first, second):
            await client.aclose()


async def memory_run(workdir: Path, count: int, ttl_s: float) -> MemoryRun:
    """Create and finish ``count`` tables; the server's RSS before, right after and once settled.
    A run that fails (the server stops answering in time) says after how many tables."""
    env = {**LIMITS_RAISED, "DURAK_FINISHED_TABLE_TTL_S": str(ttl_s)}
    server = durak_server(workdir, extra_env=env).start(timeout=60)
    run = MemoryRun()
    try:
        await asyncio.sleep(1.0)
        run.start_kib = server.rss_kib()
        t0 = time.perf_counter()
        try:
            await create_and_finish(server.base_url, count, run)
        except (httpx.HTTPError, RuntimeError) as exc:
            run.error = f"{type(exc).__name__} after {run.finished} tables"
        run.seconds = time.perf_counter() - t0
        run.after_kib = server.rss_kib()
        deadline = time.monotonic() + (20 if ttl_s < 60 else 3)
        with contextlib.suppress(httpx.HTTPError):
            run.live = await live_tables(server.base_url)
            while run.live > 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                run.live = await live_tables(server.base_url)
        await asyncio.sleep(1.0)
        run.settled_kib = server.rss_kib()
    finally:
        server.stop()
    return run


async def memory_mode(args: argparse.Namespace, workdir: Path) -> str:
    count = args.memory_tables
    settings = [("evicted after 1 s", 1.0)]
    if args.compare:
        settings.append(("eviction off", 365 * 86400.0))
    runs = []
    for label, ttl in settings:
        folder = workdir / label.split()[0]
        folder.mkdir()
        run = await memory_run(folder, count, ttl)
        runs.append(run)
        log(
            f"{label}: {run.finished} of {count} tables in {run.seconds:.0f} s{'; ' + run.error if run.error else ''}; "
            f"RSS {run.start_kib / 1024:.0f} MiB at start, {run.after_kib / 1024:.0f} MiB after the last, "
            f"{run.settled_kib / 1024:.0f} MiB settled; {run.live} tables in memory"
        )
    evicted = runs[0]
    line = (
        f"lobby: {evicted.settled_kib / 1024:.0f} MiB server RSS after {evicted.finished} tables created and finished "
        f"({(evicted.settled_kib - evicted.start_kib) / 1024:+.0f} MiB, {evicted.live} left in memory)"
    )
    if args.compare:
        off = runs[1]
        line += (
            f"; without eviction {off.settled_kib / 1024:.0f} MiB "
            f"({(off.settled_kib - off.start_kib) / 1024:+.0f} MiB, {off.live} tables"
            f"{', ' + off.error if off.error else ''})"
        )
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small run, under 30 s (feed mode)")
    parser.add_argument("--memory", action="store_true", help="memory after many tables created and finished")
    parser.add_argument("--tables", type=int, default=None, help="open tables (feed mode)")
    parser.add_argument("--viewers", type=int, default=None, help="lobby viewers (feed mode)")
    parser.add_argument("--changes", type=int, default=None, help="table changes per phase (feed mode)")
    parser.add_argument("--memory-tables", type=int, default=None, help="tables created and finished")
    parser.add_argument("--compare", action="store_true", help="memory mode: once more with eviction off")
    args = parser.parse_args()
    args.tables = args.tables or (100 if args.quick else 1000)
    args.viewers = args.viewers or (20 if args.quick else 200)
    args.changes = min(args.changes or (40 if args.quick else 200), args.tables * 4 // 9)
    args.memory_tables = args.memory_tables or (1000 if args.quick else 10_000)
    with tempfile.TemporaryDirectory(prefix="bench-lobby-") as tmp:
        run = memory_mode if args.memory else feed_mode
        line = asyncio.run(run(args, Path(tmp)))
    with contextlib.suppress(BrokenPipeError):
        print(line, flush=True)


if __name__ == "__main__":
    main()
