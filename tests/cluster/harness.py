"""Several real server processes on loopback sharing PostgreSQL and a Redis of their own (or the
session's Redis Cluster), and websocket players that can move between them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from app.tables.registry import lease_name
from bench._client import PlayerCore
from tests.db.support import PostgresServer
from tests.limits import RELAXED_LIMITS_ENV
from tests.services import require_redis
from tests.support.redis_cluster import RedisClusterServers
from tests.support.wait import wait_until

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int, timeout: float = 60.0) -> None:  # a loaded CI machine starts Python slowly
    """Until a process listens on ``port`` (a real server starting)."""

    def listening() -> bool:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
        return False

    wait_until(listening, timeout, f"something listens on {port}", every=0.05)


class RedisServer:
    """A redis-server of the test's own, on a free port, that the test may stop and start."""

    def __init__(self) -> None:
        require_redis()  # the binary and a working Redis setup are part of the environment
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


@dataclass
class Cluster:
    database_url: str
    redis: RedisServer | None  # the processes' own redis-server; None on a Redis Cluster
    broker_url: str
    ports: list[int] = field(default_factory=list)
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    logs: Path = Path(".")
    # Every Redis key and channel of these processes begins with it (DURAK_REDIS_PREFIX): a prefix
    # of their own, as a second deployment sharing a Redis would have.
    prefix: str = field(default_factory=lambda: f"dk{uuid.uuid4().hex[:6]}:")
    env: dict[str, str] = field(default_factory=dict)  # more settings for every process (a test's own)

    def origin(self, port: int) -> str:
        return f"http://127.0.0.1:{port}"

    def start(self, count: int) -> None:
        self.ports = [free_port() for _ in range(count)]
        for index, port in enumerate(self.ports):
            self.start_one(port, f"node{index}")

    def start_one(self, port: int, name: str) -> None:
        env = {
            **os.environ,
            "DURAK_PORT": str(port),
            "DURAK_DATABASE_URL": self.database_url,
            "DURAK_BROKER_URL": self.broker_url,
            "DURAK_REDIS_PREFIX": self.prefix,
            "DURAK_SECRET_KEY": "cluster-test-secret-0123456789",
            "DURAK_ALLOWED_ORIGINS": json.dumps([self.origin(p) for p in self.ports]),
            "DURAK_WS_RATE_PER_S": "1000",
            "DURAK_NODE_NAME": name,
            "DURAK_LOG_LEVEL": "info",  # takeovers, fencing, settlements: shown when a test fails
            **RELAXED_LIMITS_ENV,
            **self.env,
        }
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        self.procs[port] = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        wait_port(port)

    def log_tails(self, lines: int = 80) -> str:
        """The last lines of every process's log, without the access lines (a failed test shows them)."""
        parts = []
        for path in sorted(self.logs.glob("node*.log")):
            kept = [
                line
                for line in path.read_text(errors="replace").splitlines()
                if '" 200' not in line
                and "WebSocket /" not in line
                and "connection open" not in line
                and "connection closed" not in line
            ]
            parts.append(
                f"== {path.name} (last {min(lines, len(kept))} of {len(kept)} lines)\n" + "\n".join(kept[-lines:])
            )
        return "\n".join(parts)

    def kill(self, port: int) -> None:
        proc = self.procs.pop(port)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def terminate(self, port: int) -> subprocess.Popen[bytes]:
        """SIGTERM, as a rolling restart stops a process; it is not waited for (the caller may)."""
        proc = self.procs.pop(port)
        proc.send_signal(signal.SIGTERM)
        return proc

    def redis_client(self) -> Any:
        import redis

        if self.redis is None:
            host, _, port = self.broker_url.removeprefix("redis+cluster://").split(",")[0].rpartition(":")
            return redis.RedisCluster(host=host, port=int(port))
        return redis.Redis.from_url(self.redis.url)

    def stop(self) -> None:
        for proc in self.procs.values():
            proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:  # never leave a server behind (its database is dropped next)
                proc.kill()
                proc.wait(10)
        self.procs.clear()

    def node_of_owner(self, code: str) -> int | None:
        """The port of the process that holds the table's lease."""
        client = self.redis_client()
        try:
            value = client.get(f"{self.prefix}lease:{lease_name(code)}")
        finally:
            client.close()
        if value is None:
            return None
        owner = value.decode().split(":", 1)[1]
        index = int(owner.split("-", 1)[0].removeprefix("node"))
        return self.ports[index]


@contextlib.contextmanager
def servers(
    tmp_path: Path, postgres: PostgresServer, template: str, redis_cluster: RedisClusterServers | None = None
) -> Iterator[Cluster]:
    """A database of their own for the processes (a copy of the session's migrated template), and a
    redis-server of their own or, given one, the session's Redis Cluster (emptied first: what
    earlier tests left there is no table of ours)."""
    name = postgres.copy_of(template)
    database_url = postgres.url_for(name)
    redis_server: RedisServer | None = None
    if redis_cluster is None:
        redis_server = RedisServer()
        redis_server.start()
        broker_url = redis_server.url
    else:
        redis_cluster.flush()
        broker_url = redis_cluster.url
    cluster = Cluster(database_url, redis_server, broker_url, logs=tmp_path)
    try:
        yield cluster
    finally:
        cluster.stop()
        if redis_server is not None:
            redis_server.stop()
        postgres.discard(name)  # dropped WITH (FORCE) on the worker's thread


@pytest.fixture
def cluster(tmp_path: Path, postgres_server: PostgresServer, postgres_template: str) -> Iterator[Cluster]:
    with servers(tmp_path, postgres_server, postgres_template) as cluster:
        yield cluster


@pytest.fixture
def cluster_on_redis_cluster(
    tmp_path: Path, postgres_server: PostgresServer, postgres_template: str, redis_cluster: RedisClusterServers
) -> Iterator[Cluster]:
    """Server processes whose broker is ``redis+cluster://`` on the session's 3-master Redis Cluster."""
    with servers(tmp_path, postgres_server, postgres_template, redis_cluster) as cluster:
        yield cluster


def signup(port: int, name: str) -> str:
    response = httpx.post(
        f"http://127.0.0.1:{port}/api/auth/signup", json={"name": name, "password": "pass-word-123"}, timeout=10
    )
    assert response.status_code == 201, response.text
    return response.cookies["durak_session"]


def rest(port: int, cookie: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    return httpx.request(
        method, f"http://127.0.0.1:{port}{path}", cookies={"durak_session": cookie}, timeout=15, **kwargs
    )


class Player(PlayerCore):
    """Plays one seat over a real websocket (on the scripted player core of ``bench/_client.py``),
    moving to another server when its server dies. Every
    command is retried with the same id until it is answered, so a takeover never loses a move and
    the table's duplicate check keeps it from being applied twice."""

    def __init__(self, cluster: Cluster, code: str, cookie: str, ports: list[int], seed: int) -> None:
        self.cluster = cluster
        self.code = code
        self.cookie = cookie
        self.ports = ports
        super().__init__(f"seat{seed}")
        self.rng = random.Random(seed)
        self.acked: set[str] = set()
        self.reconnects = 0
        self.outcome: dict[str, Any] | None = None
        self.pending: dict[str, Any] | None = None
        self.holding = False  # a test holds the players' next moves for a while (they keep reading)
        self.ready_sent_for: int | None = None  # the table version of the ready check last confirmed

    async def run(self, deadline_s: float = 90.0) -> None:
        stop_at = time.monotonic() + deadline_s
        self.pending = None
        while time.monotonic() < stop_at and self.outcome is None:
            port = self.ports[0]
            try:
                async with websockets.connect(
                    f"ws://127.0.0.1:{port}/ws/tables/{self.code}",
                    additional_headers={"Cookie": f"durak_session={self.cookie}", "Origin": self.cluster.origin(port)},
                    open_timeout=5,
                ) as ws:
                    await ws.send(json.dumps(self.resume_hello()))
                    await self._play(ws, stop_at)
            except (OSError, websockets.ConnectionClosed, TimeoutError):
                pass
            if self.outcome is None:
                self.reconnects += 1
                self.ports = self.ports[1:] + self.ports[:1]
                await asyncio.sleep(0.2)  # a reconnecting client's pause before the next real server
        assert self.outcome is not None, f"seat {self.seat}: match did not finish (version {self.version})"

    async def _confirm_ready(self, ws: Any, message: dict[str, Any]) -> None:
        """Before a staked match, confirm once per ready check this seat has not confirmed yet (RULES
        §8). Not one of the match's moves: it is neither ``pending`` nor counted as ``acked``."""
        table = message.get("table") or {}
        check = table.get("ready_check")
        if check is None or self.seat is None or self.seat in check["ready"]:
            return
        if self.ready_sent_for != message.get("version"):
            self.ready_sent_for = message.get("version")
            await ws.send(json.dumps({"type": "ready", "id": f"ready-{self.name}-{self.ready_sent_for}"}))

    async def _await_ack(self, ws: Any, cmd_id: str) -> None:
        with contextlib.suppress(TimeoutError, websockets.ConnectionClosed):
            async with asyncio.timeout(5):
                while True:
                    message = json.loads(await ws.recv())
                    if message["type"] == "ack" and message.get("id") == cmd_id:
                        self.acked.add(cmd_id)
                        return

    async def _play(self, ws: Any, stop_at: float) -> None:
        """Play on one connection. The unanswered command lives in ``self.pending`` so that it survives
        the connection: a move the dying server applied but never acked is sent again, same id."""
        sent_at = 0.0
        if self.pending is not None:
            await ws.send(json.dumps(self.pending))
            sent_at = time.monotonic()
        while time.monotonic() < stop_at:
            try:
                raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
            except TimeoutError:
                if self.pending is not None and time.monotonic() - sent_at > 2.0:
                    await ws.send(json.dumps({**self.pending, "version": self.version}))  # same id: at most once
                    sent_at = time.monotonic()
                elif self.pending is None:
                    await ws.send(json.dumps(self.resume_hello()))
                continue
            message = self.take(json.loads(raw))
            await self._confirm_ready(ws, message)
            if message["type"] in ("welcome", "update"):
                if self.view is not None and self.view.get("outcome"):
                    self.outcome = self.view["outcome"]
                    if self.pending is not None:  # the update comes before the ack of the final move; or
                        # this is the welcome of a new connection, and the old one died before the ack:
                        # ask again (same id: the table answers from what it recorded, never twice)
                        await ws.send(json.dumps(self.pending))
                        await self._await_ack(ws, self.pending["id"])
                    return
            elif message["type"] == "ack":
                if self.pending is not None and message.get("id") == self.pending["id"]:
                    self.acked.add(self.pending["id"])
                    self.pending = None
            elif message["type"] == "error" and self.pending is not None and message.get("id") == self.pending["id"]:
                if message.get("code") in ("unavailable", "moved"):
                    # Retryable (docs/protocol.md): the same id again, as sent. A command relayed to
                    # the table's owner while Redis went away may have been applied with its ack lost;
                    # the same id is answered from the record (never applied twice), or refused stale.
                    await asyncio.sleep(0.5)
                    await ws.send(json.dumps(self.pending))
                    sent_at = time.monotonic()
                else:
                    self.pending = None  # refused (stale, illegal): decide again from a fresh view
            if self.pending is None and self.view is not None and self.seat is not None:
                waiting = self.view["decision"]["seats"]
                legal = [a for a in self.view["legal"] if a["type"] != "challenge"]
                if self.seat in waiting and legal and not self.holding:
                    action = self.rng.choice(legal)
                    self.pending = self.command(action)
                    await ws.send(json.dumps(self.pending))
                    sent_at = time.monotonic()
