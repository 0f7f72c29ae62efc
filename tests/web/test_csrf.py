"""Cross-site request forgery from a sibling origin, in Chromium: a page served from another port of
the same host (same site, so the victim's SameSite=Lax cookie goes along) auto-submits a form and
fires a fetch at the join route of the attacker's staked table. Both are refused; the victim is not
seated and keeps his coins."""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import PASSWORD, Server, api, create_table_api, free_port, sign_up_api

pytestmark = pytest.mark.browser

ATTACK_PAGE = """<!doctype html>
<html><body>
<form id="attack" method="POST" enctype="text/plain" action="{target}"></form>
<script>
  fetch("{target}", {{method: "POST", mode: "no-cors", credentials: "include"}})
    .finally(() => document.getElementById("attack").submit());
</script>
</body></html>
"""


SOCKET_ATTACK_PAGE = """<!doctype html>
<html><body>
<script>
  const ws = new WebSocket("{target}");
  ws.onopen = () => {{
    ws.send(JSON.stringify({{type: "hello"}}));
    ws.send(JSON.stringify({{type: "chat", id: "c1", text: "I give up"}}));
    ws.send(JSON.stringify({{type: "leave", id: "l1"}}));
    document.title = "opened";
  }};
  ws.onclose = (event) => {{ if (document.title !== "opened") document.title = "refused " + event.code; }};
</script>
</body></html>
"""


def _listening(port: int) -> http.server.ThreadingHTTPServer | None:
    try:
        return http.server.ThreadingHTTPServer(("127.0.0.1", port), _Handler)
    except OSError:
        return None


class _Handler(http.server.BaseHTTPRequestHandler):
    pages: dict[str, str] = {}

    def do_GET(self) -> None:
        body = self.pages.get(self.path, "").encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def attacker_site() -> Iterator[tuple[str, dict[str, str]]]:
    """An HTTP server on another port of 127.0.0.1 serving ``pages[path]``: port 8000 when it is
    free (the origin the server once trusted by default, issue 35.1), else any free port."""
    pages: dict[str, str] = {}
    httpd = _listening(8000) or _listening(free_port())
    assert httpd is not None
    _Handler.pages = pages
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", pages
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_sibling_port_cannot_open_the_players_table_socket(
    new_context: Any, server: Server, attacker_site: tuple[str, dict[str, str]]
) -> None:
    """A page on another port of the host (127.0.0.1:8000 when free) opens the player's table socket:
    Chromium sends his SameSite=Lax cookie along (same site) and the page's Origin; the server, on
    its own port and default settings, refuses the handshake, so no ``leave`` or chat reaches it."""
    creator = new_context()
    sign_up_api(creator)
    table = create_table_api(creator, seats=2, stake=100, name="Sit here")
    code = table["code"]
    victim_context = new_context()
    victim = sign_up_api(victim_context)
    api(victim_context, "POST", f"/api/tables/{code}/join", {"seat": 1})
    base, pages = attacker_site
    assert base != server.base
    pages["/"] = SOCKET_ATTACK_PAGE.format(target=server.base.replace("http", "ws", 1) + f"/ws/tables/{code}")

    page = victim_context.new_page()
    handshakes: list[str] = []
    page.on("websocket", lambda ws: handshakes.append(ws.url))
    page.goto(f"{base}/")
    expect(page).to_have_title(re.compile("^refused "))

    assert handshakes  # the browser did try, with the victim's cookie
    seats = api(victim_context, "GET", f"/api/tables/{code}")["seats"]
    assert seats[1]["player"] == f"a:{victim['id']}"  # still seated: no leave arrived


def test_a_sibling_port_cannot_seat_a_victim(
    new_context: Any, server: Server, attacker_site: tuple[str, dict[str, str]]
) -> None:
    attacker = new_context()
    sign_up_api(attacker)
    table = create_table_api(attacker, seats=2, stake=100, name="Free coins")
    code = table["code"]
    target = f"{server.base}/api/tables/{code}/join"
    base, pages = attacker_site
    pages["/"] = ATTACK_PAGE.format(target=target)

    victim_context = new_context()
    victim = sign_up_api(victim_context)
    page = victim_context.new_page()
    refusals: list[int] = []
    page.on("response", lambda response: response.url == target and refusals.append(response.status))

    page.goto(f"{base}/")
    page.wait_for_url(target)
    page.wait_for_load_state()

    seats = api(victim_context, "GET", f"/api/tables/{code}")["seats"]
    assert [seat["player"] for seat in seats] == [None, None]
    assert api(victim_context, "GET", "/api/me")["balance"] == victim["balance"]
    assert refusals == [403, 403]  # the fetch and the form
    expect(page.locator("body")).to_contain_text("cross_site_request")
    # The victim's own pages still work: the same join from the site itself seats him.
    site = victim_context.new_page()
    site.goto(table["invite_url"])
    site.locator("#join-button").click()
    expect(site.locator("#join-button")).to_have_count(0)
    seats = api(victim_context, "GET", f"/api/tables/{code}")["seats"]
    assert f"a:{victim['id']}" in [seat["player"] for seat in seats]


# --- the log-in page's next= (web/js/pages/login.js) ----------------------------------------------

LEAVING = [
    "//other.example/x",
    "/\\other.example/x",
    "\\\\other.example/x",
    "https://other.example/x",
    "javascript:alert(1)",
    "http://127.0.0.1:1/x",
    # Dot segments that resolve to a protocol-relative "//other.example/x" (issue 35.12).
    "/.//other.example/x",
    "/%2e//other.example/x",
    "/%2E%2e//other.example/x",
    "/a/..//other.example/x",
    "/./\\other.example/x",
    "/\t/other.example/x",  # the URL parser drops tabs and newlines
    "/\n/other.example/x",
]


def test_log_in_never_redirects_off_site(new_context: Any, server: Server) -> None:
    context = new_context()
    sign_up_api(context)
    api(context, "POST", "/api/auth/logout", ok=(204,))
    page = context.new_page()
    page.goto("/#/login")
    safe = page.evaluate(
        "async (nexts) => { const { safeNext } = await import('/js/pages/login.js');"
        " return nexts.map((next) => safeNext(next)); }",
        [*LEAVING, f"{server.base}//other.example/x", f"{server.base}/t/abc", "/t/abc?x=1#y", "/#/history", "", None],
    )
    # An absolute address is refused even when it names this site: only a path is a path.
    assert safe == ["/#/"] * (len(LEAVING) + 2) + ["/t/abc?x=1#y", "/#/history", "/#/", "/#/"]


@pytest.mark.parametrize("next_", ["/%5Cother.example/x", "/.//other.example/x", "/%252e//other.example/x"])
def test_signing_in_with_a_crafted_next_stays_on_the_site(new_context: Any, server: Server, next_: str) -> None:
    """The real thing: log in from /#/login?next=... (the hash's query is URL-decoded once)."""
    context = new_context()
    me = sign_up_api(context)
    api(context, "POST", "/api/auth/logout", ok=(204,))
    page = context.new_page()
    leaving: list[str] = []
    page.on("request", lambda request: "other.example" in request.url and leaving.append(request.url))
    page.goto("/#/login?next=" + next_)
    page.locator(".auth-form input[name=name]").fill(me["name"])
    page.locator(".auth-form input[name=password]").fill(PASSWORD)
    page.locator(".auth-form button[type=submit]").click()
    expect(page.locator("#user-name")).to_have_text(me["name"])
    page.wait_for_timeout(200)
    assert page.url.startswith(server.base + "/"), page.url
    assert not leaving
