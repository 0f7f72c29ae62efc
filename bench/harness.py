"""What the server benchmarks share (``bench.capacity``, ``bench.scale``, ``bench.match_end``): the
services a benchmark server runs on (a scratch PostgreSQL database, a redis-server of its own) and
the reports an instrumented server writes (bench/instrumented_server.py)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench._server import ROOT, free_port


def reachable(port: int) -> bool:
    """Whether something accepts connections on ``port`` of 127.0.0.1."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
        return True
    return False


class RedisServer:
    """A redis-server of the benchmark's own, on a free loopback port and a unix socket."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.socket = workdir / f"redis-{self.port}.sock"
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, transport: str) -> str:
        if transport == "unix":
            return f"unix://{self.socket}?db=0"
        return f"redis://127.0.0.1:{self.port}/0"

    def __enter__(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [
                *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--unixsocket", str(self.socket), "--unixsocketperm", "700"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(100):
            if reachable(self.port):
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
    if not reachable(5432):
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


def speed_probe_note(ms: float | None) -> str:
    """The speed probe's figure, as printed beside a window's CPU figures."""
    return "speed probe n/a" if ms is None else f"speed probe {ms:.2f} ms per reference match"


def print_profile(path: Path, what: str, top: int = 25) -> None:
    """The functions that took most of the CPU in a cProfile dump (own time)."""
    import pstats

    try:
        stats = pstats.Stats(str(path))
    except OSError as exc:
        print(f"  no profile of {what}: {exc}", file=sys.stderr)
        return
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
    total = sum(row[2] for _, row in rows) or 1.0
    print(f"  profile of {what}: {total:.1f} s of CPU, own time by function", file=sys.stderr)
    for (filename, line, name), row in rows[:top]:
        where = filename.split("site-packages/")[-1].split(str(ROOT) + "/")[-1]
        share = 100 * row[2] / total
        print(f"    {row[2]:7.2f} s {share:4.1f}% {row[1]:9d} calls  {where}:{line} {name}", file=sys.stderr)
    sys.stderr.flush()


def wait_for_file(path: Path | None, timeout: float = 10.0) -> None:
    """Until the instrumented server has written its report (it does so from a signal handler)."""
    deadline = time.monotonic() + timeout
    while path is not None and not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # written whole
