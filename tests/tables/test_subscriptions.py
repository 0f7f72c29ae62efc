"""What a table connection listens to: its person channel always, the spectator channel only while
it has no seat (an idle seated connection holds one subscription), and the takeover's ``_rehello``
reaches seated players on their own channel."""

from __future__ import annotations

import asyncio

from fastapi.testclient import TestClient

from app.engine import Rules
from app.transport import channels
from tests.support.wait import wait_until
from tests.tables.actors import ALICE, BOB, seated_table
from tests.tables.harness import Player, create_table, signup


def test_a_seated_connection_drops_the_spectator_channel_and_takes_it_again_after_leaving(
    client: TestClient,
) -> None:
    alice, bob, carol = signup(client, "alice"), signup(client, "bob"), signup(client, "carol")
    code = create_table(client, alice, seats=3, timer=0)["code"]
    broker = client.app.state.tables.broker
    watchers = lambda: broker.subscriber_count(channels.watch(code))  # noqa: E731
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        me = Player(ws, "alice")
        assert me.hello()["seat"] is None
        assert watchers() == 1  # not seated yet: watching like a spectator

        assert client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice).status_code == 200
        me.until(lambda m: m["type"] == "update" and m["seat"] == 0)
        wait_until(lambda: watchers() == 0)

        assert client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob).status_code == 200
        update = me.until(lambda m: m["type"] == "update" and m["table"]["seats"][1]["kind"] == "human")
        me.send({"type": "ping", "id": "sync"})
        me.until(lambda m: m["type"] == "pong")
        assert [m["version"] for m in me.messages if m["type"] == "update"].count(update["version"]) == 1

        assert client.post(f"/api/tables/{code}/leave", headers=alice).status_code == 200
        me.until(lambda m: m["type"] in ("update", "welcome") and m["seat"] is None)
        wait_until(lambda: watchers() == 1)

        assert client.post(f"/api/tables/{code}/join", json={"seat": 2}, headers=carol).status_code == 200
        seen = me.until(lambda m: m["type"] == "update" and m["table"]["seats"][2]["kind"] == "human")
        assert seen["seat"] is None  # the update for spectators, on the spectator channel


async def test_resume_asks_seated_players_and_spectators_to_say_hello_again() -> None:
    async with (
        seated_table(Rules(timer=0)) as (broker, _, actor),
        broker.subscribe(channels.person(actor.code, ALICE.key)) as alices,
        broker.subscribe(channels.person(actor.code, BOB.key)) as bobs,
        broker.subscribe(channels.watch(actor.code)) as watching,
    ):
        await actor.resume()
        for sub in (alices, bobs, watching):
            async with asyncio.timeout(2):
                frame = channels.parse_frame((await sub.receive()).data)
            assert frame.kind == "_rehello"
