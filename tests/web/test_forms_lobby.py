"""The create form (presets, seat limits per deck, server errors next to the field, links with copy
buttons) and the live lobby (server-sent events, filters)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import WEB_ROOT, api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser


def test_create_form_limits_presets_errors_and_links(new_context: Any) -> None:
    context = new_context(permissions=["clipboard-read", "clipboard-write"])
    sign_up_api(context)
    page = context.new_page()
    page.goto("/#/create")
    form = page.locator("#create-form")

    # Every preset is offered with a description of its rules.
    english = json.loads((WEB_ROOT / "i18n" / "en.json").read_text())
    presets = form.locator(".preset")
    expect(presets).to_have_count(3)
    for name in ("durak_peak", "classic36", "durac1993"):
        expect(form.locator(f".preset[data-preset={name}] .preset-desc")).to_have_text(english[f"preset.{name}.desc"])

    # 24 cards seat at most four: five and six cannot be picked, and six drops to four.
    seats = form.locator("select[name=seats]")
    seats.select_option("6")
    form.locator("input[name=deck][value='24']").check()
    expect(seats).to_have_value("4")
    expect(seats.locator("option[value='5']")).to_be_disabled()
    expect(seats.locator("option[value='6']")).to_be_disabled()
    expect(form.locator("[data-field=seats] .hint")).to_contain_text("at most 4")
    form.locator("input[name=deck][value='52']").check()
    expect(seats.locator("option[value='6']")).to_be_enabled()

    # Classic 36 fixes the deck, transfer and draws.
    form.locator(".preset[data-preset=classic36] input").check()
    expect(form.locator("input[name=deck][value='36']")).to_be_checked()
    expect(form.locator("input[name=deck][value='24']")).to_be_disabled()
    expect(form.locator("input[name=transfer]")).to_be_disabled()
    form.locator(".preset[data-preset=durac1993] input").check()
    expect(form.locator("input[name=deck][value='52']")).to_be_checked()
    expect(form.locator("input[name=transfer]")).to_be_checked()

    # A stake above the creator's balance is refused before any table opens (issue 33): the message
    # stands next to the stake field.
    stake = form.locator("input[name=stake]")
    stake.fill("2000000")
    stake.blur()
    form.locator("#create-submit").click()
    field = form.locator("[data-field=stake]")
    expect(field).to_have_class("field invalid")
    expect(field.locator(".field-error")).to_contain_text("Not accepted")
    expect(field.locator(".field-error")).to_contain_text("more than your 1,000 coins")
    expect(stake).to_be_focused()
    expect(form.locator("[data-field=seats] .field-error")).to_have_text("")

    stake.fill("0")
    stake.blur()
    expect(field).not_to_have_class("field invalid")
    seats.select_option("2")
    form.locator("select[name=bot-1]").select_option("hard")
    form.locator("#create-submit").click()
    invite = page.locator("#invite-link")
    expect(invite).to_have_value(page.url.split("/#")[0] + "/t/" + invite.input_value().rsplit("/", 1)[1])
    page.locator("button[data-copy=invite-link]").click()
    expect(page.locator(".toast")).to_have_text("Copied to the clipboard")
    assert page.evaluate("navigator.clipboard.readText()") == invite.input_value()
    page.locator("button[data-copy=watch-link]").click()
    assert page.evaluate("navigator.clipboard.readText()") == page.locator("#watch-link").input_value()
    page.locator("#go-to-table").click()
    # Durac 1993 with transfer, 52 cards and a hard bot: the match is running.
    expect(page.locator("#hand .card").first).to_be_visible()
    expect(page.locator(".chip-preset")).to_have_text("Durac 1993")
    expect(page.locator(".chip-deck")).to_have_text("52 cards")
    expect(page.locator("#opponents .name-text")).to_have_text("Hard bot #2")


def test_guest_cannot_open_a_staked_table(new_context: Any) -> None:
    context = new_context()
    page = context.new_page()
    page.goto("/#/create")
    page.locator("#auth-tab-guest").click()
    page.locator(".auth-form button[type=submit]").click()
    form = page.locator("#create-form")
    expect(form.locator("[data-field=stake] .hint")).to_have_text("Guests can only open free tables.")
    form.locator("input[name=stake]").fill("5")
    form.locator("input[name=stake]").blur()
    form.locator("#create-submit").click()
    expect(form.locator("[data-field=stake] .field-error")).to_contain_text("Guests can only play at free tables.")


def test_lobby_updates_live_and_filters(new_context: Any) -> None:
    viewer = new_context()
    sign_up_api(viewer)
    page = viewer.new_page()
    page.goto("/")
    expect(page.locator("#lobby-live")).to_have_class("live-dot on")

    host = new_context()
    sign_up_api(host)
    table = create_table_api(host, deck=52, seats=3, transfer=True, stake=15, name="Live one")
    row = page.locator(f"#lobby-tables .table-row[data-code='{table['code']}']")
    expect(row).to_be_visible()  # no reload: the server-sent events brought it
    expect(row.locator(".table-name")).to_have_text("Live one")
    expect(row.locator(".chip-stake")).to_have_text("Stake 15")
    expect(row.locator(".free-seats")).to_have_text("3 free seats")
    expect(row.locator(".spectators")).to_have_text("0 spectators")

    api(host, "POST", f"/api/tables/{table['code']}/join", {})
    expect(row.locator(".free-seats")).to_have_text("2 free seats")
    expect(row.locator(".seat-count")).to_have_text("1/3 seated")

    filters = page.locator("#lobby-filters")
    filters.locator("select[name=deck]").select_option("24")
    expect(row).to_have_count(0)
    filters.locator("select[name=deck]").select_option("52")
    expect(row).to_be_visible()
    filters.locator("input[name=stake_min]").fill("16")
    expect(row).to_have_count(0)
    filters.locator("input[name=stake_min]").fill("15")
    filters.locator("input[name=stake_max]").fill("15")
    expect(row).to_be_visible()
    filters.locator("select[name=transfer]").select_option("off")
    expect(row).to_have_count(0)
    filters.locator("select[name=transfer]").select_option("on")
    filters.locator("select[name=circle]").select_option("neighbours")
    expect(row).to_have_count(0)
    filters.locator("select[name=circle]").select_option("all")
    filters.locator("select[name=seats]").select_option("3")
    expect(row).to_be_visible()
    # The filters match the server's own (GET /api/tables with the same query).
    listed = api(viewer, "GET", "/api/tables?deck=52&seats=3&stake_min=15&stake_max=15&transfer=true&circle=all")[
        "tables"
    ]
    assert table["code"] in [item["code"] for item in listed]
    shown = page.locator("#lobby-tables .table-row").evaluate_all("rows => rows.map(row => row.dataset.code)")
    assert set(shown) == {item["code"] for item in listed}

    row.locator("a", has_text="Join").click()
    expect(page).to_have_url(table["invite_url"])
    expect(page.locator("#join-button")).to_be_visible()
