"""Complete matches through the REST lobby and the table websocket, settled on the ledger."""

from __future__ import annotations

import random

from fastapi.testclient import TestClient

from tests.support.wait import wait_until
from tests.tables.harness import Player, create_table, play_out, signup


def _balance(client: TestClient, headers: dict[str, str]) -> int:
    response = client.get("/api/me", headers=headers)
    assert response.status_code == 200
    return int(response.json()["balance"])


def _wait_recorded(client: TestClient, headers: dict[str, str], count: int) -> list[dict]:
    def items() -> list[dict]:
        found: list[dict] = client.get("/api/matches?account=me", headers=headers).json()["items"]
        return found

    wait_until(lambda: len(items()) >= count, what="the match is recorded")
    return items()


def test_staked_two_player_match_settles_and_is_recorded(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    table = create_table(client, alice, stake=100, timer=0)
    code = table["code"]
    assert client.post(f"/api/tables/{code}/join", json={}, headers=alice).json()["seat"] == 0
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb,
    ):
        pa, pb = Player(wa, "a"), Player(wb, "b")
        assert pa.hello()["seat"] == 0
        assert pb.hello()["seat"] is None  # not seated yet: watching
        joined = client.post(f"/api/tables/{code}/join", json={}, headers=bob)
        assert joined.json()["seat"] == 1
        # Both are at the table; bob confirmed by filling it, alice confirms (§8): the match starts.
        pa.send({"type": "ready", "id": "ready-a"})
        actor = client.app.state.tables.tables[code]
        pb.until(lambda m: m["type"] == "update" and m["seat"] == 1 and m["view"] is not None)
        assert actor.status == "playing"
        # The stakes are in escrow while the match runs.
        assert _balance(client, alice) == 900 and _balance(client, bob) == 900
        play_out([pa, pb], lambda: actor, random.Random(7))
        outcome = actor.game.outcome
    assert outcome is not None
    items = _wait_recorded(client, alice, 1)  # settled and recorded in one transaction
    after = {0: _balance(client, alice), 1: _balance(client, bob)}
    if outcome.draw:
        assert after == {0: 1000, 1: 1000}
    else:
        assert after[outcome.durak] == 900
        assert after[1 - outcome.durak] == 1100
    assert items[0]["id"] == actor.match_id
    detail = client.get(f"/api/matches/{actor.match_id}").json()
    assert detail["actions"] == len(actor.log)  # the detail gives the length of the action log


def test_rematch_keeps_series_score_and_previous_durak_deals(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0)["code"]
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb,
    ):
        pa, pb = Player(wa, "a"), Player(wb, "b")
        pa.hello()
        pb.hello()
        client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
        client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
        actor = client.app.state.tables.tables[code]
        pa.until(lambda m: m["type"] == "update" and m["view"] is not None)
        pb.until(lambda m: m["type"] == "update" and m["view"] is not None)
        play_out([pa, pb], lambda: actor, random.Random(3))
        first = actor.game.outcome
        assert client.post(f"/api/tables/{code}/rematch", headers=bob).status_code == 200
        assert actor.status == "finished"  # a proposal: alice has not agreed yet
        assert client.get(f"/api/tables/{code}").json()["rematch"]["agreed"] == [1]
        assert client.post(f"/api/tables/{code}/rematch", headers=alice).status_code == 200
        assert actor.status == "playing" and actor.game.ply == 0
        if first.durak is not None:
            assert actor.game.dealer == first.durak
            info = client.get(f"/api/tables/{code}").json()
            series = {int(k): v for k, v in info["series"].items()}
            assert series[first.durak] == [0, 1]
            assert series[1 - first.durak] == [1, 0]


def test_leaving_a_running_match_forfeits(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0, stake=50)["code"]
    url = f"/ws/tables/{code}"
    with client.websocket_connect(url, headers=alice) as wa, client.websocket_connect(url, headers=bob) as wb:
        Player(wa, "a").hello()
        Player(wb, "b").hello()
        client.post(f"/api/tables/{code}/join", json={}, headers=alice)
        client.post(f"/api/tables/{code}/join", json={}, headers=bob)
        client.post(f"/api/tables/{code}/ready", headers=alice)  # both there and ready (§8)
    actor = client.app.state.tables.tables[code]
    assert actor.status == "playing"
    response = client.post(f"/api/tables/{code}/leave", headers=bob)
    assert response.status_code == 200
    assert actor.status == "finished"
    assert actor.game.outcome.durak == 1 and actor.game.outcome.reason == "left"
    wait_until(lambda: _balance(client, alice) == 1050, what="the stakes are paid out")
    assert _balance(client, alice) == 1050 and _balance(client, bob) == 950


def test_timer_expiry_forfeits_the_player_who_must_act(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=1)["code"]
    client.post(f"/api/tables/{code}/join", json={}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={}, headers=bob)
    actor = client.app.state.tables.tables[code]
    leader = actor.game.attacker
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa:
        pa = Player(wa, "a")
        welcome = pa.hello()
        assert 0 < welcome["table"]["deadline_ms"] <= 1000
        pa.until(lambda m: m["type"] == "update" and m["table"]["status"] == "finished", limit=50)
    outcome = actor.game.outcome
    assert outcome.durak == leader and outcome.reason == "timeout"


def test_reconnect_mid_bout_resumes_with_the_same_view(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    actor = client.app.state.tables.tables[code]
    leader = actor.game.attacker
    leader_headers, other_headers = (alice, bob) if leader == 0 else (bob, alice)
    with client.websocket_connect(f"/ws/tables/{code}", headers=leader_headers) as ws:
        player = Player(ws, "leader")
        player.hello()
        player.act(player.view["legal"][0])
        player.until(lambda m: m["type"] == "ack")  # the update is pushed before the ack
        seen = player.last
        assert seen["view"]["phase"] == "bout"
    with client.websocket_connect(f"/ws/tables/{code}", headers=leader_headers) as ws:
        again = Player(ws, "leader-again")
        welcome = again.hello(last_version=seen["version"] - 1)
        assert welcome["seat"] == leader
        assert welcome["view"]["hand"] == seen["view"]["hand"]
        assert welcome["view"]["table"] == seen["view"]["table"]
        assert welcome["resumed_from"] == seen["version"] - 1
        assert [e["type"] for e in welcome["events"]] == ["move"]
        # Far behind the ring buffer: a snapshot without events.
        assert "events" not in again.hello(last_version=-500) or again.messages[-1].get("events") is None
    with client.websocket_connect(f"/ws/tables/{code}", headers=other_headers) as ws:
        defender = Player(ws, "defender")
        defender.hello()
        assert any(a["type"] == "take" for a in defender.view["legal"])
        defender.act({"type": "take"})
        assert defender.until(lambda m: m["type"] in ("ack", "error"))["type"] == "ack"


def test_two_tabs_of_one_player_both_follow_and_only_the_sender_gets_the_ack(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0)["code"]
    client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
    client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
    actor = client.app.state.tables.tables[code]
    leader_headers = alice if actor.game.attacker == 0 else bob
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=leader_headers) as one,
        client.websocket_connect(f"/ws/tables/{code}", headers=leader_headers) as two,
    ):
        tab1, tab2 = Player(one, "tab1"), Player(two, "tab2")
        tab1.hello()
        tab2.hello()
        version = actor.version
        lead = tab1.view["legal"][0]
        tab1.act(lead)
        tab1.until(lambda m: m["type"] == "ack")
        tab2.until(lambda m: m["type"] == "update" and m["version"] > version)
        assert tab2.view["table"] == [{"attack": lead["cards"][0], "cover": None}]
        assert tab1.view == tab2.view
        tab2.send({"type": "ping", "id": "sync"})
        tab2.until(lambda m: m["type"] == "pong")
        assert not any(m["type"] == "ack" for m in tab2.messages)
        assert tab2.last["table"]["seats"][actor.game.attacker]["connected"] is True
