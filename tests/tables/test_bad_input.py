"""Bad input of every kind gets its documented error or close code; the table goes on unharmed."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.engine import legal_actions
from tests.tables.harness import ORIGIN, Player, create_table, signup, started_table


def _error(player: Player) -> dict:
    return player.until(lambda m: m["type"] in ("error", "ack"))


def test_malformed_unknown_and_mistyped_messages(client: TestClient) -> None:
    code, alice, _ = started_table(client)
    actor = client.app.state.tables.tables[code]
    before = actor.version
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        player = Player(ws, "a")
        player.hello()
        ws.send_text("{not json")
        assert _error(player)["code"] == "bad_json"
        ws.send_text(json.dumps({"type": "shuffle_the_deck", "id": "x1"}))
        reply = _error(player)
        assert reply["code"] == "unknown_type" and reply["id"] == "x1"
        ws.send_text(json.dumps({"type": "cover", "id": "x2", "attack": "first", "card": "9h"}))
        assert _error(player)["code"] == "bad_message"
        ws.send_text(json.dumps({"type": "lead", "id": "x3", "cards": ["11z"]}))
        assert _error(player)["code"] == "bad_message"
        for not_a_message in (["lead"], None, {"id": "x5", "cards": ["7h"]}, {"type": 7, "id": "x6"}, "lead"):
            ws.send_text(json.dumps(not_a_message))
            reply = _error(player)
            assert reply["code"] == "bad_message", (not_a_message, reply)
            assert "None" not in reply["message"]
        ws.send_text(json.dumps({"id": "x5"}))
        no_type = _error(player)
        assert (no_type["id"], no_type["code"], no_type["message"]) == ("x5", "bad_message", "the message has no type")
        ws.send_text(json.dumps({"type": "lead", "id": "x7", "cards": ["7h"], "version": 10**30}))
        assert _error(player)["code"] == "bad_message"
        ws.send_text(json.dumps({"type": "lead", "id": "x8", "cards": ["7h"], "version": -1}))
        assert _error(player)["code"] == "bad_message"
        ws.send_text(json.dumps({"type": "lead", "id": "x9", "cards": ["7h"], "version": "3"}))
        assert _error(player)["code"] == "bad_message"
        ws.send_text(json.dumps({"type": "cover", "id": "x10", "attack": 0.0, "card": "9h"}))
        assert _error(player)["code"] == "bad_message"
        # A command that names another seat is not a thing: the seat comes from the session.
        ws.send_text(json.dumps({"type": "take", "id": "x4", "seat": 1}))
        assert _error(player)["code"] == "bad_message"
        ws.send_text(json.dumps({"type": "ping", "id": "p"}))
        assert player.until(lambda m: m["type"] == "pong")["id"] == "p"
    assert actor.version == before and actor.status == "playing"


def test_a_deeply_nested_frame_is_answered_bad_json(client: TestClient) -> None:
    """JSON nested deeper than any parser here recurses is unreadable like any other bad JSON: an
    error frame, not a traceback in the log, and the connection goes on."""
    code, alice, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        player = Player(ws, "a")
        player.hello()
        for nested in ('{"type": "hello", "x": ' + "[" * 30000 + "]" * 30000 + "}", "[" * 30000 + "]" * 30000):
            ws.send_text(nested)
            assert _error(player)["code"] == "bad_json"
        ws.send_text(json.dumps({"type": "ping", "id": "p"}))
        assert player.until(lambda m: m["type"] == "pong")["id"] == "p"


def test_out_of_turn_and_cards_not_held(client: TestClient) -> None:
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    game = actor.game
    idle = 1 - game.attacker
    headers = alice if idle == 0 else bob
    with client.websocket_connect(f"/ws/tables/{code}", headers=headers) as ws:
        player = Player(ws, "p")
        player.hello()
        card = str(game.hands[idle][0])
        player.send({"type": "lead", "id": "o1", "cards": [card]})
        assert _error(player)["code"] == "not_your_turn"
        foreign = str(game.hands[game.attacker][0])
        player.send({"type": "throw_in", "id": "o2", "cards": [foreign]})
        assert _error(player)["code"] in ("not_your_turn", "card_not_in_hand")
    assert actor.game is game  # nothing applied


def test_replayed_command_id_is_applied_once(client: TestClient) -> None:
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    leader = actor.game.attacker
    headers = alice if leader == 0 else bob
    with client.websocket_connect(f"/ws/tables/{code}", headers=headers) as ws:
        player = Player(ws, "p")
        player.hello()
        card = str(legal_actions(actor.game, leader)[0].cards[0])
        player.send({"type": "lead", "id": "same", "cards": [card]})
        first = _error(player)
        assert first["type"] == "ack"
        ply = actor.game.ply
        player.send({"type": "lead", "id": "same", "cards": [card]})
        again = _error(player)
        assert again["type"] == "ack" and again["duplicate"] is True and again["version"] == first["version"]
        assert actor.game.ply == ply


def test_oversized_frame_closes_with_1009(client: TestClient) -> None:
    code, alice, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        ws.send_text(json.dumps({"type": "ping", "id": "x" * (70 * 1024)}))
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                ws.receive_text()
        assert closed.value.code == 1009
    assert client.app.state.tables.tables[code].status == "playing"


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({"origin": "https://evil.example"}, "wrong origin"),
        ({"origin": ORIGIN, "cookie": "durak_session=forged.value.here"}, "forged cookie"),
    ],
)
def test_handshake_refused_with_403(client: TestClient, headers: dict[str, str], why: str) -> None:
    code, _, _ = started_table(client)
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(f"/ws/tables/{code}", headers=headers):
        pass
    assert refused.value.code == 1008, why


def test_handshake_with_a_logged_out_session_is_refused(client: TestClient) -> None:
    code, alice, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        assert Player(ws, "a").hello()["type"] == "welcome"  # the session works before log-out
    assert client.post("/api/auth/logout", headers=alice).status_code == 204
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(f"/ws/tables/{code}", headers=alice):
        pass
    assert refused.value.code == 1008 and refused.value.reason == "invalid or expired session"


def test_unknown_table_closes_with_4004(client: TestClient) -> None:
    with client.websocket_connect("/ws/tables/nope", headers={"origin": ORIGIN}) as ws:
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4004


def test_a_table_store_that_does_not_answer_is_no_404(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the table store (Redis) does not answer, a code that is not open here cannot be looked
    up: REST answers 503 with Retry-After and a socket closes 1013, which the client retries --
    not 404 / 4004, after which the web client shows "no table" and stops reconnecting."""
    from app.broker.base import BrokerUnavailable

    registry = client.app.state.tables

    async def unreachable(code: str) -> None:
        raise BrokerUnavailable("redis is unreachable: connection refused")

    monkeypatch.setattr(registry.store, "load", unreachable)
    answer = client.get("/api/tables/ABCDEFGH")
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1", answer.text
    assert answer.json()["detail"].startswith("unavailable:")
    with client.websocket_connect("/ws/tables/ABCDEFGH", headers={"origin": ORIGIN}) as ws:
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 1013


def test_spectators_without_a_session_can_watch_but_not_play(client: TestClient) -> None:
    code, _, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as ws:
        watcher = Player(ws, "w")
        welcome = watcher.hello()
        assert welcome["seat"] is None and "hand" not in welcome["view"]
        assert welcome["table"]["spectators"] == 1
        watcher.send({"type": "take", "id": "t"})
        assert _error(watcher)["code"] == "not_seated"


def test_rest_errors_for_seats_and_bots(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, stake=10)["code"]
    assert client.post(f"/api/tables/{code}/bots", json={"level": "easy"}, headers=bob).status_code == 403
    assert client.post(f"/api/tables/{code}/bots", json={"level": "easy"}, headers=alice).status_code == 409
    assert client.post(f"/api/tables/{code}/join", json={"seat": 9}, headers=alice).status_code == 422
    assert client.post("/api/tables/unknown/join", json={}, headers=alice).status_code == 404
    assert client.post(f"/api/tables/{code}/join", json={}, headers={"origin": ORIGIN}).status_code == 401
    guest = client.post("/api/auth/guest", json={"name": "gus"})
    cookie = {"cookie": f"durak_session={guest.cookies['durak_session']}"}
    client.cookies.clear()
    response = client.post(f"/api/tables/{code}/join", json={}, headers=cookie)
    assert response.status_code == 403 and "guests" in response.json()["detail"]


def test_undealable_table_is_refused_naming_the_field(client: TestClient) -> None:
    alice = signup(client, "alice")
    response = client.post("/api/tables", json={"deck": 24, "seats": 5}, headers=alice)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "seats"]
    response = client.post("/api/tables", json={"preset": "classic36", "deck": 52}, headers=alice)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "deck"]


def test_lobby_lists_public_tables_with_filters(client: TestClient) -> None:
    alice = signup(client, "alice")
    public = create_table(client, alice, deck=52, seats=4, transfer=True)["code"]
    create_table(client, alice, private=True)
    free = create_table(client, alice, deck=36, stake=0)["code"]
    codes = [row["code"] for row in client.get("/api/tables").json()["tables"]]
    assert set(codes) == {public, free}
    assert [r["code"] for r in client.get("/api/tables?deck=52&transfer=true").json()["tables"]] == [public]
    assert [r["code"] for r in client.get("/api/tables?seats=2").json()["tables"]] == [free]
    row = next(r for r in client.get("/api/tables").json()["tables"] if r["code"] == public)
    assert row["free_seats"] == 4


def test_a_spectator_link_never_reveals_the_invite_code(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    table = create_table(client, alice, timer=0, private=True)
    code, watch_code = table["code"], table["watch_code"]
    info = client.get(f"/api/tables/{code}").json()
    assert info["watch_code"] == watch_code
    watched = client.get(f"/api/tables/{watch_code}").json()
    assert watched["code"] is None and watched["watch_only"] is True and "watch_code" not in watched
    assert client.post(f"/api/tables/{watch_code}/join", json={}, headers=bob).status_code == 403
    with client.websocket_connect(f"/ws/tables/{watch_code}", headers=bob) as ws:
        watcher = Player(ws, "w")
        assert watcher.hello()["table"]["code"] is None
        client.post(f"/api/tables/{code}/join", json={}, headers=alice)
        update = watcher.until(lambda m: m["type"] == "update" and m["version"] >= 1)
        assert update["table"]["code"] is None and code not in json.dumps(watcher.messages)


def test_hello_beyond_the_tables_version_resyncs_from_the_real_one(client: TestClient) -> None:
    code, alice, _ = started_table(client)
    actor = client.app.state.tables.tables[code]
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        player = Player(ws, "a")
        welcome = player.hello(last_version=100_000_000)
        assert welcome["version"] == actor.version < 100_000_000
        assert "resumed_from" not in welcome and "events" not in welcome
        assert welcome["view"]["hand"]  # the snapshot itself
        current = player.hello(last_version=actor.version)  # up to date: resumed, nothing missed
        assert current["resumed_from"] == actor.version and current["events"] == []


def test_a_refusal_names_the_real_reason(client: TestClient) -> None:
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    defender = actor.game.defender
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice if defender == 0 else bob) as ws:
        player = Player(ws, "d")
        player.hello()
        for command in ({"type": "take"}, {"type": "cover", "attack": 0, "card": player.view["hand"][0]}):
            player.act(command)
            reply = _error(player)
            assert reply["code"] == "not_your_turn"
            assert "nothing has been led" in reply["message"] and "only the defender" not in reply["message"]


def test_a_handshake_without_origin_is_a_non_browser_client_and_is_accepted(client: TestClient) -> None:
    """docs/protocol.md, Origin policy: browsers always send Origin; a client that leaves it out can
    only be presenting a cookie it holds itself, so its session is honoured."""
    code, alice, _ = started_table(client)
    cookie_only = {"cookie": alice["cookie"]}
    with client.websocket_connect(f"/ws/tables/{code}", headers=cookie_only) as ws:
        assert Player(ws, "script").hello()["seat"] == 0
