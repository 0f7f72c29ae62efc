"""Changing one's password on one's profile, and an admin resetting a player's (issue 35.16), in
Chromium at a phone's width; screenshots of both screens in tests/artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Server, api, sign_up_api, unique_name

pytestmark = pytest.mark.browser

NEW_PASSWORD = "brand-new-secret"


def _log_in_api(context: Any, name: str, password: str) -> int:
    response = context.request.post(
        "/api/auth/login", data={"name": name, "password": password}, headers={"Content-Type": "application/json"}
    )
    return int(response.status)


@pytest.mark.parametrize(("width", "height"), [(360, 640), (1280, 900)])
def test_a_player_changes_his_password_on_his_profile(
    new_context: Any, server: Server, artifacts: Path, width: int, height: int
) -> None:
    context = new_context(width=width, height=height)
    me = sign_up_api(context)
    other_device = new_context()
    assert _log_in_api(other_device, me["name"], PASSWORD) == 200
    page = context.new_page()
    page.goto(f"/#/u/{me['name']}")
    form = page.locator("#password-form")
    expect(form).to_be_visible()
    page.screenshot(path=str(artifacts / f"password-change-{width}.png"), full_page=True)

    form.locator("input[name=current_password]").fill("not my password")
    form.locator("input[name=new_password]").fill(NEW_PASSWORD)
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_have_text("The current password is wrong.")

    form.locator("input[name=current_password]").fill(PASSWORD)
    form.locator("input[name=new_password]").fill(NEW_PASSWORD)
    form.locator("button[type=submit]").click()
    expect(page.locator(".toast")).to_contain_text("Password changed")
    expect(form.locator("input[name=current_password]")).to_have_value("")
    # This browser is still signed in (a new cookie); the other device is not.
    assert api(context, "GET", "/api/me")["name"] == me["name"]
    assert other_device.request.get("/api/me").status == 401
    assert _log_in_api(new_context(), me["name"], NEW_PASSWORD) == 200


def test_nobody_sees_the_form_on_another_players_profile(new_context: Any, server: Server) -> None:
    owner = sign_up_api(new_context())
    visitor = new_context()
    sign_up_api(visitor)
    page = visitor.new_page()
    page.goto(f"/#/u/{owner['name']}")
    expect(page.locator("#profile-name")).to_have_text(owner["name"])
    expect(page.locator("#matches-played")).to_be_visible()
    expect(page.locator("#password-form")).to_have_count(0)


@pytest.mark.parametrize(("width", "height"), [(360, 640), (1280, 900)])
def test_an_admin_resets_a_players_password(
    new_context: Any, server: Server, artifacts: Path, width: int, height: int
) -> None:
    admin_name = unique_name("boss")
    server.cli("create-admin", admin_name, "--password", PASSWORD)
    player_ctx = new_context()
    player = sign_up_api(player_ctx)

    admin_ctx = new_context(width=width, height=height)
    assert api(admin_ctx, "POST", "/api/auth/login", {"name": admin_name, "password": PASSWORD})["is_admin"]
    admin = admin_ctx.new_page()
    admin.goto("/#/admin")
    admin.locator("input[name=q]").fill(player["name"])
    admin.locator(".search-form button[type=submit]").click()
    admin.locator(f"#accounts button[data-account='{player['name']}']").click()
    form = admin.locator("#reset-form")
    form.locator("button[type=submit]").click()
    expect(form.locator(".form-error")).to_have_text("Give a reason.")
    form.locator("input[name=reason]").fill("asked by e-mail, identity checked")
    form.locator("button[type=submit]").click()
    temporary = admin.locator("#temporary-password")
    expect(temporary).not_to_be_empty()
    admin.screenshot(path=str(artifacts / f"password-reset-{width}.png"), full_page=True)

    password = temporary.text_content() or ""
    assert player_ctx.request.get("/api/me").status == 401  # every session of the player ended
    assert _log_in_api(new_context(), player["name"], PASSWORD) == 401
    assert _log_in_api(new_context(), player["name"], password) == 200

    # An admin's own account offers no reset.
    admin.locator("input[name=q]").fill(admin_name)
    admin.locator(".search-form button[type=submit]").click()
    admin.locator(f"#accounts button[data-account='{admin_name}']").click()
    expect(admin.locator("#reset-admin")).to_be_visible()
    expect(admin.locator("#reset-form")).to_have_count(0)
