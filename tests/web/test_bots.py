"""A table with a bot, played to the end by clicking; rematch; the match in the history and replay."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import Driver, api, sign_up_api

pytestmark = pytest.mark.browser


def test_bot_table_to_the_end_rematch_history_and_replay(new_context: Any) -> None:
    context = new_context(reduced_motion="reduce")
    me = sign_up_api(context)
    page = context.new_page()
    page.goto("/#/create")
    form = page.locator("#create-form")
    form.locator("input[name=name]").fill("Bot practice")
    form.locator("input[name=deck][value='24']").check()
    # Seat 2 gets a bot; bots move at once here.
    form.locator("select[name=bot-1]").select_option("normal")
    form.locator("select[name=bot_delay_ms]").select_option("0")
    form.locator("#create-submit").click()
    page.locator("#go-to-table").click()

    # The bot filled the table: the match is on at once.
    expect(page.locator("#hand .card")).to_have_count(6)
    bot_seat = page.locator("#opponents .seat")
    expect(bot_seat.locator(".name-text")).to_have_text("Normal bot #2")
    expect(page.locator("h1")).to_have_text("Bot practice")

    driver = Driver([page])
    driver.play()
    expect(page.locator("#results")).to_be_visible()
    rows = page.locator("#results .result-row")
    expect(rows).to_have_count(2)
    expect(page.locator("#log li").first).to_be_visible()
    log_text = page.locator("#log").inner_text()
    # The player's own seat is "you" in the log, the bot by its name.
    assert "Normal bot #2" in log_text and "You " in log_text and me["name"] not in log_text
    draw = "draw" in page.locator("#results .results-title").inner_text()
    if not draw:  # a decided match counts in the series (a draw counts for nobody)
        expect(page.locator("#series")).to_be_visible()

    first_version = int(page.locator("#felt").get_attribute("data-version"))
    page.locator("#rematch-button").click()
    # A new match starts (the bot is still seated): no result, six fresh cards.
    expect(page.locator("#results")).to_have_count(0)
    expect(page.locator("#hand .card")).to_have_count(6)
    assert int(page.locator("#felt").get_attribute("data-version")) > first_version
    if not draw:
        expect(page.locator("#series")).to_contain_text("Normal bot #2")
    driver.play()
    expect(page.locator("#results")).to_be_visible()
    series = page.locator("#results .series-table li")
    expect(series).to_have_count(2)
    total_wins = sum(int(text.split(" won")[0]) for text in series.locator("b").all_inner_texts())
    assert total_wins <= 2  # a win per decided match (draws count for nobody)

    # Both matches are in the history, with a replay.
    page.goto("/#/history")
    history_rows = page.locator("#history .match-row")
    expect(history_rows).to_have_count(2)
    expect(history_rows.first.locator(".chip-deck")).to_have_text("24 cards")
    expect(history_rows.first.locator(".coins")).to_have_attribute("data-change", "0")  # a free table
    history_rows.first.locator("a", has_text="Replay").click()
    expect(page.locator("#replay")).to_be_visible()
    step = page.locator("#replay-step")
    expect(step).to_contain_text("Step 1 of")
    total = int(step.inner_text().rsplit(" ", 1)[1])
    assert total > 5
    page.locator("[data-step=next]").click()
    expect(step).to_have_text(f"Step 2 of {total}")
    expect(page.locator("#replay .pair")).to_have_count(1)  # the lead is on the table
    page.keyboard.press("ArrowRight")
    expect(step).to_have_text(f"Step 3 of {total}")
    page.locator("[data-step=last]").click()
    expect(step).to_have_text(f"Step {total} of {total}")
    # The last step shows the cards left in hand and the hands as dealt; no hand is secret any more.
    expect(page.locator("#replay .replay-felt .seat")).to_have_count(2)
    expect(page.locator("#replay h2", has_text="Hands as dealt")).to_be_visible()


def test_leaving_a_running_match_forfeits_after_a_confirmation(new_context: Any) -> None:
    context = new_context(reduced_motion="reduce")
    sign_up_api(context)
    page = context.new_page()
    page.goto("/#/create")
    form = page.locator("#create-form")
    form.locator("select[name=bot-1]").select_option("easy")
    form.locator("select[name=bot_delay_ms]").select_option("0")
    form.locator("#create-submit").click()
    page.locator("#go-to-table").click()
    expect(page.locator("#hand .card")).to_have_count(6)

    # The question is the page's own dialog (never the browser's confirm()): it says what leaving costs.
    browser_dialogs: list[str] = []
    page.on("dialog", lambda dialog: (browser_dialogs.append(dialog.message), dialog.dismiss()))
    page.locator("#leave-button").click()
    expect(page.locator("#leave-dialog")).to_be_visible()
    expect(page.locator("#leave-dialog-text")).to_have_text("You forfeit the match and become the durak.")
    page.locator("#leave-dialog-cancel").click()  # stays: nothing happens
    expect(page.locator("#leave-dialog")).to_have_count(0)
    expect(page.locator("#hand .card")).to_have_count(6)
    expect(page.locator("#results")).to_have_count(0)
    code = page.url.rsplit("/", 1)[-1]
    page.locator("#leave-button").click()
    page.locator("#leave-dialog-ok").click()
    # Left: the lobby, not a table with a Rematch button; the match was forfeited.
    expect(page).to_have_url(re.compile(r"/#/$"))
    expect(page.locator("#rematch-button")).to_have_count(0)
    assert not browser_dialogs
    table = api(context, "GET", f"/api/tables/{code}")
    assert table["status"] == "finished" and table["results"]["outcome"]["reason"] == "left"
