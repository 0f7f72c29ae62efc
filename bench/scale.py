"""Does the service scale past one process? ``python -m bench.scale [--quick]``

Runs the load benchmark's client (``bench.load``'s scripted websocket players) first against one
server process and then against two server processes joined by Redis (a redis-server of their own,
reached over its unix socket by default, ``--redis tcp`` for its loopback port) and sharing one
database (PostgreSQL when it is reachable, else one SQLite file). Both phases use the Redis broker and
store, so the speed-up measures what a second process adds, not the difference between brokers: every
move is written to Redis before it is pushed, and every push travels through Redis. In the
two-process phase each process owns half of the tables (they are created through it) and their
players connect to it, so a command reaches its table's actor in the same process without a Redis
hop. One client process drives the tables in both phases.

32 tables by default: enough that one process is saturated (commands queue), few enough that the
closed loop keeps p99 under 50 ms when two processes serve them.

Last line: ``scale: 1 proc <N1> commands/s, 2 procs <N2> commands/s, speed-up <S>``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._server import ROOT, ServerProcess, durak_server, free_port, proc_cpu_split_s

PY = sys.executable


def _reachable(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


class Redis:
    """A redis-server of the benchmark's own, on a free loopback port and a unix socket."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.socket = workdir / f"redis-{self.port}.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, transport: str) -> str:
        if transport == "unix":
            return f"unix://{self.socket}?db=0"
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> Redis:
        self.proc = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--unixsocket", str(self.socket), "--unixsocketperm", "700"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            if _reachable(self.port):
                return self
            time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


@contextlib.contextmanager
def database(workdir: Path) -> Any:
    """A scratch PostgreSQL database when the server is reachable, else a SQLite file."""
    if not _reachable(5432):
        yield f"sqlite+aiosqlite:///{workdir / 'scale.sqlite3'}"
        return
    import psycopg

    name = f"durak_scale_{uuid.uuid4().hex[:8]}"
    admin = "postgresql://postgres@127.0.0.1:5432/test"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _servers(workdir: Path, count: int, database_url: str, redis_url: str) -> list[ServerProcess]:
    ports = [free_port() for _ in range(count)]
    origins = [f"http://127.0.0.1:{p}" for p in ports]
    servers = []
    for index, port in enumerate(ports):
        folder = workdir / f"node{index}"
        folder.mkdir(exist_ok=True)
        servers.append(
            durak_server(
                folder,
                port=port,
                extra_env={
                    "DURAK_DATABASE_URL": database_url,
                    "DURAK_BROKER_URL": redis_url,
                    "DURAK_ALLOWED_ORIGINS": json.dumps(origins),
                    "DURAK_WS_RATE_PER_S": "10000",
                    "DURAK_WS_BURST": "10000",
                    "DURAK_NODE_NAME": f"node{index}",
                },
            )
        )
    return servers


_CPUS = os.cpu_count() or 1
_TICK = os.sysconf("SC_CLK_TCK")


def _postgres_cpu_s() -> float:
    """CPU seconds used so far by every PostgreSQL process on the machine (read from /proc)."""
    total = 0.0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            with open(f"/proc/{entry.name}/stat") as stat:
                text = stat.read()
            if "(postgres)" in text[: text.index(")") + 1]:
                total += sum(proc_cpu_split_s(int(entry.name)))
    return total


def _machine_busy_s() -> float:
    """CPU seconds all CPUs have spent not idle so far (/proc/stat)."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / _TICK


_BURN = "import time\nt = time.perf_counter()\nx = 0\nfor i in range({n}): x += i\nprint(time.perf_counter() - t)"


def machine_ceiling(iterations: int = 4_000_000, trials: int = 3) -> float:
    """How much more CPU-bound work two independent processes get done than one on this machine
    right now: 2.0 on two idle, unshared cores; less when the virtual CPUs share a physical core or
    the host is busy. No speed-up of the servers can exceed it. The median of ``trials``
    alternations of one process alone and two together (it is noisy: a single trial can even
    exceed 2 when the host speeds up between the two halves)."""

    def burn(count: int) -> list[float]:
        code = _BURN.format(n=iterations)
        procs = [subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(count)]
        return [float(proc.communicate()[0]) for proc in procs]

    ratios = []
    for _ in range(trials):
        [alone] = burn(1)
        together = burn(2)
        ratios.append(sum(alone / t for t in together))
    return statistics.median(ratios)


def _clients(servers: list[ServerProcess], tables: int, args: argparse.Namespace) -> list[subprocess.Popen[str]]:
    """One load client in both phases; with two servers it spreads the tables over them."""
    argv = [
        PY, "-m", "bench.load", "client", "--mode", "durak", "--tables", str(tables), "--seats", str(args.seats),
        "--warmup", str(args.warmup), "--duration", str(args.duration), "--seed", str(args.seed),
        "--tick-ms", str(args.tick_ms),
    ]  # fmt: skip
    for server in servers:
        argv += ["--url", server.base_url]
    return [subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)]


def _lockstep(
    clients: list[subprocess.Popen[str]], on_event: Callable[[str], None] | None = None
) -> list[dict[str, Any]]:
    """Walk every client through prepared → connect → connected → go → result together;
    ``on_event`` hears each event of the (first) client as it comes (window_start, window_end...)."""
    results: list[dict[str, Any]] = [{} for _ in clients]

    def wait_for(kind: str) -> None:
        for index, client in enumerate(clients):
            assert client.stdout is not None
            for line in client.stdout:
                event = json.loads(line)
                if on_event is not None and index == 0:
                    on_event(event["event"])
                if event["event"] == "result":
                    results[index] = event["result"]
                if event["event"] == kind:
                    break
            else:
                raise RuntimeError(f"a client ended before {kind!r} (exit {client.wait()})")

    def say(word: str) -> None:
        for client in clients:
            assert client.stdin is not None
            client.stdin.write(word + "\n")
            client.stdin.flush()

    wait_for("prepared")
    say("connect")
    wait_for("connected")
    say("go")
    wait_for("result")
    for client in clients:
        client.wait(60)
    return results


def phase(
    workdir: Path, processes: int, args: argparse.Namespace, database_url: str, redis: Redis, round_no: int = 0
) -> dict[str, Any]:
    redis_url = redis.url(args.redis)
    assert redis.proc is not None
    folder = workdir / f"round{round_no}-phase{processes}"
    folder.mkdir()
    servers = _servers(folder, processes, database_url, redis_url)
    for server in servers:
        server.start()
    redis_pid = redis.proc.pid
    marks: dict[str, tuple[float, list[float], float, float, float]] = {}

    def mark(kind: str) -> None:
        if kind in ("window_start", "window_end"):
            marks[kind] = (
                time.perf_counter(),
                [sum(s.cpu_split_s()) for s in servers],
                sum(proc_cpu_split_s(redis_pid)),
                _postgres_cpu_s(),
                _machine_busy_s(),
            )

    try:
        results = _lockstep(_clients(servers, args.tables, args), mark)
        (t0, cpu0, redis0, pg0, busy0), (t1, cpu1, redis1, pg1, busy1) = marks["window_start"], marks["window_end"]
        elapsed = t1 - t0
        cpu = [100 * (b - a) / elapsed for a, b in zip(cpu0, cpu1, strict=True)]
        redis_cpu = 100 * (redis1 - redis0) / elapsed
        pg_cpu = 100 * (pg1 - pg0) / elapsed
        busy = 100 * (busy1 - busy0) / elapsed
    finally:
        for server in servers:
            server.stop()
    commands = sum(r["commands_per_s"] for r in results)
    p99 = max(r["latency_ms"]["p99"] for r in results)
    errors = sum(sum(r["errors"].values()) for r in results)
    client_cpu = sum(r["client_cpu_pct"] for r in results)
    print(
        f"  {processes} proc: {commands:.0f} commands/s, p99 {p99:.1f} ms, errors {errors}, "
        f"CPU in the window: server {' + '.join(f'{c:.0f}%' for c in cpu)}, client {client_cpu:.0f}%, "
        f"redis-server {redis_cpu:.0f}%, postgres {pg_cpu:.0f}%, whole machine {busy:.0f}% of {100 * _CPUS}%",
        file=sys.stderr,
    )
    return {"commands_per_s": commands, "p99_ms": p99, "errors": errors}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tables and a short window (< 30 s)")
    parser.add_argument("--tables", type=int, default=None)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=None)
    parser.add_argument("--duration", type=float, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=None, help="1 proc then 2 procs, this many times (3; quick 1)")
    parser.add_argument(
        "--ceiling",
        action="store_true",
        help="also measure, each round, how much more CPU-bound work two processes get done than one here",
    )
    parser.add_argument(
        "--tick-ms",
        type=float,
        default=1.0,
        help="the client sleeps this long, then handles what arrived (0: it waits in epoll for each message)",
    )
    parser.add_argument(
        "--redis",
        choices=("unix", "tcp"),
        default="unix",
        help="how the servers reach redis-server on this machine (default: its unix socket)",
    )
    args = parser.parse_args(argv)
    args.tables = args.tables or (16 if args.quick else 32)
    args.rounds = args.rounds or (1 if args.quick else 3)
    args.warmup = args.warmup if args.warmup is not None else (1.0 if args.quick else 3.0)
    args.duration = args.duration if args.duration is not None else (3.0 if args.quick else 15.0)
    if shutil.which("redis-server") is None:
        raise SystemExit("bench.scale needs redis-server on PATH")
    print(f"bench.scale: {args.tables} tables x {args.seats} seats, {os.cpu_count()} CPUs", file=sys.stderr)
    workdir = Path(tempfile.mkdtemp(prefix="durak-scale-"))
    ones: list[dict[str, Any]] = []
    twos: list[dict[str, Any]] = []
    ceilings: list[float] = []
    try:
        with database(workdir) as database_url:
            from app.db import migrate

            migrate.upgrade_sync(database_url)
            for round_no in range(args.rounds):
                if args.ceiling:
                    ceilings.append(machine_ceiling())
                    print(f"  machine ceiling {ceilings[-1]:.2f} (two CPU-bound processes vs one)", file=sys.stderr)
                with Redis(workdir) as redis:
                    ones.append(phase(workdir, 1, args, database_url, redis, round_no))
                with Redis(workdir) as redis:
                    twos.append(phase(workdir, 2, args, database_url, redis, round_no))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    one = statistics.median(r["commands_per_s"] for r in ones)
    two = statistics.median(r["commands_per_s"] for r in twos)
    p99_one = max(r["p99_ms"] for r in ones)
    p99_two = max(r["p99_ms"] for r in twos)
    if args.rounds > 1:
        each = ", ".join(f"{b['commands_per_s'] / a['commands_per_s']:.2f}" for a, b in zip(ones, twos, strict=True))
        print(f"  {args.rounds} rounds: speed-up per round {each}; medians below, p99 of the worst", file=sys.stderr)
    if ceilings:
        print(f"  machine ceiling, median of the rounds: {statistics.median(ceilings):.2f}", file=sys.stderr)
    print(
        f"scale: 1 proc {one:.0f} commands/s, 2 procs {two:.0f} commands/s, "
        f"speed-up {two / max(1e-9, one):.2f} (p99 {p99_one:.1f} / {p99_two:.1f} ms)"
    )


if __name__ == "__main__":
    main()
