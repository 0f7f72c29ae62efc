"""What a restart or a crash of a server process must not cost a player, on real processes (PostgreSQL,
a redis-server of their own): a command sent while the table has no owner is answered once it has
one; a player whose process died is served where he reconnects, the table's own process included;
a stopping server says ``bye`` (with when to reconnect) before it closes the sockets with 1012; and
every Redis key and channel carries the deployment's prefix (``DURAK_REDIS_PREFIX``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import websockets

from tests.cluster.harness import Cluster, rest, signup
from tests.cluster.test_cluster import _open_staked_table

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


class Socket:
    """One player's raw websocket: everything it received, and his latest view. It never sends a
    command again by itself (unlike the harness's ``Player``): what the server does with one
    command is what is tested."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.received: list[dict[str, Any]] = []
        self.version = -1
        self.seat: int | None = None
        self.view: dict[str, Any] | None = None
        self.close_code: int | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, cluster: Cluster, port: int, code: str, cookie: str) -> AsyncIterator[Socket]:
        ws = await websockets.connect(
            f"ws://127.0.0.1:{port}/ws/tables/{code}",
            additional_headers={"Cookie": f"durak_session={cookie}", "Origin": cluster.origin(port)},
            open_timeout=10,
            close_timeout=1,
        )
        try:
            yield cls(ws)
        finally:
            with contextlib.suppress(websockets.ConnectionClosed, OSError):
                await ws.close()

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def until(self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 20.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                message = self._take(json.loads(await self.ws.recv()))
                if wanted(message):
                    return message

    async def hello(self, timeout: float = 20.0) -> dict[str, Any]:
        await self.send({"type": "hello", "last_version": self.version})
        return await self.until(lambda m: m["type"] == "welcome", timeout)

    async def answer(self, cmd_id: str, timeout: float = 20.0) -> dict[str, Any]:
        """The ack or error of command ``cmd_id``."""
        return await self.until(lambda m: m["type"] in ("ack", "error") and m.get("id") == cmd_id, timeout)

    async def reach(self, version: int, timeout: float = 20.0) -> None:
        """Until an update or welcome has brought the table to ``version`` (or later)."""
        if self.version < version:
            await self.until(lambda m: m["type"] in ("update", "welcome") and m["version"] >= version, timeout)

    async def until_closed(self, timeout: float = 20.0) -> int | None:
        """Read until the server closes the socket: its close code."""
        with contextlib.suppress(websockets.ConnectionClosed):
            await self.until(lambda m: False, timeout)
        self.close_code = self.ws.close_code
        return self.close_code

    async def read_for(self, seconds: float) -> None:
        """Whatever else arrives within ``seconds``."""
        with contextlib.suppress(TimeoutError):
            await self.until(lambda m: False, seconds)

    def _take(self, message: dict[str, Any]) -> dict[str, Any]:
        self.received.append(message)
        if message["type"] in ("welcome", "update") and message["version"] >= self.version:
            self.version, self.seat, self.view = message["version"], message["seat"], message["view"]
        return message

    def dealt(self) -> bool:
        return self.view is not None and bool(self.view.get("decision"))

    def to_move(self) -> bool:
        return self.view is not None and self.seat in self.view["decision"]["seats"]

    def a_move(self, cmd_id: str) -> dict[str, Any]:
        """A legal move from the latest view, as a command with ``cmd_id``."""
        assert self.view is not None
        action = next(a for a in self.view["legal"] if a["type"] != "challenge")
        return {**{k: v for k, v in action.items() if k != "seat"}, "id": cmd_id, "version": self.version}

    def answers(self, cmd_id: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] in ("ack", "error") and m.get("id") == cmd_id]


async def ready_up(*players: Socket) -> None:
    """The ready check of a staked match (docs/protocol.md, "Ready check"): every player confirms,
    then each waits for the deal."""
    for index, player in enumerate(players):
        await player.send({"type": "ready", "id": f"ready-{index}"})
    for player in players:
        if not player.dealt():
            await player.until(lambda m, player=player: player.dealt())  # type: ignore[misc]


def _seated_table(cluster: Cluster, owner: int, cookies: list[str], ports: list[int]) -> str:
    code = _open_staked_table(cluster, owner, cookies[0], 20)
    assert cluster.node_of_owner(code) == owner
    for cookie, port in zip(cookies, ports, strict=True):
        assert rest(port, cookie, "POST", f"/api/tables/{code}/join", json={}).status_code == 200
    return code


def test_a_command_sent_while_the_table_has_no_owner_is_answered_once_it_has_one(cluster: Cluster) -> None:
    """Both players' sockets are on B; the table's owner A is killed, and the player to move sends
    his move at once, once: nobody reads the table's inbox until B takes the table over. He gets
    exactly one answer, an ack, and his opponent sees the move."""
    cluster.start(2)
    a, b = cluster.ports
    cookies = [signup(b, "orphan1"), signup(b, "orphan2")]
    code = _seated_table(cluster, a, cookies, [b, b])

    async def scenario() -> None:
        async with (
            Socket.open(cluster, b, code, cookies[0]) as first,
            Socket.open(cluster, b, code, cookies[1]) as second,
        ):
            for player in (first, second):
                await player.hello()
            await ready_up(first, second)
            mover, other = (first, second) if first.to_move() else (second, first)
            version = mover.version
            cluster.kill(a)  # SIGKILL: its lease runs out in its own time
            await mover.send(mover.a_move("sent-to-nobody"))
            answer = await mover.answer("sent-to-nobody", timeout=30)
            assert answer["type"] == "ack" and answer["version"] == version + 1, answer
            await other.reach(version + 1)
            await mover.read_for(1.0)
            assert len(mover.answers("sent-to-nobody")) == 1

    asyncio.run(scenario())
    assert cluster.node_of_owner(code) == b
    # Every key and channel of this deployment carries its own prefix, none the default one.
    client = cluster.redis_client()
    try:
        keys = [key.decode() for key in client.keys("*")]
        live_channels = [channel.decode() for channel in client.pubsub_channels()]
    finally:
        client.close()
    assert keys and live_channels
    assert [key for key in keys if not key.startswith(cluster.prefix)] == []
    assert [channel for channel in live_channels if not channel.startswith(cluster.prefix)] == []


def test_a_player_whose_process_died_is_served_by_the_tables_own_process_when_he_reconnects_there(
    cluster: Cluster,
) -> None:
    """The table is owned by B; the first player's socket is on A, the second's on B. A is killed;
    the first player reconnects to B: he gets his welcome, his move is acked, and the updates reach
    him there (not the dead process)."""
    cluster.start(2)
    a, b = cluster.ports
    cookies = [signup(a, "moved1"), signup(b, "moved2")]
    code = _seated_table(cluster, b, cookies, [a, b])

    async def scenario() -> None:
        async with Socket.open(cluster, b, code, cookies[1]) as second:
            await second.hello()
            async with Socket.open(cluster, a, code, cookies[0]) as on_a:
                await on_a.hello()
                await ready_up(second, on_a)
                cluster.kill(a)
                await on_a.until_closed()
            async with Socket.open(cluster, b, code, cookies[0]) as first:
                first.version = on_a.version
                await first.hello(timeout=10)
                moved = False
                for step in range(20):
                    version = first.version
                    if first.to_move():
                        await first.send(first.a_move(f"m{step}"))
                        assert (await first.answer(f"m{step}"))["type"] == "ack"
                        await second.reach(version + 1)
                        moved = True
                        break
                    await second.send(second.a_move(f"o{step}"))
                    assert (await second.answer(f"o{step}"))["type"] == "ack"
                    await first.reach(version + 1)
                assert moved, "the first player never had a move to make"

    asyncio.run(scenario())
    assert cluster.node_of_owner(code) == b


def test_a_stopping_server_says_bye_before_it_closes_and_the_match_goes_on_elsewhere(cluster: Cluster) -> None:
    """SIGTERM of the table's owner A, where the first player's socket is: it gets ``bye`` (code
    ``shutdown``, ``reconnect_after_ms``) and then the close 1012. The player to move sends his
    move at once (the second, on B) or after reconnecting to B as told (the first): it is acked,
    once, by the table's new owner."""
    cluster.start(2)
    a, b = cluster.ports
    cookies = [signup(a, "term1"), signup(b, "term2")]
    code = _seated_table(cluster, a, cookies, [a, b])

    async def scenario() -> None:
        async with (
            Socket.open(cluster, a, code, cookies[0]) as on_a,
            Socket.open(cluster, b, code, cookies[1]) as second,
        ):
            for player in (on_a, second):
                await player.hello()
            await ready_up(on_a, second)
            version = on_a.version
            first_moves = on_a.to_move()
            stopping = cluster.terminate(a)
            if not first_moves:
                await second.send(second.a_move("while-stopping"))
            assert await on_a.until_closed() == 1012
            byes = [m for m in on_a.received if m["type"] == "bye"]
            assert len(byes) == 1 and on_a.received[-1] == byes[0], on_a.received[-3:]
            assert byes[0]["code"] == "shutdown" and 0 < byes[0]["reconnect_after_ms"] <= 5000
            await asyncio.sleep(byes[0]["reconnect_after_ms"] / 1000)
            async with Socket.open(cluster, b, code, cookies[0]) as first:
                first.version = on_a.version
                await first.send({"type": "hello", "last_version": first.version})
                if first_moves:
                    await first.send(on_a.a_move("after-reconnecting"))
                mover = first if first_moves else second
                cmd_id = "after-reconnecting" if first_moves else "while-stopping"
                answer = await mover.answer(cmd_id, timeout=30)
                assert answer["type"] == "ack" and answer["version"] == version + 1, answer
                for player in (first, second):  # both see the move
                    await player.reach(version + 1)
                await mover.read_for(1.0)
                assert len(mover.answers(cmd_id)) == 1
            assert await asyncio.to_thread(stopping.wait, 30) in (0, -signal.SIGTERM)  # uvicorn re-raises it

    asyncio.run(scenario())
    assert cluster.node_of_owner(code) == b
