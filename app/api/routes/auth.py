"""Sign up, log in, guest sessions, log out, change a password."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request, Response, status
from sqlalchemy.ext.asyncio import AsyncSession

from app.api import signouts
from app.api.deps import (
    CurrentAccount,
    DatabaseDep,
    SettingsDep,
    account_from_cookie,
    clear_session_cookie,
    get_db,
    make_cookie,
    read_session_cookie,
    resolve_session,
    session_expires_at,
    set_session_cookie,
)
from app.api.devices import device_of
from app.api.errors import responses
from app.api.guest_sessions import start_guest_session
from app.api.schemas import GuestIn, LoginIn, MeOut, PasswordChangeIn, SignupIn
from app.api.throttle import AuthThrottles, client_address, retry_later
from app.config import Settings
from app.db import accounts, integrity, ledger, login_sessions
from app.db.errors import NameTaken
from app.db.passwords import hash_password, needs_rehash, verify_password
from app.db.session import Database

router = APIRouter(prefix="/api/auth", tags=["auth"])


@router.post(
    "/signup",
    status_code=status.HTTP_201_CREATED,
    responses={
        201: {"description": "Account created, signed in (sets the durak_session cookie)."},
        **responses(
            400,
            409,
            429,
            r409="The name is taken (names are compared case-insensitively).",
            r429="Too many sign-ups from this address lately; Retry-After says when to try again.",
        ),
    },
)
async def signup(body: SignupIn, request: Request, response: Response, db: DatabaseDep, settings: SettingsDep) -> MeOut:
    """Create an account credited with the starting balance (`DURAK_STARTING_BALANCE`), and sign
    in. Each address may sign up `DURAK_SIGNUPS_PER_IP` times per `DURAK_SIGNUP_WINDOW_S` (an IPv6
    /64 counts as one address; its /56 and /48 also have their limits, `DURAK_SIGNUPS_PER_56` and
    `DURAK_SIGNUPS_PER_48`)."""
    throttles: AuthThrottles = request.app.state.auth_throttles
    wait = await throttles.admit_signup(db, request)
    if wait is not None:
        raise retry_later(wait, "too many sign-ups from this address")
    password_hash = await hash_password(body.password)

    issued = time.time()

    address, device = client_address(request), device_of(request)

    async def create(session: AsyncSession) -> tuple[int, int | None, str]:
        account = await accounts.create_account(
            session, name=body.name, password_hash=password_hash, starting_balance=settings.security.starting_balance
        )
        # docs/integrity.md: accounts of one device, or of one address within a day, are related.
        await integrity.record_signup_address(session, account_id=account.id, address=address)
        await integrity.saw_device(session, device=device, account_id=account.id)
        session_id = await _login_session(session, settings, account_id=account.id, issued=issued)
        return account.id, await ledger.balance_of(session, account.id), session_id

    try:
        account_id, balance, session_id = await db.write(create)
    except NameTaken as exc:
        raise HTTPException(status.HTTP_409_CONFLICT, detail=str(exc)) from exc
    value, _ = make_cookie(settings, account_id=account_id, session_id=session_id, name=body.name, now=issued)
    set_session_cookie(response, request, value, settings)
    return MeOut(id=account_id, name=body.name, kind="account", balance=balance, is_admin=False)


@router.post(
    "/login",
    responses={
        200: {"description": "Signed in (sets the durak_session cookie)."},
        **responses(
            400,
            401,
            429,
            r401="Unknown name or wrong password.",
            r429="Too many log-ins from this address, or wrong passwords for this name from this address, "
            "lately; Retry-After says when to try again.",
        ),
    },
)
async def login(body: LoginIn, request: Request, response: Response, db: DatabaseDep, settings: SettingsDep) -> MeOut:
    throttles: AuthThrottles = request.app.state.auth_throttles
    address = client_address(request)
    wait = await throttles.login.admit(db, address)
    if wait is not None:
        raise retry_later(wait, "too many log-ins from this address")
    # Wrong passwords count per name and address: a stranger cannot lock the player out. Each
    # attempt is counted before its password is checked (a right one clears the count), so that a
    # burst of guesses sent at once gets no more tries than guesses one after another.
    name_here = f"{address}:{body.name}"
    wait = await throttles.wrong_password.admit(db, name_here)
    if wait is not None:
        raise retry_later(wait, "too many wrong passwords for this name")
    async with db.session() as session:
        account = await accounts.get_by_name(session, body.name)
        stored_hash = account.password_hash if account else None
    if not await verify_password(stored_hash, body.password) or account is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, detail="unknown name or wrong password")
    await throttles.wrong_password.clear(db, name_here)
    if needs_rehash(account.password_hash):
        new_hash = await hash_password(body.password)
        account_id = account.id

        async def rehash(session: AsyncSession) -> None:
            await accounts.set_password_hash(session, account_id=account_id, password_hash=new_hash)

        await db.write(rehash)
    async with db.session() as session:
        view = await accounts.view(session, account.id)
    assert view is not None
    value = await _start_session(db, settings, account_id=view.id, name=view.name, device=device_of(request))
    set_session_cookie(response, request, value, settings)
    return MeOut(id=view.id, name=view.name, kind="account", balance=view.balance, is_admin=view.is_admin)


@router.post(
    "/guest",
    responses={
        200: {"description": "A guest session (sets the durak_session cookie)."},
        **responses(
            400,
            409,
            429,
            r409="The name is a registered player's (compared case-insensitively).",
            r429="Too many guest sessions from this address lately; Retry-After says when to try again.",
        ),
    },
)
async def guest(body: GuestIn, request: Request, response: Response, settings: SettingsDep) -> MeOut:
    """A session without an account: free tables and spectating only, no coins. The name must not
    be a registered player's; answers and clients mark guests as such. Each address may start
    `DURAK_GUESTS_PER_IP` guest sessions per `DURAK_GUEST_WINDOW_S`."""
    info = await start_guest_session(request, response, get_db(request), settings, body.name)
    return MeOut(id=None, name=info.name, kind="guest", balance=None, is_admin=False)


@router.post(
    "/guest/name",
    responses={
        200: {"description": "The guest's new name (a new durak_session cookie, the same guest)."},
        **responses(
            400,
            401,
            403,
            409,
            r403="Accounts change no names here.",
            r409="The name is a registered player's (compared case-insensitively).",
        ),
    },
)
async def rename_guest(body: GuestIn, request: Request, response: Response, settings: SettingsDep) -> MeOut:
    """A guest picks another name (the generated one of quick play, say). The same guest: his seats
    keep him; tables he sits down at from now on show the new name."""
    db = get_db(request)
    # A signed-out guest's cookie (a copy taken before the sign-out) mints no new one: resolved in
    # the database like every other session, not by its signature alone.
    info = await resolve_session(db, read_session_cookie(request, settings), settings)
    if info is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, detail="not signed in (no valid session cookie)")
    if info.guest_id is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="guests_only: an account keeps its name")
    async with db.session() as session:
        if await accounts.get_by_name(session, body.name) is not None:
            raise HTTPException(
                status.HTTP_409_CONFLICT, detail=f"name_registered: {body.name} is a registered player's name"
            )
    value, _ = make_cookie(settings, name=body.name, guest_id=info.guest_id)
    set_session_cookie(response, request, value, settings)
    return MeOut(id=None, name=body.name, kind="guest", balance=None, is_admin=False)


@router.post(
    "/logout",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={
        204: {
            "description": "Signed out: an account's login session is revoked (with everywhere=true, every "
            "one of the account's sessions, on every device), a guest's session likewise, and the session "
            "cookie is cleared."
        }
    },
)
async def logout(
    request: Request,
    response: Response,
    db: DatabaseDep,
    settings: SettingsDep,
    everywhere: Annotated[bool, Query(description="Also sign out the account's other browsers and devices.")] = False,
) -> None:
    """Sign out, an account or a guest. The cookie stops working on the server too, so a copy of it
    is useless afterwards, and the session's table sockets are closed."""
    info = account_from_cookie(read_session_cookie(request, settings), settings)
    if info is not None and info.guest_id is not None:
        # Every cookie of the guest stops working, not only this one: another (a renamed guest's,
        # or a copy renewed before the sign-out) may expire later, but none later than a cookie
        # made now would.
        guest_id, expires_at = info.guest_id, max(info.expires_at, session_expires_at(settings, now=time.time()))

        async def sign_out(session: AsyncSession) -> bool:
            return await login_sessions.sign_out_guest(session, guest_id=guest_id, expires_at=expires_at)

        if await db.write(sign_out):
            await signouts.announce_guest(request.app.state.broker, guest_id=guest_id)
    if info is not None and info.account_id is not None and info.session_id is not None:
        account_id, session_id = info.account_id, info.session_id

        async def revoke(session: AsyncSession) -> bool:
            # Only a live session speaks for the account: an old copy of a revoked cookie cannot
            # sign its owner out everywhere.
            if not await login_sessions.revoke(session, session_id=session_id):
                return False
            if everywhere:
                await login_sessions.revoke_all(session, account_id=account_id)
            return True

        if await db.write(revoke):
            await signouts.announce(
                request.app.state.broker, account_id=account_id, session_id=None if everywhere else session_id
            )
    clear_session_cookie(response, request, settings)


@router.post(
    "/password",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={
        204: {
            "description": "The password is changed. Every session of the account (other browsers, copies of "
            "cookies, this one's table sockets) is signed out; this browser gets a new session cookie."
        },
        **responses(
            400,
            401,
            403,
            429,
            r403="`wrong_password`: the current password is wrong; or a guest, who has no password.",
            r429="Too many wrong passwords for this name from this address lately; Retry-After says when to try again.",
        ),
    },
)
async def change_password(
    body: PasswordChangeIn,
    request: Request,
    response: Response,
    user: CurrentAccount,
    db: DatabaseDep,
    settings: SettingsDep,
) -> None:
    """Change your password, giving the current one. Wrong current passwords count against the
    same limit as wrong passwords at log-in (per name and address)."""
    assert user.account_id is not None
    throttles: AuthThrottles = request.app.state.auth_throttles
    name_here = f"{client_address(request)}:{user.name}"
    wait = await throttles.wrong_password.admit(db, name_here)  # counted before the check, as at log-in
    if wait is not None:
        raise retry_later(wait, "too many wrong passwords for this name")
    async with db.session() as session:
        account = await accounts.get(session, user.account_id)
        stored_hash = account.password_hash if account is not None else None
    if not await verify_password(stored_hash, body.current_password):
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="wrong_password: the current password is wrong")
    await throttles.wrong_password.clear(db, name_here)
    new_hash = await hash_password(body.new_password)
    account_id, issued = user.account_id, time.time()

    async def change(session: AsyncSession) -> str:
        # Every session ends, this browser's too (a copy of its cookie may be why the password
        # changes); this browser gets a new one at once.
        await accounts.change_password(session, account_id=account_id, password_hash=new_hash)
        return await _login_session(session, settings, account_id=account_id, issued=issued)

    session_id = await db.write(change)
    await signouts.announce(request.app.state.broker, account_id=account_id, session_id=None, keep=session_id)
    value, _ = make_cookie(settings, account_id=account_id, session_id=session_id, name=user.name, now=issued)
    set_session_cookie(response, request, value, settings)


async def _start_session(db: Database, settings: Settings, *, account_id: int, name: str, device: str | None) -> str:
    """A new login session for the account, as a signed cookie value; the browser's device is noted."""
    issued = time.time()

    async def start(session: AsyncSession) -> str:
        await integrity.saw_device(session, device=device, account_id=account_id)
        return await _login_session(session, settings, account_id=account_id, issued=issued)

    session_id = await db.write(start)
    value, _ = make_cookie(settings, account_id=account_id, session_id=session_id, name=name, now=issued)
    return value


async def _login_session(session: AsyncSession, settings: Settings, *, account_id: int, issued: float) -> str:
    """The row of a login session whose cookie is made at ``issued`` (they expire together)."""
    expires_at = session_expires_at(settings, now=issued)
    return await login_sessions.start(session, account_id=account_id, expires_at=expires_at)
