from tests.cluster.harness import cluster

__all__ = ["cluster"]
