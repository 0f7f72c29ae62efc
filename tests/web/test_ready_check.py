"""The ready check in the browser, on a phone (360x640): seated at a staked table, each player is
asked whether he is ready, with a countdown and who is still missing; the match starts, and the
stakes are taken, only once both have confirmed. Closing the tab while seated at a waiting staked
table asks first."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import ARTIFACTS, api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 640}


def test_a_staked_match_starts_when_both_players_say_they_are_ready(new_context: Any) -> None:
    alice_ctx, bob_ctx = new_context(**PHONE), new_context(**PHONE)
    alice_me = sign_up_api(alice_ctx)
    sign_up_api(bob_ctx)
    table = create_table_api(alice_ctx, seats=2, stake=25, timer=0)
    alice, bob = alice_ctx.new_page(), bob_ctx.new_page()
    for page in (alice, bob):
        page.goto(table["invite_url"])
        expect(page.locator("#waiting")).to_be_visible()
    alice.locator("#join-button").click()
    expect(alice.locator("#leave-button")).to_be_visible()
    bob.locator("#join-button").click()  # the last seat: bob confirms by sitting down

    # Alice is asked; bob waits for her. Nothing is staked yet.
    sheet = alice.locator("#ready-sheet")
    expect(sheet.locator("h2")).to_have_text("Ready to play for 25 coins?")
    expect(sheet.locator("#ready-missing")).to_have_text("")  # bob is ready: only she is missing
    expect(sheet.locator("#ready-countdown")).to_have_text(re.compile(r"^0:([0-2]\d|30) left$"))
    expect(alice.locator("#ready-button")).to_be_in_viewport()
    expect(bob.locator("#ready-sheet h2")).to_have_text("You are ready")
    expect(bob.locator("#ready-missing")).to_have_text(f"Waiting for {alice_me['name']}…")
    expect(bob.locator("#ready-button")).to_have_count(0)
    assert [api(ctx, "GET", "/api/me")["balance"] for ctx in (alice_ctx, bob_ctx)] == [1000, 1000]
    width = alice.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], f"horizontal scroll at 360 px: {width}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    alice.screenshot(path=str(ARTIFACTS / "ready-check-360.png"))
    bob.screenshot(path=str(ARTIFACTS / "ready-check-confirmed-360.png"))

    alice.locator("#ready-button").click()
    for page in (alice, bob):
        expect(page.locator("#ready-sheet")).to_have_count(0)
        expect(page.locator("#hand .card")).to_have_count(6)
    assert [api(ctx, "GET", "/api/me")["balance"] for ctx in (alice_ctx, bob_ctx)] == [975, 975]


def test_closing_the_tab_at_a_waiting_staked_table_asks_first(new_context: Any) -> None:
    context = new_context(**PHONE)
    sign_up_api(context)
    staked = create_table_api(context, seats=2, stake=10)
    page = context.new_page()
    page.goto(staked["invite_url"])
    page.locator("#join-button").click()  # a click: the page may ask before it goes
    expect(page.locator("#leave-button")).to_be_visible()
    asked: list[str] = []

    def on_dialog(dialog: Any) -> None:
        asked.append(dialog.type)
        dialog.dismiss()  # stay

    page.on("dialog", on_dialog)
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert asked == ["beforeunload"] and not page.is_closed()
    # Not seated any more: it goes without a question.
    page.locator("#leave-button").click()
    page.wait_for_url("**/#/")  # leaving goes to the lobby (issue 33, item 10)
    expect(page.locator("#play-now")).to_be_visible()
    with page.expect_event("close"):
        page.close(run_before_unload=True)
    assert asked == ["beforeunload"]
