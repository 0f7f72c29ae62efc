"""The device cookie (docs/integrity.md): every browser gets a long-lived random id on its first visit,
``durak_device`` (``__Host-durak_device`` when the session cookie is Secure), HttpOnly, SameSite=Lax,
about two years. It is not a session: it only lets the server notice two accounts used on one
browser (``app.db.integrity.saw_device`` at sign-up, log-in and sitting down at a table).

``DeviceCookie`` is a pure ASGI middleware: for an HTTP request without a valid device cookie it
makes one, puts it in ``request.state.device`` and adds the ``Set-Cookie`` to the answer; with one it
only puts it in ``request.state.device``."""

from __future__ import annotations

import secrets
from http.cookies import SimpleCookie

from fastapi import Request
from starlette.datastructures import MutableHeaders
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.deps import cookie_is_secure
from app.config import Settings
from app.integrity_policy import valid_device

DEVICE_COOKIE = "durak_device"
SECURE_DEVICE_COOKIE = "__Host-durak_device"
DEVICE_MAX_AGE_S = 2 * 365 * 24 * 3600


def device_cookie_name(connection: HTTPConnection, settings: Settings) -> str:
    """Like the session cookie: the ``__Host-`` name (Secure) exactly when the session cookie has it."""
    return SECURE_DEVICE_COOKIE if cookie_is_secure(connection, settings) else DEVICE_COOKIE


def device_of(request: Request) -> str | None:
    """This request's device id (set by ``DeviceCookie``; a new one when the browser had none)."""
    device = getattr(request.state, "device", None)
    return device if isinstance(device, str) else None


def set_cookie_header(name: str, value: str, *, secure: bool) -> str:
    cookie: SimpleCookie = SimpleCookie()
    cookie[name] = value
    cookie[name]["max-age"] = DEVICE_MAX_AGE_S
    cookie[name]["path"] = "/"
    cookie[name]["httponly"] = True
    cookie[name]["samesite"] = "Lax"
    if secure:
        cookie[name]["secure"] = True
    return cookie.output(header="").strip()


class DeviceCookie:
    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        name = device_cookie_name(connection, self.settings)
        device = connection.cookies.get(name)
        state = scope.setdefault("state", {})
        if valid_device(device):
            state["device"] = device
            await self.app(scope, receive, send)
            return
        device = secrets.token_urlsafe(16)
        state["device"] = device
        header = set_cookie_header(name, device, secure=cookie_is_secure(connection, self.settings))

        async def send_with_cookie(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("set-cookie", header)
            await send(message)

        await self.app(scope, receive, send_with_cookie)
