"""The screenshot gallery of the web client: every page on a phone (375x812) and a desktop (1280x800).

    python -m bench.screens                 # writes docs/screens/{phone,desktop}-<page>.png
    python -m bench.screens --out /tmp/x    # somewhere else
    python -m bench.screens --only table-4  # some pages only (repeatable)
    (friends, season, past-season, profile: issue 37's pages)

It starts the server (``python -m app``: a temporary SQLite file, the memory:// broker), makes the
people and tables the pages need (a player with a finished match for the history, the replay and the
results screen; open tables for the lobby; an admin; matches against bots with 2, 4 and 6 seats, a
card already on the table; a farmer's quick wins for the fair-play flag, his staked play frozen)
and photographs each page with Debian's Chromium through Playwright, animations finished. The PNGs
are made small in the browser: the screenshot is reduced to at most 256 colours there (canvas
pixels, a 32-level-per-channel histogram, nearest-colour mapping) and written here as an 8-bit
palette PNG (zlib level 9). A page that fails is reported and skipped; the
exit status is 1 when any did.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as ws_connect

from bench._server import ROOT, ServerProcess, durak_server
from bench.web import (
    CHROME_FLAGS,
    CHROMIUM,
    PASSWORD,
    WAITING_FOR_ME,
    Player,
    play_a_card,
    session_cookies,
    sign_up,
    table_against_bots,
)

OUT = ROOT / "docs" / "screens"
DEVICES = {"phone": (375, 812), "desktop": (1280, 800)}

# In a blank page (no CSP): PNG bytes in, at most 256 colours out as {width, height, palette, indices}.
QUANTIZE = """async (base64png) => {
  const bytes = Uint8Array.from(atob(base64png), (c) => c.charCodeAt(0));
  const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
  const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(bitmap, 0, 0);
  const { data, width, height } = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
  const n = width * height;
  const bucketOf = new Uint16Array(n);
  const count = new Uint32Array(32768), sumR = new Float64Array(32768), sumG = new Float64Array(32768),
    sumB = new Float64Array(32768);
  for (let i = 0; i < n; i++) {
    const r = data[4 * i], g = data[4 * i + 1], b = data[4 * i + 2];
    const k = ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3);
    bucketOf[i] = k; count[k]++; sumR[k] += r; sumG[k] += g; sumB[k] += b;
  }
  const used = [];
  for (let k = 0; k < 32768; k++) if (count[k]) used.push(k);
  used.sort((a, b) => count[b] - count[a]);
  const chosen = used.slice(0, 256);
  const palette = chosen.map((k) => [sumR[k] / count[k], sumG[k] / count[k], sumB[k] / count[k]].map(Math.round));
  const indexOf = new Int16Array(32768).fill(-1);
  chosen.forEach((k, index) => { indexOf[k] = index; });
  for (const k of used.slice(256)) {
    const r = sumR[k] / count[k], g = sumG[k] / count[k], b = sumB[k] / count[k];
    let best = 0, bestDistance = Infinity;
    for (let p = 0; p < palette.length; p++) {
      const [pr, pg, pb] = palette[p];
      const d = 2 * (r - pr) ** 2 + 4 * (g - pg) ** 2 + 3 * (b - pb) ** 2;
      if (d < bestDistance) { bestDistance = d; best = p; }
    }
    indexOf[k] = best;
  }
  const indices = new Uint8Array(n);
  for (let i = 0; i < n; i++) indices[i] = indexOf[bucketOf[i]];
  let binary = '';
  for (let i = 0; i < n; i += 0x8000) binary += String.fromCharCode.apply(null, indices.subarray(i, i + 0x8000));
  return { width, height, palette, indices: btoa(binary) };
}"""


def palette_png(width: int, height: int, palette: list[list[int]], indices: bytes) -> bytes:
    """An 8-bit indexed PNG (no filter, deflate level 9)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + indices[y * width : (y + 1) * width] for y in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
        + chunk(b"PLTE", bytes(value for colour in palette for value in colour))
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


@dataclass
class Scene:
    """What the pages show: who looks, at which address, when it is ready."""

    name: str
    who: str  # "player", "admin", "farmer" (a frozen account) or "anonymous"
    path: str
    ready: Callable[[Any], None]
    devices: dict[str, tuple[int, int]] | None = None  # the sizes to shoot (DEVICES when None)


def ready_selector(selector: str) -> Callable[[Any], None]:
    def wait(page: Any) -> None:
        page.locator(selector).first.wait_for(state="visible", timeout=15_000)

    return wait


def without_notices(page: Any) -> None:
    """The table's photos show the table: the friend's challenge that alice has pending for the friends
    page (a corner box on every other page) is taken off this one."""
    page.evaluate("() => { const box = document.getElementById('notice-box'); if (box) box.hidden = true; }")


def ready_table(page: Any) -> None:
    page.wait_for_function(WAITING_FOR_ME, timeout=20_000)
    without_notices(page)
    play_a_card(page)


def ready_chat(page: Any) -> None:
    """A table with the chat open: a sheet at the foot of a phone, a panel on a desktop."""
    ready_table(page)
    page.locator("#chat").evaluate("(chat) => { chat.open = true; }")  # under a friend's notice, perhaps
    page.locator("#chat .chat-sheet").wait_for(state="visible", timeout=5_000)


def ready_challenge(page: Any) -> None:
    """A cheating table with the challenge menu open (once a bot's move may be challenged)."""
    page.locator("#felt[data-status=playing]").wait_for(state="attached", timeout=20_000)
    without_notices(page)
    summary = page.locator(".challenge-menu summary")
    for _ in range(60):
        if summary.count():
            break
        if page.evaluate(WAITING_FOR_ME):
            play_a_card(page)
        page.wait_for_timeout(250)
    summary.wait_for(state="visible", timeout=10_000)
    page.locator(".challenge-menu").evaluate("(menu) => { menu.open = true; }")
    page.locator(".challenge-list").wait_for(state="visible", timeout=5_000)


def ready_search(page: Any) -> None:
    """The lobby's "Play now" with nobody around: the search, its time waited and Cancel."""
    page.locator("#play-now").click()
    page.locator("#search-elapsed").wait_for(state="visible", timeout=15_000)
    page.wait_for_timeout(1_500)


def ready_results(page: Any) -> None:
    results = page.locator("#results")
    results.wait_for(state="visible", timeout=15_000)
    without_notices(page)
    results.scroll_into_view_if_needed()  # a panel under the felt today, an overlay after issue 16


def ready_admin(account: str) -> Callable[[Any], None]:
    def wait(page: Any) -> None:
        page.locator("input[name=q]").fill(account)
        page.locator(".search-form button[type=submit]").click()
        page.locator(f"#accounts button[data-account='{account}']").click()
        page.locator("#ledger").wait_for(state="visible", timeout=15_000)

    return wait


def ready_flag(page: Any) -> None:
    """The fair-play page with its first flag at the top of the screen."""
    flag = page.locator("article.flag").first
    flag.locator(".flow-table").wait_for(state="visible", timeout=15_000)
    # Below the sticky header (tall on a phone), not under it.
    flag.evaluate(
        "(el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY"
        " - document.getElementById('site-header').offsetHeight - 8)"
    )


def finished_match(player: Player) -> tuple[str, str]:
    """A 2-seat match against a bot that the player left (a forfeit): its table code and match id."""
    table = table_against_bots(player, 2, "Yesterday's match")
    deadline = time.monotonic() + 20
    while player.http.get(f"/api/tables/{table['code']}").json().get("status") != "playing":
        if time.monotonic() > deadline:
            raise RuntimeError("the match did not start")
        time.sleep(0.1)
    player.http.post(f"/api/tables/{table['code']}/leave", json={}).raise_for_status()
    while True:
        items = player.http.get("/api/matches?account=me").json()["items"]
        if items:
            return table["code"], str(items[0]["id"])
        if time.monotonic() > deadline:
            raise RuntimeError("the finished match is not in the history")
        time.sleep(0.2)


def make_admin(server: ServerProcess, name: str) -> Player:
    subprocess.run(
        [sys.executable, "-m", "app.cli", "create-admin", name, "--password", PASSWORD],
        env=server.env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return sign_in(server.base_url, name)


def sign_in(base: str, name: str) -> Player:
    import httpx

    http = httpx.Client(base_url=base, timeout=10)
    http.post("/api/auth/login", json={"name": name, "password": PASSWORD}).raise_for_status()
    return Player(name, "; ".join(f"{k}={v}" for k, v in http.cookies.items()), http)


def at_table(sockets: contextlib.ExitStack, server: ServerProcess, player: Player, code: str) -> ClientConnection:
    """``player`` has the table open (until ``sockets`` closes): a table socket that has said hello
    and got its welcome."""
    socket = sockets.enter_context(
        ws_connect(
            f"{server.ws_url}/ws/tables/{code}",
            additional_headers={"Cookie": player.cookie, "Origin": server.base_url},
        )
    )
    socket.send(json.dumps({"type": "hello"}))
    while json.loads(socket.recv(timeout=10))["type"] != "welcome":
        pass
    return socket


def farmed_flag(server: ServerProcess, admin: Player) -> None:
    """The fair-play review's pages (docs/integrity.md): "farmer" wins 4 quick staked matches from
    "feeder" (who leaves each at once), so the server warns both and files a quick-wins flag; the
    admin reverses one of the matches and freezes the farmer's staked play."""
    farmer, feeder = sign_up(server.base_url, "farmer"), sign_up(server.base_url, "feeder")
    for index in range(4):
        body = {"name": f"Farm {index + 1}", "deck": 24, "seats": 2, "stake": 50, "timer": 60}
        code = farmer.http.post("/api/tables", json=body).json()["code"]
        # A staked match starts once both are at the table and ready (rules §8): each has it open.
        sockets = contextlib.ExitStack()
        for player in (farmer, feeder):
            at_table(sockets, server, player, code)
        for player in (farmer, feeder):
            player.http.post(f"/api/tables/{code}/join", json={}).raise_for_status()
        farmer.http.post(f"/api/tables/{code}/ready").raise_for_status()  # the feeder, by filling it
        deadline = time.monotonic() + 20
        while farmer.http.get(f"/api/tables/{code}").json().get("status") != "playing":
            if time.monotonic() > deadline:
                raise RuntimeError("the farming match did not start")
            time.sleep(0.1)
        feeder.http.post(f"/api/tables/{code}/leave", json={}).raise_for_status()
        while farmer.http.get("/api/matches?account=me").json()["total"] <= index:
            if time.monotonic() > deadline:
                raise RuntimeError("the farming match is not in the history")
            time.sleep(0.2)
        farmer.http.post(f"/api/tables/{code}/leave", json={})
        sockets.close()
    deadline = time.monotonic() + 20
    while not (flags := admin.http.get("/api/admin/integrity/flags?status=open").json()["flags"]):
        if time.monotonic() > deadline:
            raise RuntimeError("no flag was filed")
        time.sleep(0.2)
    flag = flags[0]
    note = {"note": "coins farmed from a second account"}
    admin.http.post(f"/api/admin/matches/{flag['matches'][1]['id']}/reverse", json=note).raise_for_status()
    farmer_id = next(account["id"] for account in flag["accounts"] if account["name"] == "farmer")
    reason = {"reason": f"Coins farmed from a second account (flag #{flag['id']})."}
    admin.http.post(f"/api/admin/accounts/{farmer_id}/freeze", json=reason).raise_for_status()


def rated_matches(server: ServerProcess, pairs: list[tuple[int, int]], when: datetime, tag: str) -> None:
    """Rated matches (winner, loser) finished at ``when``, written to the server's database and rated
    in their season as the server does (the seasons' pages need a season of play, not an afternoon)."""
    from app.db import matches, seasons
    from app.db.session import Database
    from app.db.stakes import MatchRecord

    async def write() -> None:
        db = Database(server.env["DURAK_DATABASE_URL"])
        try:
            for index, (winner, loser) in enumerate(pairs):
                record = MatchRecord(
                    match_id=f"{tag}-{index}",
                    table_id=f"t-{tag}",
                    rules={"deck": 36, "seats": 2, "stake": 0},
                    seed=index,
                    dealer=0,
                    seats=[
                        {"seat": 0, "account_id": winner, "display_name": "w"},
                        {"seat": 1, "account_id": loser, "display_name": "l"},
                    ],
                    actions=[],
                    result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
                    created_at=when,
                    finished_at=when + timedelta(minutes=index),
                )
                await db.write(lambda session, r=record: matches.record_match(session, r))
                await db.write(
                    lambda session, m=record.match_id: seasons.rate_match(
                        session, match_id=m, rules=seasons.SeasonRules()
                    )
                )
        finally:
            await db.dispose()

    asyncio.run(write())


def social_scenes(server: ServerProcess, players: dict[str, Player]) -> list[Scene]:
    """Friends, a challenge and a friend request for alice; a season of play and the month before."""
    alice, marta, feeder, farmer = players["alice"], players["marta"], players["feeder"], players["farmer"]
    for friend in (marta, farmer):
        friend.http.post("/api/friends/alice").raise_for_status()
        alice.http.post(f"/api/friends/{friend.name}").raise_for_status()
    feeder.http.post("/api/friends/alice").raise_for_status()
    farmer.http.post("/api/friends/alice/challenge", json={"deck": 36, "seats": 2, "timer": 30}).raise_for_status()
    ids = {name: int(player.http.get("/api/me").json()["id"]) for name, player in players.items()}
    a, m, f = ids["alice"], ids["marta"], ids["feeder"]
    now = datetime.now(UTC)
    last_month = now.replace(day=1, hour=12, minute=0, second=0, microsecond=0) - timedelta(days=5)
    rated_matches(server, [(m, a), (a, f), (m, f), (f, a), (m, a)] * 2, last_month, "past")
    rated_matches(server, [(a, m), (a, f), (f, m), (a, m), (m, f)] * 2, now - timedelta(hours=2), "now")
    past = [item for item in alice.http.get("/api/seasons").json()["items"] if item["archived"]]
    return [
        Scene("friends", "player", "/#/friends", ready_selector("#friend-list .friend-row")),
        Scene("season", "player", "/#/leaderboard/season", ready_selector("#season-board .leader-row")),
        Scene("past-season", "player", f"/#/seasons/{past[0]['id']}", ready_selector("#season-board .leader-row")),
        Scene("profile", "player", "/#/u/alice", ready_selector("#season-rating")),
    ]


def make_scenes(server: ServerProcess) -> list[Scene]:
    host = sign_up(server.base_url, "marta")
    for index, (seats, deck) in enumerate(((3, 36), (4, 52), (2, 24))):
        body = {"name": f"Evening table {index + 1}", "deck": deck, "seats": seats, "timer": 30}
        code = host.http.post("/api/tables", json=body).json()["code"]
        host.http.post(f"/api/tables/{code}/join", json={}).raise_for_status()
    player = sign_up(server.base_url, "alice")
    results_code, match_id = finished_match(player)
    admin_name = "admin"
    admin = make_admin(server, admin_name)
    farmed_flag(server, admin)
    # The player's timer outlasts the shooting of every page before the tables' (a loaded machine is slow).
    tables = {seats: table_against_bots(player, seats, f"{seats} players", timer=600) for seats in (2, 4, 6)}
    chat_table = table_against_bots(player, 4, "Table talk", timer=600)
    landscape = table_against_bots(player, 6, "Evening table", timer=600)
    cheating = table_against_bots(player, 2, "Sharpers", timer=600, cheating=True)
    sign_up(server.base_url, "seeker")  # "Play now" with nobody around: the search
    others = {name: sign_in(server.base_url, name) for name in ("feeder", "farmer")}
    social = social_scenes(server, {"alice": player, "marta": host, **others})
    return [
        *social,
        Scene("lobby", "player", "/", ready_selector("#lobby-tables .table-row")),
        Scene("create", "player", "/#/create", ready_selector("#create-form")),
        Scene("login", "anonymous", "/#/login", ready_selector(".auth-form input[name=name]")),
        Scene("history", "player", "/#/history", ready_selector("#history .match-row")),
        Scene("replay", "player", f"/#/replay/{match_id}", ready_selector("#replay")),
        Scene("admin", "admin", "/#/admin", ready_admin("alice")),
        Scene("integrity", "admin", "/#/admin/integrity", ready_flag),
        Scene("frozen", "farmer", "/", ready_selector("#frozen-banner")),
        *(Scene(f"table-{seats}", "player", f"/t/{table['code']}", ready_table) for seats, table in tables.items()),
        Scene("results", "player", f"/t/{results_code}", ready_results),
        # Issue 33's phone pages: the chat open, the challenge menu, landscape, the search.
        Scene("chat", "player", f"/t/{chat_table['code']}", ready_chat),
        Scene("challenge", "player", f"/t/{cheating['code']}", ready_challenge),
        Scene("table-6", "player", f"/t/{landscape['code']}", ready_table, {"landscape": (844, 390)}),
        Scene("results", "player", f"/t/{results_code}", ready_results, {"landscape": (844, 390)}),
        Scene("search", "seeker", "/", ready_search, {"phone": DEVICES["phone"]}),
    ]


def shoot(server: ServerProcess, scenes: list[Scene], out: Path, only: set[str]) -> list[str]:
    from playwright.sync_api import sync_playwright

    failed: list[str] = []
    out.mkdir(parents=True, exist_ok=True)
    people = {name: sign_in(server.base_url, name) for name in ("alice", "admin", "farmer", "seeker")}
    people["player"] = people.pop("alice")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROME_FLAGS.replace("--headless ", "").split()
        )
        try:
            workshop = browser.new_page()  # about:blank, where the PNGs are made small
            for scene in scenes:
                if only and scene.name not in only:
                    continue
                for device, (width, height) in (scene.devices or DEVICES).items():
                    target = out / f"{device}-{scene.name}.png"
                    context = browser.new_context(
                        base_url=server.base_url, viewport={"width": width, "height": height}, locale="en-US"
                    )
                    try:
                        if scene.who in people:
                            context.add_cookies(session_cookies(people[scene.who], server.base_url))
                        page = context.new_page()
                        page.goto(scene.path)
                        scene.ready(page)
                        page.wait_for_timeout(400)
                        png = page.screenshot(animations="disabled")
                        small = workshop.evaluate(QUANTIZE, base64.b64encode(png).decode())
                        data = palette_png(
                            small["width"], small["height"], small["palette"], base64.b64decode(small["indices"])
                        )
                        target.write_bytes(data)
                        print(
                            f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: "
                            f"{len(data) // 1024} KiB (Chromium's PNG {len(png) // 1024} KiB)",
                            flush=True,
                        )
                    except Exception:
                        failed.append(f"{device}-{scene.name}")
                        print(f"FAILED {device}-{scene.name}:\n{traceback.format_exc()}", flush=True)
                    finally:
                        context.close()
        finally:
            browser.close()
    return failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go (default docs/screens)")
    parser.add_argument("--only", action="append", default=[], help="a page name (lobby, table-4, results, ...)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-screens-") as tmp:
        # Every account signs up from 127.0.0.1: the same-address rule of related accounts off, so
        # that the farming scene's two accounts may share a staked table, and fresh accounts play
        # for coins at once (docs/integrity.md).
        # alice sits at six tables against bots at once (the pages of 2, 4 and 6 seats, the chat, the
        # challenge menu, landscape): more than a player may have open by default.
        env = {
            "DURAK_RELATED_SAME_IP": "false",
            "DURAK_NEW_ACCOUNT_MATCHES": "0",
            "DURAK_MAX_LIVE_TABLES_PER_ACCOUNT": "10",
        }
        server = durak_server(Path(tmp), extra_env=env).start()
        try:
            failed = shoot(server, make_scenes(server), args.out.resolve(), set(args.only))
        finally:
            server.stop()
    if failed:
        print(f"screens: {len(failed)} failed: {', '.join(failed)}")
        return 1
    print(f"screens: written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
