"""``app.main.DurakPeak`` serves a table socket ahead of the middleware stack: an open table socket
keeps none of the middleware's coroutines alive, while HTTP answers still pass through all of it."""

from __future__ import annotations

import gc
import inspect
from collections import Counter

from fastapi.testclient import TestClient

from tests.tables.harness import Player, create_table, guest

# The layers every HTTP request goes through (ours, FastAPI's and Starlette's), by coroutine name.
MIDDLEWARE = {
    "Starlette.__call__",
    "ServerErrorMiddleware.__call__",
    "BodySizeLimit.__call__",
    "BrowserGuard.__call__",
    "DeviceCookie.__call__",
    "ExceptionMiddleware.__call__",
}


def suspended_coroutines() -> Counter[str]:
    """The coroutines alive and suspended right now, by qualified name."""
    return Counter(
        obj.cr_code.co_qualname for obj in gc.get_objects() if inspect.iscoroutine(obj) and obj.cr_frame is not None
    )


def test_an_open_table_socket_keeps_no_middleware_coroutine_alive(client: TestClient) -> None:
    headers = guest(client, "Gus")
    code = create_table(client, headers)["code"]
    before = suspended_coroutines()
    with client.websocket_connect(f"/ws/tables/{code}", headers=headers) as ws:
        assert Player(ws, "gus").hello()["seat"] is None
        opened = suspended_coroutines() - before
    assert opened["table_socket"] == 1  # the socket is open and served
    assert opened["DurakPeak.__call__"] == 1
    assert not MIDDLEWARE & set(opened), opened


def test_http_answers_still_pass_through_the_middleware(client: TestClient) -> None:
    response = client.get("/api/health")
    assert response.status_code == 200
    assert response.headers["x-frame-options"] == "DENY"  # BrowserGuard
    assert "set-cookie" in response.headers  # DeviceCookie: a first visit gets its device cookie
