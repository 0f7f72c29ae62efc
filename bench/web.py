"""Benchmark of the web client: Lighthouse on the lobby and on a live table page, whether a match
fits one screen at every size, and how a phone player gets to a game and plays it.

    python -m bench.web            # everything, at every size (a few minutes on a quiet machine)
    python -m bench.web --quick    # fewer sizes and samples (about a minute)
    python -m bench.web --lighthouse-dir bench/results/lighthouse   # and keep Lighthouse's reports

It starts the server (``python -m app``: a temporary SQLite file, the memory:// broker) as its own
process, signs up a player and opens tables against bots (the match waits for the player, so the
page is a live one that stands still while it is measured):

* Lighthouse 12.2.3 from npm, pinned exactly and installed on first use into ``bench/.lighthouse/``
  (``npm i -E lighthouse@12.2.3``; later releases need Node 22), run with Debian's Chromium
  (``CHROME_PATH=/usr/bin/chromium``) and its default mobile emulation and simulated throttling, on
  the lobby of an anonymous visitor and on the player's page of a running 4-seat table (the
  player's session cookie as an extra header). Scores, CLS, LCP and every failing audit are printed.
* Fit: for 2, 4 and 6 seats, the player's page of a running match at 360x640, 375x667, 390x844,
  412x915, 844x390, 768x1024, 1280x800 and 1920x1080 (the viewport resized in place). A layout fits
  when the page does not scroll and the hand (every card), the action buttons, the table area (every
  card on it), the stock, the discard pile and every opponent's seat lie inside the viewport.
* Controls under 44 px, counted in the same matches at the phone sizes (360x640, 390x844, 412x915,
  844x390): every visible control of the page (links, buttons, selects, inputs, summaries, anything
  with a role of button or a tab stop) narrower or lower than 44 CSS px, and every card of the hand
  whose visible strip (what the next card leaves of it) is under 32 px wide or whose height is under
  44 px. Each offender is printed.
* Off-screen, at a cheating table against a bot at the phone sizes, with the chat open and the
  challenge menu open (its summary tapped while a challenge is legal): the rendered elements whose
  box, clipped by their scrolling or clipping ancestors, crosses the viewport's edge; an element
  inside one that does is not counted again (nor the skip link, which shows on focus). Each offender
  is printed.
* One tap to a hand: a signed-out visitor at 360x640 with an empty cache opens the lobby and, once
  it has loaded, taps "Play a bot"; the figure is the time from that tap (the pointerdown, in the
  page) until a card of his own hand is on the screen, the median of the runs (3; 1 with --quick).
* Tap-to-card: the player's page at 360x640 with the CPU slowed 4x (CDP
  ``Emulation.setCPUThrottlingRate``; ``--cpu-slowdown N`` for another rate: the slowdown is relative
  to the machine's own speed, which the log's first line gives as ``bench.reference``'s figure) taps
  playable cards of his hand against a bot (and the attack to cover, when the card needs one); a
  sample is the time from the tap that sends the move to the first animation frame in which the card
  is on the table. The figure is the 95th percentile (30 samples; 10 with --quick).

``--quick`` checks the layouts at 360x640, 844x390 and 1280x800 (controls at the first two) and the
off-screen count at 360x640 and 844x390. Lighthouse runs as always (one Node process and one
Chromium for both pages). Lighthouse's simulated throttling scales the CPU time it observes, so a
busy machine lowers the performance score (mostly through total blocking time), and the timings
grow with it: measure on an idle one.

The last line: ``web: lobby P/A/B, table P/A/B (lighthouse performance/accessibility/best-practices);
fit N/M layouts without scrolling; one tap to a hand in S s; tap-to-card p95 T ms (4x CPU); controls
under 44 px: K; off-screen: O``. Targets (issues 16 and 33): performance >= 98, accessibility and
best practices 100 on both pages, CLS 0, N = M, S <= 3, T <= 100, K = 0 and O = 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench._server import ROOT, ServerProcess, durak_server
from bench.reference import work as reference_work

LIGHTHOUSE_VERSION = "12.2.3"
LIGHTHOUSE_DIR = ROOT / "bench" / ".lighthouse"
LIGHTHOUSE_CLI = LIGHTHOUSE_DIR / "node_modules" / "lighthouse" / "cli" / "index.js"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = "--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update"
CATEGORIES = ("performance", "accessibility", "best-practices")
PASSWORD = "bench-web-password-1"

VIEWPORTS = [(360, 640), (375, 667), (390, 844), (412, 915), (844, 390), (768, 1024), (1280, 800), (1920, 1080)]
QUICK_VIEWPORTS = [(360, 640), (844, 390), (1280, 800)]
PHONE_VIEWPORTS = [(360, 640), (390, 844), (412, 915), (844, 390)]  # where controls and off-screen are counted
QUICK_PHONE_VIEWPORTS = [(360, 640), (844, 390)]
SEAT_COUNTS = (2, 4, 6)
MIN_CONTROL_PX = 44
MIN_CARD_STRIP_PX = 32

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
    small_controls: list[tuple[int, tuple[int, int], list[str]]] = field(default_factory=list)
    off_screen: list[tuple[tuple[int, int], list[str]]] = field(default_factory=list)
    one_tap_s: list[float] = field(default_factory=list)
    tap_to_card_ms: list[float] = field(default_factory=list)
    cpu_slowdown: float = 4.0


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


def table_against_bots(player: Player, seats: int, name: str, timer: int = 60, **rules: Any) -> dict[str, Any]:
    """A free table, the player in seat 0 and bots in the others: the match starts at once and soon
    waits for the player (bots answer at once, the player's timer is a minute unless ``timer``)."""
    body = {"name": name, "deck": 52 if seats > 4 else 36, "seats": seats, "timer": timer, "bot_delay_ms": 0, **rules}
    response = player.http.post("/api/tables", json=body)
    for _ in range(3):  # the server's limit of new tables a minute: wait as long as it says
        if response.status_code != 429:
            break
        time.sleep(min(30.0, float(response.headers.get("retry-after", "5"))))
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


def check_layouts(
    browser: Any,
    server: ServerProcess,
    player: Player,
    viewports: list[tuple[int, int]],
    phones: list[tuple[int, int]],
    report: Report,
) -> None:
    """Fit (every viewport) and controls under 44 px (the phone ones among them) in running matches."""
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
            settle(page)
            problems = layout_problems(page.evaluate(LAYOUT_BOXES), seats)
            report.fits.append((seats, (width, height), problems))
            state = "fits" if not problems else "DOES NOT FIT: " + "; ".join(problems[:4])
            log(f"  {seats} seats {width}x{height}: {state}")
            if (width, height) in phones:
                small = page.evaluate(SMALL_CONTROLS, [MIN_CONTROL_PX, MIN_CARD_STRIP_PX])
                report.small_controls.append((seats, (width, height), small))
                if small:
                    log(f"    {len(small)} controls under {MIN_CONTROL_PX} px: " + "; ".join(small))
        context.close()


# No card in flight: every finite animation (a play, a draw, the deal) has finished; the endless
# ones (a pulse, a glow) do not count.
SETTLED = """() => !document.getAnimations().some((a) => a.playState === 'running'
  && a.effect && a.effect.getTiming().iterations !== Infinity)"""


def settle(page: Any) -> None:
    """Until no card flies (at most 3 s: a layout is measured as it is then)."""
    with contextlib.suppress(Exception):
        page.wait_for_function(SETTLED, timeout=3000)


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROME_FLAGS.replace("--headless ", "").split()
    )


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


# ------------------------------------------------------------------------------------- tap targets

# Every visible control narrower or lower than the minimum, and every hand card whose visible strip
# (sampled along its middle line: where a tap lands on it and not on its neighbour) is too narrow.
SMALL_CONTROLS = """([minimum, strip]) => {
  const seen = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1 && r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth
      && !el.closest('[hidden], [inert], [aria-hidden="true"]');
  };
  const name = (el) => {
    const id = el.id ? `#${el.id}` : '';
    const cls = [...el.classList].slice(0, 2).map((c) => `.${c}`).join('');
    const text = (el.getAttribute('aria-label') || el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 24);
    return `${el.tagName.toLowerCase()}${id}${cls} "${text}"`;
  };
  const out = [];
  const controls = document.querySelectorAll('a[href], button, select, input:not([type=hidden]), textarea, summary,'
    + ' [role=button], [tabindex]:not([tabindex="-1"])');
  for (const el of controls) {
    if (el.closest('#hand') && el.classList.contains('card')) continue;  // cards: their strip, below
    if (!seen(el)) continue;
    const r = el.getBoundingClientRect();
    const size = `${Math.round(r.width)}x${Math.round(r.height)}`;
    if (r.width < minimum - 0.5 || r.height < minimum - 0.5) out.push(`${name(el)} ${size}`);
  }
  for (const card of document.querySelectorAll('#hand .card')) {
    if (!seen(card)) continue;
    const r = card.getBoundingClientRect();
    let first = null, last = null;
    for (const fy of [0.5, 0.3, 0.7]) {
      const y = r.top + r.height * fy;
      for (let x = Math.max(0, r.left + 1); x < Math.min(innerWidth, r.right - 1); x += 1) {
        const hit = document.elementFromPoint(x, y);
        if (hit && hit.closest('.card') === card) { if (first === null) first = x; last = x; }
        else if (first !== null) break;
      }
      if (first !== null) break;
    }
    const width = first === null ? 0 : last - first + 1;
    const size = `${Math.round(width)}x${Math.round(r.height)}`;
    if (width < strip - 0.5 || r.height < minimum - 0.5) out.push(`hand card ${card.dataset.card} strip ${size}`);
  }
  return out;
}"""

# Rendered elements whose box, clipped by their clipping ancestors, crosses the viewport's edge: the
# outermost of each such subtree, with where it lies.
OFF_SCREEN = """() => {
  const W = innerWidth, H = innerHeight;
  const clipped = (el) => {
    let r = el.getBoundingClientRect();
    let box = { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.position === 'fixed') break;
      if (style.overflowX !== 'visible' || style.overflowY !== 'visible') {
        const c = up.getBoundingClientRect();
        box = { left: Math.max(box.left, c.left), top: Math.max(box.top, c.top),
                right: Math.min(box.right, c.right), bottom: Math.min(box.bottom, c.bottom) };
      }
    }
    return box;
  };
  const out = [];
  const offending = new Set();
  for (const el of document.body.querySelectorAll('*')) {
    const style = getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) continue;
    if (el.closest('[hidden]') || el.matches('.skip-link:not(:focus)')) continue;  // shown on focus only
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) continue;  // visually hidden helpers
    const box = clipped(el);
    if (box.right <= box.left || box.bottom <= box.top) continue;  // scrolled out of its scroller
    if (box.left < -1 || box.top < -1 || box.right > W + 1 || box.bottom > H + 1) {
      offending.add(el);
      if (el.parentElement && offending.has(el.parentElement)) continue;
      const id = el.id ? `#${el.id}` : '';
      const cls = [...el.classList].slice(0, 2).map((c) => `.${c}`).join('');
      const where = [box.left, box.top, box.right, box.bottom].map(Math.round).join(',');
      out.push(`${el.tagName.toLowerCase()}${id}${cls} at [${where}]`);
    }
  }
  return out;
}"""

# What opens the chat and the challenge menu (the first selector that finds a visible control).
CHAT_OPENERS = (
    "#chat-toggle",
    "[data-action=chat]",
    "button[aria-controls=chat]",
    "#chat > summary",
    ".chat-panel > summary",
)
CHALLENGE_OPENERS = ("#actions [data-action=challenge]", ".challenge-menu > summary")


def open_first(page: Any, selectors: tuple[str, ...], is_open: str) -> str | None:
    """Tap the first visible control of ``selectors`` unless ``is_open`` (a JS expression) holds;
    the selector used, or None when none is there."""
    for selector in selectors:
        control = page.locator(selector).first
        if control.count() and control.is_visible():
            if not page.evaluate(is_open):
                control.click()
                page.wait_for_timeout(200)
            return selector
    return None


CHAT_IS_OPEN = """() => {
  const chat = document.querySelector('#chat');
  if (!chat) return false;
  if (chat.tagName === 'DETAILS') return chat.open;
  const toggle = document.querySelector('[aria-controls=chat], #chat-toggle');
  return toggle ? toggle.getAttribute('aria-expanded') === 'true' : !chat.hidden;
}"""
CHALLENGE_IS_OPEN = (
    "() => !!document.querySelector('.challenge-menu[open], [data-action=challenge][aria-expanded=true]')"
)
CHALLENGE_LEGAL = "() => !!document.querySelector('#actions [data-action=challenge], .challenge-menu')"


def count_off_screen(
    browser: Any, server: ServerProcess, player: Player, phones: list[tuple[int, int]], report: Report
) -> None:
    """At a cheating table against a bot: the chat and the challenge menu open, at each phone size."""
    context = browser.new_context(base_url=server.base_url, viewport={"width": 360, "height": 640}, has_touch=True)
    context.add_cookies(session_cookies(player, server.base_url))
    page = context.new_page()
    page.goto(f"/t/{cheating_table(player)['code']}")
    page.wait_for_function(WAITING_FOR_ME, timeout=20_000)
    # A challenge is legal once the bot has made a move in the bout: play on until then.
    for _ in range(40):
        if page.evaluate(CHALLENGE_LEGAL):
            break
        if not make_a_move(page):
            page.wait_for_timeout(200)
    if not page.evaluate(CHALLENGE_LEGAL):
        log("  no challenge became legal: the off-screen count is taken without the challenge menu")
    for width, height in phones:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(200)
        # The challenge menu first: on a phone the open chat is a sheet over the action bar, and the
        # menu's list stands over the sheet.
        menu = open_first(page, CHALLENGE_OPENERS, CHALLENGE_IS_OPEN)
        chat = open_first(page, CHAT_OPENERS, CHAT_IS_OPEN)
        page.wait_for_timeout(200)
        settle(page)
        found = page.evaluate(OFF_SCREEN)
        report.off_screen.append(((width, height), found))
        opened = f"chat {'open' if chat else 'NOT FOUND'}, challenge menu {'open' if menu else 'NOT FOUND'}"
        state = "nothing off-screen" if not found else f"{len(found)} off-screen: " + "; ".join(found)
        log(f"  {width}x{height} ({opened}): {state}")
    context.close()


def cheating_table(player: Player) -> dict[str, Any]:
    body = {"name": "Off-screen", "deck": 36, "seats": 2, "timer": 120, "bot_delay_ms": 0, "cheating": True}
    response = player.http.post("/api/tables", json=body)
    response.raise_for_status()
    table: dict[str, Any] = response.json()
    player.http.post(f"/api/tables/{table['code']}/join", json={"seat": 0}).raise_for_status()
    player.http.post(f"/api/tables/{table['code']}/bots", json={"seat": 1, "level": "easy"}).raise_for_status()
    return table


# ------------------------------------------------------------------------------------- the taps

# Where a tap on the first playable card of the hand lands on it (its visible strip), once still.
PLAYABLE_POINT = """() => {
  const card = document.querySelector('#hand .card.playable');
  if (!card || card.getAnimations({subtree: true}).some((a) => a.playState === 'running')) return null;
  const box = card.getBoundingClientRect();
  for (const fy of [0.5, 0.35, 0.65, 0.2, 0.8]) {
    const y = box.top + box.height * fy;
    const xs = [];
    for (let x = Math.max(1, box.left + 2); x < Math.min(innerWidth - 1, box.right - 1); x += 2) {
      const hit = document.elementFromPoint(x, y);
      if (hit && hit.closest('.card') === card) xs.push(x);
      else if (xs.length) break;
    }
    if (xs.length >= 2) return {x: xs[Math.floor(xs.length / 2)], y, card: card.dataset.card};
  }
  return null;
}"""

NEXT_MOVE = """() => {
  if (document.querySelector('#results')) return 'over';
  const felt = document.querySelector('#felt');
  if (!felt || felt.dataset.status !== 'playing') return null;
  if (document.querySelector('#hand .card.playable')) return 'card';
  if (document.querySelector('#actions button[data-action=pass]:not([disabled])')) return 'pass';
  if (document.querySelector('#actions button[data-action=take]:not([disabled])')) return 'take';
  return null;
}"""

VERSION = "() => { const felt = document.querySelector('#felt'); return felt ? Number(felt.dataset.version) : -1; }"

# In the page: the time from the tap that sends a move (the last pointerdown) to the first animation
# frame in which the tapped hand card lies on the table.
TAP_PROBE = """() => {
  if (window.__tapProbe) return;
  window.__tapProbe = { samples: [], pending: null, at: 0 };
  const probe = window.__tapProbe;
  addEventListener('pointerdown', (event) => {
    probe.at = performance.now();
    const card = event.target.closest && event.target.closest('#hand .card');
    if (card) probe.pending = card.dataset.card;
  }, { capture: true });
  const watch = () => {
    if (probe.pending && document.querySelector(`#table-zone .card[data-card="${probe.pending}"]`)) {
      probe.samples.push(performance.now() - probe.at);
      probe.pending = null;
    }
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}"""


def make_a_move(page: Any, tap: bool = False) -> bool:
    """One move by tapping, like a person: the first playable card (then its target, or the button
    that plays a selected group), else pass, else take. False when it is not our move."""
    kind = page.evaluate(NEXT_MOVE)
    if kind not in ("card", "pass", "take"):
        return False
    before = page.evaluate(VERSION)
    if kind == "card":
        try:
            point = page.wait_for_function(PLAYABLE_POINT, timeout=3000, polling="raf").json_value()
        except Exception:  # the hand moved under us: the next round looks again
            return False
        if tap:
            page.touchscreen.tap(point["x"], point["y"])
        else:
            page.mouse.click(point["x"], point["y"])
        follow = page.wait_for_function(
            """(before) => {
                const felt = document.querySelector('#felt');
                if (document.querySelector('#results')) return 'done';
                if (felt && Number(felt.dataset.version) > before) return 'done';
                if (document.querySelector('.pair .target')) return 'target';
                if (document.querySelector('#actions button[data-action=play]')) return 'play';
                return null;
            }""",
            arg=before,
            timeout=10_000,
        ).json_value()
        if follow in ("target", "play"):
            second = page.locator(".pair .target" if follow == "target" else "#actions button[data-action=play]").first
            box = second.bounding_box()
            if box is not None:
                x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
                page.touchscreen.tap(x, y) if tap else page.mouse.click(x, y)
    else:
        page.locator(f"#actions button[data-action={kind}]").click()
    with contextlib.suppress(Exception):  # refused or lost: the next round looks again
        page.wait_for_function(
            """(before) => {
                const felt = document.querySelector('#felt');
                return !!document.querySelector('#results') || (felt && Number(felt.dataset.version) > before);
            }""",
            arg=before,
            timeout=10_000,
        )
    return True


def tap_to_card(
    browser: Any, server: ServerProcess, player: Player, samples: int, report: Report, cpu_slowdown: float = 4
) -> None:
    """Taps on playable cards at 360x640 with the CPU slowed ``cpu_slowdown`` times, until ``samples``
    cards landed."""
    report.cpu_slowdown = cpu_slowdown
    deadline = time.monotonic() + 40 + samples * 4
    while len(report.tap_to_card_ms) < samples and time.monotonic() < deadline:
        table = table_against_bots(player, 2, "Tap to card")
        context = browser.new_context(base_url=server.base_url, viewport={"width": 360, "height": 640}, has_touch=True)
        context.add_cookies(session_cookies(player, server.base_url))
        page = context.new_page()
        page.goto(f"/t/{table['code']}")
        page.wait_for_function(WAITING_FOR_ME, timeout=20_000)
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu_slowdown})
        page.evaluate(TAP_PROBE)
        while time.monotonic() < deadline:
            taken = page.evaluate("() => window.__tapProbe.samples.length")
            if len(report.tap_to_card_ms) + taken >= samples or page.evaluate(NEXT_MOVE) == "over":
                break
            if not make_a_move(page, tap=True):
                page.wait_for_timeout(50)
        report.tap_to_card_ms.extend(page.evaluate("() => window.__tapProbe.samples"))
        context.close()
    del report.tap_to_card_ms[samples:]


ONE_PLAYER_MANY_TABLES = {
    "DURAK_MAX_LIVE_TABLES_PER_ACCOUNT": "10000",
    "DURAK_MAX_LIVE_TABLES_PER_IP": "10000",
    "DURAK_MAX_TABLES_OPENED_PER_ACCOUNT": "10000",
    "DURAK_MAX_TABLES_OPENED_PER_IP": "10000",
    "DURAK_MAX_WAITING_TABLES_PER_ACCOUNT": "10000",
}

ONE_TAP_DONE = """() => {
  const at = Number(sessionStorage.getItem('bench.tap'));
  const card = document.querySelector('#hand .card');
  if (!at || !card) return null;
  const r = card.getBoundingClientRect();
  return r.width > 0 && r.top < innerHeight && r.bottom > 0 && r.left < innerWidth ? Date.now() - at : null;
}"""


def one_tap_to_hand(browser: Any, server: ServerProcess, runs: int, report: Report) -> None:
    """A signed-out visitor at 360x640, nothing cached: the lobby, then one tap on "Play a bot"."""
    for _ in range(runs):
        context = browser.new_context(base_url=server.base_url, viewport={"width": 360, "height": 640}, has_touch=True)
        page = context.new_page()
        page.goto("/", wait_until="load")
        button = page.locator("#play-bot")
        button.wait_for(state="visible")
        page.wait_for_timeout(300)
        # The moment of the tap, kept where a page load would not lose it.
        page.evaluate(
            """() => addEventListener('pointerdown',
                () => sessionStorage.setItem('bench.tap', String(Date.now())), { capture: true, once: true })"""
        )
        button.tap()
        waited = page.wait_for_function(ONE_TAP_DONE, timeout=20_000, polling="raf").json_value()
        report.one_tap_s.append(waited / 1000)
        log(f"  one tap to a hand: {waited / 1000:.2f} s")
        context.close()


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (share 0.95: the value 95 % of the samples do not exceed)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


# ------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer sizes and samples (about a minute)")
    parser.add_argument("--json", type=Path, help="also write the full report here")
    parser.add_argument(
        "--lighthouse-dir", type=Path, help="keep Lighthouse's own reports here (lobby.json, table.json)"
    )
    parser.add_argument(
        "--no-lighthouse", action="store_true", help="skip Lighthouse (while working on layouts; its scores print as -)"
    )
    parser.add_argument(
        "--cpu-slowdown",
        type=float,
        default=4.0,
        help="how much slower the page's CPU runs for tap-to-card (CDP throttling; default 4). The machine's"
        " own speed moves the figure too: `reference` on the log's first line says how fast it ran",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    # How fast the machine runs now (bench.reference: about 200 ms in its usual phases, 100 in its fastest):
    # CDP slows the page's CPU relative to the machine's, so tap-to-card is read beside it.
    log(f"reference: {statistics.median(reference_work() for _ in range(3)):.0f} ms (python -m bench.reference)")
    if not args.no_lighthouse:
        ensure_lighthouse()
    report = Report()
    viewports = QUICK_VIEWPORTS if args.quick else VIEWPORTS
    phones = QUICK_PHONE_VIEWPORTS if args.quick else PHONE_VIEWPORTS
    with tempfile.TemporaryDirectory(prefix="bench-web-") as tmp:
        workdir = Path(tmp)
        # One player opens a table for every sample (each stays live until its bots time out).
        server = durak_server(workdir, extra_env=ONE_PLAYER_MANY_TABLES).start()
        try:
            host = sign_up(server.base_url, "benchhost")
            waiting_tables(host, 2)
            player = sign_up(server.base_url, "benchplayer")
            live = table_against_bots(player, 4, "Measured table")
            wait_for_player_turn(player, live)

            if not args.no_lighthouse:
                log("lighthouse (mobile): the lobby of an anonymous visitor, the player's page of a live 4-seat table")
                pages = {
                    "lobby": (f"{server.base_url}/", None),
                    "table": (f"{server.base_url}/t/{live['code']}", player.cookie),
                }
                report.lighthouse = lighthouse(pages, workdir)
                if args.lighthouse_dir:
                    args.lighthouse_dir.mkdir(parents=True, exist_ok=True)
                    for name in pages:
                        shutil.copyfile(workdir / f"{name}.json", args.lighthouse_dir / f"{name}.json")
                for name, run in report.lighthouse.items():
                    log(f"{name}:\n{describe(run)}")

            from playwright.sync_api import sync_playwright

            with sync_playwright() as playwright:
                browser = launch(playwright)
                try:
                    log(f"layouts: {len(SEAT_COUNTS)} seat counts x {len(viewports)} viewports (controls: phone sizes)")
                    check_layouts(browser, server, player, viewports, [v for v in viewports if v in phones], report)
                    log(f"off-screen, chat and challenge menu open: {len(phones)} phone sizes")
                    count_off_screen(browser, server, player, phones, report)
                    log("one tap to a hand: a signed-out visitor at 360x640 taps Play a bot")
                    one_tap_to_hand(browser, server, 1 if args.quick else 3, report)
                    samples = 8 if args.quick else 30
                    log(f"tap-to-card at 360x640, CPU slowed {args.cpu_slowdown:g}x: {samples} cards")
                    tap_to_card(browser, server, player, samples, report, args.cpu_slowdown)
                finally:
                    browser.close()
            if report.tap_to_card_ms:
                ordered = sorted(report.tap_to_card_ms)
                median, p95 = statistics.median(ordered), percentile(ordered, 0.95)
                log(f"  {len(ordered)} taps: median {median:.0f} ms, p95 {p95:.0f} ms, max {ordered[-1]:.0f} ms")
        finally:
            server.stop()
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=2))
    log(f"({time.monotonic() - started:.0f} s)")
    print(last_line(report))


def last_line(report: Report) -> str:
    fit = sum(1 for _, _, problems in report.fits if not problems)
    if report.lighthouse:
        lobby, table = (report.lighthouse[page]["scores"] for page in ("lobby", "table"))
        lobby_scores, table_scores = ("/".join(str(scores[c]) for c in CATEGORIES) for scores in (lobby, table))
    else:
        lobby_scores = table_scores = "-/-/-"
    one_tap = f"{statistics.median(report.one_tap_s):.2f}" if report.one_tap_s else "-"
    tap_p95 = f"{percentile(report.tap_to_card_ms, 0.95):.0f}" if report.tap_to_card_ms else "-"
    small = sum(len(found) for _, _, found in report.small_controls)
    off = sum(len(found) for _, found in report.off_screen)
    return (
        f"web: lobby {lobby_scores}, table {table_scores} (lighthouse performance/accessibility/best-practices);"
        f" fit {fit}/{len(report.fits)} layouts without scrolling; one tap to a hand in {one_tap} s;"
        f" tap-to-card p95 {tap_p95} ms ({report.cpu_slowdown:g}x CPU); controls under 44 px: {small};"
        f" off-screen: {off}"
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
