"""The order tests/conftest.py gives the suite, which parallel workers rely on."""

from __future__ import annotations

import pytest


def test_the_browser_tests_come_after_every_other_test(request: pytest.FixtureRequest) -> None:
    """A worker that has opened the session's browser runs no async test afterwards (Playwright's
    sync API leaves a running event loop behind): the browser tests are the last ones handed out."""
    paths = [item.nodeid.split("::", 1)[0] for item in request.session.items]
    browser = [index for index, path in enumerate(paths) if path.startswith("tests/web/")]
    others = [index for index, path in enumerate(paths) if not path.startswith("tests/web/")]
    if browser and others:
        assert max(others) < min(browser), paths[min(browser) : max(others) + 1][:5]
