"""In-app notices to one account, in every server process: a broker channel per account
(``notices:<account id>``) that the account's notice feeds (``GET /api/notices/stream``, one per open
page) follow. What a feed shows at first comes from the database (its ``snapshot``), so a notice
published while nobody listened is not lost: it is in the next snapshot.
"""

from __future__ import annotations

import contextlib
import logging
from typing import Any

import orjson

from app import event_feed
from app.broker import Broker, BrokerError

log = logging.getLogger("durak.notices")


def channel(account_id: int) -> str:
    return f"notices:{account_id}"


async def tell(broker: Broker, account_id: int, event: str, data: Any) -> None:
    """Publish one notice (``event`` with ``data``) to the account's open feeds; lost quietly when
    the broker is down (the next snapshot has it)."""
    message = orjson.dumps({"event": event, "data": data}, default=str)
    with contextlib.suppress(BrokerError, OSError):
        await broker.publish(channel(account_id), message)


def sse(event: str, data: Any) -> bytes:
    """A notice as a server-sent event (what JSON has no type for, a time, as its text)."""
    return event_feed.sse(event, data, default=str)
