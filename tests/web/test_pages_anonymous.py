"""An anonymous visitor (no cookie) sees every page without a single console error: no 401 from
"who am I?" (the client asks ``GET /api/session``, answered 200), no failed request, no warning
turned error; and the static files arrive gzipped."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.web.support import WEB_ROOT, Server, api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser


class ConsoleWatch:
    """Every console error and every answer >= 400 of one page, with no exception."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("response", self._response)
        page.on("requestfailed", self._failed)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text} at {message.location.get('url')}")

    def _failed(self, request: Any) -> None:
        if request.failure != "net::ERR_ABORTED":  # leaving a page cancels its event stream
            self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"{response.status} from {response.url}")

    def check(self, name: str) -> None:
        self.page.wait_for_timeout(300)  # late requests and errors
        assert self.problems == [], f"{name}: {self.problems}"


def finished_match_id(new_context: Any) -> str:
    """A match someone played against a bot and forfeited (for the replay page)."""
    owner = new_context()
    sign_up_api(owner)
    table = create_table_api(owner, deck=24, seats=2, name="For the replay")
    api(owner, "POST", f"/api/tables/{table['code']}/join", {})
    api(owner, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page = owner.new_page()
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)
    page.locator("#leave-button").click()
    page.locator("#leave-dialog-ok").click()  # the page's own question (issue 33), then the lobby
    expect(page).to_have_url(re.compile(r"/#/$"))
    for _ in range(50):  # recorded a moment after the match ends
        matches = api(owner, "GET", "/api/matches?account=me")
        if matches["items"]:
            return str(matches["items"][0]["id"])
        page.wait_for_timeout(100)
    raise AssertionError("the forfeited match was not recorded")


def test_every_page_is_free_of_console_errors_for_an_anonymous_visitor(new_context: Any, server: Server) -> None:
    match_id = finished_match_id(new_context)
    host = new_context()
    sign_up_api(host)
    live = create_table_api(host, deck=36, seats=3, name="Open to all")
    api(host, "POST", f"/api/tables/{live['code']}/join", {})

    visitor = new_context(width=375, height=812)
    page = visitor.new_page()
    watch = ConsoleWatch(page)
    encodings: dict[str, str] = {}

    def record_encoding(response: Any) -> None:
        if response.status == 200 and not response.from_service_worker:
            encodings.setdefault(response.url, response.all_headers().get("content-encoding", ""))

    page.on("response", record_encoding)

    page.goto("/")
    expect(page.locator("#lobby-tables")).to_be_visible()
    expect(page.locator("#lobby-tables")).to_contain_text("Open to all")
    expect(page.locator("#lobby-tables")).not_to_contain_text("For the replay")  # finished tables are hidden
    watch.check("lobby")
    for route, ready in (
        ("/#/create", "#main"),
        ("/#/login", ".auth-form input[name=name]"),
        ("/#/history", "#main .notice"),
        (f"/#/replay/{match_id}", "#replay"),
        ("/#/admin", "#main .notice"),
    ):
        page.goto(route)
        expect(page.locator(ready).first).to_be_visible()
        watch.check(route)
    page.goto(live["invite_url"])  # an invite link: the seat form for a newcomer
    expect(page.locator("#main")).not_to_be_empty()
    page.wait_for_timeout(500)
    watch.check("invite link")
    page.goto(live["watch_url"])
    expect(page.locator("#spectating-badge")).to_be_visible()
    page.wait_for_timeout(500)
    watch.check("watch link")

    # every script, style sheet and translation came gzipped, save the few too small to gain from it
    # (by path: the pages name the CSS and the table bundle with ?v=<content hash>)
    texts = {
        urlsplit(url).path: encoding
        for url, encoding in encodings.items()
        if urlsplit(url).path.endswith((".js", ".css", ".json"))
    }
    plain = {path for path, encoding in texts.items() if encoding != "gzip"}
    assert all((WEB_ROOT / path.lstrip("/")).stat().st_size < 512 for path in plain), plain
    if "/bundle/table.js" not in texts:  # fetched through the service worker, once it controls the page
        bundle = page.evaluate("() => [...document.scripts].map((s) => s.src).find((src) => src.includes('/bundle/'))")
        assert bundle, "the table page loaded no bundle"
        texts["/bundle/table.js"] = visitor.request.get(bundle).headers.get("content-encoding", "")
    assert texts["/js/main.js"] == texts["/css/app.css"] == texts["/bundle/table.js"] == "gzip"
