"""Benchmark of the web client: Lighthouse on the lobby and on a live table page, and whether a match
fits one screen at every size.

    python -m bench.web            # Lighthouse (mobile) on both pages + 3 seat counts x 8 viewports
    python -m bench.web --quick    # the layouts at three viewports instead of eight (under 60 s)

It starts the server (``python -m app``: a temporary SQLite file, the memory:// broker) as its own
process, signs up a player and opens tables against bots (the match waits for the player, so the
page is a live one that stands still while it is measured):

* Lighthouse 12.2.3 from npm, pinned exactly and installed on first use into ``bench/.lighthouse/``
  (``npm i -E lighthouse@12.2.3``; later releases need Node 22), run with Debian's Chromium
  (``CHROME_PATH=/usr/bin/chromium``) and its default mobile emulation and simulated throttling, on
  the lobby of an anonymous visitor and on the player's page of a running 4-seat table (the
  player's session cookie as an extra header). Scores, CLS, LCP and every failing audit are printed.
* Playwright: for 2, 4 and 6 seats, the player's page of a running match at 360x640, 375x667,
  390x844, 412x915, 844x390, 768x1024, 1280x800 and 1920x1080 (the viewport resized in place). A
  layout fits when the page does not scroll and the hand (every card), the action buttons, the
  table area (every card on it), the stock, the discard pile and every opponent's seat lie inside
  the viewport.

``--quick`` (under 60 s on an idle two-core machine) checks the layouts only at 360x640, 844x390 and
1280x800; Lighthouse runs as always (one Node process and one Chromium for both pages). Lighthouse's
simulated throttling scales the CPU time it observes, so a busy machine lowers the performance score
(mostly through total blocking time): measure on an idle one.

The last line: ``web: lobby P/A/B, table P/A/B (lighthouse performance/accessibility/best-practices);
fit N/M layouts without scrolling``. Targets (issue 16): performance >= 98, accessibility and best
practices 100 on both pages, CLS 0, and N = M.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench._server import ROOT, ServerProcess, durak_server

LIGHTHOUSE_VERSION = "12.2.3"
LIGHTHOUSE_DIR = ROOT / "bench" / ".lighthouse"
LIGHTHOUSE_CLI = LIGHTHOUSE_DIR / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
CATEGORIES = ("performance", "accessibility", "best-practices")
PASSWORD = "bench-web-password-1"

VIEWPORTS = [(360, 640), (375, 667), (390, 844), (412, 915), (844, 390), (768, 1024), (1280, 800), (1920, 1080)]
QUICK_VIEWPORTS = [(360, 640), (844, 390), (1280, 800)]
SEAT_COUNTS = (2, 4, 6)

# What a player needs during a match, each box as [left, top, right, bottom]; the counts say what
# must be there at all (a layout that drops the hand does not fit).
LAYOUT_BOXES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const all = (selector) => [...document.querySelectorAll(selector)].map((el) => [selector, box(el)]);
  return {
    viewport: [innerWidth, innerHeight],
    scrolls: document.documentElement.scrollHeight > innerHeight + 1
      || document.documentElement.scrollWidth > innerWidth + 1,
    scrollY: window.scrollY,
    counts: {
      hand: document.querySelectorAll('#hand .card').length,
      actions: document.querySelectorAll('#actions').length,
      table: document.querySelectorAll('#table-zone').length,
      opponents: document.querySelectorAll('#opponents .seat').length,
    },
    boxes: [
      ...all('#hand'), ...all('#hand .card'), ...all('#actions'), ...all('#actions .btn'),
      ...all('#table-zone'), ...all('#table-zone .card'), ...all('#stock'), ...all('#discard'),
      ...all('#opponents .seat'),
    ],
  };
}"""

WAITING_FOR_ME = """() => {
  const felt = document.querySelector('#felt');
  return !!felt && felt.dataset.status === 'playing' && !!document.querySelector('#hand .card')
    && !!document.querySelector('#hand .card.playable, #actions button:not([disabled])');
}"""


@dataclass
class Player:
    name: str
    cookie: str
    http: httpx.Client


@dataclass
class Report:
    lighthouse: dict[str, dict[str, Any]] = field(default_factory=dict)
    fits: list[tuple[int, tuple[int, int], list[str]]] = field(default_factory=list)


START = time.monotonic()


def log(message: str) -> None:
    print(f"[{time.monotonic() - START:5.1f} s] {message}", flush=True)


# ------------------------------------------------------------------------------------- the server


def sign_up(base: str, name: str) -> Player:
    http = httpx.Client(base_url=base, timeout=10)
    response = http.post("/api/auth/signup", json={"name": name, "password": PASSWORD})
    response.raise_for_status()
    cookie = "; ".join(f"{key}={value}" for key, value in http.cookies.items())
    return Player(name, cookie, http)


def table_against_bots(player: Player, seats: int, name: str) -> dict[str, Any]:
    """A free table, the player in seat 0 and bots in the others: the match starts at once and soon
    waits for the player (bots answer at once, the player's timer is a minute)."""
    body = {"name": name, "deck": 52 if seats > 4 else 36, "seats": seats, "timer": 60, "bot_delay_ms": 0}
    response = player.http.post("/api/tables", json=body)
    response.raise_for_status()
    table: dict[str, Any] = response.json()
    player.http.post(f"/api/tables/{table['code']}/join", json={"seat": 0}).raise_for_status()
    for seat in range(1, seats):
        player.http.post(f"/api/tables/{table['code']}/bots", json={"seat": seat, "level": "easy"}).raise_for_status()
    return table


def waiting_tables(player: Player, seats: int) -> None:
    """A few open tables in the lobby, so that its list is not empty."""
    for index in range(3):
        body = {"name": f"Open table {index + 1}", "deck": 36, "seats": seats + index, "timer": 60}
        player.http.post("/api/tables", json=body).raise_for_status()


# ------------------------------------------------------------------------------------- Lighthouse


def ensure_lighthouse() -> None:
    if LIGHTHOUSE_CLI.exists():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("bench.web needs npm (Node 20) to install Lighthouse")
    LIGHTHOUSE_DIR.mkdir(parents=True, exist_ok=True)
    log(f"installing lighthouse@{LIGHTHOUSE_VERSION} into {LIGHTHOUSE_DIR.relative_to(ROOT)} ...")
    subprocess.run(
        [npm, "i", "-E", f"lighthouse@{LIGHTHOUSE_VERSION}", "--no-audit", "--no-fund"],
        check=True,
        cwd=LIGHTHOUSE_DIR,
    )


# One Node process and one Chromium for every page (Lighthouse resets the cache and storage before
# each run); the script lives next to its node_modules so that Node finds them.
RUNNER = """
import fs from 'node:fs';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';

const { jobs, flags, categories, skip } = JSON.parse(process.argv[2]);
const chrome = await chromeLauncher.launch({ chromePath: process.env.CHROME_PATH, chromeFlags: flags.split(' ') });
try {
  for (const job of jobs) {
    const result = await lighthouse(job.url, {
      port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: categories, skipAudits: skip,
      disableFullPageScreenshot: true, extraHeaders: job.headers || undefined,
    });
    fs.writeFileSync(job.out, result.report);
  }
} finally {
  await chrome.kill();
}
"""
# Audits that weigh nothing in the three scores but cost seconds (bf-cache navigates away and back).
SKIPPED_AUDITS = ["bf-cache", "valid-source-maps"]


def lighthouse(pages: dict[str, tuple[str, str | None]], workdir: Path) -> dict[str, dict[str, Any]]:
    """Lighthouse (mobile emulation, simulated throttling) on each page {name: (url, cookie)}: scores
    out of 100, CLS, LCP (ms) and the audits that did not pass."""
    runner = LIGHTHOUSE_DIR / "run.mjs"
    runner.write_text(RUNNER)
    jobs = [
        {"url": url, "out": str(workdir / f"{name}.json"), "headers": {"Cookie": cookie} if cookie else None}
        for name, (url, cookie) in pages.items()
    ]
    spec = {"jobs": jobs, "flags": CHROME_FLAGS, "categories": list(CATEGORIES), "skip": SKIPPED_AUDITS}
    env = {**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", CHROMIUM)}
    subprocess.run(["node", str(runner), json.dumps(spec)], check=True, env=env, cwd=LIGHTHOUSE_DIR, timeout=300)
    return {name: summarize(json.loads((workdir / f"{name}.json").read_text())) for name in pages}


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    scores = {name: round(100 * (result["categories"][name]["score"] or 0)) for name in CATEGORIES}
    audits = result["audits"]
    failing = []
    for category in CATEGORIES:
        for ref in result["categories"][category]["auditRefs"]:
            audit = audits[ref["id"]]
            mode, passed = audit["scoreDisplayMode"], (audit["score"] or 0) >= 1
            counts = ref["weight"] > 0 or mode == "metricSavings"  # scored, or a diagnostic with savings
            if mode in ("binary", "numeric", "metricSavings") and not passed and counts:
                failing.append(f"{ref['id']} ({audit.get('displayValue') or audit['score']})")
    return {
        "scores": scores,
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "lcp_ms": audits["largest-contentful-paint"]["numericValue"],
        "fcp_ms": audits["first-contentful-paint"]["numericValue"],
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "bytes": audits["total-byte-weight"]["numericValue"],
        "requests": len(audits["network-requests"].get("details", {}).get("items", [])),
        "failing": sorted(set(failing)),
    }


# ------------------------------------------------------------------------------------- layouts


def check_layouts(server: ServerProcess, player: Player, viewports: list[tuple[int, int]], report: Report) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROME_FLAGS.replace("--headless ", "").split()
        )
        try:
            for seats in SEAT_COUNTS:
                table = table_against_bots(player, seats, f"Layout {seats}")
                context = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 800})
                context.add_cookies(session_cookies(player, server.base_url))
                page = context.new_page()
                page.goto(f"/t/{table['code']}")
                page.wait_for_function(WAITING_FOR_ME, timeout=20_000)
                play_a_card(page)
                for width, height in viewports:
                    page.set_viewport_size({"width": width, "height": height})
                    page.wait_for_timeout(150)
                    problems = layout_problems(page.evaluate(LAYOUT_BOXES), seats)
                    report.fits.append((seats, (width, height), problems))
                    state = "fits" if not problems else "DOES NOT FIT: " + "; ".join(problems[:4])
                    log(f"  {seats} seats {width}x{height}: {state}")
                context.close()
        finally:
            browser.close()


def session_cookies(player: Player, base_url: str) -> list[dict[str, str]]:
    return [{"name": name, "value": value, "url": base_url} for name, value in player.http.cookies.items()]


def play_a_card(page: Any) -> None:
    """Put a card on the table when the player may lead or cover (mid-match, not just dealt)."""
    card = page.locator("#hand .card.playable").first
    if not card.count():
        return
    before = page.evaluate("() => Number(document.querySelector('#felt').dataset.version)")
    card.click()
    target = page.locator("#table-zone .target").first
    if target.count():
        target.click()
    try:
        page.wait_for_function(
            "(before) => Number(document.querySelector('#felt').dataset.version) > before", arg=before, timeout=5000
        )
        page.wait_for_function(WAITING_FOR_ME, timeout=10_000)
    except Exception:  # the match moved on in another way; measure the page as it is
        pass


def layout_problems(found: dict[str, Any], seats: int) -> list[str]:
    width, height = found["viewport"]
    counts = found["counts"]
    problems = []
    if found["scrolls"] or found["scrollY"]:
        problems.append("the page scrolls")
    for part in ("hand", "actions", "table"):
        if not counts[part]:
            problems.append(f"no {part}")
    if counts["opponents"] != seats - 1:
        problems.append(f"{counts['opponents']} of {seats - 1} opponents shown")
    for selector, (left, top, right, bottom) in found["boxes"]:
        if left < -1 or top < -1 or right > width + 1 or bottom > height + 1:
            problems.append(f"{selector} at [{left:.0f},{top:.0f},{right:.0f},{bottom:.0f}]")
    return problems


# ------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="three viewports instead of eight (under 60 s)")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    ensure_lighthouse()
    report = Report()
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        workdir = Path(tmp)
        server = durak_server(workdir).start()
        try:
            host = sign_up(server.base_url, "benchhost")
            waiting_tables(host, 2)
            player = sign_up(server.base_url, "benchplayer")
            live = table_against_bots(player, 4, "Measured table")
            wait_for_player_turn(player, live)

            log("lighthouse (mobile): the lobby of an anonymous visitor, the player's page of a live 4-seat table")
            pages = {
                "lobby": (f"{server.base_url}/", None),
                "table": (f"{server.base_url}/t/{live['code']}", player.cookie),
            }
            report.lighthouse = lighthouse(pages, workdir)
            for name, run in report.lighthouse.items():
                log(f"{name}:\n{describe(run)}")

            viewports = QUICK_VIEWPORTS if args.quick else VIEWPORTS
            log(f"layouts: {len(SEAT_COUNTS)} seat counts x {len(viewports)} viewports")
            check_layouts(server, player, viewports, report)
        finally:
            server.stop()
    if args.json:
        args.json.write_text(json.dumps({"lighthouse": report.lighthouse, "fits": report.fits}, indent=2))
    log(f"({time.monotonic() - started:.0f} s)")
    fit = sum(1 for _, _, problems in report.fits if not problems)
    lobby, table = (report.lighthouse[page]["scores"] for page in ("lobby", "table"))
    lobby_scores, table_scores = ("/".join(str(scores[c]) for c in CATEGORIES) for scores in (lobby, table))
    print(
        f"web: lobby {lobby_scores}, table {table_scores} (lighthouse performance/accessibility/best-practices);"
        f" fit {fit}/{len(report.fits)} layouts without scrolling"
    )


def wait_for_player_turn(player: Player, table: dict[str, Any], timeout: float = 15.0) -> None:
    """Until the match runs (the bots have sat down and the deal is done)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = player.http.get(f"/api/tables/{table['code']}").json()
        if info.get("status") == "playing":
            time.sleep(0.5)  # the bots' first answers
            return
        time.sleep(0.1)
    raise RuntimeError(f"the table {table['code']} did not start")


def describe(run: dict[str, Any]) -> str:
    scores = ", ".join(f"{name} {run['scores'][name]}" for name in CATEGORIES)
    lines = [
        f"  {scores}; CLS {run['cls']:.3f}, LCP {run['lcp_ms'] / 1000:.2f} s, FCP {run['fcp_ms'] / 1000:.2f} s,"
        f" TBT {run['tbt_ms']:.0f} ms, {run['bytes'] / 1024:.0f} KiB in {run['requests']} requests"
    ]
    if run["failing"]:
        lines.append("  not passed: " + ", ".join(run["failing"]))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
