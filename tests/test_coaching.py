"""The coach's worker processes go with the server: ``shutdown_pool`` ends them in the middle of a
job, and a worker whose server was killed exits by itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from app import coaching

ROOT = Path(__file__).resolve().parents[1]


def _gone(pid: int) -> bool:
    """The process has ended (a zombie nobody reaped yet counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


def _until(predicate: object, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def busy(started: str, seconds: float) -> None:
    """A job (in a worker process) that says it has started, then runs on for ``seconds``."""
    Path(started).write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(seconds)


def test_shutting_the_pool_down_ends_a_worker_in_the_middle_of_a_job(tmp_path: Path) -> None:
    started = tmp_path / "started"
    pool = coaching.pool()
    try:
        pool.submit(busy, str(started), 120)  # an analysis that would run on for two minutes
        assert _until(started.exists, 60)
        pids = [int(started.read_text(encoding="utf-8"))]
    finally:
        coaching.shutdown_pool()
    assert _until(lambda: all(_gone(pid) for pid in pids), 10), "a worker outlived the server's shutdown"


def test_a_worker_exits_when_its_server_is_killed(tmp_path: Path) -> None:
    started = tmp_path / "started"
    server = (
        "import os, pathlib, time\n"
        "from app import coaching\n"
        "from tests.test_coaching import busy\n"
        "pool = coaching.pool()\n"
        f"pool.submit(busy, {str(started)!r}, 120)\n"
        f"while not pathlib.Path({str(started)!r}).exists():\n"
        "    time.sleep(0.05)\n"
        "os._exit(0)  # killed: no shutdown, no atexit\n"
    )
    subprocess.run(
        [sys.executable, "-c", server], cwd=ROOT, timeout=120, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    pids = [int(started.read_text(encoding="utf-8"))]
    try:
        assert _until(lambda: all(_gone(pid) for pid in pids), 10), "a worker outlived its killed server"
    finally:
        for pid in pids:
            if not _gone(pid):
                os.kill(pid, 9)
