"""A real Redis Cluster of three masters on free loopback ports, for the tests that need one.

It is started once per test session (:func:`shared_cluster`, used by the ``redis_cluster``
fixtures of ``tests/broker`` and ``tests/cluster``) in a temporary directory, and stopped at the
session's end. A test may stop and start one of its nodes (same port, same ``nodes-PORT.conf``,
so the node comes back as the same member with the same slots, but empty: no persistence).

Where redis-server or redis-cli is missing or the cluster does not form, the tests skip with the
reason; with ``DURAK_REQUIRE_SERVICES=1`` (CI) they fail instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from redis.crc import key_slot

MASTERS = 3


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    """A free port whose cluster bus port (10000 higher, at most 65535) is free too."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port <= 55535 and _bindable(port + 10000):
            return port
        port = 20000 + (port % 30000)
        if _bindable(port) and _bindable(port + 10000):
            return port


def _ask(port: int, *args: str, timeout: float = 5.0) -> str:
    """One command through redis-cli (its reply as text)."""
    done = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.stdout


class RedisClusterServers:
    """Three cluster-enabled redis-servers and the cluster they form; nodes can be stopped and started."""

    def __init__(self, masters: int = MASTERS) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="durak-rcluster-"))
        self.ports = [_free_port() for _ in range(masters)]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def start(self) -> None:
        for port in self.ports:
            self.start_node(port)
        created = subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"127.0.0.1:{port}" for port in self.ports),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout[-500:]} {created.stderr[-500:]}")
        self.wait_ok()

    def start_node(self, port: int) -> None:
        assert port not in self.procs, f"node {port} is running"
        log = open(self.dir / f"redis-{port}.log", "ab")  # noqa: SIM115 - closed with the process
        self.procs[port] = subprocess.Popen(
            [
                "redis-server",
                "--cluster-enabled", "yes",
                "--port", str(port),
                "--bind", "127.0.0.1",
                "--cluster-config-file", str(self.dir / f"nodes-{port}.conf"),
                "--dir", str(self.dir),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
                "--loglevel", "warning",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + 10
        while "PONG" not in _ask(port, "PING", timeout=2):
            if self.procs[port].poll() is not None or time.monotonic() > deadline:
                said = (self.dir / f"redis-{port}.log").read_text(errors="replace")[-300:]
                raise RuntimeError(f"redis-server did not come up on port {port}: {said!r}")
            time.sleep(0.05)

    def stop_node(self, port: int) -> None:
        """SIGTERM one of our nodes (by its pid) and wait for it to exit."""
        proc = self.procs.pop(port)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def wait_ok(self, timeout: float = 30.0) -> None:
        """Until every running node says ``cluster_state:ok``."""
        deadline = time.monotonic() + timeout
        while True:
            states = {port: _ask(port, "CLUSTER", "INFO", timeout=2) for port in self.procs}
            if all("cluster_state:ok" in info for info in states.values()):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cluster did not become ok: {states}")
            time.sleep(0.1)

    def port_of(self, key: str) -> int:
        """The port of the master that serves ``key`` (or channel) now."""
        slot = key_slot(key.encode())
        for port in self.procs:
            lines = _ask(port, "CLUSTER", "SLOTS").split("\n")
            # redis-cli prints the nested reply flattened: start, end, host, port, id, ... per range
            values = [line.strip() for line in lines if line.strip()]
            index = 0
            while index + 3 < len(values):
                start, end, _host, node_port = values[index : index + 4]
                if start.isdigit() and end.isdigit() and node_port.isdigit() and int(start) <= slot <= int(end):
                    return int(node_port)
                index += 1
        raise RuntimeError(f"no node serves slot {slot}")

    def flush(self) -> None:
        """Empty every master."""
        for port in self.procs:
            _ask(port, "FLUSHALL")

    def move_slot(self, slot: int, source: int, target: int) -> None:
        """Reshard one slot from the master on ``source`` to the one on ``target`` (its keys too),
        as ``redis-cli --cluster reshard`` does it."""
        ids = {port: _ask(port, "CLUSTER", "MYID").strip() for port in self.procs}
        _ask(target, "CLUSTER", "SETSLOT", str(slot), "IMPORTING", ids[source])
        _ask(source, "CLUSTER", "SETSLOT", str(slot), "MIGRATING", ids[target])
        while keys := _ask(source, "CLUSTER", "GETKEYSINSLOT", str(slot), "100").split():
            _ask(source, "MIGRATE", "127.0.0.1", str(target), "", "0", "5000", "KEYS", *keys)
        for port in [target, source, *(p for p in self.procs if p not in (source, target))]:
            _ask(port, "CLUSTER", "SETSLOT", str(slot), "NODE", ids[target])

    def stop(self) -> None:
        for port in list(self.procs):
            with contextlib.suppress(Exception):
                self.stop_node(port)
        shutil.rmtree(self.dir, ignore_errors=True)


_shared: RedisClusterServers | None = None
_failed: str | None = None


def _unavailable(reason: str) -> None:
    if os.environ.get("DURAK_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason} and DURAK_REQUIRE_SERVICES=1", pytrace=False)
    pytest.skip(reason)


def shared_cluster() -> RedisClusterServers:
    """The session's cluster, started on first use (skips or fails when it cannot start)."""
    global _shared, _failed
    if _failed is not None:
        _unavailable(_failed)
    if _shared is None:
        missing = [name for name in ("redis-server", "redis-cli") if shutil.which(name) is None]
        if missing:
            _failed = f"{' and '.join(missing)} not found: cannot start a Redis Cluster"
            _unavailable(_failed)
        servers = RedisClusterServers()
        try:
            servers.start()
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            servers.stop()
            _failed = f"could not start a 3-master Redis Cluster: {exc}"
            _unavailable(_failed)
        _shared = servers
    return _shared


def stop_shared_cluster() -> None:
    global _shared
    if _shared is not None:
        _shared.stop()
        _shared = None
