"""Browser-facing defences: cross-site request refusal, JSON-only bodies, security headers, the
start-up check of the secret key, and invite codes kept out of the access log (docs/security.md).

``BrowserGuard`` is plain ASGI middleware (no response buffering, so the lobby's event stream is
untouched). For every state-changing request (POST, PUT, PATCH, DELETE) it refuses, before routing:

* with 403 ``cross_site_request`` when the ``Origin`` header is present and is neither the server's
  own origin nor one of ``Settings.allowed_origins`` (empty by default), or when ``Sec-Fetch-Site``
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
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import DEFAULT_SECRET_KEY, Settings

STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
REFUSED_FETCH_SITES = frozenset({"cross-site", "same-site"})
MIN_SECRET_KEY_BYTES = 32

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
    return any(normalized == normalize_origin(allowed) for allowed in settings.allowed_origins)


def cross_site_refusal(headers: Mapping[str, str], *, scheme: str, settings: Settings) -> str | None:
    """Why a browser request (a state-changing request, or a table socket's handshake) comes from
    another origin and is refused, or None. ``headers`` by lower-case name.

    Refused: an ``Origin`` that is neither the server's own (``scheme`` and the ``Host`` header) nor
    one of ``Settings.allowed_origins``, and a ``Sec-Fetch-Site`` of ``cross-site`` or ``same-site``
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


# FastAPI's API documentation pages load Swagger UI and ReDoc from a CDN and start them with an
# inline script; they show no user content, so they alone get a policy that allows both.
DOCS_PAGES = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})
DOCS_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net https://fonts.googleapis.com; "
    "font-src 'self' https://fonts.gstatic.com; "
    "img-src 'self' data: https://fastapi.tiangolo.com https://cdn.redoc.ly; "
    "worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)


class BrowserGuard:
    """Refuses cross-site and non-JSON state-changing requests; adds the security headers."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        scheme, host = scope.get("scheme", "http"), headers.get("host")
        refusal = self._refusal(scope["method"], headers, scheme, host)
        policy = DOCS_POLICY if scope["path"] in DOCS_PAGES else content_security_policy(scheme, host)
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
        status, code, detail = refusal
        body = json.dumps({"detail": f"{code}: {detail}", "code": code}).encode()
        await send_with_headers(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
            }
        )
        await send_with_headers({"type": "http.response.body", "body": body})

    def _refusal(
        self, method: str, headers: dict[str, str], scheme: str, host: str | None
    ) -> tuple[int, str, str] | None:
        if method not in STATE_CHANGING:
            return None
        cross_site = cross_site_refusal(headers, scheme=scheme, settings=self.settings)
        if cross_site is not None:
            return 403, "cross_site_request", cross_site
        content_type = headers.get("content-type")
        if content_type is not None:
            if content_type.split(";")[0].strip().lower() != "application/json":
                return 415, "unsupported_media_type", "request bodies must be application/json"
        elif headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
            return 415, "unsupported_media_type", "a request body needs Content-Type: application/json"
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


def secret_key_problem(settings: Settings) -> str | None:
    """Why the server must not start with this key on this address, or None.

    Session cookies are signed with the key and guest ids are public, so a known or guessable key
    lets anyone sign in as any guest (and forge an account's cookie given a session id). Only a
    server on a loopback address, which nobody else can reach, may use the embedded default.
    """
    if is_loopback(settings.host):
        return None
    if settings.secret_key == DEFAULT_SECRET_KEY:
        return (
            f"refusing to serve on {settings.host} with the built-in default DURAK_SECRET_KEY; "
            "set a random one, e.g. DURAK_SECRET_KEY=$(openssl rand -hex 32)"
        )
    if len(settings.secret_key.encode()) < MIN_SECRET_KEY_BYTES:
        return (
            f"refusing to serve on {settings.host} with a DURAK_SECRET_KEY of "
            f"{len(settings.secret_key.encode())} bytes; use at least {MIN_SECRET_KEY_BYTES} random bytes, "
            "e.g. DURAK_SECRET_KEY=$(openssl rand -hex 32)"
        )
    return None


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
