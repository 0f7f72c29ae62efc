"""Keep-alive on the real server (issue 35, item 4): an idle connection is closed by the client,
never by the server at the moment the client reuses it.

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive`` (its default: 5 s), and
httpx reuses one for up to 5 s (nginx's upstream connections: 60 s). A client that sent its next
request when both were about to expire wrote it into a connection the server was closing: the
request was lost (httpx: ``ReadError``; nginx: a 502 for a POST, which it does not retry). One of 25
back-to-back ``POST /api/quickplay/bot`` ended that way. ``python -m app`` now keeps idle
connections ``DURAK_KEEP_ALIVE_S`` (75 s), longer than those clients and nginx.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

import app.__main__ as entry
from app.config import Settings
from bench._server import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
NGINX_TEMPLATE = ROOT / "deploy" / "nginx" / "templates" / "default.conf.template"


def _local_port(response: httpx.Response) -> int:
    stream = response.extensions["network_stream"]
    return int(stream.get_extra_info("client_addr")[1])


async def test_an_idle_connection_outlives_the_clients_own_expiry(server: ServerProcess) -> None:
    """Idle past uvicorn's old 5 s, the connection is still the server's to use: the next POST goes
    on the same connection (same local port) and is answered."""
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1, keepalive_expiry=30)
    async with httpx.AsyncClient(base_url=server.base_url, limits=limits, timeout=30) as http:
        first = await http.post("/api/auth/guest", json={"name": "Keeper"})
        assert first.status_code == 200, first.text
        played = await http.post("/api/quickplay/bot", json={"level": "easy"})
        assert played.status_code == 200, played.text
        port = _local_port(played)
        await asyncio.sleep(5.5)
        again = await http.post("/api/quickplay/bot", json={"level": "easy"})
        assert again.status_code in (200, 429), again.text
        assert _local_port(again) == port, "the server closed the idle connection"


def test_the_server_keeps_idle_connections_longer_than_httpx_and_nginx(monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``python -m app`` hands uvicorn: the server is built but never run here."""
    configs: list[Any] = []

    class Built:
        started = True

        def __init__(self, config: Any, app: Any) -> None:
            configs.append(config)

        def run(self) -> None:
            return None

    monkeypatch.setattr(entry, "get_settings", lambda: Settings())
    monkeypatch.setattr(entry, "upgrade_sync", lambda url: None)
    monkeypatch.setattr(entry, "Server", Built)

    entry.main()

    [config] = configs
    nginx = re.search(r"keepalive_timeout\s+(\d+)s;", NGINX_TEMPLATE.read_text())
    assert nginx is not None, "the upstream's keepalive_timeout is set in the nginx template"
    assert config.timeout_keep_alive > int(nginx.group(1))
    assert config.timeout_keep_alive > httpx.Limits().keepalive_expiry  # type: ignore[operator]
