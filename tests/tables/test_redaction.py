"""Nobody ever receives a card they may not see: every message to every seat and spectator is checked
against the engine's hidden cards, including first snapshots and reconnect snapshots."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.engine import decision
from tests.tables.harness import ORIGIN, Player, create_table, signup

CARD = re.compile(r"^(10|[2-9JQKA])[cdhs]$")


def _cards_in(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, str) and CARD.match(value):
        found.add(value)
    elif isinstance(value, dict):
        for item in value.values():
            found |= _cards_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= _cards_in(item)
    return found


def _check(message: dict[str, Any], seat: int | None, hands: list[list[str]]) -> None:
    """The view holds only the recipient's own hand plus public cards; draw events only his own draws."""
    if message["type"] not in ("update", "welcome") or message.get("view") is None:
        return
    own = set(hands[seat]) if seat is not None else set()
    others = {card for s, hand in enumerate(hands) if s != seat for card in hand}
    view = message["view"]
    if seat is None:
        assert "hand" not in view
    else:
        assert set(view["hand"]) == own
    public = {pair["attack"] for pair in view["table"]} | {pair["cover"] for pair in view["table"] if pair["cover"]}
    public.add(view["trump_card"])
    leaked = (_cards_in(view) - own - public) & others
    assert not leaked, f"seat {seat} saw {leaked}"
    for event in message.get("events") or []:
        if event["type"] == "draw" and event["seat"] != seat:
            assert "cards" not in event


def _hands(actor: Any) -> list[list[str]]:
    return [[str(c) for c in hand] for hand in actor.game.hands]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_message_carries_a_hidden_card(client: TestClient, seed: int) -> None:
    rng = random.Random(seed)
    seats = rng.choice([2, 3, 4])
    names = [f"p{i}x" for i in range(seats)]
    headers = [signup(client, name) for name in names]
    params = {"deck": rng.choice([36, 52]), "seats": seats, "timer": 0, "transfer": rng.random() < 0.5}
    code = create_table(client, headers[0], **params)["code"]
    for i, h in enumerate(headers):
        client.post(f"/api/tables/{code}/join", json={"seat": i}, headers=h)
    actor = client.app.state.tables.tables[code]
    hands_at: dict[int, list[list[str]]] = {actor.version: _hands(actor)}

    secret = actor.fair.deal["server_seed"]  # the running match's server seed (provably fair deals)

    def check(message: dict[str, Any], seat: int | None) -> None:
        if "version" in message and message["type"] in ("update", "welcome"):
            _check(message, seat, hands_at[message["version"]])
        results = any(event.get("type") == "results" for event in message.get("events") or [])
        assert results or secret not in json.dumps(message), f"the server seed reached {seat} before the end"

    with client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as spectator_ws:
        spectator = Player(spectator_ws, "spectator")
        check(spectator.hello(), None)
        sockets = [client.websocket_connect(f"/ws/tables/{code}", headers=h) for h in headers]
        players = [Player(ws.__enter__(), names[i]) for i, ws in enumerate(sockets)]
        try:
            for seat, player in enumerate(players):
                check(player.hello(), seat)
            steps = 0
            while actor.status == "playing" and steps < 2000:
                steps += 1
                version = actor.version
                for seat, player in enumerate(players):
                    while player.version < version:
                        check(player.recv(), seat)
                while spectator.version < version:
                    check(spectator.recv(), None)
                if steps % 25 == 0:  # a reconnect snapshot, resuming from a recent version
                    seat = rng.randrange(seats)
                    check(players[seat].hello(players[seat].version - 3), seat)
                waiting = set(decision(actor.game)["seats"])
                movers = [p for s, p in enumerate(players) if s in waiting and p.view["legal"]]
                mover = rng.choice(movers or [p for p in players if p.view and p.view["legal"]])
                mover.act(rng.choice([a for a in mover.view["legal"] if a["type"] != "challenge"]))
                seen = len(mover.messages)
                reply = mover.until(lambda m: m["type"] in ("ack", "error"))
                assert reply["type"] == "ack", reply
                for v in range(version + 1, actor.version + 1):
                    hands_at[v] = _hands(actor)
                for message in mover.messages[seen:]:
                    check(message, players.index(mover))
            assert actor.status == "finished"
            for seat, player in enumerate(players):
                while player.version < actor.version:
                    check(player.recv(), seat)
        finally:
            for ws in sockets:
                ws.__exit__(None, None, None)
