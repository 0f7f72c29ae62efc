"""Nothing is redrawn when nothing changed (web/js/session.js, header.js and the pages): a session
refresh that brings the same answer leaves the header's nodes and what the player typed alone; a coin
change updates the header's figure in place; an answer to a request sent before a sign-out is dropped;
a page left behind never draws over the next one when its late answer comes."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Server, api, open_menu, sign_up_api, unique_name

pytestmark = pytest.mark.browser

ADMIN_LINK = ".site-nav a[href='/#/admin']"


def refresh_session(page: Any) -> None:
    """The app asks GET /api/session again when its window gets the focus: do that, and wait until
    the answer has been taken (a macrotask after the response)."""
    with page.expect_response(lambda response: response.url.endswith("/api/session")):
        page.evaluate("window.dispatchEvent(new Event('focus'))")
    settle(page)


def settle(page: Any) -> None:
    page.evaluate("() => new Promise((resolve) => setTimeout(resolve, 100))")


def same_node(page: Any, handle: Any, selector: str) -> bool:
    return bool(
        page.evaluate("([el, sel]) => el.isConnected && el === document.querySelector(sel)", [handle, selector])
    )


def sign_in_admin(context: Any, server: Server) -> str:
    name = unique_name("redraw")
    server.cli("create-admin", name, "--password", PASSWORD)
    api(context, "POST", "/api/auth/login", {"name": name, "password": PASSWORD})
    return name


def five_coins_richer(route: Any) -> None:
    """A route for /api/session: the server's answer, with 5 more coins on the balance. A test
    removes it with ``unroute_all(behavior="ignoreErrors")`` once its refresh is answered: a later
    refresh still being routed as the context closes fails in Playwright ("Response has been
    disposed"), and the error surfaces in the next test the worker runs."""
    response = route.fetch()
    body = response.json()
    body["user"]["balance"] += 5
    route.fulfill(response=response, body=json.dumps(body))


def test_the_schedule_form_keeps_what_was_typed_when_the_list_comes(new_context: Any, server: Server) -> None:
    context = new_context(width=360, height=740)
    sign_in_admin(context, server)
    page = context.new_page()
    # The list of tournaments answers only once the player has typed in the schedule form.
    held: list[Any] = []
    page.route("**/api/tournaments", lambda route: held.append(route))
    page.goto("/#/tournaments")
    page.locator("#tournament-new").click()
    name = page.locator("#tournament-form input[name='name']")
    name.fill("Typed cup")
    while not held:
        page.wait_for_timeout(20)
    held[0].continue_()
    expect(page.locator("#tournament-list")).to_be_attached()
    settle(page)
    expect(name).to_have_value("Typed cup")  # the list came: the form kept what was typed


def test_a_refresh_and_a_coin_change_keep_the_header_s_nodes(new_context: Any, server: Server) -> None:
    context = new_context(width=360, height=740)
    sign_in_admin(context, server)
    page = context.new_page()
    page.goto("/#/tournaments")
    expect(page.locator("#tournament-list")).to_be_attached()
    open_menu(page)
    link = page.locator(ADMIN_LINK)
    expect(link).to_be_visible()
    handle = link.element_handle()
    balance = int(page.locator("#balance").get_attribute("data-balance"))
    refresh_session(page)  # the same answer: nothing redrawn
    assert same_node(page, handle, ADMIN_LINK)
    expect(page.locator("#menu-button")).to_have_attribute("aria-expanded", "true")

    # The coins change (the answer says 5 more): the figure changes in place, the rest stays.
    page.route("**/api/session", five_coins_richer)
    refresh_session(page)
    expect(page.locator("#balance")).to_have_attribute("data-balance", str(balance + 5))
    expect(page.locator("#balance")).to_contain_text(f"{balance + 5:,}")
    page.unroute_all(behavior="ignoreErrors")  # see five_coins_richer
    assert same_node(page, handle, ADMIN_LINK)
    expect(link).to_be_visible()  # the menu stayed open
    link.click()
    expect(page.locator("#accounts")).to_be_attached()


def test_a_refresh_keeps_the_lobby_s_sign_up_form_as_typed(new_context: Any) -> None:
    context = new_context(width=390, height=844)
    page = context.new_page()
    page.goto("/#/")
    field = page.locator(".lobby-auth .auth-form input[name=name]")
    field.fill("typedname")
    refresh_session(page)  # nobody signed in, as before: the sign-up form stays as typed
    expect(field).to_have_value("typedname")


def test_a_coin_change_keeps_the_create_form_as_typed(new_context: Any) -> None:
    context = new_context(width=390, height=844)
    sign_up_api(context)
    page = context.new_page()
    page.goto("/#/create")
    form = page.locator("#create-form")
    expect(form.locator("[data-field=stake] .hint")).to_contain_text("1,000")  # the page has its session
    form.locator("input[name=name]").fill("My table")
    stake = form.locator("input[name=stake]")
    stake.fill("7")  # no change event yet: still being typed
    stake_box = stake.element_handle()
    page.route("**/api/session", five_coins_richer)
    refresh_session(page)
    expect(form.locator("[data-field=stake] .hint")).to_contain_text("1,005")
    page.unroute_all(behavior="ignoreErrors")  # see five_coins_richer
    expect(stake).to_have_value("7")
    expect(stake).to_have_attribute("max", "1005")
    assert same_node(page, stake_box, "#create-form input[name=stake]")
    expect(form.locator("input[name=name]")).to_have_value("My table")


def test_an_answer_to_a_request_sent_before_sign_out_is_dropped(new_context: Any) -> None:
    context = new_context()
    me = sign_up_api(context)
    page = context.new_page()
    page.goto("/#/leaderboard")
    expect(page.locator("#user-name")).to_have_text(me["name"])
    held: list[Any] = []
    page.route("**/api/session", lambda route: held.append(route))
    page.evaluate("window.dispatchEvent(new Event('focus'))")  # asked while still signed in
    while not held:
        page.wait_for_timeout(20)
    before = held[0].fetch()  # the server's answer then: still signed in
    assert before.json()["user"]["name"] == me["name"]
    page.locator("#logout").click()
    expect(page.locator("#login-link")).to_be_visible()
    while len(held) < 2:  # the lobby's own refresh, after the sign-out
        page.wait_for_timeout(20)
    held[0].fulfill(response=before)  # the late answer comes first
    settle(page)
    expect(page.locator("#login-link")).to_be_visible()
    expect(page.locator("#user-name")).to_have_count(0)
    held[1].continue_()
    settle(page)
    expect(page.locator("#login-link")).to_be_visible()
    expect(page.locator("#user-name")).to_have_count(0)


def test_a_tournament_page_left_behind_does_not_draw_over_the_list(new_context: Any) -> None:
    context = new_context(width=360, height=640)
    sign_up_api(context)
    name = unique_name("Left")
    start = (datetime.now(UTC) + timedelta(minutes=20)).isoformat()
    made = api(
        context,
        "POST",
        "/api/tournaments",
        {"name": name, "seats": 2, "deck": 36, "starts_at": start, "duration_min": 30},
    )
    page = context.new_page()
    page.goto("/#/")
    expect(page.locator("#play-now")).to_be_visible()
    held: list[Any] = []
    page.route(f"**/api/tournaments/{made['id']}", lambda route: held.append(route))
    page.evaluate(f"location.hash = '#/tournaments/{made['id']}'")
    while not held:
        page.wait_for_timeout(20)
    page.evaluate("location.hash = '#/tournaments'")
    the_list = page.locator("#tournament-list")  # (the card may be past the list's first 50)
    expect(the_list).to_be_attached()
    expect(page.locator("#tournament-title")).to_have_count(0)
    held[0].continue_()  # the page left behind gets its answer now
    settle(page)
    expect(page.locator("#tournament-title")).to_have_count(0)
    expect(the_list).to_be_attached()


def test_the_admin_s_forms_stay_when_the_ledger_comes(new_context: Any, server: Server) -> None:
    player_ctx = new_context()
    player = sign_up_api(player_ctx)
    context = new_context(width=360, height=740)
    sign_in_admin(context, server)
    page = context.new_page()
    page.goto("/#/admin")
    page.locator("input[name=q]").fill(player["name"])
    page.locator(".search-form button[type=submit]").click()
    held: list[Any] = []
    page.route(f"**/api/admin/accounts/{player['id']}/ledger*", lambda route: held.append(route))
    page.locator(f"#accounts button[data-account='{player['name']}']").click()
    amount = page.locator("#adjust-form input[name=amount]")
    amount.fill("12")  # typed while the ledger is on its way
    box = amount.element_handle()
    while not held:
        page.wait_for_timeout(20)
    held[0].continue_()
    expect(page.locator("#ledger")).to_be_visible()
    assert same_node(page, box, "#adjust-form input[name=amount]")
    assert page.evaluate("(el) => document.activeElement === el", box)  # the focus stayed too
    expect(amount).to_have_value("12")
    search = page.locator("input[name=q]").element_handle()
    refresh_session(page)
    assert same_node(page, search, "input[name=q]")
