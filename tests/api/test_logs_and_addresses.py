"""What the application log says (issue 35.20): never a whole invite code, even when the chat
history cannot be read; and a warning when a proxy the server does not trust sits in front of it
(every client then has the proxy's address, and one set of per-address limits)."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi.testclient import TestClient
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from app.api import chat as chat_socket
from app.broker import BrokerError
from tests.api.support import Api
from tests.tables.harness import Player, create_table, guest


def test_a_chat_history_failure_logs_no_invite_code(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    headers = guest(client, "Gus")
    code = create_table(client, headers)["code"]

    async def unreachable(broker: object, table: str) -> list[object]:
        raise BrokerError(f"LRANGE chat:{{{table}}} failed: connection reset")  # the key names the code

    monkeypatch.setattr(chat_socket.chat, "history", unreachable)
    with caplog.at_level(logging.WARNING), client.websocket_connect(f"/ws/tables/{code}", headers=headers) as ws:
        Player(ws, "gus").hello()
        ws.send_json({"type": "ping", "id": "p"})
        Player(ws, "gus").until(lambda m: m["type"] == "pong")

    said = [record.getMessage() for record in caplog.records if "no history" in record.getMessage()]
    assert said, [record.getMessage() for record in caplog.records]
    assert all(code not in message for message in said), said
    assert code[:8] in said[0]


async def test_an_untrusted_proxy_is_warned_of_once(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    proxy = api.client("10.0.0.2")  # a proxy the server was not told to trust
    with caplog.at_level(logging.WARNING, logger="durak.security"):
        for visitor in ("198.51.100.7", "198.51.100.8"):
            await proxy.get("/api/health", headers={"X-Forwarded-For": visitor})
    warnings = [r.getMessage() for r in caplog.records if "X-Forwarded-For" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "10.0.0.2" in warnings[0] and "DURAK_FORWARDED_ALLOW_IPS" in warnings[0]


async def test_a_trusted_proxy_or_no_proxy_is_not_warned_of(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    trusted = ProxyHeadersMiddleware(api.app, trusted_hosts="10.0.0.2")
    transport = httpx.ASGITransport(app=trusted, client=("10.0.0.2", 5000))
    client = httpx.AsyncClient(transport=transport, base_url="http://testserver")
    with caplog.at_level(logging.WARNING, logger="durak.security"):
        await client.get("/api/health", headers={"X-Forwarded-For": "198.51.100.7"})
        await api.client("198.51.100.9").get("/api/health")
    assert not [r for r in caplog.records if "X-Forwarded-For" in r.getMessage()]
