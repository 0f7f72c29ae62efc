"""A table closed for good (idle, finished a while ago) takes its chat history with it (issue 35.20):
nobody can read or report it any more, and it stayed in the broker for every table ever opened."""

from __future__ import annotations

import orjson
from fastapi.testclient import TestClient

from app.tables import chat
from tests.tables.harness import create_table, guest


def test_closing_a_table_deletes_its_chat_history(client: TestClient) -> None:
    headers = guest(client, "Gus")
    code = create_table(client, headers)["code"]
    registry = client.app.state.tables
    line = orjson.dumps({"type": "chat", "id": "x", "from": {"player": "g:x", "name": "x"}, "text": "hi"})
    assert client.portal is not None
    client.portal.call(chat.remember, registry.broker, code, line)
    assert client.portal.call(chat.history, registry.broker, code)

    client.portal.call(registry.close_table, code, "idle")

    assert client.portal.call(chat.history, registry.broker, code) == []
    assert client.get(f"/api/tables/{code}").status_code == 410
