"""Fixtures for the browser suite: one real server and one Chromium for the session."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.support import ARTIFACTS, LAUNCH_ARGS, Server, require_chromium, start_server, stop_server


@pytest.fixture(scope="session")
def chromium_path() -> str:
    from playwright.sync_api import expect

    # Assertions wait as long as actions do: on a loaded 2-core CI machine a page can take over 5 s.
    expect.set_options(timeout=20_000)
    return require_chromium()


@pytest.fixture(scope="session")
def server(chromium_path: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("webserver"))
    try:
        yield running
    finally:
        stop_server(running)


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path, headless=True, args=LAUNCH_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def new_context(browser: Any, server: Server) -> Iterator[Callable[..., Any]]:
    """Fresh, isolated browser contexts (separate cookies) on the test server; closed afterwards.
    Page errors (uncaught exceptions) fail the test. Tests that play whole matches by clicking ask
    for ``reduced_motion="reduce"``: no card flies, so no click waits for one (the flights have
    their own tests in test_table_game.py)."""
    contexts: list[Any] = []
    errors: list[str] = []

    def make(width: int = 1280, height: int = 900, locale: str = "en-US", **options: Any) -> Any:
        context = browser.new_context(
            base_url=server.base, viewport={"width": width, "height": height}, locale=locale, **options
        )
        context.set_default_timeout(20_000)
        context.on("page", lambda page: page.on("pageerror", lambda error: errors.append(str(error))))
        contexts.append(context)
        return context

    yield make
    for context in contexts:
        context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
