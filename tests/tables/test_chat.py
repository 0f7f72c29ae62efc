"""Table chat: lines and phrases, the length and rate limits, chat off, the spectators' chat hidden
from the players during a staked match, the last 50 lines after the welcome, and lines that cross
from one process to another through the broker."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api import chat as chat_socket
from app.api.protocol import server_message
from app.engine import Rules
from app.tables import chat
from app.tables import commands as cmd
from app.tables.spec import Principal, TableSpec
from tests.support.wait import eventually
from tests.tables.actors import two_processes
from tests.tables.harness import Player, create_table, guest, signup


def _open(client: TestClient, code: str, headers: dict[str, str], name: str) -> tuple[Any, Player]:
    context = client.websocket_connect(f"/ws/tables/{code}", headers=headers)
    ws = context.__enter__()
    player = Player(ws, name)
    player.hello()
    return context, player


def _chat(player: Player, **body: Any) -> dict[str, Any]:
    player.counter += 1
    cmd_id = f"{player.name}-chat-{player.counter}"
    player.send({"id": cmd_id, **body})
    return player.until(lambda m: m.get("id") == cmd_id and m["type"] in ("ack", "error"))


def _next_chat(player: Player) -> dict[str, Any]:
    """The first chat line this player has not looked at yet (received already, or next)."""
    taken: set[int] = player.__dict__.setdefault("taken", set())
    for message in player.messages:
        if message["type"] == "chat" and id(message) not in taken:
            taken.add(id(message))
            return message
    message = player.until(lambda m: m["type"] == "chat")
    taken.add(id(message))
    return message


def test_players_chat_as_text_and_phrases_reach_everyone(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    ctx_a, a = _open(client, code, alice, "a")
    ctx_b, b = _open(client, code, bob, "b")  # bob is not seated: a spectator
    try:
        payload = "<img src=x onerror=alert(1)>"
        assert _chat(a, type="chat", text=payload)["type"] == "ack"
        line = _next_chat(b)
        server_message.validate_python(line)
        assert line["text"] == payload and line["channel"] == "players"
        assert line["from"] == {"name": "alice", "seat": 0, "guest": False, "player": line["from"]["player"]}
        assert _next_chat(a)["text"] == payload  # the writer gets his own line too
        assert _chat(b, type="chat_phrase", key="gg")["type"] == "ack"
        line = _next_chat(a)
        assert (line["key"], line["channel"], line["from"]["seat"]) == ("gg", "spectators", None)
        assert "text" not in line
        refused = _chat(a, type="chat_phrase", key="rude")
        assert refused["code"] == "bad_message"
        too_long = _chat(a, type="chat", text="x" * 201)
        assert too_long["code"] == "bad_message" and "200" in too_long["message"]
        assert _chat(a, type="chat", text="x" * 200)["type"] == "ack"
        assert _chat(a, type="chat", text=" \n\t ")["code"] == "chat_empty"
    finally:
        ctx_a.__exit__(None, None, None)
        ctx_b.__exit__(None, None, None)


def test_five_messages_per_ten_seconds_then_chat_rate_limited(client: TestClient) -> None:
    alice = signup(client, "alice")
    code = create_table(client, alice, timer=0)["code"]
    ctx, a = _open(client, code, alice, "a")
    try:
        for index in range(chat.RATE_COUNT):
            assert _chat(a, type="chat", text=f"line {index}")["type"] == "ack"
        refused = _chat(a, type="chat", text="one too many")
        assert refused["code"] == "chat_rate_limited"
        assert 0 < refused["retry_after_ms"] <= 10_000
        server_message.validate_python(refused)
    finally:
        ctx.__exit__(None, None, None)


def test_the_rate_limit_frees_a_slot_when_the_oldest_message_is_ten_seconds_old() -> None:
    now = [100.0]
    limit = chat.RateLimit(clock=lambda: now[0])
    assert [limit.take("p") for _ in range(5)] == [0] * 5
    assert limit.take("p") == 10_001 and limit.take("q") == 0
    now[0] += 9.5
    assert 0 < limit.take("p") <= 501
    now[0] += 0.5
    assert limit.take("p") == 0


def test_chat_off_is_refused_and_shown_on_the_table(client: TestClient) -> None:
    alice = signup(client, "alice")
    created = create_table(client, alice, timer=0, chat=False)
    assert created["table"]["chat"] is False
    assert client.get(f"/api/tables/{created['code']}").json()["chat"] is False
    assert create_table(client, alice, timer=0)["table"]["chat"] is True
    ctx, a = _open(client, created["code"], alice, "a")
    try:
        assert a.last is not None and a.last["table"]["chat"] is False
        assert _chat(a, type="chat", text="hello?")["code"] == "chat_off"
        assert _chat(a, type="chat_phrase", key="oops")["code"] == "chat_off"
    finally:
        ctx.__exit__(None, None, None)


def test_anonymous_spectators_cannot_chat(client: TestClient) -> None:
    alice = signup(client, "alice")
    code = create_table(client, alice, timer=0)["code"]
    ctx, anon = _open(client, code, {"origin": "http://127.0.0.1:8000"}, "anon")
    try:
        assert _chat(anon, type="chat", text="hi")["code"] == "chat_forbidden"
    finally:
        ctx.__exit__(None, None, None)


def test_seated_players_do_not_see_the_spectators_chat_during_a_staked_match(client: TestClient) -> None:
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), guest(client, "carol")
    code = create_table(client, alice, timer=0, stake=10)["code"]
    ctx_a, a = _open(client, code, alice, "a")
    ctx_b, _ = _open(client, code, bob, "b")
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    client.post(f"/api/tables/{code}/ready", headers=alice)  # both there and ready: the match starts (§8)
    ctx_c, c = _open(client, code, carol, "c")
    try:
        assert a.until(lambda m: m["type"] == "update" and m["table"]["status"] == "playing")
        assert _chat(c, type="chat", text="alice holds the trump ace")["type"] == "ack"
        assert _next_chat(c)["channel"] == "spectators"  # spectators see their own chat
        assert _chat(a, type="chat", text="good luck")["type"] == "ack"
        seen = _next_chat(a)
        assert seen["text"] == "good luck"  # alice's next line is her own: the spectator's never came
        assert not [m for m in a.messages if m["type"] == "chat" and m["channel"] == "spectators"]
        assert _next_chat(c)["text"] == "good luck"  # spectators see both chats
        # Nor does the history show it to a seated player who comes back.
        ctx_a.__exit__(None, None, None)
        ctx_a, a = _open(client, code, alice, "a2")
        assert _next_chat(a)["text"] == "good luck"
        assert not [m for m in a.messages if m["type"] == "chat" and m["channel"] == "spectators"]
    finally:
        ctx_a.__exit__(None, None, None)
        ctx_b.__exit__(None, None, None)
        ctx_c.__exit__(None, None, None)


def test_at_a_free_table_seated_players_see_both_chats(client: TestClient) -> None:
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), guest(client, "carol")
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    ctx_a, a = _open(client, code, alice, "a")
    ctx_c, c = _open(client, code, carol, "c")
    try:
        assert a.last is not None and a.last["table"]["status"] == "playing"
        assert _chat(c, type="chat", text="nice one")["type"] == "ack"
        line = _next_chat(a)
        assert (line["text"], line["channel"], line["from"]["guest"]) == ("nice one", "spectators", True)
    finally:
        ctx_a.__exit__(None, None, None)
        ctx_c.__exit__(None, None, None)


def test_a_new_joiner_gets_the_last_50_lines_right_after_the_welcome(client: TestClient) -> None:
    names = [f"p{index}" for index in range(11)]
    headers = [signup(client, name) for name in names]
    code = create_table(client, headers[0], timer=0)["code"]
    sent = 0
    for name, head in zip(names[:-1], headers[:-1], strict=True):
        ctx, player = _open(client, code, head, name)
        try:
            for _ in range(chat.RATE_COUNT):
                assert _chat(player, type="chat", text=f"line {sent}")["type"] == "ack"
                sent += 1
        finally:
            ctx.__exit__(None, None, None)
    ctx, late = _open(client, code, headers[-1], "late")
    try:
        lines = [_next_chat(late) for _ in range(chat.HISTORY)]
        after_welcome = late.messages[[m["type"] for m in late.messages].index("welcome") + 1 :]
        assert [m for m in after_welcome if m["type"] not in ("chat", "presence")] == []
        assert [line["text"] for line in lines] == [f"line {n}" for n in range(sent - chat.HISTORY, sent)]
        assert all(line["history"] is True for line in lines)
        for line in lines[:2]:
            server_message.validate_python(line)
    finally:
        ctx.__exit__(None, None, None)


class FakeConnection:
    """What the chat hub uses of a table connection."""

    def __init__(self, code: str, principal: Principal, *, seated: bool) -> None:
        self.code = code
        self.principal = principal
        self.seated = seated
        self.closing = None
        self.sent: list[dict[str, Any]] = []
        self.got = asyncio.Event()

    def send(self, payload: dict[str, Any]) -> None:
        self.sent.append(payload)
        self.got.set()

    async def next(self, kind: str) -> dict[str, Any]:
        async with asyncio.timeout(5):
            while True:
                found = [m for m in self.sent if m["type"] == kind]
                if found:
                    self.sent.remove(found[0])
                    return found[0]
                self.got.clear()
                await self.got.wait()


class Said:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


async def test_a_line_said_on_one_process_reaches_the_players_on_another() -> None:
    alice = Principal("a:1", "alice", account_id=1)
    bob = Principal("a:2", "bob", account_id=2)
    async with two_processes() as (first, second):
        actor = await first.create(TableSpec(rules=Rules(deck=36, seats=2, timer=0), creator=alice, bot_delay_ms=0))
        await first.call(actor.code, cmd.Join(), alice)
        await first.call(actor.code, cmd.Join(), bob)
        here = FakeConnection(actor.code, alice, seated=True)
        there = FakeConnection(actor.code, bob, seated=True)
        hub_a, hub_b = chat_socket.hub(first), chat_socket.hub(second)
        hub_a.join(here)  # type: ignore[arg-type]
        hub_b.join(there)  # type: ignore[arg-type]
        await eventually(  # both hubs follow the table's chat channel before anyone speaks
            lambda: all(hub.tables[actor.code].live.done() for hub in (hub_a, hub_b)), what="both hubs are subscribed"
        )
        hub_b.command(there, Said(type="chat", id="c1", text="hi from process b"))  # type: ignore[arg-type]
        assert (await there.next("ack"))["id"] == "c1"
        line = await here.next("chat")
        assert (line["text"], line["from"]["name"], line["from"]["seat"]) == ("hi from process b", "bob", 1)
        # The history is shared too: a connection that comes to process a later gets the line.
        later = FakeConnection(actor.code, Principal("a:3", "carol", account_id=3), seated=False)
        hub_a.join(later)  # type: ignore[arg-type]
        assert (await later.next("chat"))["history"] is True
        hub_a.leave(here)  # type: ignore[arg-type]
        hub_a.leave(later)  # type: ignore[arg-type]
        hub_b.leave(there)  # type: ignore[arg-type]
        assert hub_a.tables == {} and hub_b.tables == {}


@pytest.mark.redis
async def test_redis_keeps_a_capped_history() -> None:
    from app.broker import open_broker

    prefix = f"test-chat-{uuid.uuid4().hex}:"
    url = "redis://127.0.0.1:6379/0"
    from app.broker import BrokerOptions

    async with open_broker(url, BrokerOptions(prefix=prefix)) as broker:
        for index in range(chat.HISTORY + 7):
            await chat.remember(broker, "T", f'{{"n": {index}}}'.encode())
        lines = await chat.history(broker, "T")
        assert [line["n"] for line in lines] == list(range(7, chat.HISTORY + 7))
        assert await broker.delete(chat.history_key("T")) == 1


# ---------------------------------------------------------------------------- hidden from the person


def _signup_on_a_device(client: TestClient, name: str) -> tuple[dict[str, str], str]:
    """Sign up from a browser: the headers of its session, and its device cookie (value)."""
    response = client.post("/api/auth/signup", json={"name": name, "password": "pass-word-123"})
    assert response.status_code == 201, response.text
    session, device = response.cookies["durak_session"], response.cookies["durak_device"]
    client.cookies.clear()
    headers = {"cookie": f"durak_session={session}; durak_device={device}", "origin": "http://127.0.0.1:8000"}
    return headers, device


def _spectators_lines(player: Player) -> list[str]:
    return [m.get("text", "") for m in player.messages if m["type"] == "chat" and m["channel"] == "spectators"]


def _after_marker(player: Player, marker: str) -> list[str]:
    """Read until the players' line ``marker`` (lines come in order: any line said before it came
    first), then the spectators' lines this socket got."""
    if not [m for m in player.messages if m["type"] == "chat" and m.get("text") == marker]:
        player.until(lambda m: m["type"] == "chat" and m.get("text") == marker)
    return _spectators_lines(player)


def test_a_seated_players_other_sockets_do_not_see_the_spectators_chat_of_his_staked_match(
    client: TestClient,
) -> None:
    (alice, device), (bob, _) = _signup_on_a_device(client, "alice"), _signup_on_a_device(client, "bob")
    carol = guest(client, "carol")
    table = create_table(client, alice, timer=0, stake=10)
    code, watch_code = table["code"], table["watch_code"]
    ctx_a, _ = _open(client, code, alice, "a")
    ctx_b, b = _open(client, code, bob, "b")
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    client.post(f"/api/tables/{code}/ready", headers=alice)  # both there and ready: the match starts (§8)
    origin = {"origin": "http://127.0.0.1:8000"}
    sockets = {
        "anonymous, alice's browser": (code, {"cookie": f"durak_device={device}", **origin}),
        "watch link, alice signed in": (watch_code, alice),  # a watch link makes an anonymous socket
        "a stranger": (code, origin),  # a spectator who is not signed in: sees both chats
    }
    opened = {name: _open(client, where, headers, name) for name, (where, headers) in sockets.items()}
    ctx_c, c = _open(client, code, carol, "c")
    try:
        assert _chat(c, type="chat", text="alice should lead the ace")["type"] == "ack"
        assert _chat(b, type="chat", text="marker")["type"] == "ack"  # the players' chat: everyone gets it
        assert _after_marker(opened["a stranger"][1], "marker") == ["alice should lead the ace"]
        assert _after_marker(c, "marker") == ["alice should lead the ace"]
        for name in ("anonymous, alice's browser", "watch link, alice signed in"):
            assert _after_marker(opened[name][1], "marker") == [], name
        # Nor does the history show it to another socket of hers that comes later.
        late_ctx, late = _open(client, code, {"cookie": f"durak_device={device}", **origin}, "late")
        try:
            assert _chat(b, type="chat", text="marker 2")["type"] == "ack"
            assert _after_marker(late, "marker 2") == []
            assert [m["text"] for m in late.messages if m["type"] == "chat"] == ["marker", "marker 2"]
        finally:
            late_ctx.__exit__(None, None, None)
    finally:
        for context, _ in opened.values():
            context.__exit__(None, None, None)
        ctx_c.__exit__(None, None, None)
        ctx_b.__exit__(None, None, None)
        ctx_a.__exit__(None, None, None)


def test_the_spectators_chat_is_hidden_from_the_first_moment_of_a_staked_match(client: TestClient) -> None:
    """Whether a line is hidden follows the table's state when it is said, not a copy of it."""
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), guest(client, "carol")
    code = create_table(client, alice, timer=0, stake=10)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    ctx_a, a = _open(client, code, alice, "a")
    ctx_b, _ = _open(client, code, bob, "b")
    ctx_c, c = _open(client, code, carol, "c")
    try:
        assert _chat(c, type="chat", text="good luck both")["type"] == "ack"  # before the match: seen by all
        assert client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob).status_code == 200
        assert client.post(f"/api/tables/{code}/ready", headers=alice).status_code == 200  # the match starts
        assert _chat(c, type="chat", text="alice, bob holds no trumps")["type"] == "ack"  # the match runs now
        assert _chat(a, type="chat", text="marker")["type"] == "ack"
        assert _after_marker(a, "marker") == ["good luck both"]
        assert _after_marker(c, "marker") == ["good luck both", "alice, bob holds no trumps"]
    finally:
        ctx_a.__exit__(None, None, None)
        ctx_b.__exit__(None, None, None)
        ctx_c.__exit__(None, None, None)
