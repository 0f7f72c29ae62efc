"""The social side's background work, for the life of the app: the seasons' rollover (every minute:
a read, and a write only when a season has ended), the block lists the table chat filters with, the
Web Push sender and the "your turn" notices of players who went away.

``running(app)`` is entered by the app's lifespan once the database and the table registry are up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from fastapi import FastAPI

from app import push
from app.api import blocks
from app.api.season_clock import rolled_over, utc_now
from app.api.turn_push import AwayTurns
from app.db.seasons import SeasonRules
from app.db.session import Database
from app.push import PushSender
from app.tables.registry import TableRegistry

log = logging.getLogger("durak.social")

ROLL_OVER_EVERY_S = 60.0


async def roll_over_forever(
    db: Database,
    rules: SeasonRules,
    clock: Callable[[], datetime],
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Archive each season soon after it ends, even when nobody plays or looks (every
    ``ROLL_OVER_EVERY_S``, waited with ``sleep``: tests pass a fake clock's)."""
    while True:
        try:
            await rolled_over(db, clock(), rules)
        except Exception:  # a database away: next time
            log.warning("season rollover failed; trying again in a minute", exc_info=True)
        await sleep(ROLL_OVER_EVERY_S)


async def start_push(app: FastAPI, registry: TableRegistry) -> PushSender | None:
    """The Web Push sender (its VAPID key from the settings or the database), told of challenges and
    of players whose turn came while they were away. None, and push is off, when the key cannot be had."""
    state = app.state
    try:
        vapid = await push.vapid_key(state.db, state.settings.push.vapid_private_key)
    except Exception:
        log.exception("Web Push is off: no VAPID key (DURAK_VAPID_PRIVATE_KEY, or the database)")
        return None
    sender = push.PushSender(state.db, vapid, state.settings.push.vapid_subject, http=getattr(state, "push_http", None))
    state.push = sender

    def challenged(account_id: int, challenge: Any) -> None:
        sender.notify_soon(account_id, push.challenge_notice(challenge.from_name, challenge.code, challenge.rules))

    state.push_challenge = challenged
    registry.change_watchers.append(AwayTurns(sender))
    return sender


@asynccontextmanager
async def running(app: FastAPI, registry: TableRegistry) -> AsyncIterator[None]:
    state = app.state
    if not hasattr(state, "clock"):
        state.clock = utc_now

    def clock() -> datetime:
        now: datetime = state.clock()
        return now

    tasks = [asyncio.create_task(roll_over_forever(state.db, state.settings.seasons, clock))]
    lists = blocks.BlockLists(state.db, registry.broker)  # the table chat's block filter
    blocks.attach(registry, lists)
    tasks.append(asyncio.create_task(lists.follow()))
    sender = await start_push(app, registry)
    try:
        yield
    finally:
        if sender is not None:
            await sender.close()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
