"""``--against REV`` of bench.load and bench.capacity (bench/_server.py): the old code is a temporary
git worktree, gone afterwards, and a server started from it imports that tree's ``app``, not the one
this interpreter has installed (editable) from the working tree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench._server import APP_FROM, ROOT, SAYING_WHERE_FROM, ServerProcess, app_dir_of, checkout, durak_server, revision


def worktrees() -> str:
    return subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def test_the_old_code_is_a_worktree_of_that_revision_removed_afterwards(tmp_path: Path) -> None:
    commit = revision("HEAD")
    with checkout("HEAD") as tree:
        assert (tree / "app" / "__init__.py").is_file()
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tree, capture_output=True, text=True, check=True)
        assert head.stdout.strip() == commit
        assert str(tree) in worktrees()
        # Started as the benchmarks start a server from it, Python finds that tree's app first.
        server = durak_server(tmp_path, argv=[sys.executable, "-c", SAYING_WHERE_FROM.split("; runpy")[0]], tree=tree)
        done = subprocess.run(server.argv, env=server.env, cwd=server.cwd, capture_output=True, text=True, timeout=60)
        assert done.stdout.strip() == APP_FROM + str(tree / "app")
    assert not tree.exists() and str(tree) not in worktrees()


def test_a_server_that_does_not_say_where_its_code_is_from_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("INFO: started\n")
    with pytest.raises(RuntimeError, match="did not say where"):
        app_dir_of(ServerProcess([], {}, 0, log))
    log.write_text(f"{APP_FROM}/somewhere/app\nINFO: started\n")
    assert app_dir_of(ServerProcess([], {}, 0, log)) == Path("/somewhere/app")


def test_an_unknown_revision_stops_the_benchmark() -> None:
    with pytest.raises(SystemExit, match="no revision"):
        revision("no-such-branch-anywhere")
