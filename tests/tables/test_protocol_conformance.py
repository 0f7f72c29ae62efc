"""Every message a real table sends (welcome, update, presence, ack, error, pong; the view, the
table facts, every table event) matches its documented model in app/api/protocol.py, whose models
forbid undocumented fields: what the server sends is what docs/protocol.md describes."""

from __future__ import annotations

import random

from fastapi.testclient import TestClient

from app.api import protocol
from tests.tables.harness import ORIGIN, Player, create_table, play_out, signup


def test_every_message_of_a_match_and_its_rematch_is_documented(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, stake=10, timer=0)["code"]
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb,
        client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as ww,
    ):
        pa, pb, watcher = Player(wa, "a"), Player(wb, "b"), Player(ww, "w")
        for player in (pa, pb, watcher):
            player.hello()
        assert client.post(f"/api/tables/{code}/join", json={}, headers=alice).status_code == 200
        assert client.post(f"/api/tables/{code}/join", json={}, headers=bob).status_code == 200
        pa.send({"type": "ready", "id": "ready"})  # the ready check before a staked match (§8)
        actor = client.app.state.tables.tables[code]
        pb.until(lambda m: m["type"] == "update" and m["view"] is not None)
        pa.send({"type": "ping", "id": "p"})
        pa.send({"type": "take", "id": "early"} if actor.game.defender != 0 else {"type": "pass", "id": "early"})
        assert pa.until(lambda m: m.get("id") == "early")["type"] == "error"  # nothing has been led
        play_out([pa, pb], lambda: actor, random.Random(3))
        assert client.post(f"/api/tables/{code}/rematch", headers=alice).status_code == 200
        for player in (pa, pb, watcher):
            # The watcher has read nothing since the deal: a long match leaves hundreds of updates.
            player.until(lambda m: m["type"] == "update" and any(e["type"] == "rematch" for e in m["events"]), 2000)
        resumed = Player(wa, "a").hello(last_version=actor.version - 3)
        assert resumed["resumed_from"] == actor.version - 3 and resumed["events"]
        pa.messages.append(resumed)
        for player in (pa, pb):
            player.send({"type": "ping", "id": "end"})
            player.until(lambda m: m["type"] == "pong" and m["id"] == "end")
        while watcher.version < actor.version:  # (waiting for an update *at* the version would wait for
            watcher.recv()  # the next one: the rematch proposal running out, a minute later)
    messages = pa.messages + pb.messages + watcher.messages
    for message in messages:
        protocol.server_message.validate_python(message)  # undocumented fields fail here
    tables = [message["table"] for message in messages if "table" in message]
    assert set().union(*tables) == set(protocol.TableInfo.model_fields)  # every documented field is sent
    seats = [seat for table in tables for seat in table["seats"]]
    assert set().union(*seats) == set(protocol.SeatInfo.model_fields)
    kinds = {message["type"] for message in messages}
    assert kinds >= {"welcome", "update", "presence", "ack", "error", "pong"}
    table_events = {e["type"] for m in messages for e in m.get("events") or []}
    assert table_events >= {"seat", "match_start", "results", "rematch", "move", "match_end", "ready_check", "ready"}
    spectator_update = next(m for m in watcher.messages if m["type"] == "update" and m["view"] is not None)
    assert spectator_update["table"]["code"] is None and "hand" not in spectator_update["view"]
    finished = [m for m in messages if m["type"] == "update" and m["table"]["results"]]
    assert finished and protocol.Results.model_validate(finished[0]["table"]["results"])
