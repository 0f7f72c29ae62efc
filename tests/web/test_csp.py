"""Every page works under the Content-Security-Policy (app/api/security.py): the lobby, the create
form, a table as a spectator and as a player, the history, a replay, the log-in page and the admin
pages (accounts, fair-play flags), with no ``securitypolicyviolation`` event and no console error."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Server, api, create_table_api, unique_name

pytestmark = pytest.mark.browser

# Runs in every document before the page's own scripts (Playwright injects it, outside the CSP).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (event) => {
  window.__cspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI || 'inline'}`);
});
"""


class Watched:
    """A page whose console errors and CSP violations are collected."""

    def __init__(self, context: Any) -> None:
        context.add_init_script(RECORD_VIOLATIONS)
        self.page = context.new_page()
        self.console_errors: list[str] = []
        self.page.on("console", self._record_console)
        self.policies: list[str] = []
        self.page.on("response", self._record_policy)

    def _record_console(self, message: Any) -> None:
        if message.type != "error":
            return
        # Chromium logs every 4xx answer to fetch(); a signed-out visitor's "who am I?" is answered
        # 401 by design (the page then shows the sign-in links). Anything else counts.
        if "status of 401" in message.text and message.location.get("url", "").endswith("/api/me"):
            return
        self.console_errors.append(f"{message.text} at {message.location.get('url')}")

    def _record_policy(self, response: Any) -> None:
        if response.request.resource_type == "document":
            self.policies.append(response.headers.get("content-security-policy", ""))

    def check(self, name: str) -> None:
        """No violation and no console error so far on this page (then start afresh)."""
        self.page.wait_for_timeout(150)  # let late violations be reported
        violations = self.page.evaluate("() => window.__cspViolations || null")
        assert violations == [], f"{name}: CSP violations {violations}"
        assert self.console_errors == [], f"{name}: console errors {self.console_errors}"
        assert self.policies and all("default-src 'self'" in policy for policy in self.policies), name
        self.page.evaluate("() => { window.__cspViolations = []; }")


def test_every_page_works_under_the_content_security_policy(new_context: Any, server: Server) -> None:
    admin_name = unique_name("csp")
    server.cli("create-admin", admin_name, "--password", PASSWORD)

    # Logged out: the lobby and the log-in page; signing in through the form.
    visitor = Watched(new_context())
    page = visitor.page
    page.goto("/#/login")
    expect(page.locator(".auth-form input[name=name]")).to_be_visible()
    visitor.check("login")
    page.locator(".auth-form input[name=name]").fill(admin_name)
    page.locator(".auth-form input[name=password]").fill(PASSWORD)
    page.locator(".auth-form button[type=submit]").click()
    expect(page.locator("#user-name")).to_have_text(admin_name)
    visitor.check("login (signed in)")

    page.goto("/")
    expect(page.locator("#lobby-tables")).to_be_visible()
    visitor.check("lobby")
    page.goto("/#/create")
    expect(page.locator("#create-form")).to_be_visible()
    visitor.check("create")
    page.goto("/#/admin")
    page.locator(".search-form button[type=submit]").click()
    page.locator("#accounts button").first.click()
    expect(page.locator("#ledger")).to_be_visible()
    visitor.check("admin")
    page.locator(".admin-tabs a[data-tab=integrity]").click()
    expect(page.locator("#no-flags, #flags")).to_be_visible()
    visitor.check("admin: fair-play flags")

    # A player at a table against a bot: the table socket, a move, then leaving (a forfeit).
    context = page.context
    table = create_table_api(context, deck=24, seats=2, name="Under the policy")
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    page.goto(table["invite_url"])
    expect(page.locator("#waiting")).to_be_visible()
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    expect(page.locator("#hand .card")).to_have_count(6)
    visitor.check("table (player)")

    # A spectator, in another browser, on the watch link.
    spectator = Watched(new_context())
    spectator.page.goto(table["watch_url"])
    expect(spectator.page.locator("#spectating-badge")).to_be_visible()
    expect(spectator.page.locator("#felt")).to_be_visible()
    spectator.check("table (spectator)")

    page.locator("#leave-button").click()
    page.locator("#leave-dialog-ok").click()  # the page's own question (issue 33), then the lobby
    expect(page).to_have_url(re.compile(r"/#/$"))
    page.goto(table["invite_url"])  # the finished table: its result
    expect(page.locator("#results")).to_be_visible()
    visitor.check("table (result)")

    page.goto("/#/history")
    rows = page.locator("#history .match-row")
    expect(rows).to_have_count(1)
    visitor.check("history")
    rows.first.locator("a", has_text="Replay").click()
    expect(page.locator("#replay")).to_be_visible()
    page.locator("[data-step=next]").click()
    expect(page.locator("#replay-step")).to_contain_text("Step 2 of")
    visitor.check("replay")
