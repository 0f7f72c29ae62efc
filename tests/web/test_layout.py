"""Every page at a 375-px phone width and at 1280 px: no horizontal scrolling. Screenshots of the
lobby, a table mid-bout and the result screen go to tests/artifacts/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Driver, Server, api, create_table_api, no_horizontal_scroll, unique_name

pytestmark = pytest.mark.browser

WIDTHS = (375, 1280)
# The elements that reach past the window's right edge (what a failed width check names).
WIDER_THAN_THE_WINDOW = """() => [...document.querySelectorAll('body *')]
  .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
  .slice(0, 5).map((el) => `${el.tagName.toLowerCase()}#${el.id}.${[...el.classList].join('.')}`
    + ` right ${Math.round(el.getBoundingClientRect().right)}`).join(', ')"""


def check_widths(page: Any, name: str, artifacts: Path | None = None) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 812 if width == 375 else 900})
        # The page settles after a resize (the header's menu and the lobby's rows follow the width in
        # scripts): a width that is still too wide a second later is a page that scrolls sideways.
        for _ in range(20):
            page.wait_for_timeout(60)
            scroll, inner = no_horizontal_scroll(page)
            if scroll <= inner:
                break
        assert scroll <= inner, (
            f"{name} scrolls sideways at {width}px: {scroll} > {inner} ({page.evaluate(WIDER_THAN_THE_WINDOW)})"
        )
        if artifacts is not None:
            page.screenshot(path=str(artifacts / f"{name}-{width}.png"), full_page=True, animations="disabled")


def test_pages_fit_phone_and_desktop(new_context: Any, server: Server, artifacts: Path) -> None:
    name = unique_name("wide")
    server.cli("create-admin", name, "--password", PASSWORD)
    context = new_context()
    api(context, "POST", "/api/auth/login", {"name": name, "password": PASSWORD})
    other = new_context()
    api(other, "POST", "/api/auth/guest", {"name": "Someone_waiting"})
    waiting = create_table_api(other, deck=36, seats=3, name="A table with a rather long name, waiting")
    api(other, "POST", f"/api/tables/{waiting['code']}/join", {})
    create_table_api(context, deck=52, seats=6, stake=40, transfer=True, circle="neighbours", name="High stakes")

    page = context.new_page()
    page.goto("/")
    expect(page.locator("#lobby-tables .table-row").first).to_be_visible()
    check_widths(page, "lobby", artifacts)
    page.goto("/#/create")
    expect(page.locator("#create-form")).to_be_visible()
    check_widths(page, "create", artifacts)
    page.goto("/#/admin")
    page.locator(".search-form button[type=submit]").click()
    page.locator("#accounts button").first.click()
    expect(page.locator("#ledger")).to_be_visible()
    check_widths(page, "admin")
    page.goto("/#/nowhere")
    check_widths(page, "missing")
    page.goto(waiting["invite_url"])
    expect(page.locator("#waiting")).to_be_visible()
    check_widths(page, "table-waiting")

    # A four-seat table against three bots: mid-bout and the result.
    table = create_table_api(context, deck=36, seats=4, name="Four at the table")
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    for _ in range(3):
        api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page.goto(table["invite_url"])
    expect(page.locator("#opponents .seat")).to_have_count(3)
    driver = Driver([page])
    driver.play(
        until=lambda d: (
            page.locator("#felt .pair.covered").count() > 0 and page.locator("#hand .card.playable").count() > 0
        )
    )
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_timeout(250)
    check_widths(page, "table-mid-bout", artifacts)
    driver.play()
    expect(page.locator("#results")).to_be_visible()
    check_widths(page, "table-result", artifacts)

    match_link = page.locator("#results a", has_text="Replay").get_attribute("href")
    page.goto(table["watch_url"])
    expect(page.locator("#spectating-badge")).to_be_visible()
    check_widths(page, "spectate")
    page.goto(match_link)
    page.locator("[data-step=next]").click()
    page.locator("[data-step=next]").click()
    check_widths(page, "replay", artifacts)
    page.goto("/#/history")
    expect(page.locator("#history .match-row")).to_have_count(1)
    check_widths(page, "history", artifacts)

    guest_context = new_context()
    guest = guest_context.new_page()
    guest.goto("/#/login")
    check_widths(guest, "login")
    guest.goto(waiting["invite_url"])
    expect(guest.locator("#guest-join")).to_be_visible()
    check_widths(guest, "invite-guest", artifacts)
