"""Starting a guest session: ``POST /api/auth/guest``, and quick play's guest made on the spot."""

from __future__ import annotations

import secrets

from fastapi import HTTPException, Request, Response, status

from app.api.deps import SessionInfo, make_cookie, set_session_cookie
from app.api.throttle import AuthThrottles, client_address, retry_later
from app.config import Settings
from app.db import accounts
from app.db.session import Database

GUEST_NAME_TRIES = 5  # generated names tried before giving up (each a one-in-9000 clash at most)


def generated_guest_name() -> str:
    """``Guest`` and four digits: a name that passes the account-name rules."""
    return f"Guest{secrets.randbelow(9000) + 1000}"


async def start_guest_session(
    request: Request, response: Response, db: Database, settings: Settings, name: str | None, *, spare: bool = False
) -> SessionInfo:
    """A new guest session (its cookie set on ``response``), counted against the address's guest
    limit (429 past it). ``name`` must not be a registered player's (409); None, or with ``spare``
    a registered ``name``, picks a generated name that is nobody's (quick play's guest made on the
    spot, docs/api.md)."""
    throttles: AuthThrottles = request.app.state.auth_throttles
    # Counted before the name check, so that it cannot tell registered names apart any faster
    # than sign-up can.
    wait = await throttles.guest.admit(db, client_address(request))
    if wait is not None:
        raise retry_later(wait, "too many guest sessions from this address")
    spares = [generated_guest_name() for _ in range(GUEST_NAME_TRIES)] if name is None or spare else []
    candidates = ([] if name is None else [name]) + spares
    async with db.session() as session:
        for candidate in candidates:
            if await accounts.get_by_name(session, candidate) is None:
                break
        else:
            if not spares:
                raise HTTPException(
                    status.HTTP_409_CONFLICT, detail=f"name_registered: {name} is a registered player's name"
                )
            raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="no free guest name; try again")
    value, info = make_cookie(settings, name=candidate)
    set_session_cookie(response, request, value, settings)
    return info
