"""Request/reply to a table's actor wherever it runs: the command goes to the table's inbox channel
with a fresh reply channel, and the first reply on it is the answer."""

from __future__ import annotations

import asyncio
import uuid

import orjson

from app.broker.base import Broker, Gap
from app.tables.answers import Answer
from app.tables.calls import TableGone
from app.tables.commands import Body, Command, command_to_json
from app.tables.spec import Principal
from app.transport import channels

CALL_TIMEOUT_S = 10.0


async def call_table(
    broker: Broker, code: str, body: Body, principal: Principal, *, id: str | None = None, conn: str | None = None
) -> Answer:
    """Send a command (its typed ``body``, from ``principal``; ``id``: a player's command id,
    ``conn``: on behalf of that connection) to the table's actor, wherever it runs, and wait for
    its answer: ``TimeoutError`` when none comes within ``CALL_TIMEOUT_S``, :class:`TableGone` when
    the reply channel ends."""
    reply_channel = f"reply:{uuid.uuid4().hex}"
    command = Command(body, principal=principal, conn=conn, reply=reply_channel, id=id)
    async with broker.subscribe(reply_channel) as sub:
        await broker.publish(channels.inbox(code), command_to_json(command))
        async with asyncio.timeout(CALL_TIMEOUT_S):
            async for item in sub:
                if isinstance(item, Gap):
                    continue
                reply: Answer = orjson.loads(item.data)  # as the actor answered it (``Answers.answer``)
                return reply
    raise TableGone(code)
