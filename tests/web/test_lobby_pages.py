"""The lobby a page at a time: the live feed's snapshot and deltas fill it, 20 tables a page."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser


def test_the_lobby_pages_its_tables_and_follows_the_feed(new_context: Any) -> None:
    hosts = [new_context() for _ in range(7)]
    for host in hosts:
        sign_up_api(host)
    codes = [create_table_api(hosts[i // 3], stake=7, seats=3, name=f"Paged {i}")["code"] for i in range(20)]
    viewer = new_context()
    sign_up_api(viewer)
    page = viewer.new_page()
    page.goto("/")
    filters = page.locator("#lobby-filters")
    filters.locator("input[name=stake_min]").fill("7")
    filters.locator("input[name=stake_max]").fill("7")
    rows = page.locator("#lobby-tables .table-row")
    expect(rows).to_have_count(20)
    expect(page.locator("#lobby-pager")).to_have_count(0)  # one page: no pager
    assert "null" not in page.locator("#lobby-tables").inner_text()

    # A table opened now arrives as a delta: 21 tables, two pages, the newest first.
    codes.append(create_table_api(hosts[6], stake=7, seats=3, name="Paged 20")["code"])
    expect(page.locator("#lobby-pager .page-range")).to_have_text("1–20 of 21")
    expect(rows.first).to_have_attribute("data-code", codes[-1])
    expect(page.locator("#lobby-prev")).to_be_disabled()
    page.locator("#lobby-next").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-code", codes[0])
    expect(page.locator("#lobby-pager .page-range")).to_have_text("21–21 of 21")
    expect(page.locator("#lobby-next")).to_be_disabled()

    # A change on another page is applied where it belongs, without resending the list.
    api(hosts[0], "POST", f"/api/tables/{codes[1]}/join", {})
    page.locator("#lobby-prev").click()
    changed = page.locator(f"#lobby-tables .table-row[data-code='{codes[1]}']")
    expect(changed.locator(".free-seats")).to_have_text("2 free seats")
