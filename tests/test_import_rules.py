"""The import rules of ``[tool.importlinter]`` in pyproject.toml, checked with import-linter.

Enforced today (each holds on the code as it is):

* ``engine-alone``: app.engine imports nothing of app outside itself;
* ``bots-see-seats``: app.bots imports neither app.tables, app.api, app.db nor the broker and store;
* ``no-cycles``: no import cycle between the sibling packages and modules of app and of bench, at
  any depth, and no import ignored (app/api/chat.py states what it needs of a table connection as a
  Protocol instead of importing the route's class);
* ``tables-behind-ports``: app.tables imports nothing of app.api, app.db, app.transport or the Redis
  modules (app.broker.redis and its redis_cluster, redis_keys, redis_link, redis_wire, app.store.redis),
  not even through a package's ``__init__`` (the tables import ``app.broker.base`` and ``app.store.base``).
  The database is reached through ``MatchHooks`` (app/tables/hooks.py), implemented on the ledger
  by app/db/table_hooks.py; the connections through ``TableTransport`` (app/tables/ports.py),
  implemented over the broker by app/transport/table_transport.py; the store for a URL and the
  transport are chosen in app/main.py;
* ``routes-apart``: no module of app.api.routes imports another, not even through a third module
  (a route -> a module of app.api -> another route). Routes share code through modules of app.api
  that are not routes: the REST calls to a table (app/api/table_calls.py), opening a table and
  sitting down (app/api/table_entry.py), the season clock (app/api/season_clock.py), guest
  sessions (app/api/guest_sessions.py), the table registry's dependency (app/api/deps.py).
"""

from __future__ import annotations

import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import app

ROOT = Path(__file__).resolve().parents[1]


def contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def test_the_import_rules_hold() -> None:
    lint_imports = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint_imports is not None, "import-linter is not installed (the dev extra)"
    done = subprocess.run(
        [lint_imports, "--no-cache", "pyproject.toml"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_every_rule_is_there() -> None:
    """A rule taken out of pyproject.toml would leave the check above passing."""
    assert {"engine-alone", "bots-see-seats", "no-cycles", "tables-behind-ports", "routes-apart"} <= set(contracts())
    assert contracts()["routes-apart"]["modules"] == ["app.api.routes.*"]


def test_the_engine_rule_names_every_other_module_of_app() -> None:
    """A package added to app is forbidden to the engine without anyone remembering to list it."""
    others = {f"app.{module.name}" for module in pkgutil.iter_modules(app.__path__)} - {"app.engine"}
    assert set(contracts()["engine-alone"]["forbidden_modules"]) == others  # type: ignore[arg-type]


def test_no_import_cycle_is_waved_through() -> None:
    """A cycle closed by a TYPE_CHECKING import is a cycle: the rule ignores none."""
    assert "ignore_imports" not in contracts()["no-cycles"]
