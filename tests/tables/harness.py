"""An in-process server (TestClient) with a migrated SQLite file, and a websocket player helper."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db import migrate
from app.engine import decision
from app.main import create_app
from bench._client import PlayerCore
from tests.limits import RELAXED_LIMITS

ORIGIN = "http://127.0.0.1:8000"


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tables-db") / "template.sqlite3"
    migrate.upgrade_sync(f"sqlite+aiosqlite:///{path}")
    return path


@pytest.fixture
def client(migrated_template: Path, tmp_path: Path) -> Iterator[TestClient]:
    path = tmp_path / "durak.sqlite3"
    path.write_bytes(migrated_template.read_bytes())
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{path}",
        secret_key="test-secret-key-0123456789abcdef-32",
        # The test client sends HTTP to 127.0.0.1:8000 but opens websockets at ws://testserver: the
        # pages' origin is listed as the public origin a proxy would hide from the server.
        allowed_origins=[ORIGIN],
        ws_rate_per_s=1000.0,
        **RELAXED_LIMITS,
    )
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as test_client:
        yield test_client


def signup(client: TestClient, name: str) -> dict[str, str]:
    """Sign up an account; returns the headers that carry its session cookie."""
    return _session_headers(client, "/api/auth/signup", {"name": name, "password": "pass-word-123"}, 201)


def login(client: TestClient, name: str) -> dict[str, str]:
    """Log an account in once more (another browser): the headers of that new session."""
    return _session_headers(client, "/api/auth/login", {"name": name, "password": "pass-word-123"}, 200)


def guest(client: TestClient, name: str) -> dict[str, str]:
    return _session_headers(client, "/api/auth/guest", {"name": name}, 200)


def _session_headers(client: TestClient, path: str, body: dict[str, str], status: int) -> dict[str, str]:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    cookie = response.cookies["durak_session"]
    client.cookies.clear()
    return {"cookie": f"durak_session={cookie}", "origin": ORIGIN}


def started_table(client: TestClient) -> tuple[str, dict[str, str], dict[str, str]]:
    """A two-seat table, started: alice (its creator) in seat 0, bob in seat 1; their headers."""
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    return code, alice, bob


def create_table(client: TestClient, headers: dict[str, str], **params: Any) -> dict[str, Any]:
    params.setdefault("bot_delay_ms", 0)
    response = client.post("/api/tables", json=params, headers=headers)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


class Player(PlayerCore):
    """One websocket connection of the in-process server (a TestClient websocket) on the scripted
    player core of ``bench/_client.py``: keeps the latest update and every message it received."""

    def __init__(self, ws: Any, name: str) -> None:
        super().__init__(name)
        self.ws = ws

    def send(self, payload: dict[str, Any]) -> None:
        self.ws.send_text(json.dumps(payload))

    def recv(self) -> dict[str, Any]:
        return self.take(json.loads(self.ws.receive_text()))

    def until(self, predicate: Callable[[dict[str, Any]], bool], limit: int = 200) -> dict[str, Any]:
        for _ in range(limit):
            message = self.recv()
            if predicate(message):
                return message
        raise AssertionError(f"{self.name}: no matching message in {limit}")

    def hello(self, last_version: int | None = None) -> dict[str, Any]:
        self.send({"type": "hello", "last_version": last_version})
        return self.until(lambda m: m["type"] == "welcome")

    def act(self, action: dict[str, Any]) -> str:
        payload = self.command(action)
        self.send(payload)
        return str(payload["id"])


def play_out(players: list[Player], table_of: Callable[[], Any], rng: random.Random, limit: int = 3000) -> int:
    """Drive random legal play until the match ends. Each step: the seat the table waits for acts (or
    any seat with a legal action), then every player reads until it has caught up with the table."""
    for moves in range(limit):
        actor = table_of()
        if actor.status != "playing":
            return moves
        version = actor.version
        for player in players:
            while player.version < version:
                player.recv()
        waiting = set(decision(actor.game)["seats"])
        candidates = [p for p in players if p.view and p.view["legal"] and p.last["seat"] in waiting]
        candidates = candidates or [p for p in players if p.view and p.view["legal"]]
        if not candidates:
            raise AssertionError("nobody can act")
        player = rng.choice(candidates)
        legal = [a for a in player.view["legal"] if a["type"] != "challenge"]
        player.act(rng.choice(legal or player.view["legal"]))
        player.until(lambda m: m["type"] in ("ack", "error"))
        assert player.messages[-1]["type"] == "ack", player.messages[-1]
    raise AssertionError("match did not end")
