"""What the server refuses over a real websocket, with the stable error codes of the protocol, and
cheating tables where a challenge decides the match (RULES §9)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench._client import Player, beats, command, is_cheat
from bench._server import ServerProcess
from tests.e2e.support import accounts, close_all, expected_payout, join, open_table, until_dealt
from tests.e2e.support import connect as connect_player
from tests.support.wait import eventually

START = 1000


async def _seated_pair(server: ServerProcess, names: tuple[str, str], **params: Any) -> tuple[list, list[Player], str]:
    """Two players at a fresh table, dealt; returns (accounts, players by seat, code)."""
    guest = params.get("stake", 0) == 0
    people = await accounts(server, *names, guest=guest)
    table = await open_table(people[0], seats=2, **params)
    code = table["code"]
    players = [await connect_player(server, code, p, p.name) for p in people]
    for i, person in enumerate(people):
        await join(person, code, seat=i)
    await until_dealt(players)
    return people, players, code


def _lead_for_cheat(leader: Player, defender: Player) -> tuple[dict[str, Any], str]:
    """A lead, and a card of the defender's that does not beat it (both hands are ours to see)."""
    trump = leader.view["trump"]
    best: tuple[int, dict[str, Any], str] | None = None
    for lead in leader.view["legal"]:
        card = lead["cards"][0]
        losers = [c for c in defender.view["hand"] if not beats(c, card, trump)]
        if losers and (best is None or len(losers) > best[0]):
            best = (len(losers), lead, losers[0])
    assert best is not None, "the defender beats every card the leader holds"
    return best[1], best[2]


def _by_role(players: list[Player]) -> tuple[Player, Player]:
    attacker = players[0].view["attacker"]
    return players[attacker], players[1 - attacker]


async def test_normal_table_refuses_illegal_commands_with_stable_codes(server: ServerProcess) -> None:
    people, players, code = await _seated_pair(server, ("refA", "refB"), timer=0, transfer=False)
    leader, defender = _by_role(players)
    spectator = await connect_player(server, code, None, "spectator")
    try:
        lead, bad_cover = _lead_for_cheat(leader, defender)

        async def refused(player: Player, payload: dict[str, Any], code_: str) -> dict[str, Any]:
            cmd_id = f"r{len(player.messages)}"
            await player.send({**payload, "id": cmd_id, "version": player.version})
            reply = await player.reply(cmd_id)
            assert reply["type"] == "error" and reply["code"] == code_, (payload, reply)
            return reply

        await refused(spectator, {"type": "lead", "cards": [lead["cards"][0]]}, "not_seated")
        await refused(defender, {"type": "lead", "cards": [defender.view["hand"][0]]}, "not_your_turn")
        not_held = next(c for c in ("As", "Ah", "Ad", "Ac", "Ks") if c not in leader.view["hand"])
        await refused(leader, {"type": "lead", "cards": [not_held]}, "card_not_in_hand")
        await refused(leader, {"type": "challenge", "move": 0}, "not_allowed_here")
        before = leader.version
        assert (await leader.do(lead))["type"] == "ack"
        await defender.until(lambda m: m["type"] == "update" and m["version"] > before)
        await refused(defender, {"type": "cover", "attack": 0, "card": bad_cover}, "does_not_beat")
        await refused(defender, {"type": "transfer", "cards": [defender.view["hand"][0]]}, "not_allowed_here")
        # A command that was legal at an older version and is not any more: stale_version.
        await leader.send(command(lead, "late-lead", before))
        assert (await leader.reply("late-lead"))["code"] == "stale_version"
        # A repeated command id is answered from memory, not applied twice.
        honest = defender.view["legal"][0]
        first_id = await defender.act(honest)
        first = await defender.reply(first_id)
        assert first["type"] == "ack"
        await defender.send(command(honest, first_id, before))
        again = await defender.reply(first_id)
        assert again["type"] == "ack" and again["duplicate"] is True and again["version"] == first["version"]
        # Frames that are not commands.
        await defender.ws.send("{not json")
        assert (await defender.until(lambda m: m["type"] == "error"))["code"] == "bad_json"
        await defender.send({"type": "shuffle", "id": "x1"})
        assert (await defender.until(lambda m: m["type"] == "error"))["code"] == "unknown_type"
        await defender.send({"type": "cover", "id": "x2", "attack": 0})
        assert (await defender.until(lambda m: m["type"] == "error"))["code"] == "bad_message"
        await defender.ws.send(b"\x00\x01")
        assert (await defender.until(lambda m: m["type"] == "error"))["code"] == "bad_message"
        await defender.send({"type": "ping", "id": "p1"})
        assert await defender.until(lambda m: m["type"] == "pong") == {"type": "pong", "id": "p1"}
        # Nothing of that disturbed the match: both seats still see the same running table.
        await defender.send({"type": "hello", "last_version": None})
        welcome = await defender.until(lambda m: m["type"] == "welcome")
        assert welcome["table"]["status"] == "playing" and welcome["version"] == first["version"]
    finally:
        await close_all(*players, spectator, *people)


async def test_handshake_refusals(server: ServerProcess) -> None:
    (person,) = await accounts(server, "hsA", guest=True)
    try:
        code = (await open_table(person, timer=0))["code"]
        with pytest.raises(InvalidStatus) as refused:
            await connect(f"{server.ws_url}/ws/tables/{code}", additional_headers={"origin": "http://evil.example"})
        assert refused.value.response.status_code == 403
        bad_cookie = {"origin": server.base_url, "cookie": "durak_session=forged"}
        with pytest.raises(InvalidStatus) as forged:
            await connect(f"{server.ws_url}/ws/tables/{code}", additional_headers=bad_cookie)
        assert forged.value.response.status_code == 403
        async with connect(f"{server.ws_url}/ws/tables/NO-SUCH-TABLE", additional_headers=person.headers) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4004
    finally:
        await person.aclose()


async def test_a_page_of_another_origin_cannot_play_for_the_player(server: ServerProcess) -> None:
    """Issue 35.1: the real server on a port other than 8000, with the default origin settings. A
    page on 127.0.0.1:8000 (or any sibling origin the browser marks same-site) holding the player's
    cookie cannot open his socket during a staked match, so it cannot send ``leave`` for him: the
    match goes on and his stake stays where it was."""
    assert server.port != 8000
    people, players, code = await _seated_pair(server, ("orgA", "orgB"), timer=0, stake=100)
    victim = people[0]
    try:
        assert await victim.balance() == START - 100  # in escrow
        for forged in (
            {"origin": "http://127.0.0.1:8000"},
            {"origin": "http://localhost:8000"},
            {"origin": server.base_url, "sec-fetch-site": "same-site"},
            {"sec-fetch-site": "cross-site"},
        ):
            with pytest.raises(InvalidStatus) as refused:
                async with connect(
                    f"{server.ws_url}/ws/tables/{code}",
                    additional_headers={"cookie": f"durak_session={victim.cookie}", **forged},
                ) as ws:
                    await ws.send(json.dumps({"type": "leave", "id": "forged-leave"}))
            assert refused.value.response.status_code == 403, forged
        # The player's own page (the server's origin, same-origin) still plays.
        await players[0].send({"type": "ping", "id": "own"})
        assert (await players[0].until(lambda m: m["type"] == "pong"))["id"] == "own"
        info = (await victim.http.get(f"/api/tables/{code}")).json()
        assert info["status"] == "playing"
        assert [seat["name"] for seat in info["seats"]] == ["orgA", "orgB"]
        assert await victim.balance() == START - 100
    finally:
        await close_all(*players, *people)


async def test_a_burst_over_the_rate_limit_is_refused_message_by_message(server: ServerProcess) -> None:
    """The server was started with DURAK_WS_BURST=200 (and 1000/s): a burst well past it gets one
    ``rate_limited`` error per message over the limit, with the wait; the connection stays open
    (only sustained abuse, tests/tables/test_rate_limit.py, closes it)."""
    (person,) = await accounts(server, "rateA", guest=True)
    try:
        code = (await open_table(person, timer=0))["code"]
        async with connect(f"{server.ws_url}/ws/tables/{code}", additional_headers=person.headers) as ws:
            for i in range(2000):
                await ws.send(json.dumps({"type": "ping", "id": f"p{i}"}))
            seen = [json.loads(await asyncio.wait_for(ws.recv(), 10)) for _ in range(2000)]
            pongs = sum(1 for m in seen if m["type"] == "pong")
            refused = [m for m in seen if m["type"] == "error"]
            assert 200 <= pongs < 2000 and pongs + len(refused) == 2000
            assert all(m["code"] == "rate_limited" and m["retry_after_ms"] >= 1 for m in refused)
            # The server process's rate limit runs on its real clock: wait what it said.
            await asyncio.sleep(max(m["retry_after_ms"] for m in refused) / 1000)
            await ws.send(json.dumps({"type": "ping", "id": "after"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong", "id": "after"}
    finally:
        await person.aclose()


@pytest.mark.parametrize("caught", [True, False], ids=["cheat-caught", "wrong-challenge"])
async def test_challenge_decides_a_staked_cheating_match(server: ServerProcess, caught: bool) -> None:
    stake = 80
    names = ("chtA", "chtB") if caught else ("chtC", "chtD")
    people, players, _ = await _seated_pair(server, names, timer=0, cheating=True, stake=stake)
    leader, defender = _by_role(players)
    try:
        lead, bad_cover = _lead_for_cheat(leader, defender)
        assert (await leader.do(lead))["type"] == "ack"
        if caught:
            await defender.until(lambda m: m["type"] == "update" and m["view"]["table"])
            cover = {"type": "cover", "attack": 0, "card": bad_cover}
            assert is_cheat(defender.view, cover)
            assert cover in [{k: v for k, v in a.items() if k != "seat"} for a in defender.view["legal"]]
            assert (await defender.do(cover))["type"] == "ack"  # the cheat stands until challenged
            await leader.until(lambda m: m["type"] == "update" and len(m["view"]["moves"]) == 2)
            challenger, move, loser = leader, 1, defender
        else:
            await defender.until(lambda m: m["type"] == "update" and m["view"]["table"])
            challenger, move, loser = defender, 0, defender  # the lead was honest
        assert (await challenger.do({"type": "challenge", "move": move}))["type"] == "ack"
        assert challenger.finished  # the finishing update comes before the ack
        final = challenger.last
        event = next(e for e in final["events"] if e["type"] == "results")
        challenge = [e for e in challenger.messages if e["type"] == "update" for e in e["events"]]
        ruling = next(e for e in challenge if e["type"] == "challenge")
        balances: list[int] = []

        async def settled() -> bool:  # settlement runs after the result is pushed
            balances[:] = [await p.balance() for p in people]
            return sum(balances) == 2 * START

        await eventually(settled, 5, "the stakes are settled", every=0.05)
    finally:
        await close_all(*players, *people)
    loser_seat = loser.seat
    assert ruling["ruling"] == ("upheld" if caught else "rejected") and ruling["loser"] == loser_seat
    outcome = event["outcome"]
    assert outcome["durak"] == loser_seat and outcome["reason"] == "challenge"
    assert balances[loser_seat] == START - stake and balances[1 - loser_seat] == START + stake
    assert expected_payout(outcome, stake, 2)[loser_seat] == 0


async def test_cover_beyond_twelve_attacks_at_a_cheating_table(server: ServerProcess) -> None:
    """A cheating table lets throw-ins exceed every limit, so covers of attack #12 and beyond are
    legal and must pass the protocol (its index bound was 11 once)."""
    people = await accounts(server, *(f"big{i}" for i in range(6)), guest=True)
    table = await open_table(people[0], seats=6, deck=36, circle="all", cheating=True, timer=0)
    code = table["code"]
    players = [await connect_player(server, code, p, p.name) for p in people]
    try:
        for i, person in enumerate(people):
            await join(person, code, seat=i)
        await until_dealt(players)
        leader = players[players[0].view["attacker"]]
        reply = await leader.do(leader.view["legal"][0])
        assert reply["type"] == "ack"
        latest = reply["version"]  # the table's version after the last accepted command
        defender = players[leader.view["defender"]]
        for _ in range(6):  # everyone but the defender throws in card after card, past every limit
            for player in players:
                if player.version < latest:  # it may have seen the latest update already
                    await player.until(lambda m, v=latest: m["type"] == "update" and m["version"] >= v)
                throws = [a for a in player.view["legal"] if a["type"] == "throw_in" and len(a["cards"]) == 1]
                if player is not defender and throws:
                    reply = await player.do(throws[0])
                    assert reply["type"] == "ack", reply
                    latest = reply["version"]
        if defender.version < latest:
            await defender.until(lambda m: m["type"] == "update" and m["version"] >= latest)
        assert len(defender.view["table"]) >= 13, defender.view["table"]
        cover = next(a for a in defender.view["legal"] if a["type"] == "cover" and a["attack"] >= 12)
        reply = await defender.do(cover)
    finally:
        await close_all(*players, *people)
    assert reply["type"] == "ack", reply
