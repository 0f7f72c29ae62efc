"""The table page against a scripted socket: a ``presence`` message updates who is online and the
spectator count; a command refused with ``rate_limited`` is sent again after the wait, silently."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.test_controls import scripted, table_info, view

pytestmark = pytest.mark.browser
__all__ = ["scripted"]


def test_presence_updates_who_is_online_and_the_spectators(scripted: Any) -> None:
    page, fake = scripted(
        view(legal=[{"type": "take", "seat": 0}], table=[{"attack": "7h", "cover": None}]), table_info()
    )
    expect(page.locator("#opponents .conn.offline")).to_have_count(1)
    online = table_info(spectators=3)
    online["seats"][1]["connected"] = True
    fake.push({"type": "presence", "version": 7, "table": online})
    expect(page.locator("#opponents .conn.online")).to_have_count(1)
    expect(page.locator("#spectator-count")).to_have_attribute("data-count", "3")
    expect(page.locator("#felt")).to_have_attribute("data-version", "7")


def test_a_rate_limited_command_is_sent_again_after_the_wait(scripted: Any) -> None:
    page, fake = scripted(
        view(legal=[{"type": "take", "seat": 0}], table=[{"attack": "7h", "cover": None}]), table_info()
    )
    page.locator("#actions [data-action=take]").click()
    first = fake.wait_for_command(page, 1)
    fake.push({"type": "error", "id": first["id"], "code": "rate_limited", "message": "wait", "retry_after_ms": 300})
    again = fake.wait_for_command(page, 2)
    assert again == first  # the same command, the same id: applied once at most
    expect(page.locator(".toast.error")).to_have_count(0)
    fake.push({"type": "ack", "id": first["id"], "version": 8})
