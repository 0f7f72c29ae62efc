"""Table chat across two real server processes over Redis: a line written on one reaches a player
connected to the other, and a third connection gets it in the history after its welcome."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import websockets

from tests.cluster.harness import Cluster, rest, signup

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


async def _connect(cluster: Cluster, port: int, code: str, cookie: str) -> Any:
    ws = await websockets.connect(
        f"ws://127.0.0.1:{port}/ws/tables/{code}",
        additional_headers={"Cookie": f"durak_session={cookie}", "Origin": cluster.origin(port)},
        open_timeout=5,
    )
    await ws.send(json.dumps({"type": "hello", "last_version": None}))
    await _until(ws, lambda m: m["type"] == "welcome")
    return ws


async def _until(ws: Any, predicate: Any) -> dict[str, Any]:
    async with asyncio.timeout(10):
        while True:
            message: dict[str, Any] = json.loads(await ws.recv())
            if predicate(message):
                return message


def test_chat_crosses_processes_and_its_history_is_shared(cluster: Cluster) -> None:
    cluster.start(2)
    first, second = cluster.ports
    alice, bob, carol = signup(first, "alice"), signup(second, "bob"), signup(second, "carol")
    created = rest(first, alice, "POST", "/api/tables", json={"timer": 0, "bot_delay_ms": 0})
    assert created.status_code == 201, created.text
    code = created.json()["code"]
    assert rest(first, alice, "POST", f"/api/tables/{code}/join", json={"seat": 0}).status_code == 200
    assert rest(second, bob, "POST", f"/api/tables/{code}/join", json={"seat": 1}).status_code == 200

    async def scenario() -> None:
        on_first = await _connect(cluster, first, code, alice)
        on_second = await _connect(cluster, second, code, bob)
        try:
            await on_second.send(json.dumps({"type": "chat", "id": "m1", "text": "hello from the other process"}))
            assert (await _until(on_second, lambda m: m.get("id") == "m1"))["type"] == "ack"
            line = await _until(on_first, lambda m: m["type"] == "chat")
            assert (line["text"], line["from"]["name"]) == ("hello from the other process", "bob")
            assert line["from"]["seat"] == 1
            await on_first.send(json.dumps({"type": "chat_phrase", "id": "m2", "key": "gg"}))
            line = await _until(on_second, lambda m: m["type"] == "chat" and m.get("key") == "gg")
            assert line["from"]["name"] == "alice"
            late = await _connect(cluster, first, code, carol)
            try:
                history = [await _until(late, lambda m: m["type"] == "chat") for _ in range(2)]
                assert [m.get("text") or m.get("key") for m in history] == ["hello from the other process", "gg"]
                assert all(m["history"] for m in history)
            finally:
                await late.close()
        finally:
            await on_first.close()
            await on_second.close()

    asyncio.run(scenario())
