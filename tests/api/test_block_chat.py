"""A block reaches the table chat: the chat fan-out never hands the blocker a line of the player he
blocked (live or in the history that follows the welcome); everyone else still reads it."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.tables.harness import Player, create_table, signup


def _open(client: TestClient, code: str, headers: dict[str, str], name: str) -> tuple[Any, Player]:
    context = client.websocket_connect(f"/ws/tables/{code}", headers=headers)
    player = Player(context.__enter__(), name)
    player.hello()
    return context, player


def _say(player: Player, text: str) -> None:
    player.counter += 1
    cmd_id = f"{player.name}-{player.counter}"
    player.send({"type": "chat", "id": cmd_id, "text": text})
    assert player.until(lambda m: m.get("id") == cmd_id and m["type"] in ("ack", "error"))["type"] == "ack"


def _lines(player: Player, until_text: str) -> list[str]:
    """The chat texts this connection got, up to and including ``until_text`` (which may have come
    already: one's own line can arrive before the ack of its command)."""
    if not any(m["type"] == "chat" and m.get("text") == until_text for m in player.messages):
        player.until(lambda m: m["type"] == "chat" and m.get("text") == until_text)
    return [m["text"] for m in player.messages if m["type"] == "chat" and m.get("text")]


def test_blocked_lines_are_left_out_live_and_in_the_history(client: TestClient) -> None:
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), signup(client, "carol")
    assert client.post("/api/blocks/bob", headers=alice).status_code == 200
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    ctx_a, a = _open(client, code, alice, "a")
    ctx_b, b = _open(client, code, bob, "b")
    ctx_c, c = _open(client, code, carol, "c")
    try:
        _say(b, "bob was here")
        _say(c, "carol too")
        assert _lines(c, "carol too") == ["bob was here", "carol too"]
        assert _lines(a, "carol too") == ["carol too"]  # bob's line, sent first, never came
        ctx_a2, a2 = _open(client, code, alice, "a2")  # a fresh page: the history leaves it out too
        try:
            _say(c, "and again")
            assert _lines(a2, "and again") == ["carol too", "and again"]
        finally:
            ctx_a2.__exit__(None, None, None)
        assert client.delete("/api/blocks/bob", headers=alice).status_code == 204
        _say(b, "unblocked now")
        assert _lines(a, "unblocked now") == ["carol too", "and again", "unblocked now"]
    finally:
        for context in (ctx_c, ctx_b, ctx_a):
            context.__exit__(None, None, None)
