"""A table's life over real websockets: the move timer and leaving forfeit (RULES §8) with the stake
settled, reconnecting mid-match, rematch series (§10), and what the lobby refuses."""

from __future__ import annotations

import asyncio

from bench._client import Account, Player, play_out
from bench._server import ServerProcess
from tests.e2e.support import (
    accounts,
    add_bot,
    close_all,
    connect,
    expected_payout,
    join,
    open_table,
    recorded_match,
    results_of,
    table_info,
    until_dealt,
)
from tests.support.wait import eventually

START = 1000


async def _settled(people: list[Account], total: int) -> list[int]:
    """Balances once the settlement has landed (it runs after the result is pushed)."""
    balances: list[int] = []

    async def settled() -> bool:
        balances[:] = [await p.balance() for p in people]
        return sum(balances) == total

    await eventually(settled, 5, "the stakes are settled", every=0.05)
    return balances


async def test_timer_runs_out_and_the_waiting_seat_forfeits_its_stake(server: ServerProcess) -> None:
    people = await accounts(server, "tmrA", "tmrB")
    players: list[Player] = []
    try:
        code = (await open_table(people[0], seats=2, stake=40, timer=1))["code"]
        players = [await connect(server, code, p, p.name) for p in people]
        for i, person in enumerate(people):
            await join(person, code, seat=i)
        await until_dealt(players)
        leader = players[0].view["decision"]["seats"][0]
        assert 0 < players[0].last["table"]["deadline_ms"] <= 1000
        final = await players[1].until(
            lambda m: m["type"] == "update" and m["table"]["status"] == "finished", timeout=5
        )
        balances = await _settled(people, 2 * START)
        detail = await recorded_match(people[0], results_of(final)["match_id"])
    finally:
        await close_all(*players, *people)
    outcome = results_of(final)["outcome"]
    assert outcome["durak"] == leader and outcome["forfeit"] == leader and outcome["reason"] == "timeout"
    assert balances[leader] == START - 40 and balances[1 - leader] == START + 40
    assert detail["durak"] == leader and detail["result"]["reason"] == "timeout"


async def test_leaving_over_the_websocket_forfeits_and_pays_the_others_by_place(server: ServerProcess) -> None:
    people = await accounts(server, "lvA", "lvB", "lvC")
    players: list[Player] = []
    try:
        code = (await open_table(people[0], seats=3, stake=90, timer=0, deck=36))["code"]
        players = [await connect(server, code, p, p.name) for p in people]
        for i, person in enumerate(people):
            await join(person, code, seat=i)
        await until_dealt(players)
        hands = [p["cards"] for p in players[0].view["players"]]
        leaver = 1
        assert (await players[leaver].do({"type": "leave"}))["type"] == "ack"
        final = players[leaver].last
        balances = await _settled(people, 3 * START)
    finally:
        await close_all(*players, *people)
    outcome = results_of(final)["outcome"]
    assert outcome["durak"] == leaver and outcome["reason"] == "left"
    # §8: the others are ranked by who went out first, then by fewest cards (ties share a place).
    others = [s for s in range(3) if s != leaver]
    expected_places = (
        [others] if hands[others[0]] == hands[others[1]] else [[s] for s in sorted(others, key=lambda s: hands[s])]
    )
    assert outcome["places"] == [*expected_places, [leaver]]
    paid = expected_payout(outcome, 90, 3)
    assert balances == [START - 90 + paid[s] for s in range(3)]
    assert balances[leaver] == START - 90 and sum(balances) == 3 * START


async def test_reconnect_mid_match_resumes_from_the_last_version_seen(server: ServerProcess) -> None:
    people = await accounts(server, "rcA", guest=True)
    table = await open_table(people[0], seats=2, timer=0)
    code = table["code"]
    player = await connect(server, code, people[0], "first")
    again: Player | None = None
    try:
        await join(people[0], code, seat=0)
        await add_bot(people[0], code, "easy", seat=1)
        await until_dealt([player])
        # Play a few moves, then drop the connection without a goodbye.
        while player.view["ply"] < 4 and not player.finished:
            if player.view["legal"] and 0 in player.view["decision"]["seats"]:
                await player.do(next(a for a in player.view["legal"] if a["type"] != "challenge"))
            else:
                await player.until(lambda m: m["type"] == "update")
        seen = player.last
        player.ws.transport.abort()  # the connection drops without a close frame
        again = await Player.connect(server.ws_url, code, people[0].headers, "again")
        welcome = await again.hello(last_version=seen["version"] - 2)
    finally:
        await close_all(player, *([again] if again else []), *people)
    assert welcome["seat"] == 0 and welcome["resumed_from"] == seen["version"] - 2
    assert welcome["version"] >= seen["version"]
    assert {e["version"] for e in welcome["events"]} >= {seen["version"] - 1, seen["version"]}
    if welcome["version"] == seen["version"]:
        assert welcome["view"]["hand"] == seen["view"]["hand"] and welcome["view"]["table"] == seen["view"]["table"]


async def test_rematch_keeps_the_series_and_the_durak_deals(server: ServerProcess) -> None:
    people = await accounts(server, "rmA", "rmB", guest=True)
    players: list[Player] = []
    try:
        code = (await open_table(people[0], seats=3, timer=0, deck=52))["code"]
        players = [await connect(server, code, p, p.name) for p in people]
        await join(people[0], code, seat=0)
        await join(people[1], code, seat=1)
        await add_bot(people[0], code, "normal", seat=2)
        await until_dealt(players)
        first = results_of((await play_out(players, seed=11))[0])["outcome"]
        for person in (people[1], people[0]):  # a proposal: it starts when both have agreed (the bot agrees)
            response = await person.http.post(f"/api/tables/{code}/rematch")
            assert response.status_code == 200, response.text
        await asyncio.gather(
            *(
                p.until(lambda m: m["type"] == "update" and any(e["type"] == "match_start" for e in m["events"]))
                for p in players
            )
        )
        info = await table_info(people[0], code)
        dealer = players[0].view["dealer"]
    finally:
        await close_all(*players, *people)
    assert info["status"] == "playing" and players[0].view["ply"] == 0
    series = {int(k): v for k, v in info["series"].items()}
    if first["draw"]:
        assert all(v == [0, 0] for v in series.values())
    else:
        assert dealer == first["durak"]  # §3: in a rematch the previous durak deals
        assert series[first["durak"]] == [0, 1] and series[first["order"][0]][0] == 1


async def test_lobby_refusals(server: ServerProcess) -> None:
    owner, other = await accounts(server, "lobA", "lobB")
    (visitor,) = await accounts(server, "lobG", guest=True)
    try:
        staked = (await open_table(owner, seats=3, stake=10))["code"]
        response = await owner.http.post(f"/api/tables/{staked}/bots", json={"level": "easy"})
        assert response.status_code == 409 and "bots_free_tables_only" in response.text  # §12
        free = (await open_table(owner, seats=3))["code"]
        response = await other.http.post(f"/api/tables/{free}/bots", json={"level": "easy"})
        assert response.status_code == 403  # only the creator seats bots
        response = await owner.http.post(f"/api/tables/{free}/bots", json={"level": "genius"})
        assert response.status_code == 422
        response = await visitor.http.post("/api/tables", json={"stake": 5})
        assert response.status_code == 403  # guests open free tables only
        response = await visitor.http.post(f"/api/tables/{staked}/join", json={})
        assert response.status_code == 403
        response = await owner.http.post("/api/tables", json={"deck": 24, "seats": 5})
        assert response.status_code == 422 and "seats" in response.text  # §1: 24 cards seat at most 4
        response = await other.http.post(f"/api/tables/{staked}/join", json={"seat": 7})
        assert response.status_code == 422
        rich = await other.balance()
        response = await other.http.post("/api/tables", json={"stake": rich + 1})  # refused before it opens
        assert response.status_code == 409 and "insufficient_funds" in response.text  # §10
    finally:
        await close_all(owner, other, visitor)
