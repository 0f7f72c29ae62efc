"""The table websocket: ``/ws/tables/{code}``, authenticated by the session cookie at the handshake.

The handshake checks the origin, the session, the table code and the address's limit of table
sockets; the connection itself (app/api/table_connection.py) subscribes to its person channel
(views for its seat, replies to its commands) and, while it has no seat, to the table's spectator
channel, and forwards commands to the table actor's inbox.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from fastapi import WebSocket
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import Receive, Scope, Send

from app.api import signouts, table_connection
from app.api.deps import SessionInfo, account_from_cookie, read_session_cookie, resolve_info
from app.api.limits import PerAddress, address_of
from app.api.security import cross_site_refusal
from app.api.signouts import OpenSessions
from app.api.table_calls import principal_of
from app.api.table_connection import Connection
from app.api.token_bucket import TokenBucket
from app.metrics import CONNECTIONS
from app.tables.registry import StoreUnreachable, TableClosed, TableGone, TableRegistry
from app.tables.spec import Principal

log = logging.getLogger("durak.play")

PATH_PREFIX = "/ws/tables/"


def table_socket_code(scope: Scope) -> str | None:
    """The table code of a ``/ws/tables/{code}`` websocket scope, else None (the application serves
    such a socket with :func:`table_socket` ahead of its middleware stack: see ``app.main.DurakPeak``)."""
    if scope["type"] != "websocket":
        return None
    path: str = scope["path"]
    if not path.startswith(PATH_PREFIX):
        return None
    code = path[len(PATH_PREFIX) :]
    return code if code and "/" not in code else None


async def table_socket(websocket: WebSocket, code: str, receive: Receive, send: Send) -> None:
    app = websocket.app
    settings = app.state.settings
    registry: TableRegistry = app.state.tables
    # The REST guard's rule (app/api/security.py): another origin's page may not use the player's cookie.
    if cross_site_refusal(websocket.headers, scheme=websocket.url.scheme, settings=settings) is not None:
        await websocket.close(code=1008, reason="origin not allowed")  # before accept: HTTP 403
        return
    cookie = read_session_cookie(websocket, settings)
    # An account's socket is registered for sign-outs before its session is checked, so that a
    # sign-out announced while the check or the handshake is under way is not missed.
    open_sessions: OpenSessions = app.state.open_sessions
    claimed = account_from_cookie(cookie, settings)
    if claimed is not None and claimed.account_id is not None and claimed.session_id is not None:
        open_sessions.add(websocket, account_id=claimed.account_id, session_id=claimed.session_id)
    elif claimed is not None and claimed.guest_id is not None:
        open_sessions.add_guest(websocket, guest_id=claimed.guest_id)
    try:
        user = await _session_of(app.state.db, claimed)
        if cookie and (user is None or open_sessions.signed_out(websocket)):
            await websocket.close(code=1008, reason="invalid or expired session")  # HTTP 403
            return
        try:
            table_code, watch_only = await registry.resolve(code)
        except TableGone as gone:
            await websocket.accept()
            if isinstance(gone, TableClosed):
                await websocket.close(code=4010, reason="table closed (idle or finished); see the match history")
            elif isinstance(gone, StoreUnreachable):  # the client reconnects (backoff), as after 1012
                await websocket.close(code=1013, reason="the table store does not answer; try again shortly")
            else:
                await websocket.close(code=4004, reason="no table with that code")
            return
        conn = secrets.token_hex(8)
        if user is None or watch_only:
            principal = Principal(key=f"anon:{conn}", name="spectator")
        else:
            principal = principal_of(user)
        await websocket.accept()
        if open_sessions.signed_out(websocket):  # during the handshake
            await signouts.say_signed_out(websocket)
            return
        table_sockets: PerAddress = app.state.table_sockets
        address = address_of(websocket.client)
        if not table_sockets.take(address):
            await websocket.close(code=4029, reason="too many table connections from your address")
            return
        try:
            await _serve(websocket, receive, send, registry, table_code, principal, conn)
        finally:
            table_sockets.give_back(address)
    finally:
        open_sessions.discard(websocket)


async def _serve(
    websocket: WebSocket,
    receive: Receive,
    send: Send,
    registry: TableRegistry,
    table_code: str,
    principal: Principal,
    conn: str,
) -> None:
    state = websocket.app.state
    settings = state.settings
    connection = Connection(websocket, receive, send, registry, table_code, principal, conn)
    throttle = settings.throttle
    connection.bucket = TokenBucket(throttle.ws_burst, throttle.ws_rate_per_s, table_connection.rate_clock)
    connections: set[Connection] = state.connections
    connections.add(connection)
    CONNECTIONS.inc()
    try:
        if getattr(state, "leaving", False):  # opened while the server says goodbye (app.main.say_goodbye)
            await connection.goodbye()
            return
        await connection.run()
    finally:
        connections.discard(connection)
        CONNECTIONS.dec()


async def _session_of(db: Any, claimed: SessionInfo | None) -> SessionInfo | None:
    """The cookie's session (``claimed``), checked in the database (a logged-out session is refused).
    While the database is unreachable the signature alone decides, as it does for guests: players
    keep their seats through a database outage, and sign-outs announced meanwhile still close their
    sockets."""
    try:
        return await resolve_info(db, claimed)
    except (SQLAlchemyError, OSError) as exc:
        log.warning("table socket: could not check the session in the database (%s); trusting the cookie", exc)
        return claimed
