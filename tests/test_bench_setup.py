"""bench.load's client sets its tables up over REST in batches of SETUP_BATCH tables, and starts
the set-up again (new guests, new tables) when a request of it fails, up to SETUP_ATTEMPTS times."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import httpx
import pytest

from bench import load


class FakeServer:
    """The REST calls of the set-up; the ``fail_first`` first table creations fail as a server
    just started sometimes did (SQLite's pool exhausted)."""

    def __init__(self, fail_first: int = 0, refused: str = "") -> None:
        self.fail_first = fail_first
        self.refused = refused  # a guest whose tables are never created
        self.creating = 0  # table creations in flight
        self.most_creating = 0
        self.created = 0
        self.guests: list[str] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/api/auth/guest":
            name = httpx.Response(200, content=request.content).json()["name"]
            self.guests.append(name)
            return httpx.Response(200, json={}, headers={"set-cookie": f"durak_session=s-{name}; Path=/"})
        if path == "/api/tables":
            self.creating += 1
            self.most_creating = max(self.most_creating, self.creating)
            await asyncio.sleep(0)  # the others of its batch come in meanwhile
            self.creating -= 1
            self.created += 1
            refused = self.refused and request.headers["cookie"] == f"durak_session=s-{self.refused}"
            if self.created <= self.fail_first or refused:
                return httpx.Response(500, text="QueuePool limit of size 5 overflow 10 reached")
            return httpx.Response(200, json={"code": f"T{self.created}", "watch_code": f"W{self.created}"})
        assert path.endswith("/join")
        return httpx.Response(200, json={})


def _client(monkeypatch: pytest.MonkeyPatch, server: FakeServer, tables: int) -> load.Client:
    real = httpx.AsyncClient

    def client(**kwargs: Any) -> httpx.AsyncClient:
        return real(transport=httpx.MockTransport(server.handle), **kwargs)

    monkeypatch.setattr(httpx, "AsyncClient", client)
    monkeypatch.setattr(load, "SETUP_RETRY_S", 0.0)
    args = argparse.Namespace(url=["http://server"], tables=tables, seats=4, timer=30, spectators=0, seed=1)
    args.mode, args.think_ms = "durak", 0
    return load.Client(args)


async def test_tables_are_opened_in_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer()
    client = _client(monkeypatch, server, tables=60)
    await client.prepare_durak_retried()
    assert server.created == 60 and server.most_creating == load.SETUP_BATCH
    assert len(client.seats) == 240 and len({seat.code for seat in client.seats}) == 60


async def test_a_request_refused_with_500_is_sent_again(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer(fail_first=2)
    client = _client(monkeypatch, server, tables=30)
    await client.prepare_durak_retried()
    assert len(client.seats) == 120 and server.created == 32 and "p0a2" not in server.guests


async def test_a_failed_set_up_starts_again_with_new_guests(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer(refused="p0")  # refused three times: the set-up fails
    client = _client(monkeypatch, server, tables=30)
    await client.prepare_durak_retried()
    assert len(client.seats) == 120  # the second attempt's only
    assert "p0" in server.guests and "p0a2" in server.guests


async def test_the_set_up_gives_up_after_its_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer(fail_first=10**6)
    client = _client(monkeypatch, server, tables=2)
    with pytest.raises(RuntimeError, match="QueuePool"):
        await client.prepare_durak_retried()
    assert server.guests.count("p0") == 1 and "p0a3" in server.guests and "p0a4" not in server.guests
