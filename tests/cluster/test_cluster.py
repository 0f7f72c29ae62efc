"""Two or three server processes on loopback sharing PostgreSQL and Redis."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets

from tests.cluster.harness import Cluster, Player, rest, signup
from tests.support.wait import eventually, wait_until

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


def _open_staked_table(cluster: Cluster, port: int, creator: str, stake: int, deck: int = 36) -> str:
    body = {"stake": stake, "timer": 0, "bot_delay_ms": 0, "deck": deck}
    response = rest(port, creator, "POST", "/api/tables", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["code"])


def _wait_match(port: int, cookie: str, count: int, timeout: float = 20.0) -> list[dict]:
    items: list[dict] = []

    def recorded() -> bool:
        items[:] = rest(port, cookie, "GET", "/api/matches?account=me").json()["items"]
        return len(items) >= count

    wait_until(recorded, timeout, f"{count} match(es) are recorded", every=0.1)
    return items


def _balance(port: int, cookie: str) -> int:
    return int(rest(port, cookie, "GET", "/api/me").json()["balance"])


def _check_settled(cluster: Cluster, port: int, cookies: list[str], players: list[Player], stake: int) -> None:
    outcome = players[0].outcome
    assert outcome is not None
    items = _wait_match(port, cookies[0], 1)
    detail = rest(port, cookies[0], "GET", f"/api/matches/{items[0]['id']}").json()
    # No move lost, none applied twice: the log holds exactly the commands the players got acks for.
    assert detail["actions"] == sum(len(p.acked) for p in players)
    balances = [_balance(port, cookie) for cookie in cookies]
    assert sum(balances) == 1000 * len(cookies)
    if outcome["draw"]:
        assert balances == [1000] * len(cookies)
    else:
        seat_of = {p.seat: i for i, p in enumerate(players)}
        assert balances[seat_of[outcome["durak"]]] == 1000 - stake


def test_players_on_different_processes_play_complete_matches(cluster: Cluster) -> None:
    cluster.start(3)
    a, b, c = cluster.ports
    tables = []
    for index, (creator_port, other_port) in enumerate([(a, b), (b, c)]):
        cookies = [signup(creator_port, f"p{index}first"), signup(other_port, f"p{index}second")]
        code = _open_staked_table(cluster, creator_port, cookies[0], 40)
        assert rest(creator_port, cookies[0], "POST", f"/api/tables/{code}/join", json={}).status_code == 200
        assert rest(other_port, cookies[1], "POST", f"/api/tables/{code}/join", json={}).status_code == 200
        players = [
            Player(cluster, code, cookies[0], [creator_port, other_port], seed=index),
            Player(cluster, code, cookies[1], [other_port, creator_port], seed=index + 10),
        ]
        tables.append((code, cookies, players, (creator_port, other_port)))
    # The lobby of a third process sees tables created elsewhere.
    listed = httpx.get(f"http://127.0.0.1:{c}/api/tables", timeout=10).json()["tables"]
    assert {row["code"] for row in listed} >= {code for code, *_ in tables}
    watched = tables[0][0]

    async def spectate() -> int:
        """A spectator on the third process; the owner (another process) counts it for everyone."""
        async with websockets.connect(
            f"ws://127.0.0.1:{c}/ws/tables/{watched}", additional_headers={"Origin": cluster.origin(c)}
        ) as ws:
            await ws.send(json.dumps({"type": "hello"}))
            while True:
                message = json.loads(await ws.recv())
                if message["type"] == "welcome":
                    assert "hand" not in (message["view"] or {})
                    return int(message["table"]["spectators"])

    async def play_all() -> None:
        assert await spectate() == 1
        info = rest(a, tables[0][1][0], "GET", f"/api/tables/{watched}").json()
        assert info["spectators"] in (0, 1)  # the spectator has just left
        await asyncio.gather(*(p.run() for _, _, players, _ in tables for p in players))

    asyncio.run(play_all())
    for _code, cookies, players, ports in tables:
        _check_settled(cluster, ports[0], cookies, players, 40)


def test_killing_the_owner_mid_bout_moves_the_match_to_another_process(cluster: Cluster) -> None:
    cluster.start(3)
    a, b, c = cluster.ports
    cookies = [signup(b, "killer1"), signup(c, "killer2")]
    code = _open_staked_table(cluster, a, cookies[0], 60)
    assert cluster.node_of_owner(code) == a
    rest(b, cookies[0], "POST", f"/api/tables/{code}/join", json={})
    rest(c, cookies[1], "POST", f"/api/tables/{code}/join", json={})
    players = [Player(cluster, code, cookies[0], [a, b], seed=1), Player(cluster, code, cookies[1], [c, b], seed=2)]

    async def play_and_kill() -> None:
        tasks = [asyncio.create_task(p.run(deadline_s=120)) for p in players]
        await eventually(lambda: max(p.version for p in players) >= 12, 60, "the match is under way", every=0.05)
        cluster.kill(a)  # SIGKILL: no goodbye, no lease release
        await asyncio.gather(*tasks)

    asyncio.run(play_and_kill())
    new_owner = cluster.node_of_owner(code)
    assert new_owner in (b, c)
    assert players[0].reconnects >= 1  # the first player was connected to the killed process
    _check_settled(cluster, b, cookies, players, 60)


def test_a_redis_outage_is_survived(cluster: Cluster) -> None:
    cluster.start(2)
    a, b = cluster.ports
    cookies = [signup(a, "outage1"), signup(b, "outage2")]
    code = _open_staked_table(cluster, a, cookies[0], 30)
    rest(a, cookies[0], "POST", f"/api/tables/{code}/join", json={})
    rest(b, cookies[1], "POST", f"/api/tables/{code}/join", json={})
    players = [Player(cluster, code, cookies[0], [a, b], seed=3), Player(cluster, code, cookies[1], [b, a], seed=4)]
    seen_during_outage: list[int] = []

    async def play_with_outage() -> None:
        tasks = [asyncio.create_task(p.run(deadline_s=120)) for p in players]
        await eventually(lambda: max(p.version for p in players) >= 8, 60, "the match is under way", every=0.05)
        cluster.redis.stop()
        await asyncio.sleep(0.5)  # the real Redis is down a while: the processes notice on their own
        # A clear error, not a hang: REST calls that need the broker answer 503 / 404 quickly.
        async with httpx.AsyncClient(timeout=15) as client:
            response = await client.post(
                f"http://127.0.0.1:{b}/api/tables/{code}/join", cookies={"durak_session": cookies[1]}, json={}
            )
        seen_during_outage.append(response.status_code)
        await asyncio.sleep(2.5)  # an outage of a few seconds of the real Redis, players retrying meanwhile
        cluster.redis.start()
        await asyncio.gather(*tasks)

    asyncio.run(play_with_outage())
    assert seen_during_outage and seen_during_outage[0] in (404, 409, 503)
    _check_settled(cluster, a, cookies, players, 30)


def logout_closes_the_socket_on_another_process(cluster: Cluster, a: int, b: int, cookie: str, code: str) -> None:
    """A table socket held by process ``b`` closes with 4001 when its session logs out on ``a``, and
    the revoked cookie is refused at both."""

    async def scenario() -> tuple[int, dict]:
        async with websockets.connect(
            f"ws://127.0.0.1:{b}/ws/tables/{code}",
            origin=cluster.origin(b),
            additional_headers={"Cookie": f"durak_session={cookie}"},
        ) as ws:
            await ws.send(json.dumps({"type": "hello"}))
            while json.loads(await ws.recv())["type"] != "welcome":
                pass
            logout = await asyncio.to_thread(rest, a, cookie, "POST", "/api/auth/logout")
            assert logout.status_code == 204
            bye: dict = {}
            with pytest.raises(websockets.ConnectionClosed) as closed:
                async with asyncio.timeout(10):
                    while True:
                        message = json.loads(await ws.recv())
                        if message["type"] == "bye":
                            bye = message
            assert closed.value.rcvd is not None
            return closed.value.rcvd.code, bye

    close_code, bye = asyncio.run(scenario())
    assert close_code == 4001 and bye["code"] == "signed_out"
    for port in (a, b):
        assert rest(port, cookie, "GET", "/api/me").status_code == 401


def test_logging_out_on_one_process_closes_the_sockets_on_another(cluster: Cluster) -> None:
    """The sign-out is announced over Redis: a table socket held by another process closes with
    4001, and the revoked cookie is refused at every process."""
    cluster.start(2)
    a, b = cluster.ports
    cookie = signup(a, "mover")
    code = _open_staked_table(cluster, a, cookie, 0)
    logout_closes_the_socket_on_another_process(cluster, a, b, cookie, code)
