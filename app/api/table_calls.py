"""A REST request's call to a table's actor, shared by the lobby, quick play and challenge routes:
the table's principal for a session, the code resolved (404 or 410 when it is gone), the call made
again while the table changes hands, and the table's refusals and limits as HTTP errors."""

from __future__ import annotations

import asyncio

from fastapi import HTTPException, status

from app.api.deps import SessionInfo
from app.tables.answers import Answer, InfoAnswer
from app.tables.commands import Body, Info
from app.tables.registry import Draining, StoreUnreachable, TableClosed, TableGone, TableRegistry, TooMany
from app.tables.spec import Principal

MOVED_RETRY_S = 0.25  # a call refused ``moved`` (its table changing hands) is made again after this
MOVED_RETRIES = 20


def principal_of(user: SessionInfo) -> Principal:
    """Whom a table takes the session for."""
    return Principal(key=user.key, name=user.name, account_id=user.account_id, is_admin=user.is_admin)


def too_many(refused: TooMany) -> HTTPException:
    if isinstance(refused, Draining):  # this process is stopping: another one opens it (retry)
        return HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail=f"{refused.code}: {refused.message}",
            headers={"Retry-After": "1"},
        )
    return HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, detail=f"{refused.code}: {refused.message}")


def gone(exc: TableGone) -> HTTPException:
    if isinstance(exc, TableClosed):
        return HTTPException(status.HTTP_410_GONE, detail=f"table_closed: {exc.message}")
    if isinstance(exc, StoreUnreachable):  # nothing known of the table now: not a 404
        return HTTPException(
            status.HTTP_503_SERVICE_UNAVAILABLE,
            detail="unavailable: the table store does not answer; try again shortly",
            headers={"Retry-After": "1"},
        )
    return HTTPException(status.HTTP_404_NOT_FOUND, detail="no table with that code")


def check_bot_table(registry: TableRegistry, code: str, user: SessionInfo) -> None:
    """A match of bots only costs a core while it runs: a player may run only so many at once."""
    try:
        registry.check_bot_table(code, user.key)
    except TooMany as refused:
        raise too_many(refused) from None


async def table_call(registry: TableRegistry, code: str, body: Body, user: SessionInfo | None) -> Answer:
    """The table's reply to ``body`` from ``user`` (None: a spectator); a spectator link only watches."""
    try:
        table_code, watch_only = await registry.resolve(code)
    except TableGone as exc:
        raise gone(exc) from None
    if watch_only and not isinstance(body, Info):
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="a spectator link can only watch")
    principal = principal_of(user) if user is not None else Principal(key="anon", name="spectator")
    try:
        reply = await registry.call(table_code, body, principal)
        for _ in range(MOVED_RETRIES):
            if reply["type"] != "error" or reply["code"] != "moved":
                break
            # The table is changing hands (its server stops, or was fenced out): nothing was done,
            # and its next owner takes the call.
            await asyncio.sleep(MOVED_RETRY_S)
            reply = await registry.call(table_code, body, principal)
    except (TimeoutError, TableGone):
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the table did not answer in time") from None
    if reply["type"] == "error":
        code_ = reply["code"]
        http = {
            "not_creator": 403,
            "guests_free_tables_only": 403,
            "staked_play_frozen": 403,
            "unavailable": 503,
            "not_seated": 409,
            "bad_seat": 422,
            "bad_level": 422,
        }.get(code_, 409)
        raise HTTPException(http, detail=f"{code_}: {reply['message']}")
    return reply


async def info_reply(registry: TableRegistry, code: str, user: SessionInfo | None) -> InfoAnswer:
    """The table's ``info``, which refuses nobody: 404 or 410 for the code, 503 when the table does
    not answer."""
    try:
        table_code, _ = await registry.resolve(code)
    except TableGone as exc:
        raise gone(exc) from None
    principal = principal_of(user) if user is not None else Principal(key="anon", name="spectator")
    try:
        reply = await registry.call(table_code, Info(), principal)
    except (TimeoutError, TableGone):
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail="the table did not answer in time") from None
    if reply["type"] != "info":  # refused
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail=f"{reply.get('code')}: {reply.get('message')}")
    return reply
