"""Request dependencies (``Annotated`` aliases) and the session cookie.

The session cookie ``durak_session`` (``__Host-durak_session`` when Secure: ``cookie_is_secure``) is
an itsdangerous-signed token (key: ``Settings.security.secret_key``) carrying either an account id and a
login-session id, or a guest id, with a name and an expiry.
``account_from_cookie`` checks the signature and expiry without touching the database;
``resolve_session`` (every request and websocket handshake) also checks that an account's login
session is live (not logged out: ``app/db/login_sessions.py``) and loads the account's current name
and role, or that a guest has not logged out (``guest_signouts``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Cookie, Depends, HTTPException, Request, Response, status
from fastapi.requests import HTTPConnection
from itsdangerous import BadData, URLSafeTimedSerializer
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings, get_settings
from app.db import login_sessions
from app.db.models import ROLE_ADMIN
from app.db.session import Database
from app.tables.registry import TableRegistry

COOKIE_NAME = "durak_session"
SECURE_COOKIE_NAME = "__Host-durak_session"  # over HTTPS (see cookie_is_secure)
_SALT = "durak-session-v1"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """Who a session cookie belongs to. Guests have ``account_id`` None and a random ``guest_id``."""

    kind: Literal["account", "guest"]
    name: str
    expires_at: datetime
    account_id: int | None = None
    guest_id: str | None = None
    session_id: str | None = None  # an account's login session (``login_sessions``)
    is_admin: bool = False  # only filled in by resolve_session (roles are not carried in the cookie)

    @property
    def key(self) -> str:
        """A stable identity string: ``a:<account id>`` or ``g:<guest id>``."""
        return f"a:{self.account_id}" if self.kind == "account" else f"g:{self.guest_id}"

    @property
    def is_guest(self) -> bool:
        return self.kind == "guest"


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.security.secret_key, salt=_SALT)


def make_cookie(
    settings: Settings,
    *,
    account_id: int | None = None,
    session_id: str | None = None,
    name: str,
    guest_id: str | None = None,
    now: float | None = None,
) -> tuple[str, SessionInfo]:
    """A signed cookie value for an account's login session (``account_id`` and ``session_id``, from
    ``login_sessions.start``) or a guest (``guest_id`` made if None)."""
    expires = _expiry(settings, time.time() if now is None else now)
    payload: dict[str, Any] = {"n": name, "exp": expires}
    if account_id is not None:
        if session_id is None:
            raise ValueError("an account's cookie needs the id of its login session")
        payload["a"], payload["s"] = account_id, session_id
        info = SessionInfo(
            kind="account", name=name, account_id=account_id, session_id=session_id, expires_at=_utc(expires)
        )
    else:
        guest_id = guest_id or secrets.token_urlsafe(12)
        payload["g"] = guest_id
        info = SessionInfo(kind="guest", name=name, guest_id=guest_id, expires_at=_utc(expires))
    return _serializer(settings).dumps(payload), info


def session_expires_at(settings: Settings, *, now: float) -> datetime:
    """When a session started at ``now`` expires: the cookie's expiry, as its login session stores it."""
    return _utc(_expiry(settings, now))


def _expiry(settings: Settings, now: float) -> int:
    return int(now) + settings.security.session_max_age_s


def _utc(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def account_from_cookie(
    value: str | None, settings: Settings | None = None, *, now: float | None = None
) -> SessionInfo | None:
    """The session a cookie value stands for, or ``None`` if it is missing, forged or expired.

    Pure and synchronous: no database access (the session may since have been logged out, the
    account demoted; ``resolve_session`` checks those).
    """
    if not value:
        return None
    settings = settings or get_settings()
    try:
        payload = _serializer(settings).loads(value, max_age=settings.security.session_max_age_s)
    except (BadData, ValueError, TypeError):
        return None
    if not isinstance(payload, dict):
        return None
    expires, name = payload.get("exp"), payload.get("n")
    current = time.time() if now is None else now
    if not isinstance(expires, int) or expires <= current or not isinstance(name, str):
        return None
    account_id, guest_id, session_id = payload.get("a"), payload.get("g"), payload.get("s")
    if isinstance(account_id, int) and not isinstance(account_id, bool):
        if not isinstance(session_id, str):
            return None  # signed before login sessions existed: sign in again
        return SessionInfo(
            kind="account", name=name, account_id=account_id, session_id=session_id, expires_at=_utc(expires)
        )
    if isinstance(guest_id, str):
        return SessionInfo(kind="guest", name=name, guest_id=guest_id, expires_at=_utc(expires))
    return None


async def resolve_session(db: Database, value: str | None, settings: Settings | None = None) -> SessionInfo | None:
    """``account_from_cookie`` plus, for an account, a live login session (``None`` once logged out)
    and the account's current name and role; ``None`` if the account is gone or the guest logged out."""
    return await resolve_info(db, account_from_cookie(value, settings))


async def resolve_info(db: Database, info: SessionInfo | None) -> SessionInfo | None:
    """``resolve_session`` for a cookie already read with ``account_from_cookie``; a signed-out
    guest is ``None`` too."""
    if info is not None and info.guest_id is not None:
        async with db.session() as session:
            return None if await login_sessions.guest_signed_out(session, guest_id=info.guest_id) else info
    if info is None or info.account_id is None or info.session_id is None:
        return info
    async with db.session() as session:
        account = await login_sessions.live_account(session, session_id=info.session_id, account_id=info.account_id)
        if account is None:
            return None
        return replace(info, name=account.name, is_admin=account.role == ROLE_ADMIN)


def cookie_is_secure(connection: HTTPConnection, settings: Settings) -> bool:
    """Whether this connection's session cookie is ``Secure`` (and so named ``__Host-durak_session``):
    ``Settings.security.cookie_secure``, by default when the request came over HTTPS. Behind a proxy the scheme
    is its ``X-Forwarded-Proto``, which uvicorn trusts only from ``forwarded_allow_ips``."""
    if settings.security.cookie_secure == "auto":
        return connection.url.scheme in ("https", "wss")
    return settings.security.cookie_secure == "true"


def session_cookie_name(connection: HTTPConnection, settings: Settings) -> str:
    """``__Host-durak_session`` when Secure (a sibling subdomain cannot set or shadow it), else
    ``durak_session``. Only that name is read: a plain cookie planted next to it is ignored."""
    return SECURE_COOKIE_NAME if cookie_is_secure(connection, settings) else COOKIE_NAME


def read_session_cookie(connection: HTTPConnection, settings: Settings) -> str | None:
    return connection.cookies.get(session_cookie_name(connection, settings))


def set_session_cookie(response: Response, request: Request, value: str, settings: Settings) -> None:
    response.set_cookie(
        session_cookie_name(request, settings),
        value,
        max_age=settings.security.session_max_age_s,
        httponly=True,
        samesite="lax",
        secure=cookie_is_secure(request, settings),
        path="/",
    )


def clear_session_cookie(response: Response, request: Request, settings: Settings) -> None:
    response.delete_cookie(
        session_cookie_name(request, settings),
        httponly=True,
        samesite="lax",
        secure=cookie_is_secure(request, settings),
        path="/",
    )


# --- dependencies ---------------------------------------------------------------------------------


def get_app_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def get_registry(request: Request) -> TableRegistry:
    registry: TableRegistry = request.app.state.tables
    return registry


SettingsDep = Annotated[Settings, Depends(get_app_settings)]
DatabaseDep = Annotated[Database, Depends(get_db)]
RegistryDep = Annotated[TableRegistry, Depends(get_registry)]


async def get_session(db: DatabaseDep) -> AsyncIterator[AsyncSession]:
    async with db.session() as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]


async def get_optional_user(
    request: Request,
    db: DatabaseDep,
    settings: SettingsDep,
    durak_session: Annotated[
        str | None,
        Cookie(description="The session cookie from sign-up or log-in (over HTTPS: __Host-durak_session)."),
    ] = None,
) -> SessionInfo | None:
    value = request.cookies.get(SECURE_COOKIE_NAME) if cookie_is_secure(request, settings) else durak_session
    return await resolve_session(db, value, settings)


OptionalUser = Annotated[SessionInfo | None, Depends(get_optional_user)]


def _unauthorized() -> HTTPException:
    return HTTPException(status.HTTP_401_UNAUTHORIZED, detail="not signed in (no valid session cookie)")


async def get_current_user(user: OptionalUser) -> SessionInfo:
    """Any signed-in session: an account or a guest."""
    if user is None:
        raise _unauthorized()
    return user


CurrentUser = Annotated[SessionInfo, Depends(get_current_user)]


async def get_current_account(user: CurrentUser) -> SessionInfo:
    """A signed-in account (guests are refused with 403)."""
    if user.account_id is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="guests cannot do this; sign up for an account")
    return user


CurrentAccount = Annotated[SessionInfo, Depends(get_current_account)]


async def get_admin_account(user: CurrentUser) -> SessionInfo:
    if not user.is_admin:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="admins only")
    return user


AdminAccount = Annotated[SessionInfo, Depends(get_admin_account)]
