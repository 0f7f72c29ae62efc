"""Server errors in the player's language (from their codes, a 422's type, or the known details),
the admin form keeping its Reason field wide under an error, the Russian suit names (nominative in
"Козырь: ♥ черви", genitive in "дама червей"), and red suits that stay red on dimmed cards."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Server, api, create_table_api, sign_up_api, unique_name

pytestmark = pytest.mark.browser

RU_SUITS = {"♣": ("трефы", "треф"), "♦": ("бубны", "бубен"), "♥": ("черви", "червей"), "♠": ("пики", "пик")}


def reason_width(page: Any) -> float:
    # read in one go: the page re-renders the form when the session or the ledger refreshes
    expect(page.locator("#adjust-form input[name=reason]")).to_be_visible()
    width = page.evaluate(
        "() => document.querySelector('#adjust-form input[name=reason]').getBoundingClientRect().width"
    )
    return float(width)


@pytest.mark.parametrize("width", [1280, 375])
def test_the_admin_form_shows_translated_errors_and_keeps_the_reason_field(
    new_context: Any, server: Server, width: int
) -> None:
    admin_name = unique_name("ruboss")
    server.cli("create-admin", admin_name, "--password", PASSWORD)
    player = sign_up_api(new_context())
    context = new_context(width=width, height=900, locale="ru-RU")
    api(context, "POST", "/api/auth/login", {"name": admin_name, "password": PASSWORD})
    page = context.new_page()
    page.goto("/#/admin")
    page.locator("input[name=q]").fill(player["name"])
    page.locator(".search-form button[type=submit]").click()
    page.locator(f"#accounts button[data-account='{player['name']}']").click()
    expect(page.locator("#ledger")).to_be_visible()
    form = page.locator("#adjust-form")
    before = reason_width(page)
    assert before > (150 if width > 800 else 250)

    # Taking more than the balance: the ledger's 409, in Russian, under the fields.
    form.locator("input[name=amount]").fill("-5000")
    form.locator("input[name=reason]").fill("штраф")
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_have_text("Баланс не может стать меньше нуля.")
    assert abs(reason_width(page) - before) < 1, "an error must not squeeze the Reason field"
    below = page.evaluate(
        """() => {
            const form = document.querySelector('#adjust-form');
            const error = form.querySelector('.form-error').getBoundingClientRect();
            const reason = form.querySelector('input[name=reason]').getBoundingClientRect();
            return error.top >= reason.bottom;
        }"""
    )
    assert below, "the error has a row of its own under the fields"

    # A validation error (422, less_than_equal with ctx.le): the field and the limit in words.
    form.locator("input[name=amount]").fill("2000000000")
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_have_text("Сумма: Не больше 1000000000.")
    assert abs(reason_width(page) - before) < 1

    # The cross-site guard's refusal carries a code; its English detail is not shown.
    refusal = {"detail": "cross_site_request: cross-site requests are not allowed", "code": "cross_site_request"}
    page.route(
        re.compile(r".*/api/admin/accounts/\d+/adjust$"),
        lambda route: route.fulfill(status=403, content_type="application/json", body=json.dumps(refusal)),
    )
    form.locator("input[name=amount]").fill("5")
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_contain_text("Запрос пришёл с другого сайта")
    expect(form.locator(".form-error")).not_to_contain_text("cross")


def test_codeless_errors_and_validation_are_translated_on_other_pages(new_context: Any, server: Server) -> None:
    context = new_context(locale="fi-FI")
    page = context.new_page()
    page.goto("/#/login")
    expect(page.locator(".auth-form input[name=name]")).to_be_visible()
    translated = page.evaluate(
        """async () => {
            const { ApiError, errorText } = await import('/js/api.js');
            return [
                errorText(new ApiError(403, { detail: 'admins only' })),
                errorText(new ApiError(404, { detail: 'no table with that code' })),
                errorText(new ApiError(422, { detail: [{
                    loc: ['body', 'name'], msg: 'String should have at least 2 characters',
                    type: 'string_too_short', ctx: { min_length: 2 },
                }] })),
                errorText(new ApiError(418, { detail: 'I am a teapot' })),
                new ApiError(422, { detail: [{
                    loc: ['body', 'seat'], msg: 'x', type: 'less_than_equal', ctx: { le: 5 },
                }] }).fieldErrors().seat,
            ];
        }"""
    )
    assert translated == [
        "Vain ylläpitäjät voivat tehdä tämän.",
        "Tällä linkillä ei ole pöytää.",
        "Nimi: Vähintään 2 merkkiä.",
        "Jokin meni pieleen. (I am a teapot)",  # no code, unknown status: the server's words as a fallback
        "Enintään 5.",
    ]


def test_the_russian_trump_label_names_the_suit_in_the_nominative(new_context: Any, server: Server) -> None:
    context = new_context(width=1280, height=900, locale="ru-RU")
    sign_up_api(context)
    table = create_table_api(context, deck=36, seats=2, name="Козыри")
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page = context.new_page()
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)
    label = page.locator(".trump-suit").inner_text()
    symbol = label.split()[1]
    assert label == f"Козырь: {symbol} {RU_SUITS[symbol][0]}", label
    # a card's name keeps the genitive: "дама червей", "10 пик"
    names = page.locator("#hand .card").evaluate_all("cards => cards.map((card) => card.getAttribute('aria-label'))")
    for name in names:
        assert any(name.endswith(f" {genitive}") for _, genitive in RU_SUITS.values()), name


def test_a_dimmed_red_card_stays_red(new_context: Any, server: Server) -> None:
    page = new_context().new_page()
    page.goto("/#/login")
    expect(page.locator(".auth-form")).to_be_visible()
    colours = page.evaluate(
        """async () => {
            const { cardFace } = await import('/js/cards.js');
            const hand = document.createElement('div');
            hand.className = 'hand';
            const red = cardFace('Qh', { tag: 'button', attrs: { 'aria-disabled': 'true' } });
            const black = cardFace('Qs', { tag: 'button', attrs: { 'aria-disabled': 'true' } });
            hand.append(red, black);
            document.body.append(hand);
            const style = (el) => getComputedStyle(el);
            return {
                red: style(red).color, black: style(black).color,
                face: style(red).backgroundColor, filter: style(red).filter,
            };
        }"""
    )
    assert colours["filter"] == "none"  # a filter would turn red brown

    def channels(css: str) -> tuple[int, ...]:
        return tuple(int(value) for value in re.findall(r"\d+", css)[:3])

    def luminance(rgb: tuple[int, ...]) -> float:
        linear = [(c / 255 / 12.92) if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    red, black, face = channels(colours["red"]), channels(colours["black"]), channels(colours["face"])
    assert red[0] > 2 * max(red[1], red[2]) and red[0] >= 140, colours  # clearly red
    for mark in (red, black):
        lighter, darker = sorted((luminance(mark), luminance(face)), reverse=True)
        assert (lighter + 0.05) / (darker + 0.05) >= 4.5, colours
