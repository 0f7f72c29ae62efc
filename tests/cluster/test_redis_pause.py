"""Redis, or a server process, frozen for a few seconds (SIGSTOP, as a stalled host or a long fork
does it) while two server processes serve live matches. Redis frozen: every table lease lapses in
the meantime, since nobody could renew it; no table may be taken from its living owner for that.
A process frozen: its tables go to the other, and its players must follow them there. Either must
cost nobody his match: no forfeit, no acknowledged move lost, and no command waiting more than 5 s
for its answer beyond the freeze itself."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.cluster.harness import Cluster, rest, signup
from tests.cluster.test_rolling_restart import FAST_S, RollingPlayer

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]

MATCHES = 8
PAUSE_S = 3.0
MAX_STALL_S = 5.0  # beyond the pause


def _pause_redis(cluster: Cluster, seconds: float) -> None:
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


Match = tuple[str, list[str], list[RollingPlayer]]


def _play_through(
    cluster: Cluster, fault: Callable[[], None]
) -> tuple[list[Match], list[int | None], list[int | None]]:
    """Live matches on two processes (the two players of each on different ones, half of them
    staked); ``fault`` strikes once every match is under way, then the matches are played out.
    Returns the matches, and the owner of each table before the fault and 3 s after it."""
    # Short limits: a seat whose grace ran across the fault would forfeit within the test's time.
    cluster.env.update({"DURAK_DISCONNECT_GRACE_S": "8", "DURAK_IDLE_LIMIT_S": "30"})
    cluster.start(2)
    a, b = cluster.ports
    with ThreadPoolExecutor(2) as pool:
        cookies = list(pool.map(lambda i: signup(a if i % 2 == 0 else b, f"pause{i}"), range(2 * MATCHES)))

    def set_up(index: int) -> Match:
        pair = cookies[2 * index : 2 * index + 2]
        code = _open_table((a, b)[index % 2], pair[0], 10 if index % 2 else 0)
        players = []
        for seat, cookie in enumerate(pair):
            home = (a, b)[(index + seat) % 2]  # the two players of a match on different processes
            assert rest(home, cookie, "POST", f"/api/tables/{code}/join", json={}).status_code == 200
            players.append(RollingPlayer(cluster, code, cookie, [home, b if home == a else a], seed=77 * index + seat))
        return code, pair, players

    matches: list[Match] = []
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
        await asyncio.to_thread(fault)
        await asyncio.sleep(3.0)  # a takeover, if any, is done by now
        owners_after.extend(await asyncio.to_thread(_owners, cluster, codes))
        for player in everyone:
            player.think = FAST_S
        await asyncio.gather(*tasks)

    asyncio.run(play())
    return matches, owners_before, owners_after


def _check(cluster: Cluster, matches: list[Match], stall_limit_s: float) -> None:
    """Every match ended, none by a forfeit; no command waited longer than ``stall_limit_s`` for
    its answer; every acknowledged move is in the recorded match, none twice."""
    everyone = [player for *_, players in matches for player in players]
    states = [(p.code[:6], p.version, (p.outcome or {}).get("reason"), max(p.stalls, default=0.0)) for p in everyone]
    assert all(player.outcome is not None for player in everyone), states
    forfeits = [code for code, _, players in matches if (players[0].outcome or {}).get("forfeit") is not None]
    assert forfeits == [], f"forfeits caused by the fault: {forfeits}; {states}"
    stall = max(max(player.stalls, default=0.0) for player in everyone)
    assert stall <= stall_limit_s, f"a command waited {stall:.1f} s for its answer"
    for code, pair, players in matches:
        detail = _recorded(cluster.ports[0], pair[0], code)
        assert detail["actions"] == sum(len(p.acked) for p in players), code


def test_a_redis_pause_takes_no_table_from_its_owner_and_forfeits_nobody(cluster: Cluster) -> None:
    """Two pauses of 3 s, at two moments of the lease renewals' second: every lease lapses, and each
    living owner takes its own back; the other process takes none over."""

    def pause_twice() -> None:
        for delay in (2.0, 2.45):
            time.sleep(delay)
            _pause_redis(cluster, PAUSE_S)

    matches, owners_before, owners_after = _play_through(cluster, pause_twice)
    _check(cluster, matches, PAUSE_S + MAX_STALL_S)
    assert owners_after == owners_before  # both owners lived through the pauses: neither lost a table


def test_the_players_of_a_frozen_process_follow_its_tables_to_their_new_owner(cluster: Cluster) -> None:
    """The first process is frozen (SIGSTOP) longer than a lease: the other takes its tables over,
    as it must (it cannot tell a frozen process from a dead one). When the first wakes up, it finds
    its leases taken and lets its tables go; the connections it holds say hello to the new owner
    (they would go on talking to the old actor otherwise, get no update, and forfeit by grace)."""
    frozen_s = 5.0

    def freeze_first() -> None:
        proc = cluster.procs[cluster.ports[0]]
        proc.send_signal(signal.SIGSTOP)
        try:
            time.sleep(frozen_s)
        finally:
            proc.send_signal(signal.SIGCONT)

    matches, owners_before, owners_after = _play_through(cluster, freeze_first)
    a, b = cluster.ports
    assert a in owners_before and owners_after == [b] * MATCHES
    _check(cluster, matches, frozen_s + MAX_STALL_S)


def _recorded(port: int, cookie: str, code: str) -> dict[str, Any]:
    """The recorded match of the account (settled in the background once the match ends)."""
    for _ in range(100):
        items = rest(port, cookie, "GET", "/api/matches?account=me").json()["items"]
        if items:
            detail: dict[str, Any] = rest(port, cookie, "GET", f"/api/matches/{items[0]['id']}").json()
            return detail
        time.sleep(0.1)
    raise AssertionError(f"table {code}: its match was not recorded")
