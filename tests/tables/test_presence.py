"""A connection's first message is its welcome; connections coming and going are ``presence``
messages (the table's version does not move), while every ``update`` carries a new version."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.tables.harness import ORIGIN, Player, started_table


def _connected(message: dict, seat: int) -> bool:
    return bool(message["table"]["seats"][seat]["connected"])


def test_connecting_and_leaving_are_presence_messages_without_a_new_version(client: TestClient) -> None:
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    version = actor.version
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa:
        pa = Player(wa, "a")
        pa.send({"type": "hello"})
        assert pa.recv()["type"] == "welcome"  # first: no update ahead of it
        mine = pa.recv()
        assert mine["type"] == "presence" and mine["version"] == version and _connected(mine, 0)
        assert mine["table"]["you"] == actor.seats[0].principal.key
        with client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb:
            pb = Player(wb, "b")
            pb.send({"type": "hello"})
            assert pb.recv()["type"] == "welcome"
            arrived = pa.recv()
            assert arrived["type"] == "presence" and arrived["version"] == version
            assert _connected(arrived, 0) and _connected(arrived, 1)
            assert set(arrived) == {"type", "version", "table"}
        left = pa.recv()
        assert left["type"] == "presence" and left["version"] == version and not _connected(left, 1)
    assert actor.version == version


def test_a_spectators_first_message_is_its_welcome_even_while_the_table_moves(client: TestClient) -> None:
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    leader_headers = alice if actor.game.attacker == 0 else bob
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as watching,
        client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as late,
        client.websocket_connect(f"/ws/tables/{code}", headers=leader_headers) as wl,
    ):
        watcher, newcomer, leader = Player(watching, "w"), Player(late, "n"), Player(wl, "l")
        watcher.hello()
        leader.hello()
        leader.act(leader.view["legal"][0])
        leader.until(lambda m: m["type"] == "ack")
        watcher.until(lambda m: m["type"] == "update")  # the move went out on the spectator channel
        newcomer.send({"type": "hello"})
        first = newcomer.recv()
        assert first["type"] == "welcome" and first["version"] == actor.version
        assert first["view"]["table"]  # the move is in the snapshot


def test_every_update_a_connection_receives_has_a_new_version(client: TestClient) -> None:
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa:
        pa = Player(wa, "a")
        pa.hello()
        for _ in range(3):  # bob comes and goes three times
            with client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb:
                Player(wb, "b").hello()
        while sum(m["type"] == "presence" for m in pa.messages) < 1 + 2 * 3:  # own arrival, 3 x (come, go)
            assert pa.recv()["type"] in ("presence", "welcome")  # never an update: nothing changed
    presence = [m for m in pa.messages if m["type"] == "presence"]
    assert {m["version"] for m in presence} == {actor.version}
    assert [_connected(m, 1) for m in presence] == [False] + [True, False] * 3
