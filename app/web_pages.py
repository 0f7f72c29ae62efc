"""The web client's pages as served: one HTML shell for every page, hashed asset URLs, and the table
page's modules joined into one script (docs/web.md, "How the pages are served").

* **One shell.** ``web/index.html`` is the only page file. The lobby (``/``) gets it with its asset
  URLs versioned; the table pages (``/t/<code>``, ``/w/<code>``) get the same file with the match's
  slim header from the first paint (``<body class="in-match">``) and ``/bundle/table.js`` in place of
  ``/js/main.js`` and its preloads. Two pages cannot drift: there is one file.
* **Hashed URLs.** The shell names ``/css/app.css``, the icons and the bundle with
  ``?v=<content hash>``; :func:`content_hash` is what ``WebFiles`` (app/main.py) compares the query
  with before it answers ``Cache-Control: max-age=31536000, immutable``. Files reached by relative
  imports (``/js/main.js`` and the lobby's modules: ``'../main.js'`` under another URL would be a
  second module) keep their plain URLs and are revalidated (``no-cache``), and so is the shell.
* **The table bundle.** The table page's ~40 modules come as one script instead of a waterfall of
  imports: :func:`join_modules` joins ``web/js/main.js``, ``web/js/pages/table.js`` and everything
  they import statically, by text, for the plain forms the client is written in (below). Anything
  else (a cycle, a default or namespace import, ``export let``, ``import.meta``, a top-level
  ``await``, a computed ``import()``) makes it refuse with the reason: the reason is logged and the
  table pages load the separate modules (preloaded) as the lobby does.

How modules are joined. Each module becomes a function in the bundle, run once on first use (so the
modules run in the order the browser would run them: a module's imports first, in the order of its
import statements). Its top-level names stay its own (they are the function's locals); it returns
its exports as a frozen object, and an import is ``const {a, b: c} = __dp_use(3);`` at the top of
the importer. The values are taken once, after the imported module has run, so every export must
be a binding that never changes: ``export function``, ``export async function``, ``export class``,
``export const NAME =`` and ``export { a, b as c }`` (of a function, class or ``const``).
``import('./x.js')`` of a joined module gives its exports; of any other module it loads the page
anew (a module loaded beside the bundle would get its own copies of the shared modules: another
i18n, another session), so a joined page only ever runs joined code.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("durak.web")

BUNDLE_PATH = "/bundle/table.js"
BUNDLE_ENTRIES = ("/js/main.js", "/js/pages/table.js")
LONG_CACHE_CONTROL = "max-age=31536000, immutable"
# not /js/main.js: modules import it by its plain URL ('../main.js'), and another URL would be another
# module (a second boot); the lobby's modules are revalidated instead. Not the manifest either: its
# URL is the installed app's identity.
HASHED_ASSETS = ("/css/app.css", "/favicon.svg", "/icons/icon-192.png")
PREFIX = "__dp_"

_STATIC_IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*'(\.{1,2}/[^']+)'\s*;?[ \t]*$", re.MULTILINE)
_BARE_IMPORT = re.compile(r"^import\s*'(\.{1,2}/[^']+)'\s*;?[ \t]*$", re.MULTILINE)
_EXPORT_DECLARATION = re.compile(
    r"^export\s+((?:async\s+)?function\s*\*?|class|const)\s+([A-Za-z_$][\w$]*)", re.MULTILINE
)
_EXPORT_LIST = re.compile(r"^export\s*\{([^}]*)\}\s*;?[ \t]*$", re.MULTILINE)
_DYNAMIC_IMPORT = re.compile(r"\bimport\s*\(\s*'(\.{1,2}/[^']+)'\s*\)")
_ANY_DYNAMIC_IMPORT = re.compile(r"\bimport\s*\(")
_LEFT_OVER = re.compile(r"^[ \t]*(?:import(?!\s*\()|export)\b.*$", re.MULTILINE)
_TOP_LEVEL_AWAIT = re.compile(r"^(?:await\b|(?:const|let|var)\s+[^=\n]+=\s*await\b|for\s+await\b).*$", re.MULTILINE)
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


class JoinError(Exception):
    """A module the joiner does not accept, and why."""


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _resolve(importer: str, spec: str) -> str:
    return posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))


def _pairs(names: str, where: str, what: str) -> list[tuple[str, str]]:
    """``a, b as c`` -> [(a, a), (b, c)]; anything else in the braces is refused."""
    pairs = []
    for item in names.split(","):
        item = " ".join(item.split())
        if not item:
            continue
        parts = item.split(" as ")
        if len(parts) > 2 or not all(_NAME.fullmatch(part) for part in parts):
            raise JoinError(f"{where}: unsupported {what} {{{item}}}")
        pairs.append((parts[0], parts[-1]))
    return pairs


@dataclass
class _Module:
    path: str
    imports: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)  # (path, [(name, local)])
    exports: list[tuple[str, str]] = field(default_factory=list)  # (local, exported name)
    body: str = ""


def _parse(path: str, source: str) -> _Module:
    module = _Module(path)
    if PREFIX in source:
        raise JoinError(f"{path}: uses the joiner's own prefix {PREFIX}")
    if "import.meta" in source:
        raise JoinError(f"{path}: import.meta (the bundle has another URL)")
    awaited = _TOP_LEVEL_AWAIT.search(source)
    if awaited:
        raise JoinError(f"{path}: a top-level await: {awaited.group(0).strip()}")
    spans: list[tuple[int, int, str]] = []  # parts of the source to replace, and with what

    found = [(m.start(), m.end(), m.group(2), m.group(1)) for m in _STATIC_IMPORT.finditer(source)]
    found += [(m.start(), m.end(), m.group(1), None) for m in _BARE_IMPORT.finditer(source)]
    for start, end, spec, names in sorted(found):  # in statement order: the order the browser runs them
        module.imports.append((_resolve(path, spec), _pairs(names, path, "import") if names is not None else []))
        spans.append((start, end, ""))
    for match in _EXPORT_DECLARATION.finditer(source):
        kind, name = match.group(1), match.group(2)
        if kind == "const" and re.match(r"\s*[,;]|\s*=[^;\n]*,\s*[A-Za-z_$][\w$]*\s*=", source[match.end() :]):
            raise JoinError(f"{path}: export const with several names ({name}, …)")
        module.exports.append((name, name))
        spans.append((match.start(), match.start(1), ""))
    for match in _EXPORT_LIST.finditer(source):
        for local, exported in _pairs(match.group(1), path, "export"):
            if re.search(rf"^(?:let|var)\s+{re.escape(local)}\b", source, re.MULTILINE):
                raise JoinError(f"{path}: export of {local}, a let/var binding that may change (a live binding)")
            module.exports.append((local, exported))
        spans.append((match.start(), match.end(), ""))

    spans.sort()
    pieces, position = [], 0
    for start, end, replacement in spans:
        pieces.append(source[position:start])
        pieces.append(replacement)
        position = end
    pieces.append(source[position:])
    body = "".join(pieces)
    left = _LEFT_OVER.search(body)
    if left:
        raise JoinError(f"{path}: unsupported form: {left.group(0).strip()[:80]}")
    module.body = body
    return module


@dataclass(frozen=True)
class Joined:
    """The joined script and the modules in it, in the order they run."""

    script: str
    modules: tuple[str, ...]


def join_modules(web_dir: Path, entries: tuple[str, ...] = BUNDLE_ENTRIES) -> Joined:
    """Join ``entries`` (site paths such as ``/js/main.js``) and their static imports into one
    script that runs ``entries[0]``; raises :class:`JoinError` with the reason when it cannot."""
    modules: dict[str, _Module] = {}
    todo = list(entries)
    while todo:
        path = todo.pop()
        if path in modules:
            continue
        file = web_dir / path.lstrip("/")
        if not file.is_file():
            raise JoinError(f"{path}: no such module")
        modules[path] = _parse(path, file.read_text(encoding="utf-8"))
        todo.extend(target for target, _ in modules[path].imports)

    # the order the browser runs them in (depth first, imports in statement order); a cycle refuses
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(path: str, chain: list[str]) -> None:
        if state.get(path) == "done":
            return
        if state.get(path) == "open":
            raise JoinError(f"an import cycle: {' -> '.join([*chain[chain.index(path) :], path])}")
        state[path] = "open"
        for target, _ in modules[path].imports:
            visit(target, [*chain, path])
        state[path] = "done"
        order.append(path)

    for entry in entries:
        visit(entry, [])
    index = {path: i for i, path in enumerate(order)}

    for module in modules.values():
        for target, names in module.imports:
            exported = {name for _, name in modules[target].exports}
            for name, _ in names:
                if name not in exported:
                    raise JoinError(f"{module.path}: {target} does not export {name}")

    parts = [
        "// The table page's modules joined into one script by app/web_pages.py (docs/web.md): each\n"
        "// module is a function run once, on first use; its exports are returned frozen.\n",
        f"const {PREFIX}defs = [];\nconst {PREFIX}done = new Map();\n",
        f"function {PREFIX}use(i) {{\n  if (!{PREFIX}done.has(i)) {PREFIX}done.set(i, {PREFIX}defs[i]());\n"
        f"  return {PREFIX}done.get(i);\n}}\n",
        f"function {PREFIX}elsewhere() {{\n  // a module outside the bundle: the page loads anew (app/web_pages.py)\n"
        f"  location.reload();\n  return new Promise(() => {{}});\n}}\n",
    ]
    for path in order:
        module = modules[path]

        def dynamic(match: re.Match[str], importer: str = path) -> str:
            target = _resolve(importer, match.group(1))
            if target in index:
                return f"Promise.resolve().then(() => {PREFIX}use({index[target]}))"
            return f"{PREFIX}elsewhere({target!r})"

        body = _DYNAMIC_IMPORT.sub(dynamic, module.body)
        if _ANY_DYNAMIC_IMPORT.search(body):
            raise JoinError(f"{path}: import() of something other than a relative path in quotes")
        head = "".join(
            f"  const {{ {', '.join(name if name == local else f'{name}: {local}' for name, local in names)} }}"
            f" = {PREFIX}use({index[target]});\n"
            if names
            else f"  {PREFIX}use({index[target]});\n"
            for target, names in module.imports
        )
        exports = ", ".join(local if local == name else f"{name}: {local}" for local, name in module.exports)
        parts.append(
            f"// --- {path}\n{PREFIX}defs[{index[path]}] = () => {{\n{head}{body.rstrip()}\n"
            f"return Object.freeze({{ {exports} }});\n}};\n"
        )
    parts.append(f"{PREFIX}use({index[entries[0]]});\n")
    return Joined("".join(parts), tuple(order))


def static_graph(web_dir: Path, entry: str) -> list[str]:
    """``entry``'s static imports, transitively, in the order the browser runs them (for preloads);
    tolerant: only the import statements are read."""
    seen: list[str] = []

    def visit(path: str) -> None:
        if path in seen:
            return
        seen.append(path)
        file = web_dir / path.lstrip("/")
        if not file.is_file():
            return
        source = file.read_text(encoding="utf-8")
        found = [(m.start(), m.group(2)) for m in _STATIC_IMPORT.finditer(source)]
        found += [(m.start(), m.group(1)) for m in _BARE_IMPORT.finditer(source)]
        for _, spec in sorted(found):
            visit(_resolve(path, spec))

    visit(entry)
    return seen


@dataclass(frozen=True)
class Page:
    """A served page or script: its bytes, gzipped bytes and ETag."""

    body: bytes
    gzipped: bytes
    etag: str
    media_type: str

    @classmethod
    def of(cls, text: str, media_type: str) -> Page:
        body = text.encode("utf-8")
        return cls(body, gzip.compress(body, compresslevel=9, mtime=0), f'"{content_hash(body)}"', media_type)


@dataclass(frozen=True)
class WebPages:
    """The lobby's and the table's shell and, when joining worked, the table bundle."""

    lobby: Page
    table: Page
    bundle: Page | None
    bundle_refusal: str | None
    signature: tuple[tuple[str, int, int], ...]


def _signature(web_dir: Path) -> tuple[tuple[str, int, int], ...]:
    files = [
        web_dir / "index.html",
        *sorted((web_dir / "js").rglob("*.js")),
        *(web_dir / a.lstrip("/") for a in HASHED_ASSETS),
    ]
    out = []
    for file in files:
        try:
            stat = file.stat()
        except OSError:
            continue
        out.append((str(file), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def _versioned(html: str, web_dir: Path, bundle_hash: str | None) -> str:
    for asset in HASHED_ASSETS:
        file = web_dir / asset.lstrip("/")
        if file.is_file():
            html = html.replace(f'"{asset}"', f'"{asset}?v={content_hash(file.read_bytes())}"')
    if bundle_hash is not None:
        html = html.replace(f'"{BUNDLE_PATH}"', f'"{BUNDLE_PATH}?v={bundle_hash}"')
    return html


_PRELOAD_LINE = re.compile(r'^[ \t]*<link rel="modulepreload" href="([^"]+)">\n', re.MULTILINE)
_MAIN_SCRIPT = '<script type="module" src="/js/main.js"></script>'


def build_pages(web_dir: Path) -> WebPages:
    """The pages from ``web/index.html`` and the table bundle (logged when joining refuses)."""
    signature = _signature(web_dir)
    shell = (web_dir / "index.html").read_text(encoding="utf-8")
    if _MAIN_SCRIPT not in shell or "<body>" not in shell:
        raise ValueError(f"web/index.html lacks {_MAIN_SCRIPT} or <body>")
    table = shell.replace("<body>", '<body class="in-match">', 1)
    bundle: Page | None = None
    refusal: str | None = None
    try:
        joined = join_modules(web_dir)
    except JoinError as error:
        refusal = str(error)
        log.warning("the table page loads its modules one by one: %s", refusal)
        # main.js's graph (already preloaded by the shell) and then the table page's
        lobby_preloads = _PRELOAD_LINE.findall(shell)
        extra = [
            p for p in static_graph(web_dir, "/js/pages/table.js") if p not in lobby_preloads and p != "/js/main.js"
        ]
        lines = "".join(f'  <link rel="modulepreload" href="{path}">\n' for path in extra)
        anchor = "</head>"
        table = table.replace(
            anchor, "  <!-- the table page's modules, fetched with the page -->\n" + lines + anchor, 1
        )
    else:
        bundle = Page.of(joined.script, "text/javascript")
        table = _PRELOAD_LINE.sub("", table)
        table = re.sub(r"^[ \t]*<!-- main\.js's own imports[^\n]*-->\n", "", table, flags=re.MULTILINE)
        table = table.replace(_MAIN_SCRIPT, f'<script type="module" src="{BUNDLE_PATH}"></script>', 1)
    bundle_hash = bundle.etag.strip('"') if bundle else None
    return WebPages(
        lobby=Page.of(_versioned(shell, web_dir, None), "text/html"),
        table=Page.of(_versioned(table, web_dir, bundle_hash), "text/html"),
        bundle=bundle,
        bundle_refusal=refusal,
        signature=signature,
    )


class PageSource:
    """The pages, built at start-up and again whenever a file they are made of changes (so editing
    a file and reloading the page still works)."""

    def __init__(self, web_dir: Path) -> None:
        self.web_dir = web_dir
        self._pages = build_pages(web_dir)

    def current(self) -> WebPages:
        if _signature(self.web_dir) != self._pages.signature:
            self._pages = build_pages(self.web_dir)
        return self._pages
