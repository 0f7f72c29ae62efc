"""Friends in the browser, at phone sizes and on a desktop: a request sent and accepted, a friend seen
online at his table, a challenge sent from the friends page that reaches the friend's open page as a
notice he accepts, and Web Push asked for only when the player chooses it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import api, sign_up_api

pytestmark = pytest.mark.browser

SIZES = [(360, 640), (390, 844), (1280, 800)]

# Counts the browser's permission prompts (Notification.requestPermission), before any page script runs.
COUNT_PROMPTS = """
window.__prompts = 0;
if (typeof Notification !== 'undefined') {
  Notification.requestPermission = () => { window.__prompts += 1; return Promise.resolve('denied'); };
}
"""


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert width <= 0, f"the page scrolls sideways by {width}px"


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_befriend_see_online_challenge_and_accept(new_context: Any, width: int, height: int) -> None:
    alice_ctx = new_context(width=width, height=height, reduced_motion="reduce")
    bob_ctx = new_context(width=width, height=height, reduced_motion="reduce")
    alice, bob = sign_up_api(alice_ctx), sign_up_api(bob_ctx)
    for context in (alice_ctx, bob_ctx):
        context.add_init_script(COUNT_PROMPTS)

    # Bob asks from his friends page; Alice accepts from hers.
    bob_page = bob_ctx.new_page()
    bob_page.goto("/#/friends")
    bob_page.locator("#friend-name").fill(alice["name"])
    bob_page.locator("#friend-add button[type=submit]").click()
    expect(bob_page.locator(f"#friend-sent li[data-name='{alice['name']}']")).to_be_visible()
    no_sideways_scroll(bob_page)
    alice_page = alice_ctx.new_page()
    alice_page.goto("/#/friends")
    alice_page.locator(f"#friend-requests li[data-name='{bob['name']}'] [data-act=accept]").click()
    friend = alice_page.locator(f"#friend-list li[data-name='{bob['name']}']")
    expect(friend).to_be_visible()
    no_sideways_scroll(alice_page)

    # Bob's page is open (his notice feed): Alice sees him online, at his public table once he sits.
    bob_page.goto("/")
    table = api(bob_ctx, "POST", "/api/tables", {"name": "Bob's evening", "seats": 3})
    api(bob_ctx, "POST", f"/api/tables/{table['code']}/join", {})
    alice_page.reload()
    expect(friend.locator(".friend-table")).to_have_text("Bob's evening")
    expect(friend).to_have_class("friend-row online")
    api(bob_ctx, "POST", f"/api/tables/{table['code']}/leave")

    # Alice challenges him with her rules; the notice reaches his open page, he plays.
    friend.locator("[data-act=challenge]").click()
    form = alice_page.locator("#challenge-form")
    form.locator("select[name=deck]").select_option("24")
    form.locator("#challenge-send").click()
    alice_page.wait_for_url("**/t/*")
    card = bob_page.locator("#notice-box .notice-card")
    expect(card).to_contain_text(alice["name"])
    expect(card).to_contain_text("24")
    no_sideways_scroll(bob_page)
    card.locator("[data-act=accept]").click()
    bob_page.wait_for_url("**/t/*")
    assert bob_page.url == alice_page.url
    expect(bob_page.locator("#hand .card")).to_have_count(6)
    expect(bob_page.locator("#notice-box")).to_have_count(0)

    # Nobody was asked for the notification permission: nothing here chose notices.
    for page in (alice_page, bob_page):
        assert page.evaluate("() => window.__prompts") == 0


def test_notices_on_this_device_are_asked_for_only_on_the_players_click(new_context: Any) -> None:
    context = new_context(width=360, height=640)
    context.add_init_script(COUNT_PROMPTS)
    sign_up_api(context)
    page = context.new_page()
    page.goto("/#/friends")
    panel = page.locator("#push-panel")
    expect(panel).to_be_visible()
    page.goto("/")
    page.goto("/#/friends")
    expect(page.locator("#push-enable")).to_be_visible()
    assert page.evaluate("() => window.__prompts") == 0  # pages alone never ask
    page.locator("#push-enable").click()
    page.wait_for_function("() => window.__prompts === 1")
    expect(panel).to_have_attribute("data-state", "denied")  # the (stubbed) browser said no: nothing subscribed


def test_a_blocked_player_is_listed_and_can_be_unblocked(new_context: Any) -> None:
    alice_ctx, bob_ctx = new_context(width=390, height=844), new_context()
    alice, bob = sign_up_api(alice_ctx), sign_up_api(bob_ctx)
    api(bob_ctx, "POST", f"/api/friends/{alice['name']}")
    page = alice_ctx.new_page()
    page.goto("/#/friends")
    page.locator(f"#friend-requests li[data-name='{bob['name']}'] [data-act=block]").click()
    blocked = page.locator(f"#blocked-list li[data-name='{bob['name']}']")
    expect(blocked).to_be_visible()
    expect(page.locator("#friend-requests")).to_have_count(0)
    blocked.locator("[data-act=unblock]").click()
    expect(page.locator("#blocked-list")).to_have_count(0)
