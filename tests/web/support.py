"""Helpers for the browser tests: the real server as a subprocess, Chromium, and a match driver.

Every test drives the real ``python -m app`` (temp SQLite file) with Debian's Chromium through
Playwright. Without ``/usr/bin/chromium`` the tests skip, or fail when ``DURAK_REQUIRE_SERVICES=1``.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.limits import RELAXED_LIMITS_ENV

ROOT = Path(__file__).resolve().parents[2]
WEB_ROOT = ROOT / "web"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "tests" / "artifacts"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
PASSWORD = "correct-horse-9"


def require_chromium() -> str:
    if not CHROMIUM.exists():
        reason = f"Debian's Chromium is not installed at {CHROMIUM} (apt-get install -y chromium)"
        if os.environ.get("DURAK_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{reason} and DURAK_REQUIRE_SERVICES=1", pytrace=False)
        pytest.skip(reason)
    return str(CHROMIUM)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    base: str
    database_url: str
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def cli(self, *args: str) -> str:
        """``python -m app.cli ...`` against the server's database."""
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        return done.stdout


def start_server(tmp: Path, **settings: str) -> Server:
    """A real server on a free port; ``settings`` are extra DURAK_* environment variables."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database_url = f"sqlite+aiosqlite:///{tmp / 'web.sqlite3'}"
    env = {
        **os.environ,
        "DURAK_HOST": "127.0.0.1",
        "DURAK_PORT": str(port),
        "DURAK_DATABASE_URL": database_url,
        "DURAK_BROKER_URL": "memory://",
        "DURAK_SECRET_KEY": secrets.token_hex(32),
        "DURAK_LOG_LEVEL": "warning",
        **RELAXED_LIMITS_ENV,
        **settings,
    }
    log = tmp / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    server = Server(base, database_url, env, process, log)
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{base}/api/health", timeout=1) as response:
                if response.status == 200:
                    return server
        except OSError:
            time.sleep(0.2)
    stop_server(server)
    raise RuntimeError(f"the server did not come up at {base}:\n{server.log_tail()}")


def stop_server(server: Server) -> None:
    process = server.process
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


_names = iter(range(10**6))


def unique_name(prefix: str) -> str:
    """Account names are unique per database: prefix + counter + random digits (max 24 chars)."""
    return f"{prefix[:10]}{next(_names)}x{secrets.randbelow(10**6)}"


# --------------------------------------------------------------------- API shortcuts (share cookies)


def api(
    context: Any, method: str, path: str, body: dict[str, Any] | None = None, ok: Iterable[int] = (200, 201)
) -> Any:
    """A request through the browser context's own cookie jar (``context.request``)."""
    response = context.request.fetch(
        path,
        method=method,
        data=json.dumps(body) if body is not None else None,
        headers={"Content-Type": "application/json"} if body is not None else None,
    )
    assert response.status in tuple(ok), f"{method} {path} -> {response.status}: {response.text()}"
    return response.json() if response.status != 204 and response.body() else None


def wait_for(what: str, probe: Any, timeout: float = 20.0) -> Any:
    """Poll a real server until ``probe()`` answers something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def sign_up_api(context: Any, name: str | None = None) -> dict[str, Any]:
    me = api(context, "POST", "/api/auth/signup", {"name": name or unique_name("p"), "password": PASSWORD})
    assert isinstance(me, dict)
    return me


def create_table_api(context: Any, **params: Any) -> dict[str, Any]:
    body = {"timer": 60, "bot_delay_ms": 0, **params}
    table = api(context, "POST", "/api/tables", body)
    assert isinstance(table, dict)
    return table


# --------------------------------------------------------------------- the match driver

NEXT_MOVE = """() => {
  if (document.querySelector('#results')) return 'over';
  if (!document.querySelector('#felt')) return null;
  if (document.querySelector('#actions button[data-action=pass]:not([disabled])')) return 'pass';
  if (document.querySelector('#hand .card.playable')) return 'card';
  if (document.querySelector('#actions button[data-action=take]:not([disabled])')) return 'take';
  return null;
}"""

VERSION = "() => { const felt = document.querySelector('#felt'); return felt ? Number(felt.dataset.version) : -1; }"


PLAYABLE_POINT = """() => {
    // The hand fans: cards overlap and turn, so a fixed corner can fall outside the card's shape.
    // Once the first playable card has stopped moving, find a point of it that a click would reach.
    const card = document.querySelector('#hand .card.playable');
    if (!card || card.getAnimations({subtree: true}).some((a) => a.playState === 'running')) return null;
    card.scrollIntoView({block: 'nearest'});
    const box = card.getBoundingClientRect();
    for (const fy of [0.5, 0.35, 0.65, 0.2, 0.8]) {
        const y = box.top + box.height * fy;
        const xs = [];  // the visible strip of the card on this line: take its middle, away from the edges
        for (let x = box.left + 2; x < box.right - 1; x += 2) {
            const hit = document.elementFromPoint(x, y);
            if (hit && hit.closest('.card') === card) xs.push(x);
            else if (xs.length) break;
        }
        if (xs.length >= 3) return {x: xs[Math.floor(xs.length / 2)], y};
    }
    return null;
}"""


def click_playable(page: Any) -> None:
    """Click the first playable card of the hand where it shows, once it has stopped moving."""
    point = page.wait_for_function(PLAYABLE_POINT, timeout=5_000).json_value()
    page.mouse.move(point["x"], point["y"])  # a hovered card lifts: click once it has settled there
    point = page.wait_for_function(PLAYABLE_POINT, timeout=5_000).json_value()
    page.mouse.click(point["x"], point["y"])


def after_card_click(page: Any, before: int) -> str:
    """After a card was clicked: 'target' when it waits for an attack to cover, 'play' when it was
    selected with others of its rank possible (a button plays the selection), else it was sent."""
    outcome = page.wait_for_function(
        """(before) => {
            if (document.querySelector('#results')) return 'played';
            const felt = document.querySelector('#felt');
            if (felt && Number(felt.dataset.version) > before) return 'played';
            if (document.querySelector('.pair .target')) return 'target';
            if (document.querySelector('#actions button[data-action=play]')) return 'play';
            if (document.querySelector('#hand .card[aria-pressed=true]')) return null;
            return 'sent';  // neither selected nor played yet: the command is on its way
        }""",
        arg=before,
        timeout=10_000,
    ).json_value()
    return str(outcome)


@dataclass
class Driver:
    """Plays a match by clicking, like a person: pass when possible, else the first playable card
    (then the first highlighted attack to cover, when the card needs a target), else take."""

    pages: list[Any]
    moves: int = 0
    kinds: dict[str, int] = field(default_factory=dict)

    def act(self, page: Any, kind: str, keyboard: bool = False) -> None:
        before = page.evaluate(VERSION)
        if kind == "pass":
            target = page.locator("#actions button[data-action=pass]")
        elif kind == "take":
            target = page.locator("#actions button[data-action=take]")
        else:
            target = page.locator("#hand .card.playable").first
        if keyboard:
            target.focus()
            page.keyboard.press("Enter")
        elif kind == "card":
            click_playable(page)  # a long hand overlaps and turns: click where the card shows
        else:
            target.click()
        follow = after_card_click(page, before) if kind == "card" else "sent"
        if follow in ("target", "play"):
            cover = page.locator(".pair .target" if follow == "target" else "#actions button[data-action=play]").first
            if keyboard:
                cover.focus()
                page.keyboard.press("Enter")
            else:
                cover.click()
        self.moves += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        # Wait until the table has moved on (or the move was refused and nothing is pending).
        page.wait_for_function(
            """(before) => {
                if (document.querySelector('#results')) return true;
                const felt = document.querySelector('#felt');
                return felt && Number(felt.dataset.version) > before;
            }""",
            arg=before,
            timeout=10_000,
        )

    def step(self, keyboard: bool = False) -> bool:
        """One round over the pages; False once every page shows the result."""
        acted = False
        over = 0
        for page in self.pages:
            kind = page.evaluate(NEXT_MOVE)
            if kind == "over":
                over += 1
            elif kind is not None:
                self.act(page, kind, keyboard)
                acted = True
        if over == len(self.pages):
            return False
        if not acted:
            self.pages[0].wait_for_timeout(40)
        return True

    def play(self, max_moves: int = 600, keyboard: bool = False, until: Any = None) -> None:
        started = time.monotonic()
        while self.step(keyboard):
            if until is not None and until(self):
                return
            assert self.moves <= max_moves, f"no result after {self.moves} moves"
            assert time.monotonic() - started < 90, "the match took longer than 90 s"


def frames_with_key(frames: list[str], key: str) -> list[str]:
    """Websocket frames whose JSON contains ``key`` at any depth."""

    def has(value: Any) -> bool:
        if isinstance(value, dict):
            return key in value or any(has(item) for item in value.values())
        if isinstance(value, list):
            return any(has(item) for item in value)
        return False

    found = []
    for frame in frames:
        try:
            if has(json.loads(frame)):
                found.append(frame)
        except ValueError:
            continue
    return found


def no_horizontal_scroll(page: Any) -> tuple[int, int]:
    return page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")


def iter_pages(*pages: Any) -> Iterator[Any]:
    yield from pages


def open_menu(page: Any) -> None:
    """The header's menu (web/js/header.js): below 1200 px the navigation, the language and "Log out"
    sit in a panel behind #menu-button; open it (wider, they stand in the header's row)."""
    button = page.locator("#menu-button")
    if button.is_visible() and button.get_attribute("aria-expanded") != "true":
        button.click()
