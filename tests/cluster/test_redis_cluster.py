"""Three server processes on loopback whose broker is a real 3-master Redis Cluster
(``redis+cluster://``, sharded pub/sub): players of one table on two processes while a third owns
it, the master that serves the table's slot restarted mid-match, then the owner killed mid-bout
and its table taken over; the match settles with no move lost or doubled, and a sign-out still
reaches the other processes."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from app.transport import channels
from tests.cluster.harness import Cluster, Player, signup
from tests.cluster.test_cluster import _check_settled, _open_staked_table, logout_closes_the_socket_on_another_process
from tests.support.redis_cluster import RedisClusterServers

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


async def _until_version(players: list[Player], version: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while max(p.version for p in players) < version:
        assert time.monotonic() < deadline, f"the table stopped at version {max(p.version for p in players)}"
        assert all(p.outcome is None for p in players), "the match ended before the test got there"
        await asyncio.sleep(0.01)


def test_a_table_on_a_redis_cluster_survives_a_master_restart_and_its_owner_killed(
    cluster_on_redis_cluster: Cluster, redis_cluster: RedisClusterServers
) -> None:
    cluster = cluster_on_redis_cluster
    cluster.start(3)
    a, b, c = cluster.ports
    cookies = [signup(b, "shard1"), signup(c, "shard2")]
    code = _open_staked_table(cluster, a, cookies[0], 50)
    assert cluster.node_of_owner(code) == a
    for cookie, port in zip(cookies, (b, c), strict=True):
        assert httpx.post(
            f"http://127.0.0.1:{port}/api/tables/{code}/join", cookies={"durak_session": cookie}, json={}, timeout=15
        ).status_code == 200
    listed = httpx.get(f"http://127.0.0.1:{c}/api/tables", timeout=10).json()["tables"]
    assert code in {row["code"] for row in listed}  # the lobby of another process lists it
    # The players sit at the processes that do not own the table: every push crosses the cluster.
    players = [Player(cluster, code, cookies[0], [b, c], seed=21), Player(cluster, code, cookies[1], [c, b], seed=22)]
    shard = redis_cluster.port_of(f"{cluster.prefix}ch:{channels.inbox(code)}")  # the master of the table's slot

    def hold(holding: bool) -> None:
        for player in players:  # flat out, they could finish the match while the test waits
            player.holding = holding

    async def scenario() -> None:
        tasks = [asyncio.create_task(p.run(deadline_s=150)) for p in players]
        await _until_version(players, 6)
        # The table's master goes away and comes back empty (no persistence in this cluster): the
        # owner writes the table again, takes its lease again, and the channels get their gaps.
        # Flat out the players make a hundred moves a second: they wait while the master is away.
        hold(True)
        await asyncio.to_thread(redis_cluster.stop_node, shard)
        await asyncio.sleep(1.0)
        await asyncio.to_thread(redis_cluster.start_node, shard)
        await asyncio.to_thread(redis_cluster.wait_ok)
        restarted_at = max(p.version for p in players)
        hold(False)
        await _until_version(players, restarted_at + 6)
        hold(True)  # the owner dies mid-match, not after the last move
        await asyncio.sleep(0.3)
        assert all(p.outcome is None for p in players), "the match ended before the owner was killed"
        cluster.kill(a)  # SIGKILL: no goodbye, no lease release
        hold(False)
        await asyncio.gather(*tasks)

    asyncio.run(scenario())
    assert cluster.node_of_owner(code) in (b, c)
    _check_settled(cluster, b, cookies, players, 50)
    logout_closes_the_socket_on_another_process(cluster, b, c, cookies[1], code)
