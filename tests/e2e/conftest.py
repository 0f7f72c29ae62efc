"""End-to-end fixtures: the real server (``python -m app``) as a subprocess on a free loopback port,
with a temporary SQLite file, the in-process broker and the websocket rate limit raised."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench._server import ServerProcess, durak_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    workdir = tmp_path_factory.mktemp("e2e-server")
    proc = durak_server(
        workdir,
        python=str(Path(sys.executable)),
        extra_env={
            "DURAK_WS_RATE_PER_S": "1000",
            "DURAK_WS_BURST": "200",
            "DURAK_LOG_LEVEL": "warning",
            "DURAK_RELATED_SAME_IP": "false",  # every account signs up from 127.0.0.1 (docs/integrity.md)
            "DURAK_NEW_ACCOUNT_MATCHES": "0",  # fresh accounts play for coins at once
            "DURAK_PASSWORD_HASHING": "test",  # as the whole suite (tests/conftest.py); bench/_server.py drops it
        },
    )
    proc.start(timeout=60)
    try:
        yield proc
    finally:
        code = proc.stop()
        # A clean shutdown (SIGINT) exits 0; anything else means the server crashed under the tests.
        assert code == 0, f"server exited with {code}:\n{proc.log_tail()}"
        errors = [line for line in proc.log_path.read_text(errors="replace").splitlines() if "Traceback" in line]
        assert not errors, f"the server logged exceptions:\n{proc.log_tail(80)}"
