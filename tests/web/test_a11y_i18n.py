"""Keyboard-only play with a visible focus, cards read as words, and the interface in the browser's
language with a switcher."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import WEB_ROOT, Driver, api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser

CARD_LABEL = re.compile(r"^(?:[2-9]|10|Jack|Queen|King|Ace) of (?:hearts|diamonds|clubs|spades)$")
FOCUSED_IS_HAND_CARD = "() => !!document.activeElement && document.activeElement.matches('#hand .card')"


def strings(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((WEB_ROOT / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def bot_table(context: Any, **params: Any) -> dict[str, Any]:
    table = create_table_api(context, deck=24, **params)
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    return table


def test_keyboard_only_play_with_visible_focus(new_context: Any) -> None:
    context = new_context()
    sign_up_api(context)
    table = bot_table(context)
    page = context.new_page()
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)

    # Cards are buttons named in words, e.g. "10 of hearts".
    labels = page.locator("#hand .card").evaluate_all("cards => cards.map(card => card.getAttribute('aria-label'))")
    assert all(CARD_LABEL.match(label) for label in labels), labels
    assert page.locator("#hand button.card").count() == 6
    table_cards = page.locator("#felt .pair .card")
    stock = page.locator("#stock .trump-card")
    expect(stock).to_have_attribute("aria-label", re.compile(r"^Trump card: "))

    # Tab from the top of the page reaches the hand; the focused card shows a focus ring.
    page.locator("body").focus()
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate(FOCUSED_IS_HAND_CARD):
            break
    assert page.evaluate(FOCUSED_IS_HAND_CARD), "the hand cannot be reached with Tab"
    ring = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement);"
        " return [s.outlineStyle, s.outlineWidth, s.outlineColor]; })()"
    )
    assert ring == ["solid", "3px", "rgb(255, 213, 79)"], f"no visible focus ring: {ring}"

    # The whole match by keyboard (focus + Enter), focus staying in the play area.
    driver = Driver([page])
    while driver.step(keyboard=True):
        assert driver.moves < 400
        if page.locator("#hand .card").count() and not page.locator("#results").count():
            inside = page.evaluate(
                "() => !!document.activeElement.closest('#hand, #actions, #felt')"
                " || document.activeElement === document.body"
            )
            assert inside
    assert driver.moves > 3
    expect(page.locator("#results")).to_be_visible()
    expect(page.locator("#rematch-button")).to_be_visible()
    page.locator("#rematch-button").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#hand .card")).to_have_count(6)
    assert table_cards.count() >= 0


def test_interface_follows_the_browser_language_and_the_switcher(new_context: Any) -> None:
    ru, fi, et, az = strings("ru"), strings("fi"), strings("et"), strings("az")
    context = new_context(locale="ru-RU")
    me = sign_up_api(context)
    table = bot_table(context, name="Стол Саши")
    page = context.new_page()
    page.goto("/")
    expect(page.locator(".site-nav a").first).to_have_text(ru["nav.lobby"])
    assert page.evaluate("document.documentElement.lang") == "ru"

    # Russian is written in Cyrillic: any Latin word on screen would be an untranslated string.
    allowed = {"durak", "peak", "classic", "durac", "j", "q", "k", "a"}  # brand, preset names, card ranks
    allowed |= set(re.findall(r"[a-z]+", me["name"].lower()))  # the player's own name (and its initial)
    for path in ("/", "/#/create", "/#/history", table["invite_url"]):
        page.goto(path)
        page.wait_for_timeout(300)
        if path == table["invite_url"]:
            expect(page.locator("#hand .card")).to_have_count(6)
        # Other players' table names and names in the lobby are their data, not interface text.
        text = page.evaluate(
            "() => { const copy = document.body.cloneNode(true);"
            " copy.querySelectorAll('.table-row .table-name, .table-row .players').forEach(el => el.remove());"
            " document.body.after(copy); const text = copy.innerText; copy.remove(); return text; }"
        )
        for name in ("English", "Azərbaycanca", "Eesti", "Suomi"):  # the switcher names each language in itself
            text = text.replace(name, "")
        latin = {word for word in re.findall(r"[A-Za-z][A-Za-z'-]*", text) if word.lower() not in allowed}
        assert not latin, f"untranslated text on {path}: {sorted(latin)}"
    label = page.locator("#hand .card").first.get_attribute("aria-label")
    assert any(suit in label for suit in ("треф", "бубен", "червей", "пик")), label

    # The switcher changes the language at once and remembers it.
    page.locator("#lang-select").select_option("fi")
    expect(page.locator(".site-nav a").first).to_have_text(fi["nav.lobby"])
    expect(page.locator(".table-top .chip-deck")).to_have_text(fi["rules.deck"]["other"].replace("{count}", "24"))
    page.reload()
    expect(page.locator(".site-nav a").first).to_have_text(fi["nav.lobby"])
    assert page.evaluate("document.documentElement.lang") == "fi"

    for locale, data in (("et-EE", et), ("az-AZ", az), ("de-DE", strings("en"))):
        other = new_context(locale=locale).new_page()
        other.goto("/")
        expect(other.locator(".site-nav a").first).to_have_text(data["nav.lobby"])
        expect(other.locator("h1")).to_have_text(data["lobby.title"])
