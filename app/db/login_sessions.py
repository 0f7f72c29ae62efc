"""Login sessions of accounts: started by sign-up and log-in, checked on every request and
websocket handshake, revoked by log-out (one browser or every one), a password change or an
admin's password reset. Guests have no login session; their log-outs are ``guest_signouts``."""

from __future__ import annotations

import secrets
from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.base import utcnow
from app.db.models import Account, GuestSignout, LoginSession


async def start(session: AsyncSession, *, account_id: int, expires_at: datetime) -> str:
    """A new session id for ``account_id``; the account's expired sessions are dropped on the way."""
    now = utcnow()
    await session.execute(
        delete(LoginSession).where(LoginSession.account_id == account_id, LoginSession.expires_at <= now)
    )
    session_id = secrets.token_hex(16)
    session.add(LoginSession(id=session_id, account_id=account_id, created_at=now, expires_at=expires_at))
    await session.flush()
    return session_id


def _live() -> tuple[ColumnElement[bool], ...]:
    """What makes a session live: neither revoked nor expired."""
    return LoginSession.revoked_at.is_(None), LoginSession.expires_at > utcnow()


async def live_account(session: AsyncSession, *, session_id: str, account_id: int) -> Account | None:
    """The account of a live session, else ``None``."""
    return await session.scalar(
        select(Account)
        .join(LoginSession, LoginSession.account_id == Account.id)
        .where(LoginSession.id == session_id, Account.id == account_id, *_live())
    )


async def live_ids(session: AsyncSession, session_ids: Collection[str]) -> set[str]:
    """Which of ``session_ids`` are live."""
    return set(await session.scalars(select(LoginSession.id).where(LoginSession.id.in_(session_ids), *_live())))


async def revoke(session: AsyncSession, *, session_id: str) -> bool:
    """Revoke one session; ``False`` if it was unknown or already revoked."""
    return await _revoke(session, LoginSession.id == session_id) > 0


async def revoke_all(session: AsyncSession, *, account_id: int) -> int:
    """Revoke every live session of ``account_id``; how many there were."""
    return await _revoke(session, LoginSession.account_id == account_id)


async def _revoke(session: AsyncSession, which: ColumnElement[bool]) -> int:
    result: Any = await session.execute(
        update(LoginSession).where(which, LoginSession.revoked_at.is_(None)).values(revoked_at=utcnow())
    )
    return int(result.rowcount)


# ---------------------------------------------------------------------- guests


async def sign_out_guest(session: AsyncSession, *, guest_id: str, expires_at: datetime) -> bool:
    """Every cookie of the guest ``guest_id`` stops working until ``expires_at`` (its cookie's own
    expiry, after which the cookie is refused anyway); ``False`` if it was signed out already.
    Signed-out guests whose cookies have expired are forgotten on the way."""
    await session.execute(delete(GuestSignout).where(GuestSignout.expires_at <= utcnow()))
    if await session.get(GuestSignout, guest_id) is not None:
        return False
    session.add(GuestSignout(guest_id=guest_id, expires_at=expires_at))
    await session.flush()
    return True


async def guest_signed_out(session: AsyncSession, *, guest_id: str) -> bool:
    return await session.get(GuestSignout, guest_id) is not None


async def signed_out_guests(session: AsyncSession, guest_ids: Collection[str]) -> set[str]:
    """Which of ``guest_ids`` are signed out."""
    return set(await session.scalars(select(GuestSignout.guest_id).where(GuestSignout.guest_id.in_(guest_ids))))
