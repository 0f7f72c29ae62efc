"""An admin finds a player, reads the ledger, adjusts the balance with a reason; the player sees it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Server, open_menu, sign_up_api, unique_name

pytestmark = pytest.mark.browser


def test_admin_adjusts_a_balance_and_the_player_sees_it(new_context: Any, server: Server) -> None:
    admin_name = unique_name("boss")
    out = server.cli("create-admin", admin_name, "--password", PASSWORD)
    assert admin_name in out

    player_ctx = new_context(width=375, height=800)
    player = sign_up_api(player_ctx)
    player_page = player_ctx.new_page()
    player_page.goto("/")
    expect(player_page.locator("#balance")).to_have_attribute("data-balance", "1000")
    # Players have no admin link and the admin page refuses them.
    expect(player_page.locator(".site-nav a[href='/#/admin']")).to_have_count(0)
    player_page.goto("/#/admin")
    expect(player_page.locator(".notice")).to_have_text("This page is for admins only.")

    admin_ctx = new_context()
    admin = admin_ctx.new_page()
    admin.goto("/#/login")
    admin.locator(".auth-form input[name=name]").fill(admin_name)
    admin.locator(".auth-form input[name=password]").fill(PASSWORD)
    admin.locator(".auth-form button[type=submit]").click()
    expect(admin.locator("#user-name")).to_have_text(admin_name)
    admin.locator(".site-nav a[href='/#/admin']").click()
    admin.locator("input[name=q]").fill(player["name"])
    admin.locator(".search-form button[type=submit]").click()
    account = admin.locator(f"#accounts button[data-account='{player['name']}']")
    expect(account).to_have_count(1)
    expect(account).to_contain_text("1,000 coins")
    account.click()
    ledger = admin.locator("#ledger tbody tr")
    expect(ledger).to_have_count(1)  # the sign-up grant
    expect(ledger.first).to_contain_text("+1,000")

    # A reason is required.
    form = admin.locator("#adjust-form")
    form.locator("input[name=amount]").fill("250")
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_have_text("Give a reason.")
    form.locator("input[name=reason]").fill("tournament prize")
    form.locator("button[type=submit]").click()
    expect(admin.locator("#account-balance")).to_have_text("1,250 coins")
    expect(ledger).to_have_count(2)
    expect(ledger.first).to_contain_text("tournament prize")
    expect(ledger.first).to_contain_text("+250")

    # Taking coins works the same way.
    form = admin.locator("#adjust-form")
    form.locator("input[name=amount]").fill("-50")
    form.locator("input[name=reason]").fill("correction")
    form.locator("button[type=submit]").click()
    expect(admin.locator("#account-balance")).to_have_text("1,200 coins")

    # The player sees the new balance as soon as the page talks to the server again.
    open_menu(player_page)  # a phone: the navigation is in the header's menu
    player_page.locator(".site-nav a[href='/#/']").click()
    expect(player_page.locator("#balance")).to_have_attribute("data-balance", "1200")
    expect(player_page.locator("#balance")).to_contain_text("1,200")


def test_a_late_first_list_does_not_hide_the_admins_search(new_context: Any, server: Server) -> None:
    """The page lists accounts as it opens; when that answer comes after the admin's own search, the
    search's result stays (the first list used to replace it, and the player's row was gone)."""
    admin_name = unique_name("boss")
    server.cli("create-admin", admin_name, "--password", PASSWORD)
    player = sign_up_api(new_context())
    admin_ctx = new_context()
    admin_ctx.request.post("/api/auth/login", data={"name": admin_name, "password": PASSWORD})
    held: list[Any] = []
    # The first list (no query) is held back until the search has been answered and drawn.
    admin_ctx.route("**/api/admin/accounts?q=&*", lambda route: held.append(route))
    admin = admin_ctx.new_page()
    admin.goto("/#/admin")
    admin.wait_for_function("() => document.querySelector('input[name=q]') !== null")
    admin.locator("input[name=q]").fill(player["name"])
    admin.locator(".search-form button[type=submit]").click()
    account = admin.locator(f"#accounts button[data-account='{player['name']}']")
    expect(account).to_have_count(1)
    assert len(held) == 1
    held[0].continue_()
    admin.wait_for_timeout(500)  # the first list's answer arrives now: it must not be drawn
    expect(admin.locator("#accounts button[data-account]")).to_have_count(1)  # the admin, the player: 2
    expect(admin.locator("input[name=q]")).to_have_value(player["name"])
