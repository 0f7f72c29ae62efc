"""The service worker's install list holds every module the lobby needs: a module missing from it
stops main.js from running offline (a player who installed the app and went offline before the
page's own files were kept saw an empty page). The lobby preloads main.js's whole graph (the
table pages load one joined script: tests/api/test_web_pages.py)."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"
STATIC_IMPORT = re.compile(r"^\s*import\s(?:[^;']*?\sfrom\s)?'([^']+)'", re.MULTILINE)


def shell_list() -> set[str]:
    source = (WEB / "sw.js").read_text()
    block = source[source.index("const SHELL = [") : source.index("];", source.index("const SHELL = ["))]
    return set(re.findall(r"'([^']+)'", block))


def static_imports(path: str) -> set[str]:
    """``path`` and every module it imports statically, transitively (dynamic import() is lazy)."""
    seen: set[str] = set()
    todo = [path]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for spec in STATIC_IMPORT.findall((WEB / module.lstrip("/")).read_text()):
            todo.append(posixpath.normpath(posixpath.join(posixpath.dirname(module), spec)))
    return seen


def test_the_import_walk_finds_imports_over_several_lines() -> None:
    found = static_imports("/js/main.js")
    assert {"/js/main.js", "/js/notices.js", "/js/fairness.js", "/js/i18n.js"} <= found
    assert "/js/pages/lobby.js" not in found  # pages load lazily


def test_the_shell_holds_every_module_the_lobby_needs_offline() -> None:
    needed = static_imports("/js/main.js") | static_imports("/js/pages/lobby.js")
    missing = needed - shell_list()
    assert not missing, f"web/sw.js SHELL lacks {sorted(missing)}"
    for path in shell_list():
        assert path == "/" or (WEB / path.lstrip("/")).is_file(), f"SHELL names a file that does not exist: {path}"


PRELOAD = re.compile(r'\s*<link rel="modulepreload" href="([^"]+)">')


def preloads(page: str) -> list[str]:
    return PRELOAD.findall((WEB / page).read_text())


def test_the_page_preloads_every_module_main_js_imports() -> None:
    """index.html names main.js's whole static graph as modulepreload: one round trip, not one per level."""
    preloaded = preloads("index.html")
    assert len(preloaded) == len(set(preloaded))
    assert set(preloaded) == static_imports("/js/main.js") - {"/js/main.js"}
