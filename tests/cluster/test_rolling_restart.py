"""A rolling restart, as an operator does it (docs/operations.md): two server processes on PostgreSQL
and a Redis of their own, 20 live 2-seat matches (free and staked, the two players of a match on
different processes), and every process restarted once by SIGTERM while they play. The scripted
clients do what the protocol asks of a client (docs/protocol.md): on ``bye`` they wait the
``reconnect_after_ms`` they are told, connect to the other process, say ``hello`` with their last
version and send their unanswered command again, same id. The deploy must cost nobody his match:
no forfeit, no acknowledged move lost (nor applied twice), coins conserved, and no command waits
more than 5 s for its answer."""

from __future__ import annotations

import asyncio
import json
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import websockets

from bench._client import PlayerCore
from tests.cluster.harness import Cluster, rest, signup

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

MATCHES = 22  # at least 20 of them live at each restart
LIVE_AT_RESTART = 20
MAX_STALL_S = 5.0
THINK_S = (0.5, 0.8)  # a scripted player's pause before each move while the restarts go on: they outlast them
FAST_S = (0.01, 0.03)  # ... and once both processes are back: the matches are played out


class RollingPlayer(PlayerCore):
    """One seat, over a websocket that moves between processes as the servers restart."""

    def __init__(self, cluster: Cluster, code: str, cookie: str, ports: list[int], seed: int) -> None:
        super().__init__(f"roll{seed}")
        self.cluster, self.code, self.cookie, self.ports = cluster, code, cookie, list(ports)
        self.rng = random.Random(seed)
        self.pending: dict[str, Any] | None = None  # the unanswered command, kept across connections
        self.pending_since = 0.0
        self.acked: set[str] = set()
        self.stalls: list[float] = []  # per command: first sent -> its answer
        self.outcome: dict[str, Any] | None = None
        self.byes: list[dict[str, Any]] = []
        self.reconnects = 0
        self.ready_for: int | None = None
        self.think = THINK_S

    async def run(self, deadline_s: float) -> None:
        stop_at = time.monotonic() + deadline_s
        while self.outcome is None and time.monotonic() < stop_at:
            port = self.ports[0]
            wait_s = 0.2
            try:
                async with websockets.connect(
                    f"ws://127.0.0.1:{port}/ws/tables/{self.code}",
                    additional_headers={"Cookie": f"durak_session={self.cookie}", "Origin": self.cluster.origin(port)},
                    open_timeout=5,
                    close_timeout=1,
                ) as ws:
                    await ws.send(json.dumps(self.resume_hello()))
                    if self.pending is not None:  # the command its last connection left unanswered
                        await ws.send(json.dumps(self.pending))
                    await self._play(ws, stop_at)
            except (OSError, websockets.ConnectionClosed, TimeoutError):
                pass
            if self.outcome is None:
                if self.byes and self.byes[-1].get("at", 0) > time.monotonic() - 5:
                    wait_s = self.byes[-1]["reconnect_after_ms"] / 1000
                self.reconnects += 1
                self.ports = self.ports[1:] + self.ports[:1]
                await asyncio.sleep(wait_s)

    async def _play(self, ws: Any, stop_at: float) -> None:
        mover: asyncio.Task[None] | None = None
        try:
            while time.monotonic() < stop_at:
                try:
                    raw = await asyncio.wait_for(ws.recv(), timeout=1.0)
                except TimeoutError:
                    continue
                message = self.take(json.loads(raw))
                kind = message["type"]
                if kind == "bye":
                    self.byes.append({**message, "at": time.monotonic()})
                elif kind == "ack" and self.pending is not None and message.get("id") == self.pending["id"]:
                    self._answered()
                    self.acked.add(message["id"])
                elif kind == "error" and self.pending is not None and message.get("id") == self.pending["id"]:
                    # The table moved on between the view and the command (a race of the game, not
                    # of the restart); a command the restart lost would be answered "unavailable".
                    assert message["code"] not in ("unavailable", "moved"), message
                    self._answered()
                if kind in ("welcome", "update", "presence"):
                    await self._confirm_ready(ws)
                if self.view is not None and self.view.get("outcome"):
                    self.outcome = self.view["outcome"]
                    if self.pending is None:
                        return
                if self.pending is None and self.outcome is None and (mover is None or mover.done()):
                    mover = asyncio.create_task(self._move_soon(ws))
        finally:
            if mover is not None:
                mover.cancel()

    def _answered(self) -> None:
        self.stalls.append(time.monotonic() - self.pending_since)
        self.pending = None

    async def _move_soon(self, ws: Any) -> None:
        await asyncio.sleep(self.rng.uniform(*self.think))
        view = self.view
        if self.pending is not None or view is None or self.seat is None or view.get("outcome"):
            return
        if self.seat not in view["decision"]["seats"]:
            return
        legal = [a for a in view["legal"] if a["type"] != "challenge"]
        if legal:
            self.pending = self.command(self.rng.choice(legal))
            self.pending_since = time.monotonic()
            await ws.send(json.dumps(self.pending))

    async def _confirm_ready(self, ws: Any) -> None:
        """A staked match starts once both seats confirm the ready check (RULES §8)."""
        table = (self.last or {}).get("table") or {}
        check = table.get("ready_check")
        if check is None or self.seat is None or self.seat in check["ready"] or self.ready_for == self.version:
            return
        self.ready_for = self.version
        await ws.send(json.dumps({"type": "ready", "id": f"ready-{self.name}-{self.version}"}))


def _open_table(port: int, cookie: str, stake: int) -> str:
    body = {"stake": stake, "timer": 0, "bot_delay_ms": 0, "deck": 52}
    response = rest(port, cookie, "POST", "/api/tables", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["code"])


def _restart(cluster: Cluster, port: int, name: str) -> None:
    """SIGTERM, wait for the process to end, start it again on the same port."""
    stopping = cluster.terminate(port)
    stopping.wait(30)
    cluster.start_one(port, name)


def test_a_rolling_restart_forfeits_nobody_and_loses_no_move(cluster: Cluster) -> None:
    # Short limits: a seat left waiting by the restart would forfeit within the test's time.
    cluster.env.update({"DURAK_DISCONNECT_GRACE_S": "20", "DURAK_IDLE_LIMIT_S": "30"})
    cluster.start(2)
    a, b = cluster.ports
    with ThreadPoolExecutor(2) as pool:
        cookies = list(pool.map(lambda i: signup(a if i % 2 == 0 else b, f"roll{i}"), range(2 * MATCHES)))
    stakes = [10 if index % 2 else 0 for index in range(MATCHES)]

    def set_up(index: int) -> tuple[str, list[str], int, list[RollingPlayer]]:
        pair = cookies[2 * index : 2 * index + 2]
        code = _open_table((a, b)[index % 2], pair[0], stakes[index])
        players = []
        for seat, cookie in enumerate(pair):
            home = (a, b)[(index + seat) % 2]  # the two players of a match on different processes
            assert rest(home, cookie, "POST", f"/api/tables/{code}/join", json={}).status_code == 200
            other = b if home == a else a
            players.append(RollingPlayer(cluster, code, cookie, [home, other], seed=1000 * index + seat))
        return code, pair, stakes[index], players

    matches: list[tuple[str, list[str], int, list[RollingPlayer]]] = []
    live_at_restarts: list[int] = []

    async def play() -> None:
        tasks = []
        for index in range(MATCHES):  # each match's players connect as soon as it is set up
            match = await asyncio.to_thread(set_up, index)
            matches.append(match)
            tasks += [asyncio.create_task(player.run(deadline_s=120)) for player in match[3]]

        def live() -> int:
            return sum(1 for *_, players in matches if all(p.version >= 4 and p.outcome is None for p in players))

        everyone.extend(player for *_, players in matches for player in players)
        started = time.monotonic()
        while time.monotonic() - started < 20 and not all(p.version >= 4 for p in everyone):
            await asyncio.sleep(0.1)
        for port, name in ((a, "node0"), (b, "node1")):
            live_at_restarts.append(live())
            await asyncio.to_thread(_restart, cluster, port, name)
        for player in everyone:
            player.think = FAST_S
        await asyncio.gather(*tasks)

    everyone: list[RollingPlayer] = []
    asyncio.run(play())
    states = [(p.version, (p.outcome or {}).get("reason")) for p in everyone]
    assert min(live_at_restarts) >= LIVE_AT_RESTART, f"matches live at each restart: {live_at_restarts}; {states}"
    assert all(player.byes for player in everyone), "every socket was on a restarted process: each got a bye"
    assert all(player.outcome is not None for player in everyone), [p.version for p in everyone]
    forfeits = [
        code for code, *_, players in matches if players[0].outcome and players[0].outcome.get("forfeit") is not None
    ]
    assert forfeits == [], f"forfeits caused by the restart: {forfeits}"
    stall = max(max(player.stalls) for player in everyone)
    assert stall <= MAX_STALL_S, f"a command waited {stall:.1f} s for its answer"

    async def recorded(code: str, cookie: str, port: int) -> dict[str, Any]:
        async with httpx.AsyncClient(cookies={"durak_session": cookie}, timeout=10) as http:
            for _ in range(100):
                items = (await http.get(f"http://127.0.0.1:{port}/api/matches?account=me")).json()["items"]
                if items:
                    detail: dict[str, Any] = (
                        await http.get(f"http://127.0.0.1:{port}/api/matches/{items[0]['id']}")
                    ).json()
                    return detail
                await asyncio.sleep(0.1)
        raise AssertionError(f"table {code}: its match was not recorded")

    async def check_all() -> list[dict[str, Any]]:
        return await asyncio.gather(*(recorded(code, pair[0], a) for code, pair, *_ in matches))

    details = asyncio.run(check_all())
    for (code, pair, stake, players), detail in zip(matches, details, strict=True):
        # Every acknowledged move is in the match's log, and nothing else (none applied twice).
        assert detail["actions"] == sum(len(p.acked) for p in players), code
        balances = [int(rest(a, cookie, "GET", "/api/me").json()["balance"]) for cookie in pair]
        assert sum(balances) == 2000, (code, balances)
        outcome = players[0].outcome
        assert outcome is not None
        if stake and not outcome["draw"]:
            loser = next(i for i, p in enumerate(players) if p.seat == outcome["durak"])
            assert balances[loser] == 1000 - stake, (code, balances)
    print(
        f"rolling restart: {MATCHES} matches, max stall {stall:.2f} s, {sum(p.reconnects for p in everyone)} reconnects"
    )
