"""Who contributes to a quick match's deal (docs/fairness.md, "Who contributed to a deal"): the
player who fills a waiting quick-play table with the seed his tap carries; the player against a bot
with the seed he sends for its commitment, before which that table does not deal."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from app.engine import fairness
from tests.support.wait import wait_until
from tests.tables.harness import Player, guest, signup

SEED = "00112233445566778899aabbccddeeff"
BOB_SEED = "ffeeddccbbaa99887766554433221100"


def _table(client: TestClient, code: str) -> dict[str, Any]:
    response = client.get(f"/api/tables/{code}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _recorded(client: TestClient, match_id: str, headers: dict[str, str]) -> dict[str, Any]:
    wait_until(
        lambda: client.get(f"/api/matches/{match_id}", headers=headers).status_code == 200,
        timeout=30,
        what="the match is stored",
        every=0.05,
    )
    body: dict[str, Any] = client.get(f"/api/matches/{match_id}", headers=headers).json()
    return body


def test_a_table_against_a_bot_deals_only_once_its_players_seed_for_its_commitment_has_come(
    client: TestClient,
) -> None:
    solo = signup(client, "solo")
    answer = client.post("/api/quickplay/bot", json={"level": "easy", "deck": 24}, headers=solo)
    assert answer.status_code == 200, answer.text
    code, commitment = answer.json()["code"], answer.json()["table"]["fairness"]["commitment"]
    info = _table(client, code)
    assert info["status"] == "waiting" and [s["kind"] for s in info["seats"]] == ["human", "bot"]
    with client.websocket_connect(f"/ws/tables/{code}", headers=solo) as ws:
        player = Player(ws, "solo")
        assert player.hello()["table"]["status"] == "waiting"  # the bot is seated, nothing is dealt
        stale = player.command({"type": "client_seed", "seed": SEED, "commitment": "0" * 64})
        player.send(stale)
        assert player.until(lambda m: m.get("id") == stale["id"])["code"] == "stale_commitment"
        assert _table(client, code)["status"] == "waiting"
        seeded = player.command({"type": "client_seed", "seed": SEED, "commitment": commitment})
        player.send(seeded)
        assert player.until(lambda m: m.get("id") == seeded["id"])["type"] == "ack"
        player.until(lambda m: m["type"] == "update" and m["table"]["status"] == "playing")
        match_id = _table(client, code)["match_id"]
        leave = player.command({"type": "leave"})
        player.send(leave)
        player.until(lambda m: m.get("id") == leave["id"])
    revealed = _recorded(client, match_id, solo)["fairness"]
    assert revealed["commitment"] == commitment and revealed["client_seeds"] == [SEED, ""]
    assert fairness.verify(revealed)[0] == []


def test_its_creator_may_still_start_it_without_a_seed(client: TestClient) -> None:
    solo = signup(client, "solo")
    code = client.post("/api/quickplay/bot", json={"level": "easy"}, headers=solo).json()["code"]
    assert _table(client, code)["status"] == "waiting"
    assert client.post(f"/api/tables/{code}/start", headers=solo).status_code == 200
    info = _table(client, code)
    assert info["status"] == "playing"
    assert client.post(f"/api/tables/{code}/leave", headers=solo).status_code == 200
    assert _recorded(client, info["match_id"], solo)["fairness"]["client_seeds"] == ["", ""]  # said so, not hidden


def test_the_player_who_fills_a_quickplay_table_seeds_its_deal_with_his_tap(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), guest(client, "bob")
    first = client.post("/api/quickplay", json={"seats": 2, "deck": 36}, headers=alice).json()
    assert first["created"] is True and first["table"]["status"] == "waiting"
    commitment = first["table"]["fairness"]["commitment"]  # drawn when the table opened, before bob's tap
    refused = client.post("/api/quickplay", json={"seats": 2, "deck": 36, "client_seed": "xyz"}, headers=bob)
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["body", "client_seed"]
    second = client.post("/api/quickplay", json={"seats": 2, "deck": 36, "client_seed": BOB_SEED}, headers=bob)
    assert second.status_code == 200, second.text
    assert second.json()["code"] == first["code"]
    info = _table(client, first["code"])
    assert info["status"] == "playing"  # his seat filled the table: dealt with his seed in it
    assert client.post(f"/api/tables/{first['code']}/leave", headers=bob).status_code == 200
    revealed = _recorded(client, info["match_id"], alice)["fairness"]
    seeds = {first["seat"]: "", second.json()["seat"]: BOB_SEED}
    assert revealed["commitment"] == commitment
    assert revealed["client_seeds"] == [seeds[0], seeds[1]]
    assert fairness.verify(revealed)[0] == []


def test_a_tap_that_opens_a_table_does_not_seed_it(client: TestClient) -> None:
    """Its commitment was drawn after the tap's seed arrived: that seed does not count (the table
    page sends one for the commitment)."""
    alice = signup(client, "alice")
    opened = client.post("/api/quickplay", json={"seats": 2, "client_seed": SEED}, headers=alice).json()
    assert opened["created"] is True and opened["table"]["fairness"]["client_seeds"] == []
