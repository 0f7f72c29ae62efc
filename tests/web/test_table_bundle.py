"""The table page runs from one joined script (app/web_pages.py): a match against a bot is played
with ``/bundle/table.js`` alone, no module of ``web/js`` fetched and no error on the page; the tab
title is written only when it changes."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import Driver, api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser


def test_a_match_is_played_with_the_table_bundle(new_context: Callable[..., Any]) -> None:
    context = new_context()
    sign_up_api(context)
    table = create_table_api(context, deck=36, seats=2, name="Bundle")
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page = context.new_page()
    scripts: list[str] = []
    errors: list[str] = []
    page.on("request", lambda request: scripts.append(request.url) if request.resource_type == "script" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card").first).to_be_visible()
    # every write of the tab title (web/js/notify.js writes it only when it changes)
    page.evaluate(
        """() => {
          window.titles = [document.title];
          new MutationObserver(() => window.titles.push(document.title))
            .observe(document.querySelector('title'), { childList: true, characterData: true, subtree: true });
        }"""
    )
    driver = Driver([page])
    driver.play(until=lambda d: d.moves >= 3)
    expect(page.locator("body")).to_have_class(re.compile(r"\bin-match\b"))
    paths = [url.split("/", 3)[3] for url in scripts]
    assert [path for path in paths if path.startswith("bundle/")] == [paths[0]]
    assert paths[0].startswith("bundle/table.js?v=")
    assert not [path for path in paths if path.startswith("js/")], paths  # nothing loaded beside the bundle
    assert errors == []
    titles = page.evaluate("window.titles")
    assert len(titles) > 1  # it did change (the turn cue)
    assert all(a != b for a, b in itertools.pairwise(titles)), titles


def test_leaving_the_bundle_for_another_page_loads_that_page_anew(new_context: Callable[..., Any]) -> None:
    """A step back from a table page to the lobby (the table was reached by a link in the same tab,
    then the page reloaded) loads the lobby as a new document: its modules never run beside the
    bundle's copies of i18n, the session and the rest."""
    context = new_context()
    sign_up_api(context)
    table = create_table_api(context, deck=36, seats=2, name="Bundle back")
    page = context.new_page()
    page.goto(table["invite_url"])
    expect(page.locator('#main[data-page="table"]')).to_be_visible()
    page.evaluate("() => { window.sameDocument = true; history.pushState(null, '', '/'); }")
    page.evaluate("() => dispatchEvent(new PopStateEvent('popstate'))")
    expect(page.locator('#main[data-page="lobby"]')).to_be_attached()
    assert page.evaluate("() => window.sameDocument") is None  # a new document
    assert page.evaluate("() => performance.getEntriesByType('navigation')[0].type") == "reload"
    assert page.evaluate("() => [...document.scripts].map((s) => new URL(s.src).pathname)") == ["/js/main.js"]
