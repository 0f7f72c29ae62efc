"""Signing out closes the table sockets of the revoked sessions, in every server process.

``POST /api/auth/logout`` revokes the session in the database (an account's login session, or a
guest's id in ``guest_signouts``), then announces it on the broker's ``signouts`` channel; every
process closes its open table sockets of that session (or, with ``everywhere``, a password change
or an admin's password reset, of the whole account) with ``bye`` ``signed_out`` and close code 4001.
When the announcements may have been missed (a gap in the subscription, the broker down for a
while), the process checks every open socket's session in the database instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, field
from typing import Any

import orjson
from fastapi import WebSocket
from starlette.websockets import WebSocketState

from app.broker import Broker, BrokerError, Gap
from app.db import login_sessions
from app.db.session import Database
from app.tables.messages import Bye

log = logging.getLogger("durak.signouts")

CHANNEL = "signouts"
CLOSE_CODE = 4001
BYE = Bye.wire_text(code="signed_out", message="this session was signed out; sign in again to play")


@dataclass
class OpenSessions:
    """The table sockets of this process that belong to an account's login session."""

    db: Database
    _sockets: dict[WebSocket, tuple[int, str]] = field(default_factory=dict)
    _guests: dict[WebSocket, str] = field(default_factory=dict)  # a guest's sockets: his guest id
    _early: set[WebSocket] = field(default_factory=set)  # signed out before the handshake finished
    _closing: set[asyncio.Task[None]] = field(default_factory=set)

    def __len__(self) -> int:
        """How many sockets are registered (accepted or still in their handshake)."""
        return len(self._sockets) + len(self._guests) + len(self._early)

    def add(self, websocket: WebSocket, *, account_id: int, session_id: str) -> None:
        self._sockets[websocket] = (account_id, session_id)

    def add_guest(self, websocket: WebSocket, *, guest_id: str) -> None:
        self._guests[websocket] = guest_id

    def discard(self, websocket: WebSocket) -> None:
        self._sockets.pop(websocket, None)
        self._guests.pop(websocket, None)
        self._early.discard(websocket)

    def signed_out(self, websocket: WebSocket) -> bool:
        """Whether the socket's session was signed out before its handshake finished (the
        handshake then refuses or closes it)."""
        return websocket in self._early

    def close_signed_out(self, *, account_id: int, session_id: str | None, keep: str | None = None) -> int:
        """Close the sockets of one session (``session_id``) or of every session of the account
        (but ``keep``, the browser that changed the password)."""
        doomed = [
            ws
            for ws, (account, session) in self._sockets.items()
            if account == account_id and (session == session_id if session_id is not None else session != keep)
        ]
        for ws in doomed:
            self._close(ws)
        return len(doomed)

    def close_guest(self, guest_id: str) -> int:
        """Close the sockets of a guest who signed out."""
        doomed = [ws for ws, held in self._guests.items() if held == guest_id]
        for ws in doomed:
            self._close(ws)
        return len(doomed)

    async def close_revoked(self) -> int:
        """Check every open socket's session in the database; close those no longer live."""
        held = {session for _, session in self._sockets.values()}
        guests = set(self._guests.values())
        if not held and not guests:
            return 0
        async with self.db.session() as session:
            live = await login_sessions.live_ids(session, held) if held else set()
            gone = await login_sessions.signed_out_guests(session, guests) if guests else set()
        # Only the sessions just checked: a socket registered while the query ran (a reconnect right
        # after a broker outage) holds a session nobody looked up, not a revoked one.
        doomed = [ws for ws, (_, session_id) in self._sockets.items() if session_id in held and session_id not in live]
        doomed += [ws for ws, guest_id in self._guests.items() if guest_id in gone]
        for ws in doomed:
            self._close(ws)
        return len(doomed)

    def _close(self, websocket: WebSocket) -> None:
        self._sockets.pop(websocket, None)
        self._guests.pop(websocket, None)
        if websocket.application_state is WebSocketState.CONNECTING:  # not accepted yet
            self._early.add(websocket)
            return
        self._spawn(say_signed_out(websocket))

    def on_message(self, item: Any) -> None:
        """The sink of the ``signouts`` subscription."""
        if isinstance(item, Gap):  # announcements may be lost: ask the database
            self._check_later()
            return
        try:
            message = orjson.loads(item.data)
            guest_id = message.get("guest")
            account_id = None if guest_id is not None else message["account"]
            session_id, keep = message.get("session"), message.get("keep")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            log.warning("signouts: ignored a malformed announcement %r", item.data[:200])
            return
        if isinstance(guest_id, str):
            self.close_guest(guest_id)
        elif (
            isinstance(account_id, int)
            and (session_id is None or isinstance(session_id, str))
            and (keep is None or isinstance(keep, str))
        ):
            self.close_signed_out(account_id=account_id, session_id=session_id, keep=keep)

    def _check_later(self) -> None:
        async def check() -> None:
            try:
                await self.close_revoked()
            except Exception:
                log.exception("signouts: could not check the open sockets' sessions")

        self._spawn(check())

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in a task that is kept until it ends (and cancelled when following stops)."""
        task = asyncio.get_running_loop().create_task(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _on_live(self, after_outage: bool) -> None:
        if after_outage:  # announcements may have been missed while the broker was down
            self._check_later()

    @contextlib.asynccontextmanager
    async def following(self, broker: Broker) -> AsyncIterator[OpenSessions]:
        """Listen for announcements while the context lasts."""
        task = asyncio.create_task(broker.follow(CHANNEL, self.on_message, on_live=self._on_live))
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            for closing in list(self._closing):
                closing.cancel()


async def announce(broker: Broker, *, account_id: int, session_id: str | None, keep: str | None = None) -> None:
    """Tell every process that a session (``None``: every session of the account but ``keep``) was
    signed out. The revocation in the database already holds; a broker error is only logged."""
    message: dict[str, object] = {"account": account_id, "session": session_id}
    if keep is not None:
        message["keep"] = keep
    try:
        await broker.publish(CHANNEL, orjson.dumps(message))
    except BrokerError:
        log.warning("signouts: could not announce a sign-out of account %s; open sockets stay open", account_id)


async def announce_guest(broker: Broker, *, guest_id: str) -> None:
    """Tell every process that a guest signed out (``announce`` for a guest)."""
    try:
        await broker.publish(CHANNEL, orjson.dumps({"guest": guest_id}))
    except BrokerError:
        log.warning("signouts: could not announce a guest's sign-out; open sockets stay open")


async def say_signed_out(websocket: WebSocket) -> None:
    with contextlib.suppress(Exception):
        await websocket.send_text(BYE)
        await websocket.close(code=CLOSE_CODE, reason="signed out")
