"""Play now: two browsers pressing "Play now" meet at one table; a rated match moves both players'
ratings, and the leaderboard and the profiles show them. Play a bot starts a match at once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import Driver, Server, api, sign_up_api, start_server, stop_server

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's own server, where every match counts for ratings: these tests are about how
    ratings show; the rule that short matches move no rating (docs/integrity.md) is tested over
    REST in tests/api/test_integrity.py."""
    running = start_server(tmp_path_factory.mktemp("playnow"), DURAK_RATED_MIN_BOUTS="0", DURAK_RATED_MIN_SECONDS="0")
    try:
        yield running
    finally:
        stop_server(running)


STAKE = "7"  # preferences no other browser test uses: this test's players meet only each other


def set_preferences(page: Any) -> None:
    page.goto("/")
    page.locator("#play-now-panel summary").click()
    prefs = page.locator("#play-now-prefs")
    prefs.locator("select[name=deck]").select_option("24")
    prefs.locator("select[name=seats]").select_option("2")
    prefs.locator("select[name=timer]").select_option("60")
    prefs.locator("input[name=stake]").fill(STAKE)
    expect(page.locator("#play-now-summary")).to_contain_text("Stake: 7")


def rated_forfeit(winner: Any, loser: Any) -> None:
    """One more rated match, quickly: both sit down, the loser leaves (a forfeit counts)."""
    table = api(winner, "POST", "/api/tables", {"seats": 2, "deck": 24, "timer": 60, "private": True})
    api(winner, "POST", f"/api/tables/{table['code']}/join", {})
    api(loser, "POST", f"/api/tables/{table['code']}/join", {})
    api(loser, "POST", f"/api/tables/{table['code']}/leave")


def test_two_browsers_play_now_meet_and_a_rated_match_moves_both_ratings(new_context: Any) -> None:
    alice_ctx, bob_ctx = new_context(reduced_motion="reduce"), new_context(reduced_motion="reduce")
    alice_me, bob_me = sign_up_api(alice_ctx), sign_up_api(bob_ctx)
    alice, bob = alice_ctx.new_page(), bob_ctx.new_page()
    for page in (alice, bob):
        set_preferences(page)
    bob.reload()  # the preferences are remembered: one tap away
    expect(bob.locator("#play-now-summary")).to_contain_text("Deck 24")

    alice.locator("#play-now").click()
    alice.wait_for_url("**/t/*")
    expect(alice.locator("#felt, #waiting").first).to_be_visible()
    # Alice looks at another tab meanwhile: the tab title tells her who sat down.
    alice.evaluate("() => Object.defineProperty(document, 'visibilityState', { get: () => 'hidden' })")
    bob.locator("#play-now").click()
    bob.wait_for_url("**/t/*")
    assert alice.url == bob.url  # the same table
    alice.wait_for_function("(name) => document.title.includes(`${name} sat down at your table`)", arg=bob_me["name"])
    for page in (alice, bob):  # a staked match starts once both are there and ready (rules §8)
        page.locator("#ready-button").click()
    for page in (alice, bob):
        expect(page.locator("#hand .card")).to_have_count(6)
        expect(page.locator(".seat .seat-rating")).to_have_text(["1500?", "1500?"])

    Driver([alice, bob]).play()
    expect(alice.locator("#results")).to_be_visible()

    # Four more rated matches (forfeits), and both are on the board with five rated matches.
    for _ in range(4):
        rated_forfeit(alice_ctx, bob_ctx)
    names = {alice_me["name"], bob_me["name"]}
    deadline = time.monotonic() + 20
    while True:
        board = api(alice_ctx, "GET", "/api/leaderboard?page_size=100")
        rows = {row["name"]: row for row in board["items"] if row["name"] in names}
        if len(rows) == 2 and all(row["matches"] == 5 for row in rows.values()):
            break
        assert time.monotonic() < deadline, f"not on the leaderboard: {board}"
        time.sleep(0.2)
    ratings = {name: row["rating"] for name, row in rows.items()}
    assert all(rating != 1500 for rating in ratings.values())

    page = alice_ctx.new_page()
    page.goto("/#/leaderboard")
    for name in names:
        row = page.locator(f"#leaderboard tr[data-name='{name}']")
        expect(row.locator(".rating")).to_have_text(str(ratings[name]))
    page.locator(f"#leaderboard a:text-is('{bob_me['name']}')").click()
    expect(page.locator("#profile-name")).to_have_text(bob_me["name"])
    expect(page.locator("#profile-rating")).to_have_text(str(ratings[bob_me["name"]]))
    expect(page.locator("#rating-chart circle")).to_have_count(6)  # the start and five matches
    expect(page.locator("#recent-matches li")).to_have_count(5)
    expect(page.locator("#matches-played")).to_contain_text("5")


def test_play_a_bot_starts_at_once_and_guests_have_no_profile(new_context: Any) -> None:
    context = new_context(reduced_motion="reduce")
    page = context.new_page()
    page.goto("/")
    api(context, "POST", "/api/auth/guest", {"name": "botfan"})
    page.reload()
    page.locator("#bot-level").select_option("easy")
    page.locator("#play-bot").click()
    page.wait_for_url("**/t/*")
    expect(page.locator("#hand .card")).to_have_count(6)
    page.goto("/#/u/botfan")
    expect(page.locator(".profile .form-error")).to_contain_text("Guests have no profile")
