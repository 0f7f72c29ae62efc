"""Reconnects: a reload mid-match continues the match; a dropped socket shows "reconnecting" and
resumes silently with hello + last_version."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import NEXT_MOVE, PASSWORD, Driver, api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser

WATCH_RECONNECTING = """() => {
  window.__sawReconnecting = false;
  new MutationObserver(() => {
    const badge = document.querySelector('#conn-state');
    if (badge && badge.classList.contains('reconnecting')) window.__sawReconnecting = true;
  }).observe(document.body, { subtree: true, childList: true, characterData: true });
}"""


def test_reload_and_dropped_connection_mid_match(new_context: Any) -> None:
    context = new_context()
    sign_up_api(context)
    table = create_table_api(context, deck=24, timer=60)
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})

    page = context.new_page()
    sent: list[dict[str, Any]] = []
    sockets: list[Any] = []

    def proxy(route: Any) -> None:
        # Pass every frame through, recording what the page sends.
        server = route.connect_to_server()

        def from_page(message: str | bytes) -> None:
            sent.append(json.loads(message))
            server.send(message)

        route.on_message(from_page)
        sockets.append(route)

    page.route_web_socket(re.compile(r"/ws/tables/"), proxy)
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)
    driver = Driver([page])
    # Stop where the table waits for this page (the bot cannot move meanwhile), and read the hand
    # and the version together.
    driver.play(until=lambda d: d.moves >= 3 and page.evaluate(NEXT_MOVE) not in (None, "over"))
    cards_before, version = page.evaluate(
        "() => [document.querySelectorAll('#hand .card').length,"
        " Number(document.querySelector('#felt').dataset.version)]"
    )

    # 1. Reload: a new page load picks the match up where it was.
    page.reload()
    expect(page.locator("#hand .card")).to_have_count(cards_before)
    expect(page.locator("#felt")).to_have_attribute("data-version", str(version))
    expect(page.locator("#results")).to_have_count(0)
    driver.play(until=lambda d: d.moves >= 6)

    # 2. The connection drops: "reconnecting" shows, then the client resumes from its version.
    page.evaluate(WATCH_RECONNECTING)
    version = int(page.locator("#felt").get_attribute("data-version"))
    hellos_before = sum(1 for message in sent if message["type"] == "hello")
    sockets[-1].close(code=4000, reason="test drops the line")
    expect(page.locator("#conn-state")).to_have_count(0, timeout=10_000)  # back to connected
    assert page.evaluate("window.__sawReconnecting"), "the reconnecting state was never shown"
    hellos = [message for message in sent if message["type"] == "hello"]
    assert len(hellos) == hellos_before + 1
    assert hellos[-1].get("last_version") == version
    assert len(sockets) == 3  # first load, reload, reconnect

    # The match goes on to its end over the new connection.
    driver.play()
    expect(page.locator("#results")).to_be_visible()
    moves = [message for message in sent if message["type"] not in ("hello", "ping")]
    assert all(isinstance(message.get("id"), str) for message in moves)


def test_signed_out_on_another_device_stops_the_table_page(new_context: Any) -> None:
    """Log-out everywhere from a second browser: the table page says it was signed out, does not
    try to reconnect, and the header no longer shows the account."""
    laptop = new_context()
    me = sign_up_api(laptop)
    table = create_table_api(laptop, deck=24, timer=60)
    api(laptop, "POST", f"/api/tables/{table['code']}/join", {})
    api(laptop, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page = laptop.new_page()
    opened: list[Any] = []
    page.on("websocket", lambda ws: opened.append(ws))
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)
    expect(page.locator("#user-name")).to_have_text(me["name"])

    phone = new_context()
    api(phone, "POST", "/api/auth/login", {"name": me["name"], "password": PASSWORD})
    api(phone, "POST", "/api/auth/logout?everywhere=true", None, ok=(204,))

    expect(page.locator("#conn-state")).to_have_class(re.compile(r"\bsigned_out\b"), timeout=10_000)
    expect(page.locator("#conn-state")).to_have_text("You were signed out. Sign in again to play.")
    expect(page.locator("#login-link")).to_be_visible()  # the header refreshed: nobody signed in
    page.wait_for_timeout(1500)  # a reconnecting client would have opened a new socket by now
    assert len(opened) == 1


PLAY_TYPES = ("lead", "throw_in", "cover", "transfer", "take", "pass", "exchange_trump")


def _seated_against_a_bot(new_context: Any) -> tuple[Any, dict[str, Any]]:
    context = new_context()
    sign_up_api(context)
    table = create_table_api(context, deck=24, timer=60)
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    return context, table


def test_a_move_lost_with_its_socket_is_sent_again_with_the_same_id_after_reconnecting(new_context: Any) -> None:
    """The page's move never reaches the server: the socket breaks first. The page does not drop it:
    the next connection says hello, then sends it again with the same id, and the server applies it
    and answers it once."""
    context, table = _seated_against_a_bot(new_context)
    page = context.new_page()
    sent: list[tuple[int, dict[str, Any]]] = []  # (socket number, message)
    answers: list[dict[str, Any]] = []
    sockets: list[Any] = []
    swallow = {"next_move": False, "id": None}

    def proxy(route: Any) -> None:
        server = route.connect_to_server()
        number = len(sockets)

        def from_page(message: str | bytes) -> None:
            parsed = json.loads(message)
            sent.append((number, parsed))
            if swallow["next_move"] and parsed["type"] in PLAY_TYPES:
                swallow["next_move"], swallow["id"] = False, parsed["id"]
                route.close(code=4000, reason="the line breaks before the move gets through")
                return
            server.send(message)

        def from_server(message: str | bytes) -> None:
            parsed = json.loads(message)
            if parsed["type"] in ("ack", "error"):
                answers.append(parsed)
            route.send(message)

        route.on_message(from_page)
        server.on_message(from_server)
        sockets.append(route)

    page.route_web_socket(re.compile(r"/ws/tables/"), proxy)
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)
    driver = Driver([page])
    driver.play(until=lambda d: d.moves >= 2 and page.evaluate(NEXT_MOVE) not in (None, "over"))
    swallow["next_move"] = True
    driver.act(page, page.evaluate(NEXT_MOVE))  # returns once the table has moved on
    lost = swallow["id"]
    assert lost is not None and len(sockets) == 2
    again = [(number, message) for number, message in sent if message.get("id") == lost]
    assert [number for number, _ in again] == [0, 1]  # once on each socket
    assert again[0][1] == again[1][1]  # the same command, same id and version
    on_the_new_socket = [message["type"] for number, message in sent if number == 1]
    assert on_the_new_socket[:2] == ["hello", again[0][1]["type"]]  # hello first
    assert [answer["type"] for answer in answers if answer.get("id") == lost] == ["ack"]
    driver.play()
    expect(page.locator("#results")).to_be_visible()


def test_after_a_bye_the_page_comes_back_when_the_server_said(new_context: Any) -> None:
    context, table = _seated_against_a_bot(new_context)
    page = context.new_page()
    sockets: list[Any] = []
    page.route_web_socket(re.compile(r"/ws/tables/"), lambda route: sockets.append(route) or route.connect_to_server())
    page.goto(table["invite_url"])
    expect(page.locator("#hand .card")).to_have_count(6)
    bye = {"type": "bye", "code": "shutdown", "message": "restarting", "reconnect_after_ms": 2500}
    sockets[0].send(json.dumps(bye))
    sockets[0].close(code=1012, reason="server restarting")
    expect(page.locator("#conn-state")).to_have_class(re.compile(r"\breconnecting\b"))
    page.wait_for_timeout(1200)  # the backoff alone would have reconnected after 250 ms or so
    assert len(sockets) == 1
    expect(page.locator("#conn-state")).to_have_count(0, timeout=10_000)  # back, after the 2.5 s
    assert len(sockets) == 2
