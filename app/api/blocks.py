"""Blocks in the table chat: the chat fan-out (``app.api.chat``) never hands a blocker the lines of a
player he blocked, history included.

Each server process keeps the block lists of the accounts with a table connection here (loaded when a
connection joins a table's chat). A block or unblock reloads the blocker's list here at once and, over
the broker channel ``social:blocks``, in every other process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref

from app.broker import Broker, BrokerError, Event, Gap
from app.db import friends
from app.db.session import Database
from app.tables.chat import ChatLine
from app.tables.registry import TableRegistry
from app.tables.spec import Principal

log = logging.getLogger("durak.blocks")

CHANNEL = "social:blocks"


class BlockLists:
    def __init__(self, db: Database, broker: Broker) -> None:
        self.db = db
        self.broker = broker
        self.hidden: dict[int, frozenset[str]] = {}  # blocker's account id -> person keys he blocked
        self._reloads: set[asyncio.Task[frozenset[str]]] = set()

    async def load(self, account_id: int) -> frozenset[str]:
        async with self.db.session() as session:
            keys = frozenset(f"a:{other}" for other in await friends.blocked_by(session, account_id))
        self.hidden[account_id] = keys
        return keys

    async def warm(self, principal: Principal) -> None:
        if principal.account_id is not None and principal.account_id not in self.hidden:
            try:
                await self.load(principal.account_id)
            except Exception:  # the database away: chat goes on unfiltered until the next load
                log.warning("could not load the block list of account %s", principal.account_id, exc_info=True)

    def hides(self, principal: Principal, line: ChatLine) -> bool:
        if principal.account_id is None:
            return False
        keys = self.hidden.get(principal.account_id)
        return keys is not None and line["from"]["player"] in keys

    async def changed(self, account_id: int) -> None:
        """The account blocked or unblocked someone: reload here, and tell the other processes."""
        await self.load(account_id)
        with contextlib.suppress(BrokerError, OSError):
            await self.broker.publish(CHANNEL, str(account_id))

    def heard(self, item: Event) -> None:
        if isinstance(item, Gap):
            self.hidden.clear()  # missed changes: load again as connections come
            return
        with contextlib.suppress(ValueError):
            account_id = int(item.data)
            if account_id in self.hidden:
                task = asyncio.get_running_loop().create_task(self.load(account_id))
                self._reloads.add(task)
                task.add_done_callback(self._reloads.discard)

    async def follow(self) -> None:
        await self.broker.follow(CHANNEL, self.heard)


_lists: weakref.WeakKeyDictionary[TableRegistry, BlockLists] = weakref.WeakKeyDictionary()


def attach(registry: TableRegistry, lists: BlockLists) -> None:
    _lists[registry] = lists


def of(registry: TableRegistry) -> BlockLists | None:
    return _lists.get(registry)


async def warm(registry: TableRegistry, principal: Principal) -> None:
    lists = _lists.get(registry)
    if lists is not None:
        await lists.warm(principal)


def hides(registry: TableRegistry, principal: Principal, line: ChatLine) -> bool:
    """Whether ``principal`` blocked the sender of chat ``line``."""
    lists = _lists.get(registry)
    return lists is not None and lists.hides(principal, line)
