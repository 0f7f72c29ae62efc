"""An invite link seats a visitor within two clicks; a spectator link never shows a hand."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import Driver, api, create_table_api, frames_with_key, sign_up_api

pytestmark = pytest.mark.browser


def record_frames(page: Any) -> list[str]:
    """Every websocket frame the page receives."""
    frames: list[str] = []

    def on_socket(ws: Any) -> None:
        ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, str) else payload.decode()))

    page.on("websocket", on_socket)
    return frames


def test_guest_joins_in_two_clicks_and_spectator_never_sees_a_hand(new_context: Any) -> None:
    host_ctx = new_context(reduced_motion="reduce")
    sign_up_api(host_ctx)
    table = create_table_api(host_ctx, deck=24, name="Open house")
    api(host_ctx, "POST", f"/api/tables/{table['code']}/join", {})

    # A spectator follows the watch link (and is even signed in: the link still only watches).
    watcher_ctx = new_context(width=375, height=800, reduced_motion="reduce")
    sign_up_api(watcher_ctx)
    watcher = watcher_ctx.new_page()
    frames = record_frames(watcher)
    watcher.goto(table["watch_url"])
    expect(watcher.locator("#spectating-badge")).to_be_visible()
    expect(watcher.locator("#join-button")).to_have_count(0)
    expect(watcher.locator("#guest-join")).to_have_count(0)

    # The host's page counts the spectator.
    host_page = host_ctx.new_page()
    host_page.goto(table["invite_url"])
    expect(host_page.locator("#spectator-count")).to_have_attribute("data-count", "1")

    # A visitor without an account opens the invite link: a name field (pre-filled) and a button.
    guest_ctx = new_context(reduced_motion="reduce")
    guest = guest_ctx.new_page()
    clicks = 0
    guest.goto(table["invite_url"])
    name_field = guest.locator("#guest-join input[name=guest-name]")
    expect(name_field).to_be_visible()
    assert name_field.input_value(), "the name field comes pre-filled"
    name_field.click()
    clicks += 1
    name_field.fill("Visitor_7")
    guest.locator("#guest-join-button").click()
    clicks += 1
    assert clicks <= 2
    # Seated: the match starts (both seats full) and the guest holds six cards.
    expect(guest.locator("#hand .card")).to_have_count(6)
    expect(guest.locator(".me-area .name-text")).to_have_text("Visitor_7 (you)")
    expect(guest.locator("#user-name")).to_have_text("Visitor_7")
    me = api(guest_ctx, "GET", "/api/me")
    assert me["kind"] == "guest"

    # The spectator sees the table and both seats, but no hand, and is never sent one.
    expect(watcher.locator("#felt .pair, #felt .zone-hint").first).to_be_visible()
    expect(watcher.locator("#opponents .seat")).to_have_count(2)
    expect(watcher.locator("#opponents .seat .name-text").nth(1)).to_have_text("Visitor_7")
    # Guests are badged: on the table for everyone, in the guest's own header.
    expect(watcher.locator("#opponents .seat").nth(1).locator(".badge.guest")).to_have_text("Guest")
    expect(watcher.locator("#opponents .seat").nth(0).locator(".badge.guest")).to_have_count(0)
    expect(guest.locator("#guest-badge")).to_be_visible()
    driver = Driver([host_page, guest])
    driver.play(until=lambda d: d.moves >= 4)
    expect(watcher.locator("#felt")).to_have_attribute(
        "data-version", host_page.locator("#felt").get_attribute("data-version")
    )
    assert watcher.locator("#hand").count() == 0
    assert watcher.locator(".me-area").count() == 0
    driver.play()
    expect(watcher.locator("#results")).to_be_visible()
    expect(watcher.locator("#results .results-title")).to_contain_text("durak")
    assert watcher.locator("#rematch-button").count() == 0
    assert watcher.locator("#hand").count() == 0

    assert len(frames) > 10, frames
    views = [json.loads(frame) for frame in frames if '"view"' in frame]
    assert any(message.get("view") for message in views), "the spectator received the table views"
    assert frames_with_key(frames, "hand") == [], "a spectator frame contained a hand"
    assert frames_with_key(frames, "legal") == []
    # Draw events reach spectators as counts, without the cards.
    draws = [event for message in views for event in message.get("events", []) if event.get("type") == "draw"]
    assert draws and all("cards" not in event for event in draws)
