"""Two people, two browsers: sign up, open a staked table, join by the invite link, play it out."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Driver, unique_name

pytestmark = pytest.mark.browser

STAKE = 25


def sign_up_in_lobby(page: Any, name: str) -> None:
    page.goto("/")
    page.locator("#auth-tab-signup").click()
    page.locator(".auth-form input[name=name]").fill(name)
    page.locator(".auth-form input[name=password]").fill(PASSWORD)
    page.locator(".auth-form button[type=submit]").click()
    expect(page.locator("#user-name")).to_have_text(name)
    expect(page.locator("#balance")).to_have_attribute("data-balance", "1000")


def balance(page: Any) -> int:
    return int(page.locator("#balance").get_attribute("data-balance"))


def test_two_players_staked_match_by_clicking(new_context: Any, artifacts: Any) -> None:
    alice_ctx, bob_ctx = new_context(reduced_motion="reduce"), new_context(reduced_motion="reduce")
    alice, bob = alice_ctx.new_page(), bob_ctx.new_page()
    alice_name, bob_name = unique_name("alice"), unique_name("bob")
    sign_up_in_lobby(alice, alice_name)
    sign_up_in_lobby(bob, bob_name)

    # Alice opens a staked table with the form.
    alice.locator("#open-table").click()
    form = alice.locator("#create-form")
    form.locator("input[name=deck][value='24']").check()
    form.locator("input[name=stake]").fill(str(STAKE))
    form.locator("input[name=stake]").blur()
    form.locator("select[name=timer]").select_option("60")
    # Bots only sit at free tables: the seat choice is disabled once there is a stake.
    expect(form.locator("select[name=bot-1]")).to_be_disabled()
    form.locator("#create-submit").click()
    invite = alice.locator("#invite-link").input_value()
    watch = alice.locator("#watch-link").input_value()
    assert "/t/" in invite and "/w/" in watch and invite.split("/t/")[1] != watch.split("/w/")[1]
    alice.locator("#go-to-table").click()
    expect(alice.locator("#waiting")).to_contain_text("1/2")

    # Bob follows the invite link and takes the free seat; the match starts when alice is ready.
    bob.goto(invite)
    expect(bob.locator("#join-button")).to_contain_text(str(STAKE))
    bob.locator("#join-button").click()
    # A staked match starts once both are there and ready (rules §8): bob confirmed by sitting down.
    alice.locator("#ready-button").click()
    for page in (alice, bob):
        expect(page.locator("#hand .card")).to_have_count(6)
        expect(page.locator("#stock .stock-count")).to_have_attribute("data-stock", "12")
    # Both stakes are in escrow while the match runs.
    expect(alice.locator("#balance")).to_have_attribute("data-balance", str(1000 - STAKE))
    expect(bob.locator("#balance")).to_have_attribute("data-balance", str(1000 - STAKE))
    # Each player sees the other's name and card count, and who attacks whom.
    expect(alice.locator("#opponents .seat .name-text")).to_have_text(bob_name)
    expect(bob.locator("#opponents .seat .card-count")).to_have_attribute("data-cards", "6")
    roles = {
        alice.locator(".me-area .seat .badge").first.inner_text(),
        bob.locator(".me-area .seat .badge").first.inner_text(),
    }
    assert roles == {"You attack", "You defend"}  # one's own seat is "you" (issue 33, item 10)

    driver = Driver([alice, bob])
    driver.play()
    assert driver.kinds.get("card", 0) >= 6, driver.kinds

    changes = {}
    for page in (alice, bob):
        expect(page.locator("#results")).to_be_visible()
        changes[page] = int(page.locator("#results .result-row.me .coins").get_attribute("data-change"))
    assert sum(changes.values()) == 0
    draw = all(change == 0 for change in changes.values())
    if not draw:
        assert sorted(changes.values()) == [-STAKE, STAKE]
    for page, change in changes.items():
        expect(page.locator("#balance")).to_have_attribute("data-balance", str(1000 + change), timeout=10_000)
    assert balance(alice) + balance(bob) == 2000
    # The result names both players, the durak last, with a rematch offer.
    rows = alice.locator("#results .result-row")
    expect(rows).to_have_count(2)
    if not draw:
        expect(rows.last).to_have_class("result-row durak" if changes[alice] > 0 else "result-row durak me")
    expect(alice.locator("#rematch-button")).to_be_visible()
    alice.screenshot(path=str(artifacts / "result-1280.png"), full_page=True)
