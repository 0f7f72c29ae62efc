"""The rate limit refuses messages one by one and closes only sustained abuse; a client that
answers every update at once is never limited, however fast the match goes. The limit runs on a
fake clock that only the test moves."""

from __future__ import annotations

import json
import random

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from app.api import table_connection
from tests.support.clock import FakeClock
from tests.support.wait import wait_until
from tests.tables.harness import Player, started_table


def _strict_limit(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """Far below the pace of a scripted match: 3 messages at once, 1 per second; the limit's clock."""
    settings = client.app.state.settings
    settings.throttle = settings.throttle.model_copy(update={"ws_burst": 3, "ws_rate_per_s": 1.0})
    clock = FakeClock()
    monkeypatch.setattr(table_connection, "rate_clock", clock)
    return clock


def _answer(player: Player, message: dict, rng: random.Random) -> None:
    """Answer an update at once when the table waits for this seat."""
    view = message["view"]
    if view is None or message["seat"] not in view["decision"]["seats"]:
        return
    legal = [action for action in view["legal"] if action["type"] not in ("challenge", "exchange_trump")]
    player.act(rng.choice(legal))


def test_a_client_answering_every_update_at_once_plays_a_whole_match_unrefused(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    _strict_limit(client, monkeypatch)  # the clock stands still: time alone gives back no message
    code, alice, bob = started_table(client)
    actor = client.app.state.tables.tables[code]
    rng = random.Random(5)
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb,
    ):
        players = [Player(wa, "a"), Player(wb, "b")]
        for player in players:
            _answer(player, player.hello(), rng)
        while actor.status == "playing":
            target = actor.version
            if all(player.version >= target for player in players):
                wait_until(  # the table is still applying the last answer
                    lambda seen=target: actor.version > seen or actor.status != "playing",
                    what="the table applies the last answer (was a command refused?)",
                )
                continue
            for player in players:
                while player.version < target:
                    message = player.recv()
                    assert message["type"] != "error", message
                    if message["type"] == "update":
                        _answer(player, message, rng)
        for player in players:  # the last acks
            while sum(m["type"] == "ack" for m in player.messages) < player.counter:
                assert player.recv()["type"] != "error"
    assert actor.game.outcome is not None
    # While the clock stands still the time-based limit lets the burst (3) through and nothing more:
    # a player who sent three times that was let through by the versions he was answering. (Ten times
    # the burst was the bound before; a random deal's match can be shorter: one gave 28 commands.)
    assert max(player.counter for player in players) > 3 * 3
    assert not [m for p in players for m in p.messages if m["type"] in ("error", "bye")]


def test_messages_over_the_limit_are_refused_one_by_one_with_the_wait(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _strict_limit(client, monkeypatch)
    code, alice, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        player = Player(ws, "a")
        for i in range(6):
            player.send({"type": "ping", "id": f"p{i}"})
        replies = [player.recv() for _ in range(6)]
        assert [m["type"] for m in replies] == ["pong"] * 3 + ["error"] * 3
        for n, refusal in enumerate(replies[3:], start=3):
            assert refusal["code"] == "rate_limited" and refusal["id"] == f"p{n}"
            assert 0 < refusal["retry_after_ms"] <= 1000
        clock.now += max(m["retry_after_ms"] for m in replies[3:]) / 1000
        player.send({"type": "ping", "id": "again"})
        assert player.recv() == {"type": "pong", "id": "again"}  # still open, and served again


def test_a_flood_is_refused_then_closed_with_4008(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = _strict_limit(client, monkeypatch)
    monkeypatch.setattr(table_connection, "ABUSE_CLOSE_S", 0.5)
    code, alice, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        player = Player(ws, "a")
        with pytest.raises(WebSocketDisconnect) as closed:
            for _ in range(75):  # 50 messages a second, over the limit all along, for 1.5 s at most
                ws.send_text(json.dumps({"type": "ping", "id": "x"}))
                player.recv()  # its answer: the server has looked at the clock for this message
                clock.now += 0.02
    assert closed.value.code == 4008
    kinds = [(m["type"], m.get("code")) for m in player.messages]
    assert kinds[:3] == [("pong", None)] * 3
    refusals = kinds.count(("error", "rate_limited"))
    assert refusals > 10 and kinds[3 : 3 + refusals] == [("error", "rate_limited")] * refusals
    assert kinds[-1] == ("bye", "rate_limited")
