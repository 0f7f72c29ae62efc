"""The embedded default (one ``python -m app`` on SQLite, in-process broker and store) survives a
restart: a staked match under way when the server is stopped (SIGTERM) goes on after the next
start where it was — same deal and hands, same version — for players who reconnect with ``hello``
and their last version and send their unanswered command again; nobody forfeits, no acknowledged
move is lost, and the ledger checks out at the end."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.cluster.harness import ROOT, Cluster, free_port, rest, signup, wait_port
from tests.cluster.test_rolling_restart import FAST_S, RollingPlayer, _open_table
from tests.limits import RELAXED_LIMITS_ENV


class OneProcess(Cluster):
    """One server process on a SQLite file, the embedded default: no Redis, no PostgreSQL."""

    def start_one(self, port: int, name: str) -> None:
        env = {
            **os.environ,
            "DURAK_PORT": str(port),
            "DURAK_DATABASE_URL": self.database_url,
            "DURAK_SECRET_KEY": "embedded-test-secret-0123456789",
            "DURAK_ALLOWED_ORIGINS": json.dumps([self.origin(port)]),
            "DURAK_WS_RATE_PER_S": "1000",
            "DURAK_LOG_LEVEL": "info",
            **RELAXED_LIMITS_ENV,
            **self.env,
        }
        env.pop("DURAK_BROKER_URL", None)
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        self.procs[port] = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        wait_port(port)


def test_a_running_match_goes_on_after_the_embedded_server_restarts(tmp_path: Path) -> None:
    database = tmp_path / "durak.sqlite3"
    server = OneProcess(f"sqlite+aiosqlite:///{database}", None, "memory://", logs=tmp_path)
    port = free_port()
    server.ports = [port]
    server.start_one(port, "node0")
    try:
        cookies = [signup(port, "keeper1"), signup(port, "keeper2")]
        code = _open_table(port, cookies[0], 50)
        for cookie in cookies:
            assert rest(port, cookie, "POST", f"/api/tables/{code}/join", json={}).status_code == 200
        players = [RollingPlayer(server, code, cookie, [port], seed=70 + i) for i, cookie in enumerate(cookies)]
        before: dict[str, Any] = {}

        async def play() -> None:
            tasks = [asyncio.create_task(player.run(deadline_s=120)) for player in players]
            started = time.monotonic()
            while min(p.version for p in players) < 12 and time.monotonic() - started < 30:
                await asyncio.sleep(0.05)
            assert all(p.outcome is None for p in players), "the match ended before the restart"
            facts = players[0].last["table"]  # type: ignore[index]
            before.update(version=max(p.version for p in players), commitment=facts["fairness"]["commitment"])
            hands = {p.seat: sorted((p.view or {}).get("hand") or []) for p in players}
            before["hands"] = hands
            await asyncio.to_thread(restart)
            for player in players:
                player.think = FAST_S
            await asyncio.gather(*tasks)

        def restart() -> None:
            stopping = server.terminate(port)
            assert stopping.wait(30) in (0, -signal.SIGTERM)
            server.start_one(port, "node0")

        asyncio.run(play())
    finally:
        server.stop()
    # Each player's first welcome after the restart resumed the table where it was, not anew.
    for player in players:
        welcomes = [m for m in player.messages if m["type"] == "welcome"]
        assert len(welcomes) >= 2, "the player reconnected after the restart"
        after = next(w for w in welcomes if w["version"] >= before["version"] - 2 and w is not welcomes[0])
        assert after["table"]["fairness"]["commitment"] == before["commitment"]
        assert after["table"]["status"] in ("playing", "finished")
    for player in players:
        assert player.outcome is not None and player.outcome.get("forfeit") is None, player.outcome
    server.start_one(port, "node0")
    try:
        with httpx.Client(cookies={"durak_session": cookies[0]}, timeout=10) as http:
            items = http.get(f"http://127.0.0.1:{port}/api/matches?account=me").json()["items"]
            assert len(items) == 1
            detail = http.get(f"http://127.0.0.1:{port}/api/matches/{items[0]['id']}").json()
        assert detail["actions"] == sum(len(p.acked) for p in players)  # every acked move, none twice
        assert detail["fairness"]["commitment"] == before["commitment"]  # the same deal all along
        balances = [int(rest(port, cookie, "GET", "/api/me").json()["balance"]) for cookie in cookies]
        assert sum(balances) == 2000
        outcome = players[0].outcome
        assert outcome is not None
        if not outcome["draw"]:
            loser = next(i for i, p in enumerate(players) if p.seat == outcome["durak"])
            assert balances[loser] == 950
    finally:
        server.stop()
