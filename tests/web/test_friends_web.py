"""Friends in the browser, at phone sizes and on a desktop: a request sent and accepted, a friend seen
online at his table, a challenge sent from the friends page that reaches the friend's open page as a
notice he accepts, and Web Push asked for only when the player chooses it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import api, sign_up_api, wait_for

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

    def bob_at_his_table() -> bool:  # his page's notice feed connects a moment after its load
        friends = api(alice_ctx, "GET", "/api/friends")["friends"]
        return any(f["name"] == bob["name"] and f["online"] and f["table"] for f in friends)

    # Alice's page reloads once he is there (it looks again only every 20 s, as long as this waits).
    wait_for("Bob online at his table", bob_at_his_table)
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


# Points of the felt a banner must leave alone: each hand card's visible middle, the action bar, the
# seats (own and opponents'), the table zone. [what] of each covered one.
FELT_COVERED = """() => {
  const out = [];
  for (const el of document.querySelectorAll('#felt .seat, #hand .card, #actions, #table-zone, #stock')) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    const x = el.matches('#hand .card') ? r.left + Math.min(12, r.width / 2) : r.left + r.width / 2;
    const hit = document.elementFromPoint(x, r.top + Math.min(12, r.height / 2));
    if (hit && hit.closest('#notice-box')) out.push(el.id || el.dataset.card || el.className);
  }
  return out;
}"""


@pytest.mark.parametrize(("width", "height"), [(360, 640), (844, 390)], ids=["360x640", "844x390"])
def test_a_challenge_during_a_match_is_a_banner_over_the_header_not_over_the_felt(
    new_context: Any, width: int, height: int
) -> None:
    alice_ctx, carol_ctx = new_context(), new_context()
    bob_ctx = new_context(width=width, height=height, has_touch=True)
    alice, bob, carol = sign_up_api(alice_ctx), sign_up_api(bob_ctx), sign_up_api(carol_ctx)
    for friend_ctx, friend in ((alice_ctx, alice), (carol_ctx, carol)):
        api(bob_ctx, "POST", f"/api/friends/{friend['name']}")
        api(friend_ctx, "POST", f"/api/friends/{bob['name']}")
    # Bob plays a bot on his phone.
    table = api(bob_ctx, "POST", "/api/tables", {"name": "Bob vs bot", "seats": 2, "timer": 60, "bot_delay_ms": 0})
    api(bob_ctx, "POST", f"/api/tables/{table['code']}/join", {"seat": 0})
    api(bob_ctx, "POST", f"/api/tables/{table['code']}/bots", {"seat": 1, "level": "easy"})
    page = bob_ctx.new_page()
    page.goto(f"/t/{table['code']}")
    expect(page.locator("#hand .card")).to_have_count(6)
    expect(page.locator("body")).to_have_class(re.compile(r"\bmatch-running\b"))

    # Alice and Carol challenge him: one line at the top of the screen, over the header, one
    # challenge at a time; the felt, his hand and his buttons stay uncovered and usable.
    for friend_ctx in (alice_ctx, carol_ctx):
        api(friend_ctx, "POST", f"/api/friends/{bob['name']}/challenge", {"seats": 2, "deck": 36, "timer": 60})
    box = page.locator("#notice-box")
    expect(box.locator(".notice-card")).to_have_count(2)
    expect(box.locator(".notice-card").first).to_be_visible()
    expect(box.locator(".notice-card").nth(1)).to_be_hidden()
    banner = box.bounding_box()
    felt = page.locator("#felt").bounding_box()
    assert banner is not None and felt is not None
    assert banner["y"] == 0 and banner["height"] <= 56 and banner["width"] == width, banner
    assert banner["y"] + banner["height"] <= felt["y"], (banner, felt)
    assert page.evaluate(FELT_COVERED) == []
    for button in box.locator(".notice-card").first.locator("button").all():
        size = button.bounding_box()
        assert size is not None and size["width"] >= 44 and size["height"] >= 44, size
    no_sideways_scroll(page)

    # Declining from the banner shows the other one; declining that clears it.
    box.locator(".notice-card").first.locator("[data-act=decline]").click()
    expect(box.locator(".notice-card")).to_have_count(1)
    expect(box.locator(".notice-card").first).to_be_visible()
    assert page.evaluate(FELT_COVERED) == []

    # Once he leaves the table page the box is the usual corner box again (not a banner).
    page.goto("/")
    card = page.locator("#notice-box .notice-card")
    expect(card).to_have_count(1)
    expect(page.locator("body")).not_to_have_class(re.compile(r"\bmatch-running\b"))
    corner = page.locator("#notice-box").bounding_box()
    assert corner is not None and corner["y"] > height / 2, corner
