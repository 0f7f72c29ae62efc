"""The pages as served (app/web_pages.py): one shell for the lobby and the table pages, the table
page's modules joined into ``/bundle/table.js`` (in the order the browser runs them, each module's
names its own; anything but the plain static forms refused with the reason, and the table page then
loads the modules themselves), hashed URLs cached for a year, the shell revalidated."""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.main import WEB_DIR
from app.web_pages import BUNDLE_ENTRIES, JoinError, build_pages, content_hash, join_modules, static_graph
from tests.api.support import Api

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="running the joined script needs node")
GZIP = {"Accept-Encoding": "gzip"}


def web(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def run(script: str, tmp_path: Path) -> list[str]:
    assert NODE is not None
    file = tmp_path / "bundle.mjs"
    file.write_text(script)
    done = subprocess.run([NODE, str(file)], capture_output=True, text=True, timeout=30, check=True)
    return done.stdout.split()


@needs_node
def test_modules_run_in_the_browsers_order_each_with_its_own_names(tmp_path: Path) -> None:
    root = web(
        tmp_path,
        {
            # a imports b then c; b imports c: the browser runs c, b, a (c once)
            "js/a.js": "import { b } from './b.js';\nimport { c, name as cName } from './c.js';\n"
            "const name = 'a';\nconsole.log(`ran:${name}`, b(), c(), cName);\n",
            "js/b.js": "import { c } from './c.js';\nconst name = 'b';\nconsole.log(`ran:${name}`);\n"
            "export function b() {\n  return `${name}+${c()}`;\n}\n",
            "js/c.js": "const name = 'c';\nconsole.log(`ran:${name}`);\nfunction hidden() {\n  return name;\n}\n"
            "export const c = () => hidden();\nexport { name };\n",
        },
    )
    joined = join_modules(root, ("/js/a.js",))
    assert joined.modules == ("/js/c.js", "/js/b.js", "/js/a.js")
    # the same top-level `name` in all three modules, each seeing its own
    assert run(joined.script, tmp_path) == ["ran:c", "ran:b", "ran:a", "b+c", "c", "c"]


@needs_node
def test_a_joined_module_is_imported_dynamically_and_runs_on_first_use(tmp_path: Path) -> None:
    root = web(
        tmp_path,
        {
            "js/main.js": "import { log } from './log.js';\nlog('main');\n"
            "import('./page.js').then((page) => log(page.mount()));\n",
            "js/log.js": "export function log(text) {\n  console.log(text);\n}\n",
            "js/page.js": "import { log } from './log.js';\nlog('page');\n"
            "export function mount() {\n  return 'mounted';\n}\n",
        },
    )
    joined = join_modules(root, ("/js/main.js", "/js/page.js"))
    assert run(joined.script, tmp_path) == ["main", "page", "mounted"]  # page.js runs when imported


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import x from './b.js';\n", "unsupported form: import x from './b.js'"),
        ("import * as b from './b.js';\n", "unsupported form: import * as b"),
        ("export default function f() {}\n", "unsupported form: export default"),
        ("export let count = 0;\n", "unsupported form: export let count"),
        ("let count = 0;\nexport { count };\n", "count, a let/var binding"),
        ("export * from './b.js';\n", "unsupported form: export * from"),
        ("export { b } from './b.js';\n", "unsupported form: export { b } from"),
        ("console.log(import.meta.url);\n", "import.meta"),
        ("const data = await fetch('/x');\n", "a top-level await"),
        ("const name = './b.js';\nimport(name);\n", "import() of something other than a relative path"),
        ("export const a = 1, b = 2;\n", "export const with several names"),
        ("import { nope } from './b.js';\n", "/js/b.js does not export nope"),
    ],
)
def test_forms_other_than_the_plain_static_ones_are_refused_with_the_reason(
    tmp_path: Path, source: str, reason: str
) -> None:
    root = web(tmp_path, {"js/a.js": source, "js/b.js": "export function b() {}\n"})
    with pytest.raises(JoinError, match=re.escape(reason)) as refused:
        join_modules(root, ("/js/a.js",))
    assert str(refused.value).startswith("/js/a.js") or "cycle" in str(refused.value)


def test_a_cycle_is_refused(tmp_path: Path) -> None:
    root = web(
        tmp_path,
        {
            "js/a.js": "import { b } from './b.js';\nexport function a() {}\n",
            "js/b.js": "import { a } from './a.js';\nexport function b() {}\n",
        },
    )
    with pytest.raises(JoinError, match=r"an import cycle: /js/a.js -> /js/b.js -> /js/a.js"):
        join_modules(root, ("/js/a.js",))


def test_when_joining_refuses_the_table_page_loads_the_modules_and_the_reason_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = web(
        tmp_path,
        {
            "index.html": (WEB_DIR / "index.html").read_text(),
            "js/main.js": "import { a } from './a.js';\na();\n",
            "js/a.js": "export function a() {}\n",
            "js/pages/table.js": "import { a } from '../a.js';\nimport { t } from '../table/t.js';\n",
            "js/table/t.js": "import { a } from '../a.js';\nexport let t = 1;\n",
        },
    )
    with caplog.at_level(logging.WARNING, logger="durak.web"):
        pages = build_pages(root)
    assert pages.bundle is None
    assert pages.bundle_refusal is not None and "export let t" in pages.bundle_refusal
    assert "/js/table/t.js: unsupported form: export let t" in caplog.text
    table = pages.table.body.decode()
    assert '<script type="module" src="/js/main.js"></script>' in table
    assert "/bundle/" not in table
    for module in ("/js/pages/table.js", "/js/table/t.js"):
        assert f'<link rel="modulepreload" href="{module}">' in table


@needs_node
def test_the_client_joins_and_the_bundle_parses(tmp_path: Path) -> None:
    joined = join_modules(WEB_DIR)
    graph = set(static_graph(WEB_DIR, BUNDLE_ENTRIES[0])) | set(static_graph(WEB_DIR, BUNDLE_ENTRIES[1]))
    assert set(joined.modules) == graph
    assert len(graph) > 30
    file = tmp_path / "table.mjs"
    file.write_text(joined.script)
    assert NODE is not None
    subprocess.run([NODE, "--check", str(file)], check=True, timeout=30)


def test_both_pages_come_from_the_one_shell() -> None:
    pages = build_pages(WEB_DIR)
    assert pages.bundle is not None and pages.bundle_refusal is None
    lobby, table = pages.lobby.body.decode(), pages.table.body.decode()
    # main.js by its plain URL: the modules that import '../main.js' must get the same module
    assert '<script type="module" src="/js/main.js"></script>' in lobby
    assert '<link rel="modulepreload" href="/js/dom.js">' in lobby  # main.js's graph, unversioned
    assert "modulepreload" not in table and "/js/main.js" not in table
    assert f'<script type="module" src="/bundle/table.js?v={content_hash(pages.bundle.body)}"></script>' in table
    # apart from the script and its preloads and the slim header of a match, the two are the same
    def rest(html: str) -> list[str]:
        return [line for line in html.splitlines() if "modulepreload" not in line and "<script" not in line
                and "main.js's own imports" not in line]  # fmt: skip
    assert [line.replace('<body class="in-match">', "<body>") for line in rest(table)] == rest(lobby)
    assert not (WEB_DIR / "table.html").exists()


async def test_hashed_urls_are_cached_for_a_year_and_the_rest_revalidated(api: Api) -> None:
    client = api.client()
    pages = build_pages(WEB_DIR)
    assert pages.bundle is not None
    for path in ("/", "/t/abcdef", "/w/abcdef", "/index.html"):
        response = await client.get(path, headers=GZIP)
        assert response.status_code == 200, path
        assert response.headers["cache-control"] == "no-cache", path
        assert response.headers["content-type"].startswith("text/html"), path
        again = await client.get(path, headers={**GZIP, "If-None-Match": response.headers["etag"]})
        assert again.status_code == 304, path
    table = (await client.get("/t/abcdef")).text
    urls = re.findall(r'(?:src|href)="([^"]+\?v=[0-9a-f]+)"', table)
    assert {url.split("?")[0] for url in urls} >= {"/bundle/table.js", "/css/app.css", "/favicon.svg"}
    for url in urls:
        response = await client.get(url, headers=GZIP)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == "max-age=31536000, immutable", url
    bundle = await client.get(next(url for url in urls if url.startswith("/bundle/")), headers=GZIP)
    assert bundle.content == pages.bundle.body
    assert bundle.headers["content-encoding"] == "gzip"
    assert bundle.headers["content-type"].startswith("text/javascript")
    # the same files without their hash, or with another one (an old page after a deploy): revalidated
    for url in ("/bundle/table.js", "/css/app.css", "/css/app.css?v=0123456789abcdef", "/bundle/table.js?v=00"):
        response = await client.get(url)
        assert response.status_code == 200, url
        assert response.headers["cache-control"] == "no-cache", url
    assert (await client.get("/js/main.js")).headers["cache-control"] == "no-cache"
