"""How the suite is shared out among parallel workers.

``scripts/test.sh`` runs it with pytest-xdist (``-n <workers> --dist loadgroup``). The tests share no
port or database: each takes free loopback ports, scratch databases with unique names (copies of
a migrated template; on PostgreSQL made ahead and dropped by a thread of the worker beside the
tests: tests/db/support.py), Redis key prefixes of its own, and every session- or module-scoped fixture
(the migrated templates, the browser suite's server and Chromium, the session's Redis Cluster) is
made once per worker process. So most tests run on any worker, in any company. Two things are
arranged here:

* **Groups**: tests that run on one worker, one after another (with ``--dist loadgroup``, the
  scheduler below; xdist's own ``xdist_group`` marks do not reach its scheduler under pytest 9.2,
  which keeps a test's id where xdist 3.8 no longer writes the group).
  - ``cluster``: tests/cluster starts several server processes per test and waits on leases and
    takeovers measured in seconds; two such tests at once on two cores would stretch each other's
    timings, so they run one at a time, as they always did.
  - ``e2e``: tests/e2e shares one real server for the session; on one worker it starts once.
  - a module with a server of its own (a module-scoped ``server`` fixture, tests/web/test_play_now.py)
    stays on one worker, so that its server starts once.
* **Order**: the browser tests (tests/web) last, and the slowest tests first within each part
  (whole files, in the order below; each file keeps its own order), so that no worker is left with
  a long test at the end while the others wait. The browser tests must come after every other test
  a worker runs: Playwright's sync API leaves its event loop marked as running in the worker's main
  thread for as long as the session's browser is open, and every ``asyncio.run`` (each async test)
  after it fails with "cannot be called from a running event loop". xdist hands out the tests in
  this order (the scheduler below keeps it; xdist would otherwise put the groups first), so a
  worker that has received a browser test receives nothing else afterwards. The slow list comes
  from ``pytest --durations=0``; a file missing from it only runs later within its part.

One setting for every test: passwords are hashed at argon2's cheapest cost
(``DURAK_PASSWORD_HASHING=test``, app/db/passwords.py), in this process and in every server process a
test starts (they inherit the environment), because the suite signs up and logs in thousands of
accounts and the strong cost is about 160 ms of CPU each. tests/db/test_passwords.py tests the strong
default with the variable removed. Benchmarks keep the strong cost (bench/_server.py drops it).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ["DURAK_PASSWORD_HASHING"] = "test"

# Files (or folders) whose tests run first within their part, slowest first: `--durations=0` summed per file.
SLOW_FIRST = (
    # First while the worker's heap is small: its full garbage collections walk the whole heap, and
    # after a few hundred tests in the same worker they took 3.8 s of CPU (0.25 s at the start).
    "tests/test_collector.py",
    "tests/api/test_openapi_fuzz.py",
    "tests/cluster/",
    "tests/db/test_ledger_state_machine.py",
    "tests/e2e/",
    "tests/api/test_security.py",
    "tests/web/test_match.py",
    "tests/web/test_play_now.py",
    "tests/web/test_table_game.py",
    "tests/web/test_reconnect.py",
    "tests/web/test_layout.py",
    "tests/web/test_integrity_admin.py",
    "tests/web/test_pages_errors.py",
)
BROWSER = "tests/web/"

GROUPS = {
    "tests/cluster/": "cluster",
    "tests/e2e/": "e2e",
    "tests/web/test_play_now.py": "web-play-now",
}


def _group(nodeid: str) -> str:
    path = nodeid.split("::", 1)[0]
    for prefix, group in GROUPS.items():
        if path.startswith(prefix):
            return group
    return nodeid


def _rank(path: str) -> int:
    for index, prefix in enumerate(SLOW_FIRST):
        if path.startswith(prefix):
            return index
    return len(SLOW_FIRST)


def _order(item: pytest.Item) -> tuple[bool, int]:
    path = item.nodeid.split("::", 1)[0]
    return path.startswith(BROWSER), _rank(path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_order)  # stable: a file keeps its order


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadgroup``: one work unit per group above and per other test, handed out in
    the collection's order (xdist's scope scheduling, with our groups for its scopes)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    config.option.loadscopereorder = False  # keep the order: the browser tests last
    return Grouped(config, log)
