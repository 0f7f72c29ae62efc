"""Issue 33, the frame around the table, at phone sizes (360x640, 390x844, 412x915, 844x390), in
English and Russian: one tap to a game signed out, the search with its bot offer and Cancel, the
one-row header and its menu, the dead ends (a stake above the balance, My tables with Close, a Join
the viewer cannot afford), the app (manifest, icons, service worker, offline notice), Share and the
rules on the invite page, and the replay with its felt first."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import (
    PASSWORD,
    Server,
    api,
    create_table_api,
    sign_up_api,
    start_server,
    stop_server,
    unique_name,
)

pytestmark = pytest.mark.browser

PHONES = [(360, 640), (390, 844), (412, 915), (844, 390)]
RU = json.loads((__import__("pathlib").Path(__file__).resolve().parents[2] / "web/i18n/ru.json").read_text())


@pytest.fixture(scope="module")
def server(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's own server: the search offers bots after one second instead of twenty."""
    running = start_server(tmp_path_factory.mktemp("frame"), DURAK_QUICKPLAY_BOT_OFFER_S="1")
    try:
        yield running
    finally:
        stop_server(running)


def phone(new_context: Any, width: int = 360, height: int = 640, lang: str = "en", **options: Any) -> Any:
    context = new_context(
        width=width, height=height, locale="ru-RU" if lang == "ru" else "en-US", has_touch=True, **options
    )
    remember(context, "durak.lang", lang)
    return context


def remember(context: Any, key: str, value: Any) -> None:
    """``localStorage[key]`` in every page of the context (not in about:blank, which has none)."""
    text = json.dumps(value if isinstance(value, str) else json.dumps(value))
    context.add_init_script(f"try {{ localStorage.setItem('{key}', {text}); }} catch {{}}")


def header_box(page: Any) -> dict[str, float]:
    box: dict[str, float] = page.evaluate(
        """() => {
            const header = document.getElementById('site-header').getBoundingClientRect();
            const parts = [...document.querySelectorAll('#site-header :is(.brand, .header-status), #menu-button')]
                .filter((el) => el.getBoundingClientRect().width > 0)
                .map((el) => el.getBoundingClientRect());
            return { height: header.height, right: Math.max(...parts.map((r) => r.right)), width: innerWidth,
                     top: Math.min(...parts.map((r) => r.top)), bottom: Math.max(...parts.map((r) => r.bottom)) };
        }"""
    )
    return box


# ------------------------------------------------------------------ 1. one tap, signed out


@pytest.mark.parametrize(("lang", "size"), [("en", (360, 640)), ("ru", (412, 915))])
def test_a_signed_out_visitor_is_one_tap_from_his_own_hand(new_context: Any, lang: str, size: tuple[int, int]) -> None:
    context = phone(new_context, *size, lang=lang, reduced_motion="reduce")
    page = context.new_page()
    page.goto("/")
    expect(page.locator("#login-link")).to_be_visible()  # signed out
    play_bot = page.locator("#play-bot")
    box = play_bot.bounding_box()
    assert box is not None and box["y"] + box["height"] <= size[1], "Play a bot shows whole on the first screen"
    page.evaluate("() => { window.sameDocument = true; }")
    play_bot.tap()
    page.wait_for_url("**/t/*")
    expect(page.locator("#hand .card")).to_have_count(6)
    assert page.evaluate("() => window.sameDocument === true"), "the table opens without a page load"
    expect(page.locator("#guest-badge")).to_be_visible()
    me = api(context, "GET", "/api/session")["user"]
    prefix = RU["auth.guest_name_prefix"] if lang == "ru" else "Guest"
    assert me["kind"] == "guest" and me["name"].startswith(prefix)
    # Back in the lobby the guest may change the generated name: the same guest, the new name.
    page.goto("/")
    expect(page.locator("#guest-line")).to_contain_text(me["name"])
    page.locator("#guest-rename-open").tap()
    page.locator("#guest-rename").fill("Vasya_33")
    page.locator("#guest-rename-form button[type=submit]").tap()
    expect(page.locator("#guest-line")).to_contain_text("Vasya_33")
    assert api(context, "GET", "/api/session")["user"]["name"] == "Vasya_33"


# ------------------------------------------------------------------ 2. Play now with nobody around


def test_play_now_searches_offers_bots_and_a_person_who_comes_first_still_plays(new_context: Any) -> None:
    prefs = {"deck": 24, "seats": 2, "timer": 45}
    searcher_ctx = phone(new_context, lang="ru")
    remember(searcher_ctx, "durak.quickplay", prefs)
    page = searcher_ctx.new_page()
    page.goto("/")
    page.locator("#play-now").tap()
    page.wait_for_url("**/t/*")
    expect(page.locator("#search-title")).to_have_text(RU["search.title"])
    expect(page.locator("#search-elapsed")).to_have_text(__import__("re").compile(r"^0:0\d$"))
    expect(page.locator("#search-cancel")).to_be_visible()
    expect(page.locator("#fair-commitment")).to_be_hidden()  # the deal's jargon is folded away
    expect(page.locator("#search-bots")).to_be_visible()  # after the server's delay (1 s here)
    elapsed = page.locator("#search-elapsed").inner_text()
    page.wait_for_timeout(1100)
    assert page.locator("#search-elapsed").inner_text() != elapsed, "the time waited runs"

    # Someone else taps Play now with the same preferences first: they meet; no bot is needed.
    other_ctx = phone(new_context, 390, 844)
    remember(other_ctx, "durak.quickplay", prefs)
    other = other_ctx.new_page()
    other.goto("/")
    other.locator("#play-now").tap()
    other.wait_for_url(page.url)
    for each in (page, other):
        expect(each.locator("#hand .card")).to_have_count(6)
    seats = api(searcher_ctx, "GET", f"/api/tables/{page.url.rsplit('/', 1)[1]}")["seats"]
    assert [seat["kind"] for seat in seats] == ["human", "human"]


def test_nobody_comes_the_bots_fill_the_table_and_cancel_closes_it(new_context: Any) -> None:
    context = phone(new_context, 844, 390)
    remember(context, "durak.quickplay", {"deck": 52, "seats": 3, "timer": 60})
    page = context.new_page()
    page.goto("/")
    page.locator("#play-now").tap()
    page.wait_for_url("**/t/*")
    expect(page.locator("#search-fill")).to_be_visible()
    page.locator("#search-fill").tap()
    expect(page.locator("#hand .card")).to_have_count(6)
    expect(page.locator("#opponents .seat")).to_have_count(2)

    # Another visitor's search, cancelled: the table he opened alone closes and he is in the lobby.
    other = phone(new_context, 390, 844)
    remember(other, "durak.quickplay", {"deck": 36, "seats": 4, "timer": 90})
    page = other.new_page()
    page.goto("/")
    page.locator("#play-now").tap()
    page.wait_for_url("**/t/*")
    code = page.url.rsplit("/", 1)[1]
    page.locator("#search-cancel").tap()
    page.wait_for_url("**/#/")
    expect(page.locator("#play-now")).to_be_visible()
    gone = other.request.get(f"/api/tables/{code}")
    assert gone.status == 410


# ------------------------------------------------------------------ 3. the header


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_header_is_one_row_of_at_most_56_px_on_every_page_at_every_phone_size(
    new_context: Any, server: Server, lang: str
) -> None:
    context = phone(new_context, lang=lang)
    me = sign_up_api(context, unique_name("Konstantinopolsky"))
    table = create_table_api(context, deck=36, seats=2, name="Header check")
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page = context.new_page()
    pages = ["/", "/#/create", "/#/leaderboard", "/#/history", f"/#/u/{me['name']}", f"/t/{table['code']}"]
    for width, height in PHONES:
        page.set_viewport_size({"width": width, "height": height})
        for path in pages:
            page.goto(path)
            expect(page.locator("#balance")).to_be_visible()
            page.wait_for_timeout(100)
            box = header_box(page)
            where = f"{path} at {width}x{height}"
            assert box["height"] <= 56, f"{where}: the header is {box['height']} px"
            assert box["right"] <= box["width"] + 0.5 and box["bottom"] <= box["height"] + 0.5, where
            expect(page.locator("#logout")).to_be_hidden()  # in the menu, not beside the coins
    # The menu holds the rest: the navigation, the name, the language, Log out.
    page.set_viewport_size({"width": 360, "height": 640})
    page.goto("/")
    page.locator("#menu-button").tap()
    expect(page.locator("#menu-button")).to_have_attribute("aria-expanded", "true")
    menu = page.locator("#site-menu")
    expect(menu.locator(".site-nav a")).to_have_count(6)  # lobby, create, leaderboard, tournaments, history, friends
    expect(menu.locator("#user-name")).to_have_text(me["name"])
    expect(menu.locator("#logout")).to_be_visible()
    target = "en" if lang == "ru" else "ru"
    menu.locator("#lang-select").select_option(target)
    expect(page.locator("#play-now")).to_have_text(RU["playnow.button"] if target == "ru" else "Play now")
    page.keyboard.press("Escape")
    expect(page.locator("#site-menu")).to_be_hidden()
    page.locator("#menu-button").tap()
    page.locator("#site-menu a[href='/#/leaderboard']").tap()
    page.wait_for_url("**/#/leaderboard")
    expect(page.locator("#site-menu")).to_be_hidden()


def test_on_a_desktop_the_menu_stands_in_the_row_only_where_all_of_it_fits(new_context: Any, server: Server) -> None:
    """An admin has the most links and a long name: the row holds them from 1440 px in either
    language; narrower, the brand shrinks to its mark, then the menu folds behind its button, and
    the row never reaches past the window (it once did at 1280 px, by 3 px, with "Log out" in two lines)."""
    name = unique_name("Konstantinopolsky")
    server.cli("create-admin", name, "--password", PASSWORD)
    for lang in ("en", "ru"):
        context = new_context(width=1024, height=768, locale="ru-RU" if lang == "ru" else "en-US")
        remember(context, "durak.lang", lang)
        api(context, "POST", "/api/auth/login", {"name": name, "password": PASSWORD})
        page = context.new_page()
        page.goto("/")
        expect(page.locator("#balance")).to_be_visible()
        for width in (1024, 1280, 1440, 1920):
            page.set_viewport_size({"width": width, "height": 800})
            page.wait_for_timeout(100)
            box = header_box(page)
            layout = page.evaluate("() => document.getElementById('site-header').className")
            where = f"{lang} at {width}: {layout}"
            assert box["height"] <= 56 and box["bottom"] <= box["height"] + 0.5, where
            assert box["right"] <= width + 0.5, where
            if "wide" in layout:  # the row: every link, the name and Log out on one line, the button gone
                expect(page.locator("#menu-button")).to_be_hidden()
                expect(page.locator(".site-nav a[href='/#/admin']")).to_be_visible()
                logout = page.locator("#logout").bounding_box()
                assert logout is not None and logout["height"] <= 44, where
                ends = page.evaluate(
                    "() => [...document.querySelectorAll('#site-header .header-inner > *')]"
                    ".map((el) => el.getBoundingClientRect().right)"
                )
                assert max(ends) <= width + 0.5, where
            else:
                expect(page.locator("#menu-button")).to_be_visible()
                expect(page.locator("#logout")).to_be_hidden()
            if width >= 1440:
                assert "wide" in layout, where


# ------------------------------------------------------------------ 9. dead ends


def test_dead_ends_stake_above_the_balance_my_tables_and_joins_out_of_reach(new_context: Any, server: Server) -> None:
    context = phone(new_context, lang="ru")
    sign_up_api(context)  # 1000 coins
    page = context.new_page()
    page.goto("/#/create")
    stake = page.locator("input[name=stake]")
    stake.fill("5000")
    stake.press("Tab")
    expect(page.locator("#err-stake")).to_contain_text("1 000")
    page.locator("#create-submit").tap()
    expect(page.locator("#created")).to_have_count(0)
    assert api(context, "GET", "/api/me/tables")["tables"] == []  # no table was opened

    # Three waiting tables: the lobby lists them, says the limit is reached, and Close frees one.
    codes = [create_table_api(context, deck=36, seats=2, name=f"Мой стол {i}")["code"] for i in range(3)]
    page.goto("/")
    mine = page.locator("#my-tables")
    expect(mine.locator(".my-table")).to_have_count(3)
    expect(page.locator("#my-tables-full")).to_be_visible()
    mine.locator(f"button[data-close='{codes[0]}']").tap()
    expect(mine.locator(".my-table")).to_have_count(2)
    expect(page.locator("#my-tables-full")).to_have_count(0)
    assert context.request.get(f"/api/tables/{codes[0]}").status == 410

    # A staked table above the viewer's balance: its Join is disabled and says why (an admin took
    # 900 of the viewer's coins first); a guest's Join at a staked table says it needs an account.
    admin_name = unique_name("admin")
    server.cli("create-admin", admin_name, "--password", PASSWORD)
    admin = new_context()
    api(admin, "POST", "/api/auth/login", {"name": admin_name, "password": PASSWORD})
    viewer = api(context, "GET", "/api/me")
    api(admin, "POST", f"/api/admin/accounts/{viewer['id']}/adjust", {"amount": -900, "reason": "issue 33 test"})
    rich = new_context()
    sign_up_api(rich)
    staked = create_table_api(rich, deck=36, seats=2, stake=500, name="Высокие ставки")
    page.reload()
    expect(page.locator("#balance")).to_have_attribute("data-balance", "100")
    row = page.locator(f"#lobby-tables .table-row[data-code='{staked['code']}']")
    expect(row.locator("button[disabled]")).to_have_text(RU["lobby.join"])
    expect(row.locator(".join-refusal")).to_have_text(RU["lobby.join_needs_coins"].format(stake="500", balance="100"))
    expect(row.locator("a", has_text=RU["lobby.watch"])).to_be_visible()
    guest = phone(new_context, 390, 844)
    api(guest, "POST", "/api/auth/guest", {"name": "Visitor_33"})
    guest_page = guest.new_page()
    guest_page.goto("/")
    guest_row = guest_page.locator(f"#lobby-tables .table-row[data-code='{staked['code']}']")
    expect(guest_row.locator(".join-refusal")).to_have_text("Plays for coins: sign up or log in to join.")
    # The invite page says the same on its disabled Join.
    page.goto(staked["invite_url"])
    expect(page.locator("#join-button")).to_be_disabled()
    expect(page.locator("#join-refusal")).to_have_text(RU["lobby.join_needs_coins"].format(stake="500", balance="100"))


# ------------------------------------------------------------------ 11. an app, not a tab

# Every file the page loaded is in the service worker's cache.
KEPT_FILES = """async () => {
    const paths = performance.getEntriesByType('resource').map((entry) => new URL(entry.name))
        .filter((url) => url.origin === location.origin && !url.pathname.startsWith('/api/'))
        .map((url) => url.pathname);
    const kept = await Promise.all(paths.map((path) => caches.match(path, { ignoreVary: true })));
    return paths.length > 10 && kept.every(Boolean);
}"""


def wait_until_kept(page: Any, seconds: float = 30.0) -> None:
    """Until every file the page loaded is in the worker's cache. Polled with ``evaluate``, which
    awaits the check's promise (``wait_for_function`` does not: a promise counts as true at once)."""
    deadline = time.monotonic() + seconds
    while not page.evaluate(KEPT_FILES):
        assert time.monotonic() < deadline, "the service worker did not keep the page's files"
        page.wait_for_timeout(200)


def test_the_game_is_an_installable_app_that_says_when_it_is_offline(new_context: Any, server: Server) -> None:
    context = phone(new_context, 390, 844)
    page = context.new_page()
    page.goto("/")
    manifest_url = page.locator("link[rel=manifest]").get_attribute("href")
    assert manifest_url == "/manifest.webmanifest"
    response = context.request.get(manifest_url)
    assert response.ok and response.headers["content-type"].startswith("application/manifest+json")
    manifest = response.json()
    assert manifest["display"] == "standalone" and manifest["start_url"] == "/"
    sizes = {icon["sizes"] for icon in manifest["icons"] if icon["type"] == "image/png"}
    assert {"192x192", "512x512"} <= sizes and any(icon["purpose"] == "maskable" for icon in manifest["icons"])
    for icon in manifest["icons"]:
        fetched = context.request.get(icon["src"])
        assert fetched.ok and fetched.headers["content-type"] == icon["type"], icon

    # The service worker takes over and keeps the shell: offline, the lobby still opens and says so.
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=30_000)
    wait_until_kept(page)
    expect(page.locator("#net-status")).to_have_count(0)
    context.set_offline(True)
    page.reload()
    expect(page.locator("#net-status")).to_have_text("No connection — reconnecting…")
    expect(page.locator("#play-now")).to_be_visible()
    page.goto("/#/leaderboard")  # a page never loaded online: it waits for the network and says why
    expect(page.locator("#offline-page, #leaderboard").first).to_be_visible()
    context.set_offline(False)
    expect(page.locator("#net-status")).to_have_count(0)
    expect(page.locator("#offline-page")).to_have_count(0)


def test_the_invite_page_shows_the_rules_and_shares_the_link(new_context: Any) -> None:
    host = new_context()
    sign_up_api(host)
    table = create_table_api(host, deck=52, seats=3, cheating=True, name="Шулерский стол")
    api(host, "POST", f"/api/tables/{table['code']}/join", {})
    rememberer = "window.__shared = []; navigator.share = async (data) => { window.__shared.push(data); };"
    visitor = phone(new_context, lang="ru")
    visitor.add_init_script(rememberer)
    page = visitor.new_page()
    page.goto(table["invite_url"])
    rules = page.locator("#waiting-rules")
    expect(rules).to_contain_text(RU["rules.cheating"])
    expect(rules).to_contain_text("52")
    expect(rules.locator(".cheating-note")).to_have_text(RU["waiting.cheating_note"])
    rules_box, join_box = rules.bounding_box(), page.locator("#guest-join-button").bounding_box()
    assert rules_box is not None and join_box is not None and rules_box["y"] < join_box["y"], "the rules come first"
    share = page.locator("button[data-share=invite-link]")
    share.tap()
    shared = page.evaluate("() => window.__shared")
    assert shared == [
        {
            "title": "Шулерский стол",
            "text": RU["share.invite_text"].format(name="Шулерский стол"),
            "url": table["invite_url"],
        }
    ]
    # Without a share sheet (a desktop browser) the link is copied as before.
    plain = new_context(permissions=["clipboard-read", "clipboard-write"])
    plain_page = plain.new_page()
    plain_page.goto(table["invite_url"])
    expect(plain_page.locator("button[data-copy=invite-link]")).to_be_visible()
    expect(plain_page.locator("button[data-share]")).to_have_count(0)


# ------------------------------------------------------------------ 11. the replay on a phone


@pytest.mark.parametrize("size", [(360, 640), (844, 390)])
def test_the_replay_on_a_phone_shows_the_felt_first_and_its_controls_stay_on_screen(
    new_context: Any, size: tuple[int, int]
) -> None:
    context = phone(new_context, *size)
    sign_up_api(context)
    played = api(context, "POST", "/api/quickplay/bot", {"level": "easy"})
    api(context, "POST", f"/api/tables/{played['code']}/start")  # dealt (no browser here to send a seed)
    api(context, "POST", f"/api/tables/{played['code']}/leave")  # a forfeit ends the match at once
    page = context.new_page()
    page.goto("/#/history")
    page.locator("a[href*='#/replay/']").first.click()
    felt = page.locator(".replay-felt")
    expect(felt).to_be_visible()
    dock = page.locator(".replay-dock")
    felt_box, dock_box = felt.bounding_box(), dock.bounding_box()
    assert felt_box is not None and dock_box is not None
    assert felt_box["y"] < dock_box["y"], "the felt comes before the controls"
    assert dock_box["y"] + dock_box["height"] <= size[1] + 0.5, "the controls stay on the screen"
    for button in page.locator(".replay-buttons button").all():
        box = button.bounding_box()
        assert box is not None and box["width"] >= 44 and box["height"] >= 44
    page.locator("[data-step=next]").tap()
    expect(page.locator("#replay-step")).to_contain_text("2")
