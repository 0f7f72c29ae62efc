"""Fixtures that run the same broker tests on every backend.

``make_broker`` opens brokers that share one backend and one unique prefix per test, like
several server processes sharing one Redis: for ``memory`` that is a named hub of its own, for
``redis`` the shared server on 6379 with a ``test:<uuid>:`` prefix whose keys are deleted
afterwards, for ``cluster`` the session's own 3-master Redis Cluster (``tests/support/redis_cluster.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

from app.broker import Broker, BrokerOptions, Event, Message, Subscription, open_broker
from app.broker.memory import MemoryBroker
from tests.services import require_redis
from tests.support.clock import FakeClock
from tests.support.redis_cluster import RedisClusterServers, shared_cluster, stop_shared_cluster
from tests.support.wait import wait_until

MakeBroker = Callable[..., Awaitable[Broker]]


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterServers]:
    """The session's 3-master Redis Cluster (skips or, in CI, fails when it cannot start)."""
    yield shared_cluster()
    stop_shared_cluster()


@pytest.fixture(
    params=["memory", pytest.param("redis", marks=pytest.mark.redis), pytest.param("cluster", marks=pytest.mark.redis)]
)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def backend_url(backend: str, request: pytest.FixtureRequest) -> str:
    if backend == "redis":
        return require_redis()
    if backend == "cluster":
        servers: RedisClusterServers = request.getfixturevalue("redis_cluster")
        return servers.url
    return f"memory://test-{uuid.uuid4().hex}"


class ServerTime:
    """Time as a real server keeps it: Redis expires leases on its own clock, so a test waits."""

    async def advance(self, seconds: float) -> None:
        await asyncio.sleep(seconds)  # a real Redis server expires the lease: only real time moves it


LeaseTime = FakeClock | ServerTime


@pytest.fixture
def lease_time(backend: str) -> LeaseTime:
    """What lease expiry runs on: a fake clock for ``memory`` (no waiting), the server's for ``redis``."""
    return FakeClock() if backend == "memory" else ServerTime()


@pytest.fixture
async def make_broker(backend: str, backend_url: str, lease_time: LeaseTime) -> AsyncIterator[MakeBroker]:
    default_prefix = f"test:{uuid.uuid4().hex}:"
    prefixes = {default_prefix}
    opened: list[Broker] = []

    async def make(**options: Any) -> Broker:
        options.setdefault("prefix", default_prefix)
        prefixes.add(options["prefix"])
        broker: Broker
        if isinstance(lease_time, FakeClock):
            broker = MemoryBroker(backend_url, BrokerOptions(**options), clock=lease_time)
        else:
            broker = open_broker(backend_url, BrokerOptions(**options))
        await broker.start()
        opened.append(broker)
        return broker

    yield make
    for broker in opened:
        await broker.aclose()
    if backend == "redis":
        client = Redis.from_url(backend_url)
        try:
            for prefix in prefixes:
                keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=500)]
                if keys:
                    await client.delete(*keys)
        finally:
            await client.aclose()


@pytest.fixture
async def broker(make_broker: MakeBroker) -> Broker:
    return await make_broker()


async def next_event(sub: Subscription, timeout: float = 2.0) -> Event:
    return await asyncio.wait_for(sub.receive(), timeout)


async def assert_silent(sub: Subscription, via: Broker) -> Message:
    """Nothing is on its way to ``sub``: a marker published on its channel through ``via`` now
    arrives next. (A publish returns once the backend has handed the message to every subscriber's
    connection, so anything sent before would arrive before the marker; no guessed wait.) Returns
    the marker, which the channel's other subscribers receive too."""
    marker = Message(sub.channel, f"marker-{uuid.uuid4().hex}".encode())
    await via.publish(sub.channel, marker.data)
    got = await next_event(sub)
    assert got == marker, f"unexpected event on {sub!r}: {got!r}"
    return marker


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class OwnRedis:
    """A private redis-server on a free loopback port, which the test may kill and restart."""

    def __init__(self, binary: str, extra_args: tuple[str, ...] = ()) -> None:
        self.binary = binary
        self.extra_args = extra_args  # more redis-server options (TLS, say)
        self.port = free_port()
        self.socket = os.path.join(tempfile.mkdtemp(prefix="redis-"), "redis.sock")  # short: paths <108 bytes
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def unix_url(self) -> str:
        return f"unix://{self.socket}?db=0"

    def start(self) -> None:
        assert self.proc is None, "already running"
        self.proc = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--loglevel", "warning",
                "--unixsocket", self.socket,
                "--unixsocketperm", "700",
                *self.extra_args,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        proc = self.proc

        def answers() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"redis-server exited before it came up on port {self.port}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    return conn.recv(16).startswith(b"+PONG")
            except OSError:
                return False

        wait_until(answers, 5, f"redis-server answers on port {self.port}", every=0.02)  # a real process

    def kill(self) -> None:
        """SIGKILL our own server: a crash, its sockets closed by the kernel."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(timeout=5)
            self.proc = None

    def stop(self) -> None:
        """SIGTERM our own server: a clean shutdown (it flushes its append-only file, if it has one)."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
            self.proc = None

    def pause(self) -> None:
        """SIGSTOP our own server: sockets stay open but nothing answers."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)


def redis_server_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server binary not found: cannot run the tests that need a private Redis"
        if os.environ.get("DURAK_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{reason} and DURAK_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(reason)
    return binary


@contextlib.contextmanager
def running(server: OwnRedis) -> Iterator[OwnRedis]:
    server.start()
    try:
        yield server
    finally:
        if server.proc is not None:
            server.resume()
        server.kill()


@pytest.fixture
def own_redis() -> Iterator[OwnRedis]:
    with running(OwnRedis(redis_server_binary())) as server:
        yield server
