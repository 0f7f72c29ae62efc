"""Redis frozen for a few seconds (SIGSTOP, as a stalled host or a long fork does it) while two
server processes serve live matches: every table lease lapses in the meantime, since nobody could
renew it. That must cost nobody his match: no table is taken from its living owner for it (nor
its players' graces run across a change of owner), no forfeit, no acknowledged move lost, and no
command waits more than 5 s for its answer beyond the pause itself."""

from __future__ import annotations

import asyncio
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.cluster.harness import Cluster, rest, signup
from tests.cluster.test_rolling_restart import FAST_S, RollingPlayer

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

MATCHES = 8
PAUSE_S = 3.0
MAX_STALL_S = 5.0  # beyond the pause


def _pause(cluster: Cluster, seconds: float) -> None:
    """SIGSTOP the test's own redis-server for ``seconds``, then SIGCONT (never the machine's)."""
    assert cluster.redis is not None and cluster.redis.proc is not None
    cluster.redis.proc.send_signal(signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        cluster.redis.proc.send_signal(signal.SIGCONT)


def _open_table(port: int, cookie: str, stake: int) -> str:
    body = {"stake": stake, "timer": 0, "bot_delay_ms": 0, "deck": 36}
    response = rest(port, cookie, "POST", "/api/tables", json=body)
    assert response.status_code == 201, response.text
    return str(response.json()["code"])


def _owners(cluster: Cluster, codes: list[str]) -> list[int | None]:
    return [cluster.node_of_owner(code) for code in codes]


def test_a_redis_pause_takes_no_table_from_its_owner_and_forfeits_nobody(cluster: Cluster) -> None:
    # Short limits: a seat whose grace ran across the pause would forfeit within the test's time.
    cluster.env.update({"DURAK_DISCONNECT_GRACE_S": "8", "DURAK_IDLE_LIMIT_S": "30"})
    cluster.start(2)
    a, b = cluster.ports
    with ThreadPoolExecutor(2) as pool:
        cookies = list(pool.map(lambda i: signup(a if i % 2 == 0 else b, f"pause{i}"), range(2 * MATCHES)))

    def set_up(index: int) -> tuple[str, list[str], list[RollingPlayer]]:
        pair = cookies[2 * index : 2 * index + 2]
        code = _open_table((a, b)[index % 2], pair[0], 10 if index % 2 else 0)
        players = []
        for seat, cookie in enumerate(pair):
            home = (a, b)[(index + seat) % 2]  # the two players of a match on different processes
            assert rest(home, cookie, "POST", f"/api/tables/{code}/join", json={}).status_code == 200
            players.append(RollingPlayer(cluster, code, cookie, [home, b if home == a else a], seed=77 * index + seat))
        return code, pair, players

    matches: list[tuple[str, list[str], list[RollingPlayer]]] = []
    owners_before: list[int | None] = []
    owners_after: list[int | None] = []

    async def play() -> None:
        tasks = []
        for index in range(MATCHES):
            match = await asyncio.to_thread(set_up, index)
            matches.append(match)
            tasks += [asyncio.create_task(player.run(deadline_s=90)) for player in match[2]]
        everyone = [player for *_, players in matches for player in players]
        started = time.monotonic()
        while time.monotonic() - started < 20 and not all(p.version >= 4 for p in everyone):
            await asyncio.sleep(0.1)
        codes = [code for code, *_ in matches]
        owners_before.extend(await asyncio.to_thread(_owners, cluster, codes))
        for delay in (0.0, 0.45):  # two pauses, at two moments of the lease renewals' second
            await asyncio.sleep(delay + 2.0)
            await asyncio.to_thread(_pause, cluster, PAUSE_S)
        await asyncio.sleep(3.0)  # a takeover, if any, is done by now
        owners_after.extend(await asyncio.to_thread(_owners, cluster, codes))
        for player in everyone:
            player.think = FAST_S
        await asyncio.gather(*tasks)

    asyncio.run(play())
    everyone = [player for *_, players in matches for player in players]
    states = [(p.code[:6], p.version, (p.outcome or {}).get("reason"), max(p.stalls, default=0.0)) for p in everyone]
    assert all(player.outcome is not None for player in everyone), states
    forfeits = [code for code, _, players in matches if (players[0].outcome or {}).get("forfeit") is not None]
    assert forfeits == [], f"forfeits caused by the pause: {forfeits}; {states}"
    # Both owners lived through the pauses: neither lost a table to the other.
    assert owners_after == owners_before
    stall = max(max(player.stalls, default=0.0) for player in everyone)
    assert stall <= PAUSE_S + MAX_STALL_S, f"a command waited {stall:.1f} s for its answer"
    for code, pair, players in matches:  # every acknowledged move is in the match's log, none twice
        detail = _recorded(a, pair[0], code)
        assert detail["actions"] == sum(len(p.acked) for p in players), code


def _recorded(port: int, cookie: str, code: str) -> dict[str, Any]:
    """The recorded match of the account (settled in the background once the match ends)."""
    for _ in range(100):
        items = rest(port, cookie, "GET", "/api/matches?account=me").json()["items"]
        if items:
            detail: dict[str, Any] = rest(port, cookie, "GET", f"/api/matches/{items[0]['id']}").json()
            return detail
        time.sleep(0.1)
    raise AssertionError(f"table {code}: its match was not recorded")
