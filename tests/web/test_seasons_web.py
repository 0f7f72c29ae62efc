"""Seasons in the browser: the season board, the archive of past seasons and the profile's season
and past places, at phone sizes and on a desktop; and a rated match's results show its rating change."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from app.db import matches, seasons
from app.db.session import Database
from app.db.stakes import MatchRecord
from tests.web.support import Server, api, sign_up_api, start_server, stop_server

pytestmark = pytest.mark.browser

SIZES = [(360, 640), (390, 844), (1280, 800)]


@pytest.fixture(scope="module")
def server(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Every match rated however short (these tests are about how seasons show)."""
    running = start_server(tmp_path_factory.mktemp("seasons"), DURAK_RATED_MIN_BOUTS="0", DURAK_RATED_MIN_SECONDS="0")
    try:
        yield running
    finally:
        stop_server(running)


def last_month_matches(server: Server, winner: int, loser: int, count: int) -> None:
    """Rated matches of the month before this one, written to the server's database."""

    async def write() -> None:
        db = Database(server.database_url)
        try:
            when = datetime.now(UTC).replace(day=1, hour=12) - timedelta(days=5)
            for i in range(count):
                record = MatchRecord(
                    match_id=f"past-{winner}-{loser}-{i}",
                    table_id="t-past",
                    rules={"deck": 36, "seats": 2, "stake": 0},
                    seed=i,
                    dealer=0,
                    seats=[
                        {"seat": 0, "account_id": winner, "display_name": "w"},
                        {"seat": 1, "account_id": loser, "display_name": "l"},
                    ],
                    actions=[],
                    result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
                    created_at=when,
                    finished_at=when + timedelta(minutes=i),
                )
                await db.write(lambda s, r=record: matches.record_match(s, r))
                await db.write(
                    lambda s, m=record.match_id: seasons.rate_match(s, match_id=m, rules=seasons.SeasonRules())
                )
        finally:
            await db.dispose()

    # Playwright's sync API runs an event loop in this thread: the writes get a thread of their own.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, write()).result()


def rated_forfeit(winner: Any, loser: Any, watch: Any | None = None) -> None:
    """A rated match: both sit down, the loser leaves (a forfeit counts). ``watch``: a page of the
    winner's that opens the table first and stays on it."""
    table = api(winner, "POST", "/api/tables", {"seats": 2, "deck": 24, "timer": 60, "private": True})
    if watch is not None:
        watch.goto(f"/t/{table['code']}")
    api(winner, "POST", f"/api/tables/{table['code']}/join", {})
    api(loser, "POST", f"/api/tables/{table['code']}/join", {})
    api(loser, "POST", f"/api/tables/{table['code']}/leave")


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert width <= 0, f"the page scrolls sideways by {width}px"


def test_results_show_the_rating_change_and_the_season_pages_fit_every_size(new_context: Any, server: Server) -> None:
    alice_ctx, bob_ctx = new_context(reduced_motion="reduce"), new_context(reduced_motion="reduce")
    alice, bob = sign_up_api(alice_ctx), sign_up_api(bob_ctx)
    table_page = alice_ctx.new_page()
    rated_forfeit(alice_ctx, bob_ctx, watch=table_page)
    rows = table_page.locator("#results .result-row")
    expect(rows).to_have_count(2)
    # the ledger rates the match a moment after the results: the change arrives as its own update
    expect(table_page.locator("#results .rating-change")).to_have_count(2)
    mine = table_page.locator("#results .result-row.me .rating-change")
    expect(mine).to_contain_text("(+")
    expect(mine.locator(".season-change")).to_contain_text("+")
    table_page.close()
    for _ in range(4):
        rated_forfeit(alice_ctx, bob_ctx)
    last_month_matches(server, bob["id"], alice["id"], 5)

    for width, height in SIZES:
        context = new_context(width=width, height=height)
        context.add_cookies(alice_ctx.cookies())
        page = context.new_page()
        page.goto("/#/leaderboard/season")
        board = page.locator("#season-board")
        expect(board.locator(f"tr[data-name='{alice['name']}'] .rank")).to_have_text("1")
        expect(board.locator(f"tr[data-name='{bob['name']}'] .rank")).to_have_text("2")
        expect(page.locator("#season-when")).to_be_visible()
        no_sideways_scroll(page)

        page.locator(".board-tabs .tab[data-tab='past']").click()
        past = page.locator("#season-archive li")
        expect(past).to_have_count(1)
        no_sideways_scroll(page)
        past.locator("a").click()
        final = page.locator("#season-board")
        expect(final.locator(f"tr[data-name='{bob['name']}'] .rank")).to_have_text("1")
        expect(page.locator("#season-when")).to_contain_text("Final standings")

        page.goto(f"/#/u/{alice['name']}")
        expect(page.locator("#season-rating .season-rank")).to_have_text("#1 this season")
        expect(page.locator("#past-seasons li")).to_have_count(1)
        expect(page.locator("#past-seasons li strong")).to_have_text("#2 of 2")
        expect(page.locator("#profile-rating")).to_be_visible()
        no_sideways_scroll(page)
        context.close()
