from collections.abc import Iterator

import pytest

from tests.cluster.harness import cluster, cluster_on_redis_cluster
from tests.support.redis_cluster import RedisClusterServers, shared_cluster, stop_shared_cluster

__all__ = ["cluster", "cluster_on_redis_cluster", "redis_cluster"]


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisClusterServers]:
    """The session's 3-master Redis Cluster (skips or, in CI, fails when it cannot start)."""
    yield shared_cluster()
    stop_shared_cluster()
