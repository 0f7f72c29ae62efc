"""Tournaments in the browser at phone sizes and on a desktop: scheduling one through the form, the
list's countdown, joining from the tournament's page, being taken to the arena's table when it seats
you, the live standings, the tables to watch and the profile's tournaments. Screenshots go to
tests/artifacts (docs/screens has copies: phone-tournaments.png, phone-tournament.png,
desktop-tournament.png)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import Server, api, sign_up_api, start_server, stop_server

pytestmark = pytest.mark.browser

SIZES = [(360, 640), (412, 915), (1280, 800)]


@pytest.fixture(scope="module")
def server(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(
        tmp_path_factory.mktemp("tournaments"), DURAK_TOURNAMENT_TICK_S="0.2", DURAK_TOURNAMENT_BOT_AFTER_S="2"
    )
    try:
        yield running
    finally:
        stop_server(running)


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert width <= 0, f"the page scrolls sideways by {width}px"


def test_schedule_through_the_form_at_phone_size(new_context: Any, artifacts: Path) -> None:
    context = new_context(width=360, height=640)
    sign_up_api(context)
    page = context.new_page()
    page.goto("/#/tournaments")
    page.locator("#tournament-new").click()
    form = page.locator("#tournament-form")
    expect(form).to_be_visible()
    expect(form.locator("input[name='entry_fee']")).to_have_count(0)  # a player schedules free ones only
    form.locator("input[name='name']").fill("Phone cup")
    form.locator("select[name='seats']").select_option("3")
    form.locator("button[type='submit']").click()
    expect(page).to_have_url(re.compile(r"#/tournaments/\d+$"))
    expect(page.locator("#tournament-title")).to_have_text("Phone cup")
    expect(page.locator("#countdown strong")).to_have_text(re.compile(r"^(09|10):\d\d$"))
    page.locator("#tournament-join").click()
    expect(page.locator("#my-wait")).to_be_visible()
    expect(page.locator("#standings tr.standing-row")).to_have_count(1)
    no_sideways_scroll(page)
    page.locator("#tournament-leave").click()  # before the start: out again
    expect(page.locator("#tournament-join")).to_be_visible()
    page.goto("/#/tournaments")
    card = page.locator(".tournament-card", has_text="Phone cup")
    expect(card.locator("[data-until]")).to_have_text(re.compile(r"^(09|10):\d\d$"))
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / "tournaments-360.png"), full_page=True, animations="disabled")


def test_the_arena_seats_you_and_the_standings_follow(new_context: Any, server: Server, artifacts: Path) -> None:
    alice_ctx, bob_ctx = new_context(width=360, height=640), new_context(width=412, height=915)
    alice, bob = sign_up_api(alice_ctx), sign_up_api(bob_ctx)
    start = (datetime.now(UTC) + timedelta(seconds=12)).isoformat()  # both join first
    made = api(
        alice_ctx,
        "POST",
        "/api/tournaments",
        {"name": "Lunch arena", "seats": 2, "deck": 24, "timer": 60, "starts_at": start, "duration_min": 5},
    )
    alice_page, bob_page = alice_ctx.new_page(), bob_ctx.new_page()
    for page in (alice_page, bob_page):
        page.goto(f"/#/tournaments/{made['id']}")
        page.locator("#tournament-join").click()
        expect(page.locator("#my-wait")).to_be_visible()
    expect(alice_page.locator("#standings tr.standing-row")).to_have_count(2)  # bob's join came by the stream
    # The start: the arena pairs the two and each page goes to the table by itself.
    for page in (alice_page, bob_page):
        expect(page).to_have_url(re.compile(r"/t/[A-Za-z0-9_-]+$"), timeout=25_000)
    assert alice_page.url == bob_page.url
    code = alice_page.url.rsplit("/", 1)[1]
    # The tournament's page (a third one, a desktop) lists the table to watch and who is at it.
    viewer_ctx = new_context(width=1280, height=800)
    viewer = viewer_ctx.new_page()
    viewer.goto(f"/#/tournaments/{made['id']}")
    tables = viewer.locator("#arena-tables li")
    expect(tables).to_have_count(1)
    expect(tables).to_contain_text(alice["name"])
    expect(viewer.locator("#standings tr.playing")).to_have_count(2)
    expect(viewer.locator("#countdown strong")).to_have_text(re.compile(r"^0[45]:\d\d$"))
    viewer.screenshot(path=str(artifacts / "tournament-1280.png"), full_page=True, animations="disabled")
    # Bob leaves his seat: a forfeit, alice wins the match: 1 point to her, 0 to him.
    api(bob_ctx, "POST", f"/api/tables/{code}/leave")
    expect(viewer.locator(f"#standings tr[data-name='{alice['name']}'] td.points")).to_have_text("1", timeout=15_000)
    expect(viewer.locator("#standings tr.standing-row").first).to_have_attribute("data-name", alice["name"])
    phone = new_context(width=360, height=640).new_page()  # a spectator's phone (an entrant's page moves on)
    phone.goto(f"/#/tournaments/{made['id']}")
    expect(phone.locator("#standings tr.standing-row")).to_have_count(2)
    expect(phone.locator(f"#standings tr[data-name='{alice['name']}'] td.points")).to_have_text("1")
    no_sideways_scroll(phone)
    phone.screenshot(path=str(artifacts / "tournament-360.png"), full_page=True, animations="disabled")
    # The profile lists it (on a page of its own: the arena pairs the two again at once, and the
    # tournament's page goes to that table).
    viewer.goto("/#/tournaments")
    expect(viewer.locator(".tournament-card", has_text="Lunch arena")).to_be_visible()
    no_sideways_scroll(viewer)
    viewer.screenshot(path=str(artifacts / "tournaments-1280.png"), full_page=True, animations="disabled")
    profile = viewer_ctx.new_page()
    profile.goto(f"/#/u/{alice['name']}")
    expect(profile.locator("#profile-tournaments")).to_contain_text("Lunch arena")
    del bob
