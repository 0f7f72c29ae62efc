from collections.abc import Iterator

import pytest

from tests.cluster.harness import cluster, cluster_on_redis_cluster
from tests.db.support import postgres_server, postgres_template
from tests.support.redis_cluster import RedisClusterServers, shared_cluster, stop_shared_cluster

__all__ = ["cluster", "cluster_on_redis_cluster", "postgres_server", "postgres_template", "redis_cluster"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed cluster test shows what its server processes logged (takeovers, fencing, settlement
    errors): CI keeps no files, so the report is the only place to read them."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when != "call" or not report.failed:
        return
    for name in ("cluster", "cluster_on_redis_cluster"):
        servers = getattr(item, "funcargs", {}).get(name)
        if servers is not None:
            report.sections.append(("server logs", servers.log_tails()))


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterServers]:
    """The session's 3-master Redis Cluster (skips or, in CI, fails when it cannot start)."""
    yield shared_cluster()
    stop_shared_cluster()
