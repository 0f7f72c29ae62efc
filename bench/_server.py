"""Start a server as its own process on a free loopback port, wait until it answers, stop it.

Used by ``bench/load.py`` and by the end-to-end tests (``tests/e2e``). Only ever talks to 127.0.0.1
and only ever signals the process it started, by its pid.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def proc_rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (from /proc)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (from /proc)."""
    return sum(proc_cpu_split_s(pid))


def proc_cpu_split_s(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds a process has used so far (from /proc)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) / _CLK_TCK, int(fields[12]) / _CLK_TCK  # utime, stime (fields 14 and 15)


def proc_switches(pid: int) -> int:
    """How many times the process's main thread (the event loop) has been switched out so far, for
    a wait (it went to sleep: voluntary) or by the scheduler (from /proc/<pid>/status); 0 where
    that file cannot be read."""
    total = 0
    with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
                total += int(value)
    return total


def proc_syscalls(pid: int) -> tuple[int, int]:
    """(read, write) system calls a process has made so far (``syscr``/``syscw`` of /proc/<pid>/io:
    read, recv and the like; write, send and the like); (0, 0) where that file cannot be read."""
    counts = {"syscr": 0, "syscw": 0}
    with contextlib.suppress(OSError, ValueError), open(f"/proc/{pid}/io") as io:
        for line in io:
            name, _, value = line.partition(":")
            if name in counts:
                counts[name] = int(value)
    return counts["syscr"], counts["syscw"]


def cpu_pressure_total() -> int | None:
    """Microseconds some runnable task waited for a CPU (Linux PSI), machine-wide; None without PSI."""
    try:
        with open("/proc/pressure/cpu") as psi:
            return int(psi.readline().rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


class ServerProcess:
    """One server subprocess; its output goes to ``log_path``."""

    def __init__(self, argv: Sequence[str], env: dict[str, str], port: int, log_path: Path, cwd: Path = ROOT) -> None:
        self.argv = list(argv)
        self.env = env
        self.port = port
        self.log_path = log_path
        self.cwd = cwd  # ``python -m app`` imports the app of this tree
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self, ready_path: str = "/api/health", timeout: float = 30.0) -> ServerProcess:
        return self.spawn().wait_ready(ready_path, timeout)

    def spawn(self) -> ServerProcess:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child, closed in stop()
        self.proc = subprocess.Popen(self.argv, env=self.env, cwd=self.cwd, stdout=self._log, stderr=subprocess.STDOUT)
        return self

    def wait_ready(self, ready_path: str = "/api/health", timeout: float = 30.0) -> ServerProcess:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.base_url + ready_path, timeout=1) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server did not answer {ready_path} within {timeout}s:\n{self.log_tail()}")

    def stop(self, timeout: float = 10.0) -> int | None:
        """SIGINT (uvicorn shuts down gracefully), then SIGKILL after ``timeout``; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode

    def rss_kib(self) -> int:
        return proc_rss_kib(self.pid)

    def cpu_s(self) -> float:
        return proc_cpu_s(self.pid)

    def cpu_split_s(self) -> tuple[float, float]:
        return proc_cpu_split_s(self.pid)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def durak_server(
    workdir: Path,
    *,
    port: int | None = None,
    extra_env: dict[str, str] | None = None,
    python: str = sys.executable,
    argv: Sequence[str] | None = None,
    tree: Path = ROOT,
) -> ServerProcess:
    """``python -m app`` on the embedded default (a fresh SQLite file in ``workdir``, memory://
    broker); its own origin is allowed as always, no other. ``tree``: whose code it runs (a checkout
    of another revision, ``checkout``: started there, that tree first on ``PYTHONPATH``). Not started
    yet: call ``.start()``."""
    port = port or free_port()
    env = {
        # Benchmarks measure the production cost of passwords: a test suite's cheap setting
        # (tests/conftest.py) is not inherited; the end-to-end tests ask for it in extra_env.
        **{name: value for name, value in os.environ.items() if name != "DURAK_PASSWORD_HASHING"},
        "DURAK_HOST": HOST,
        "DURAK_PORT": str(port),
        "DURAK_DATABASE_URL": f"sqlite+aiosqlite:///{workdir / 'durak.sqlite3'}",
        "DURAK_BROKER_URL": "memory://",
        "DURAK_SECRET_KEY": "bench-and-e2e-secret-key-0123456789",
        "DURAK_LOG_LEVEL": "warning",
        # Everything here comes from 127.0.0.1: the per-address limits (issue 14.4) raised.
        "DURAK_MAX_WAITING_TABLES_PER_IP": "100000",
        "DURAK_MAX_LIVE_TABLES_PER_IP": "100000",
        "DURAK_MAX_TABLES_OPENED_PER_IP": "100000",
        "DURAK_MAX_LOBBY_STREAMS_PER_IP": "100000",
        "DURAK_MAX_TABLE_SOCKETS_PER_IP": "100000",
        "PYTHONUNBUFFERED": "1",
        # Benchmarks and the end-to-end tests sign many people up from this one address.
        "DURAK_LOGINS_PER_IP": "100000",
        "DURAK_SIGNUPS_PER_IP": "100000",
        "DURAK_GUESTS_PER_IP": "100000",
        **(extra_env or {}),
    }
    if tree != ROOT:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
    return ServerProcess(argv or [python, "-m", "app"], env, port, workdir / "server.log", cwd=tree)


# A server that says which code it runs before it starts (``python -m app`` otherwise): its first
# line of output is ``APP_FROM`` and the directory of the ``app`` package it imported.
APP_FROM = "bench: app from "
SAYING_WHERE_FROM = (
    "import runpy, app; "
    f"print({APP_FROM!r} + app.__path__[0], flush=True); "
    "runpy.run_module('app', run_name='__main__', alter_sys=True)"
)


def app_dir_of(server: ServerProcess) -> Path:
    """Where the started ``server`` (run with ``SAYING_WHERE_FROM``) imported ``app`` from."""
    for line in server.log_path.read_text(errors="replace").splitlines():
        if line.startswith(APP_FROM):
            return Path(line[len(APP_FROM) :])
    raise RuntimeError(f"the server did not say where its code is from:\n{server.log_tail()}")


def revision(rev: str, tree: Path = ROOT) -> str:
    """The commit ``rev`` names (as ``git rev-parse``), in ``tree``'s repository."""
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=tree, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"bench: {rev!r} is no revision of this repository")
    return done.stdout.strip()


def described(tree: Path = ROOT) -> str:
    """The tree's commit, short, and its subject; ``(+ uncommitted changes)`` when it has them."""
    line = subprocess.run(
        ["git", "log", "-1", "--format=%h %s"], cwd=tree, capture_output=True, text=True, check=True
    ).stdout.strip()
    line = line if len(line) <= 72 else line[:71] + "…"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=tree, capture_output=True)
    return line + (" (+ uncommitted changes)" if dirty.stdout.strip() else "")


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """A temporary ``git worktree`` of ``rev`` (detached), removed when the block ends however it
    ends: the old code a benchmark starts its server from (the same interpreter and packages)."""
    commit = revision(rev)
    parent = Path(tempfile.mkdtemp(prefix="durak-against-"))
    tree = parent / "tree"

    def stopped(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # SIGTERM (``timeout``, a CI runner): clean up as after Ctrl-C

    previous = signal.signal(signal.SIGTERM, stopped)
    try:
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(tree), commit], cwd=ROOT, check=True)
        yield tree
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
        shutil.rmtree(parent, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)
        signal.signal(signal.SIGTERM, previous)
