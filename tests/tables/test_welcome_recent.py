"""A fresh ``hello`` (no ``last_version``) gets the match's recent events in the welcome's
``recent``, redacted for the recipient: a reloaded page fills its "What happened" log again."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.tables.harness import Player, create_table, signup


def test_fresh_welcome_carries_the_recent_events_redacted(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    actor = client.app.state.tables.tables[code]
    leader = actor.game.attacker
    leader_headers, other_headers = (alice, bob) if leader == 0 else (bob, alice)
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=leader_headers) as ws_leader,
        client.websocket_connect(f"/ws/tables/{code}", headers=other_headers) as ws_other,
    ):
        player, defender = Player(ws_leader, "leader"), Player(ws_other, "defender")
        player.hello()
        defender.hello()
        led = player.view["legal"][0]
        player.act(led)
        player.until(lambda m: m["type"] == "ack")
        defender.until(lambda m: m["type"] == "update" and any(a["type"] == "take" for a in m["view"]["legal"]))
        defender.act({"type": "take"})
        defender.until(lambda m: m["type"] == "ack")
        player.until(lambda m: m["type"] == "update" and any(a["type"] == "pass" for a in m["view"]["legal"]))
        player.act({"type": "pass"})
        player.until(lambda m: m["type"] == "ack")
    with client.websocket_connect(f"/ws/tables/{code}", headers=other_headers) as ws:
        other = Player(ws, "other")
        welcome = other.hello()
        assert "resumed_from" not in welcome
        recent = welcome["recent"]
        types = [event["type"] for event in recent]
        assert types[0] == "match_start" and "bout_end" in types
        lead = next(event for event in recent if event["type"] == "move")
        assert lead["seat"] == leader and lead["action"]["cards"] == led["cards"]
        other_seat = 1 - leader
        draws = [event for event in recent if event["type"] == "draw"]
        assert draws, types
        for event in draws:
            # Our own drawn cards are named, the other player's are not.
            if event["seat"] == other_seat:
                assert len(event["cards"]) == event["count"]
            else:
                assert event["count"] > 0 and not event.get("cards")
        assert all(isinstance(event["version"], int) for event in recent)
        # Resuming gets the missed events instead, not the recent ones.
        again = other.hello(last_version=welcome["version"])
        assert "recent" not in again and again["resumed_from"] == welcome["version"]
