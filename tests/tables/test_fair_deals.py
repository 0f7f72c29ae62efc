"""Provably fair deals at a real table (docs/fairness.md): everyone has the commitment before any
client seed is accepted and before any card; a client seed is refused unless it answers the current
commitment between matches; the match is dealt from the documented function; the server seed is
revealed with the results, stored with the match, and appears nowhere before."""

from __future__ import annotations

import json
import logging
import random
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app import cli
from app.engine import Rules, decision, fairness, new_match
from app.tables.fair import FairDeals
from app.tables.spec import Seat
from tests.support.wait import wait_until
from tests.tables.harness import ORIGIN, Player, create_table, guest, signup

CLIENT_SEED = "00112233445566778899aabbccddeeff"
BOB_SEED = "ffeeddccbbaa99887766554433221100"


def play_with_a_bot(players: list[Player], actor: Any, rng: random.Random) -> None:
    """Random legal play by the humans; when the table waits for the bot, wait for its move."""
    for _ in range(3000):
        if actor.status != "playing":
            return
        for player in players:
            while player.version < actor.version:
                player.recv()
        waiting = set(decision(actor.game)["seats"])
        movers = [p for p in players if p.view and p.view["legal"] and p.last["seat"] in waiting]
        if not movers:
            # Past what the player has seen, never past the actor's version read now: the bot may
            # have moved since the players caught up, and no update after that one may ever come
            # (the humans are to move): waiting for it hung the test.
            players[0].until(lambda m, seen=players[0].version: m["type"] == "update" and m["version"] > seen)
            continue
        mover = rng.choice(movers)
        legal = [a for a in mover.view["legal"] if a["type"] != "challenge"]
        mover.act(rng.choice(legal))
        assert mover.until(lambda m: m["type"] in ("ack", "error"))["type"] == "ack", mover.messages[-1]
    raise AssertionError("the match did not end")


def carries_cards(message: dict[str, Any]) -> bool:
    view = message.get("view")
    return bool(view) and (bool(view.get("hand")) or bool(view.get("trump_card")))


def commitment_of(message: dict[str, Any]) -> str | None:
    table = message.get("table") or {}
    return (table.get("fairness") or {}).get("commitment")


def test_a_fair_deal_from_commitment_to_reveal(
    client: TestClient, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.DEBUG)
    alice, bob = signup(client, "alice"), guest(client, "bob")
    code = create_table(client, alice, timer=0, seats=3)["code"]
    assert client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice).status_code == 200
    actor = client.app.state.tables.tables[code]
    secret = actor.fair.server_seed.hex()
    commitment = actor.fair.commitment
    assert commitment == fairness.commitment(actor.fair.server_seed, actor.fair.table, 1)
    assert code not in actor.fair.table  # the deal names the table by its opaque id, never the invite code

    every_text: list[str] = []  # everything anybody received before the match ended
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as spectator_ws,
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as alice_ws,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as bob_ws,
    ):
        spectator, first, second = Player(spectator_ws, "spec"), Player(alice_ws, "alice"), Player(bob_ws, "bob")
        for player in (spectator, first, second):
            assert commitment_of(player.hello()) == commitment  # from the very first message on

        # Refused: a seed that does not answer the current commitment, a malformed one, a spectator's.
        first.send({"type": "client_seed", "id": "s0", "seed": CLIENT_SEED, "commitment": "0" * 64})
        assert first.until(lambda m: m["type"] == "error")["code"] == "stale_commitment"
        first.send({"type": "client_seed", "id": "s1", "seed": "xyz", "commitment": commitment})
        assert first.until(lambda m: m["type"] == "error")["code"] == "bad_message"
        second.send({"type": "client_seed", "id": "s2", "seed": CLIENT_SEED, "commitment": commitment})
        assert second.until(lambda m: m["type"] == "error")["code"] == "not_seated"
        first.send({"type": "client_seed", "id": "s3", "seed": CLIENT_SEED, "commitment": commitment})
        assert first.until(lambda m: m["type"] in ("ack", "error"))["type"] == "ack"
        assert actor.info()["fairness"]["client_seeds"] == [0]

        # bob sits down with his seed (a seed for another commitment is refused, and he stays out),
        # and a bot fills the last seat: the match starts.
        stale = {"seat": 1, "client_seed": BOB_SEED, "commitment": "1" * 64}
        refused = client.post(f"/api/tables/{code}/join", json=stale, headers=bob)
        assert refused.status_code == 409 and refused.json()["detail"].startswith("stale_commitment")
        assert actor.seats[1].kind == "empty"
        sitting = {"seat": 1, "client_seed": BOB_SEED, "commitment": commitment}
        assert client.post(f"/api/tables/{code}/join", json=sitting, headers=bob).status_code == 200
        response = client.post(f"/api/tables/{code}/bots", json={"seat": 2, "level": "easy"}, headers=alice)
        assert response.status_code == 200, response.text
        assert actor.status == "playing"
        match_id = actor.match_id
        for player in (spectator, first, second):
            player.until(lambda m: m["type"] == "update" and m["view"] is not None)
        # During the match: no client seed, and the seed stays secret everywhere.
        second.send({"type": "client_seed", "id": "s4", "seed": CLIENT_SEED, "commitment": commitment})
        assert second.until(lambda m: m["type"] == "error")["code"] == "match_running"
        # Nothing of the replay, the revealed hands or the coach exists for a running match.
        for path in (f"/api/matches/{match_id}", f"/api/matches/{match_id}/replay"):
            assert client.get(path, headers=alice).status_code == 404
        refused = client.get(f"/api/matches/{match_id}/analysis", params={"seat": 0}, headers=alice)
        assert refused.status_code == 404 and "only finished matches" in refused.json()["detail"]
        for path in (f"/api/tables/{code}", "/api/tables", "/metrics", "/api/lobby"):
            answer = client.get(path, headers=alice)
            every_text.append(answer.text)

        finished_at: list[float] = []
        finish = actor._finish_match

        async def timed_finish(*args: Any, **kwargs: Any) -> None:
            finished_at.append(time.time())
            await finish(*args, **kwargs)

        monkeypatch.setattr(actor, "_finish_match", timed_finish)
        play_with_a_bot([first, second], actor, random.Random(4))
        assert actor.status == "finished"
        for player in (spectator, first, second):
            while player.version < actor.version:
                player.recv()
        # Every recipient: the commitment came before (or with) the first card-bearing message, and
        # before the client seed was accepted (all of that is in the first welcome).
        for player in (spectator, first, second):
            ended = next(
                i
                for i, m in enumerate(player.messages)
                if any(e.get("type") == "results" for e in m.get("events") or [])
            )
            assert commitment_of(player.messages[0]) == commitment  # the first message: the welcome
            card_messages = [m for m in player.messages[:ended] if carries_cards(m)]
            assert card_messages and all(commitment_of(m) == commitment for m in card_messages)
            every_text.extend(json.dumps(m) for m in player.messages[:ended])
            final = player.messages[ended]
            results = next(e for e in final["events"] if e["type"] == "results")
            assert results["fairness"]["server_seed"] == secret
            assert any(e["type"] == "commitment" and e["commitment"] != commitment for e in final["events"])
        # Log lines up to the end of the match (storing the match afterwards logs it, rightly).
        every_text.extend(record.getMessage() for record in caplog.records if record.created < finished_at[0])
        assert len(every_text) > 100
        leaked = [text for text in every_text if secret in text or secret.upper() in text]
        assert not leaked, leaked[:1]

    revealed = actor.results["fairness"]
    # seat 0 sent its seed over the websocket, seat 1 when sitting down, the bot contributes nothing
    assert revealed["commitment"] == commitment and revealed["client_seeds"] == [CLIENT_SEED, BOB_SEED, ""]
    assert fairness.verify(revealed)[0] == []
    # The next match has its own secret and commitment.
    assert actor.fair.number == 2 and actor.fair.server_seed.hex() != secret
    assert actor.info()["fairness"]["commitment"] == fairness.commitment(actor.fair.server_seed, actor.fair.table, 2)

    # Stored with the match: the REST answer, the replay's first position and the CLI agree.
    wait_until(  # the match is stored by a task after the results went out
        lambda: client.get(f"/api/matches/{match_id}").status_code != 404,
        timeout=30,
        what="the match is stored",
        every=0.05,
    )
    detail = client.get(f"/api/matches/{match_id}")
    assert detail.status_code == 200, detail.text
    stored = detail.json()["fairness"]
    assert stored == revealed and stored["table"] == detail.json()["table_id"]
    replay = client.get(f"/api/matches/{match_id}/replay").json()
    dealt = replay[-1]["revealed_hands"]["dealt"]
    deck = stored["deck"]
    dealer = detail.json()["dealer"]
    for index in range(18):  # one card at a time from the dealer's left
        assert deck[index] in dealt[(dealer + 1 + index) % 3]
    monkeypatch.setenv("DURAK_DATABASE_URL", client.app.state.settings.storage.database_url)
    from app.config import get_settings

    get_settings.cache_clear()
    try:
        assert cli.main(["verify-deal", match_id]) == 0
    finally:
        get_settings.cache_clear()


def test_the_last_durak_deals_the_next_match_while_his_seat_exists_else_the_committed_draw() -> None:
    seats, seed = [Seat(0, "bot"), Seat(1, "bot")], bytes(range(32))
    deal = FairDeals("t", server_seed=seed).start(Rules(), seats)
    drawn = FairDeals("t", server_seed=seed).new_match(Rules(), seats, None)
    assert drawn == new_match(Rules(), 0, deal.dealer_draw, deal.deck)  # dealt from the committed seed
    assert FairDeals("t", server_seed=seed).new_match(Rules(), seats, 1).dealer == 1
    assert FairDeals("t", server_seed=seed).new_match(Rules(), seats, 2).dealer == deal.dealer_draw  # seat 2 gone
