"""Browser-facing defences: cross-site request refusal, JSON-only bodies, security headers, the
start-up check of the secret key, and invite codes kept out of the access log (docs/security.md).

``BrowserGuard`` is plain ASGI middleware (no response buffering, so the lobby's event stream is
untouched). For every state-changing request (POST, PUT, PATCH, DELETE) it refuses, before routing:

* with 403 ``cross_site_request`` when the ``Origin`` header is present and is neither the server's
  own origin nor one of ``Settings.security.allowed_origins`` (empty by default), or when ``Sec-Fetch-Site``
  is present and says ``cross-site`` or ``same-site`` (a page on another port or subdomain of the
  same site is still another origin): :func:`cross_site_refusal`, which the table socket's
  handshake applies too;
* with 415 ``unsupported_media_type`` when it carries a body that is not ``application/json`` (an
  HTML form can only send urlencoded, multipart or text/plain bodies).

A request with neither header comes from a non-browser client, which cannot carry a victim's
cookie, and passes. Every HTTP response gets the security headers; ``/api/`` answers are personal
(who is signed in, balances, private tables) and get ``Cache-Control: no-store`` unless the route
set its own.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import DEFAULT_SECRET_KEY, Settings

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
REFUSED_FETCH_SITES = frozenset({"cross-site", "same-site"})
MIN_SECRET_KEY_BYTES = 32

log = logging.getLogger("durak.security")

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_HTTP_SCHEME = {"http": "http", "https": "https", "ws": "http", "wss": "https"}
_HOST = re.compile(r"^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$")


def normalize_origin(origin: str) -> str | None:
    """``scheme://host[:port]`` in lower case with a default port left out, or None when it is not
    an origin a browser would send (``null``, a path, another scheme)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host or parts.path not in ("", "/") or parts.query or parts.username:
        return None
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}" if port in (None, _DEFAULT_PORTS[scheme]) else f"{scheme}://{host}:{port}"


def own_origin(scheme: str, host_header: str | None) -> str | None:
    """The origin a request was addressed to: its scheme (``ws`` counts as ``http``; behind a proxy,
    the one uvicorn took from a trusted ``X-Forwarded-Proto``) and its ``Host`` header."""
    if not host_header or scheme not in _HTTP_SCHEME or not _HOST.match(host_header):
        return None
    return normalize_origin(f"{_HTTP_SCHEME[scheme]}://{host_header}")


def origin_allowed(origin: str, *, scheme: str, host_header: str | None, settings: Settings) -> bool:
    """Whether a browser's ``Origin`` header names the server itself or one of the allowed origins."""
    normalized = normalize_origin(origin)
    if normalized is None:
        return False
    if normalized == own_origin(scheme, host_header):
        return True
    return any(normalized == normalize_origin(allowed) for allowed in settings.security.allowed_origins)


def cross_site_refusal(headers: Mapping[str, str], *, scheme: str, settings: Settings) -> str | None:
    """Why a browser request (a state-changing request, or a table socket's handshake) comes from
    another origin and is refused, or None. ``headers`` by lower-case name.

    Refused: an ``Origin`` that is neither the server's own (``scheme`` and the ``Host`` header) nor
    one of ``Settings.security.allowed_origins``, and a ``Sec-Fetch-Site`` of ``cross-site`` or ``same-site``
    (a page on another port or subdomain of the same site is another origin, whatever its Origin).
    A request with neither header comes from a non-browser client, which holds no victim's cookie."""
    origin = headers.get("origin")
    if origin is not None and not origin_allowed(
        origin, scheme=scheme, host_header=headers.get("host"), settings=settings
    ):
        return f"requests from {origin[:100]!r} are not allowed"
    fetch_site = headers.get("sec-fetch-site", "").lower()
    if fetch_site in REFUSED_FETCH_SITES:
        return f"{fetch_site} requests are not allowed"
    return None


def content_security_policy(scheme: str, host_header: str | None) -> str:
    """The page policy: everything from the server itself, nothing inline, never framed. The
    websocket origin is named besides ``'self'`` for browsers whose ``'self'`` does not cover ws:."""
    connect = "'self'"
    origin = own_origin(scheme, host_header)
    if origin is not None:
        connect += " " + origin.replace("http", "ws", 1)
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
        f"connect-src {connect}; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    )


class BrowserGuard:
    """Refuses cross-site and non-JSON state-changing requests; adds the security headers."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.warned_of_proxy = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if not self.warned_of_proxy:
            self.warned_of_proxy = untrusted_proxy_warning(scope, headers)
        scheme, host = scope.get("scheme", "http"), headers.get("host")
        refusal = nul_refusal(scope) or self._refusal(scope["method"], headers, scheme)
        policy = content_security_policy(scheme, host)  # every page: no other host, nothing inline
        extra = [
            (b"content-security-policy", policy.encode("latin-1")),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
            (b"x-frame-options", b"DENY"),
        ]
        no_store = scope["path"].startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                added = [(name, value) for name, value in extra if name not in present]
                if no_store and b"cache-control" not in present:
                    added.append((b"cache-control", b"no-store"))
                message["headers"] = [*message.get("headers", []), *added]
            await send(message)

        if refusal is None:
            await self.app(scope, receive, send_with_headers)
            return
        status, answer = refusal
        body = json.dumps(answer).encode()
        await send_with_headers(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send_with_headers({"type": "http.response.body", "body": body})

    def _refusal(self, method: str, headers: dict[str, str], scheme: str) -> Refusal | None:
        if method not in STATE_CHANGING:
            return None
        cross_site = cross_site_refusal(headers, scheme=scheme, settings=self.settings)
        if cross_site is not None:
            return 403, coded("cross_site_request", cross_site)
        content_type = headers.get("content-type")
        if content_type is not None:
            if content_type.split(";")[0].strip().lower() != "application/json":
                return 415, coded("unsupported_media_type", "request bodies must be application/json")
        elif headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
            return 415, coded("unsupported_media_type", "a request body needs Content-Type: application/json")
        return None


def untrusted_proxy_warning(scope: Scope, headers: Mapping[str, str]) -> bool:
    """Log, and say True, when a request carries ``X-Forwarded-For`` that uvicorn did not believe
    (the client it reports is none of the forwarded addresses): behind a proxy that is not in
    ``DURAK_FORWARDED_ALLOW_IPS``, every client has the proxy's address, and so shares one set of
    the per-address limits with every other."""
    forwarded, client = headers.get("x-forwarded-for"), scope.get("client")
    if forwarded is None or not client or client[0] in {part.strip() for part in forwarded.split(",")}:
        return False
    log.warning(
        "a request from %s carried an X-Forwarded-For header that is not believed: if %s is a proxy, every "
        "client behind it has its address and shares one set of the per-address limits (sign-ups, log-ins, "
        "guests, reports, tables, sockets); list the proxy in DURAK_FORWARDED_ALLOW_IPS (docs/security.md)",
        client[0],
        client[0],
    )
    return True


Refusal = tuple[int, dict[str, Any]]  # a status and its JSON body


def coded(code: str, detail: str) -> dict[str, Any]:
    """The body of a refusal with a stable code: ``{"detail": "<code>: ...", "code": "<code>"}``."""
    return {"detail": f"{code}: {detail}", "code": code}


def nul_refusal(scope: Scope) -> Refusal | None:
    """A request whose path or query string holds a NUL character (``%00``): 404 for the path (no
    page or record is named that), 422 for the query, in FastAPI's shape. PostgreSQL text cannot
    hold NUL, so without this check such a name reached the database as an error (a 500). JSON
    bodies are checked by ``RequestBody`` (app/api/schemas.py)."""
    if "\x00" in scope["path"]:
        return 404, coded("not_found", "no path holds a NUL character")
    query: bytes = scope.get("query_string", b"")
    if b"\x00" in query or b"%00" in query:
        error = {"loc": ["query"], "msg": "query parameters must not contain NUL characters", "type": "value_error"}
        return 422, {"detail": [error]}
    return None


def _headers(scope: Scope) -> dict[str, str]:
    """The request headers by lower-case name (a repeated header: the last one)."""
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}


# --- the secret key at start-up ---------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def weak_key(settings: Settings) -> str | None:
    """What is wrong with the secret key for a server others can reach, or None: the built-in
    default, or fewer than 32 bytes."""
    if settings.security.secret_key == DEFAULT_SECRET_KEY:
        return "the built-in default DURAK_SECRET_KEY"
    if len(settings.security.secret_key.encode()) < MIN_SECRET_KEY_BYTES:
        return (
            f"a DURAK_SECRET_KEY of {len(settings.security.secret_key.encode())} bytes "
            f"(use at least {MIN_SECRET_KEY_BYTES} random bytes)"
        )
    return None


def secret_key_problem(settings: Settings) -> str | None:
    """Why the server must not start with this key on its configured address, or None.

    Session cookies are signed with the key and guest ids are public, so a known or guessable key
    lets anyone sign in as any guest (and forge an account's cookie given a session id). Only a
    server on a loopback address, which nobody else can reach, may use the embedded default.
    """
    weakness = weak_key(settings)
    if weakness is None or is_loopback(settings.server.host):
        return None
    return f"refusing to serve on {settings.server.host} with {weakness}; set a random one, e.g. {NEW_KEY}"


NEW_KEY = "DURAK_SECRET_KEY=$(openssl rand -hex 32)"


def _loopback_address(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def reached_from_afar(scope: Scope) -> bool:
    """Whether a connection came from beyond this machine: it arrived on an address other than a
    loopback one (the real bind address: ``0.0.0.0`` is whichever address the client used; a Unix
    socket counts as beyond, proxies use them), or its client, as uvicorn reports it (behind a
    trusted proxy: the forwarded address), is a network address other than a loopback one."""
    server = scope.get("server")
    if not server or not isinstance(server[0], str) or not _loopback_address(server[0]):
        return True
    client = scope.get("client")
    if client and isinstance(client[0], str):
        try:
            return not ipaddress.ip_address(client[0].strip("[]")).is_loopback
        except ValueError:  # not an address at all (an in-process test transport): the server decides
            return False
    return False


class WeakKeyGuard:
    """With a weak key (``weak_key``), serve only connections from this machine, whatever address
    the server was started on (``uvicorn app.main:create_app --factory --host 0.0.0.0`` never passes
    through ``python -m app``'s start-up check): others get 503 ``weak_secret_key``, sockets are
    refused at the handshake (403). Said in the log once per process."""

    def __init__(self, settings: Settings) -> None:
        self.weakness = weak_key(settings)
        self.logged = False

    def refuses(self, scope: Scope) -> bool:
        if self.weakness is None or scope["type"] not in ("http", "websocket") or not reached_from_afar(scope):
            return False
        if not self.logged:
            self.logged = True
            log.error(
                "refusing every connection from beyond this machine: the server runs with %s; set %s",
                self.weakness,
                NEW_KEY,
            )
        return True

    async def refuse(self, scope: Scope, send: Send) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008, "reason": "server misconfigured"})
            return
        detail = f"the server is misconfigured ({self.weakness}) and serves this machine only"
        body = json.dumps(coded("weak_secret_key", detail)).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})


# --- invite codes out of the access log ---------------------------------------------------------------

# A table's invite or watch code in a path: /t/<code>, /w/<code>, /api/tables/<code>[/...],
# /ws/tables/<code>. Other /api/tables/... paths (none today) would be redacted too: harmless.
_CODE_IN_PATH = re.compile(r"(?<![^/])(t|w|tables)/[^/?#\s\"]+", re.IGNORECASE)
REDACTED = "[code]"


def redact_codes(text: str) -> str:
    """A request line or path with table codes replaced by ``[code]``."""
    return _CODE_IN_PATH.sub(lambda match: f"{match.group(1)}/{REDACTED}", text)


class RedactCodes(logging.Filter):
    """Rewrites the paths in uvicorn's log records: the access log's (``args``: client, method,
    path, version, status) and the websocket handshake lines of ``uvicorn.error`` (client, path)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and any(isinstance(arg, str) and arg.startswith("/") for arg in args):
            record.args = tuple(
                redact_codes(arg) if isinstance(arg, str) and arg.startswith("/") else arg for arg in args
            )
        return True


def redact_access_log() -> None:
    """Install ``RedactCodes`` on uvicorn's access and error loggers (once)."""
    for name in ("uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        if not any(isinstance(existing, RedactCodes) for existing in logger.filters):
            logger.addFilter(RedactCodes())
