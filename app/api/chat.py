"""The socket side of table chat: takes ``chat``/``chat_phrase`` frames from a table connection,
publishes them on the table's chat channel, and hands what that channel carries to this process's
connections at the table (after their welcome, which the table's last lines follow).

One :class:`ChatHub` per table registry (per process). It keeps one broker subscription per table
with connections here, whatever their number; the table facts a line needs (chat on or off, the
sender's seat, whether a staked match runs and who plays it) are asked from the table for each line,
so that they are the table's real state when it is said.

The spectators' chat said during a staked match is hidden from that match's players (the line
names them: ``hidden_from``), and a player is a person, not a connection: a connection is taken for
the persons its cookies stand for (``persons``: its session's account or guest, also on a socket
opened with a watch link, and every account seen on its browser's device cookie), so a player's
second socket — anonymous, another tab, a watch link, another account on his browser — does not
see it either.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
import weakref
from collections.abc import Coroutine
from typing import Any, Protocol

import orjson
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError

from app.api import blocks
from app.api.deps import account_from_cookie, read_session_cookie
from app.api.devices import device_cookie_name
from app.broker import BrokerError, Event, Gap
from app.db.models import DeviceAccount
from app.integrity_policy import valid_device
from app.tables import chat
from app.tables.answers import facts_of
from app.tables.commands import Info
from app.tables.messages import Ack, Chat, Error
from app.tables.registry import TableGone, TableRegistry
from app.tables.spec import Principal, TableStatus
from app.tables.table_facts import TableFacts
from app.transport import channels

log = logging.getLogger("durak.chat")


class ChatConnection(Protocol):
    """What the hub needs of a table websocket's ``Connection`` (app/api/table_connection.py): its
    table, whom it stands for, whether it has a seat, whether it is closing, and a way to write a
    message."""

    code: str
    principal: Principal
    seated: bool
    closing: asyncio.Task[None] | None

    def send(self, payload: dict[str, Any] | str) -> None: ...


class TableChat:
    """This process's connections at one table and the subscription that feeds them."""

    def __init__(self) -> None:
        self.connections: dict[ChatConnection, list[chat.ChatLine] | None] = {}  # -> lines held until history
        self.follow: asyncio.Task[None] | None = None
        self.live: asyncio.Future[None] = asyncio.get_running_loop().create_future()


class ChatHub:
    def __init__(self, registry: TableRegistry) -> None:
        self.registry = registry
        self.tables: dict[str, TableChat] = {}
        self.rate = chat.RateLimit()
        self._order: dict[ChatConnection, asyncio.Lock] = {}  # a connection's lines are published in order
        self.persons: dict[ChatConnection, frozenset[str]] = {}  # whom each connection's cookies stand for

    # --- receiving: one subscription per table, fanned out to the connections here

    def join(self, connection: ChatConnection) -> None:
        """A connection got its first welcome: send it the table's last lines, then every new line."""
        table = self.tables.get(connection.code)
        if table is None:
            table = self.tables[connection.code] = TableChat()
            table.follow = asyncio.get_running_loop().create_task(self._follow(connection.code, table))
        if connection in table.connections:
            return
        table.connections[connection] = []
        _spawn(self._send_history(connection, table))

    def leave(self, connection: ChatConnection) -> None:
        self._order.pop(connection, None)
        self.persons.pop(connection, None)
        table = self.tables.get(connection.code)
        if table is None or table.connections.pop(connection, 0) == 0:
            return
        if not table.connections:
            del self.tables[connection.code]
            if table.follow is not None:
                table.follow.cancel()

    async def _follow(self, code: str, table: TableChat) -> None:
        def live(after_outage: bool) -> None:
            if not table.live.done():
                table.live.set_result(None)

        await self.registry.broker.follow(channels.chat(code), lambda item: self._deliver(table, item), on_live=live)

    def _deliver(self, table: TableChat, item: Event) -> None:
        if isinstance(item, Gap):
            return  # chat lines lost in an outage stay lost; the game resyncs on its own channels
        line: chat.ChatLine = orjson.loads(item.data)  # as the sender published it (``chat.chat_line``)
        for connection, held in table.connections.items():
            if held is not None:
                held.append(line)
            else:
                self._send_line(connection, line)

    async def _send_history(self, connection: ChatConnection, table: TableChat) -> None:
        await blocks.warm(self.registry, connection.principal)  # whose lines this player blocked
        self.persons[connection] = await persons_of(connection)  # before any line: hidden ones stay held
        lines: list[chat.ChatLine] = []
        try:
            async with asyncio.timeout(5):
                await asyncio.shield(table.live)
            lines = await chat.history(self.registry.broker, connection.code)
        except (BrokerError, TimeoutError, OSError) as exc:
            code = connection.code  # a secret: only its first 8 characters are logged, as elsewhere
            log.warning("chat: no history for table %s (%s)", code[:8], str(exc).replace(code, code[:8]))
        held = table.connections.get(connection)
        if held is None:
            return  # gone meanwhile
        seen = {line.get("id") for line in lines}
        for line in lines:
            kept = line.copy()
            kept["history"] = True
            self._send_line(connection, kept)
        for line in held:
            if line.get("id") not in seen:
                self._send_line(connection, line)
        table.connections[connection] = None

    def _send_line(self, connection: ChatConnection, line: chat.ChatLine) -> None:
        if connection.closing is not None:
            return
        if not chat.visible(line, seated=connection.seated, persons=self.persons.get(connection)):
            return
        if blocks.hides(self.registry, connection.principal, line):  # never a blocked sender's lines
            return
        with contextlib.suppress(Exception):
            connection.send(_chat_line(chat.public(line)))

    # --- sending

    async def _table_info(self, code: str, connection: ChatConnection) -> TableFacts | None:
        """The table as it is now (never a copy kept from before: a match may have started since);
        None when the table refused to say."""
        return facts_of(await self.registry.call(code, Info(), connection.principal))

    def command(self, connection: ChatConnection, message: Any) -> None:
        """A ``chat`` or ``chat_phrase`` message from ``connection`` (already valid by the protocol)."""
        _spawn(self._command(connection, message))

    async def _command(self, connection: ChatConnection, message: Any) -> None:
        # Each message is handled in a task of its own: a lock per connection keeps two quick lines
        # in the order they were written (the second waits while the first looks the table up).
        async with self._order.setdefault(connection, asyncio.Lock()):
            await self._one_command(connection, message)

    async def _one_command(self, connection: ChatConnection, message: Any) -> None:
        cmd_id = message.id
        principal = connection.principal
        if principal.key.startswith("anon:"):
            connection.send(Error.wire(id=cmd_id, code="chat_forbidden", message="sign in or play as a guest to chat"))
            return
        text = key = None
        if message.type == "chat":
            text = chat.clean_text(message.text)
            if not text:
                connection.send(Error.wire(id=cmd_id, code="chat_empty", message="the message is empty"))
                return
        else:
            key = message.key
        wait_ms = self.rate.take(f"{connection.code}|{principal.key}")
        if wait_ms:
            message = f"at most {chat.RATE_COUNT} chat messages per {chat.RATE_WINDOW_S:g} s: wait {wait_ms} ms"
            connection.send(Error.wire(id=cmd_id, code="chat_rate_limited", message=message, retry_after_ms=wait_ms))
            return
        try:
            info = await self._table_info(connection.code, connection)
        except (TableGone, BrokerError, TimeoutError) as exc:
            connection.send(Error.wire(id=cmd_id, code="unavailable", message=f"the table is unreachable: {exc}"))
            return
        if info is not None and not info["chat"]:
            message = "the creator turned chat off at this table"
            connection.send(Error.wire(id=cmd_id, code="chat_off", message=message))
            return
        seats = info["seats"] if info is not None else []
        seat = next((s["seat"] for s in seats if s["player"] == principal.key), None)
        staked_running = info is not None and info["status"] == TableStatus.PLAYING and info["rules"]["stake"] > 0
        line = chat.chat_line(
            id=secrets.token_hex(6),
            sender={"name": principal.name, "seat": seat, "guest": principal.is_guest, "player": principal.key},
            channel=chat.PLAYERS if seat is not None else chat.SPECTATORS,
            at=int(time.time() * 1000),
            text=text,
            key=key,
        )
        # What the servers route by (chat.ROUTING), never sent to a client.
        line["players_hidden"] = seat is None and staked_running
        if line["players_hidden"]:
            line["hidden_from"] = [s["player"] for s in seats if s["player"]]
        data = orjson.dumps(line)
        try:
            await self.registry.broker.publish(channels.chat(connection.code), data)
            await chat.remember(self.registry.broker, connection.code, data)
        except (BrokerError, OSError) as exc:
            message = f"chat is unreachable right now: {exc}"
            connection.send(Error.wire(id=cmd_id, code="unavailable", message=message))
            return
        connection.send(Ack.wire(id=cmd_id, version=info["version"] if info is not None else 0))


def _chat_line(line: chat.ChatLine) -> dict[str, object]:
    """A chat line (without its routing fields) as the ``chat`` message's writer writes it."""
    return Chat.wire(
        id=line["id"],
        from_=line["from"],
        channel=line["channel"],
        at=line["at"],
        text=line.get("text"),
        key=line.get("key"),
        history=line.get("history"),
    )


_running: set[asyncio.Task[None]] = set()


def _spawn(work: Coroutine[Any, Any, None]) -> None:
    """Run ``work`` in the background; a failure is logged, never lost."""
    task = asyncio.get_running_loop().create_task(work)
    _running.add(task)
    task.add_done_callback(_finished)


def _finished(task: asyncio.Task[None]) -> None:
    _running.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("chat: a task failed", exc_info=task.exception())


async def persons_of(connection: ChatConnection) -> frozenset[str]:
    """The persons a connection's cookies stand for: its principal; the session's account or guest
    (a watch link opens an anonymous socket for a signed-in player); and every account seen on its
    browser's device cookie (``device_accounts``). While the database cannot say, the device's
    accounts are unknown: the connection is then taken for every player (``"*"``)."""
    keys = {connection.principal.key}
    ws = getattr(connection, "ws", None)
    if ws is None:
        return frozenset(keys)
    state = ws.app.state
    session = account_from_cookie(read_session_cookie(ws, state.settings), state.settings)
    if session is not None:
        keys.add(session.key)
    device = ws.cookies.get(device_cookie_name(ws, state.settings))
    if valid_device(device):
        try:
            async with state.db.session() as db:
                accounts = await db.scalars(select(DeviceAccount.account_id).where(DeviceAccount.device == device))
                keys.update(f"a:{account}" for account in accounts.all())
        except (SQLAlchemyError, OSError) as exc:
            log.warning("chat: the accounts of a device are unknown (%s): hiding as for a player", exc)
            return frozenset({*keys, chat.EVERY_PLAYER})
    return frozenset(keys)


_hubs: weakref.WeakKeyDictionary[TableRegistry, ChatHub] = weakref.WeakKeyDictionary()


def hub(registry: TableRegistry) -> ChatHub:
    """The chat hub of ``registry`` (one per process and registry)."""
    found = _hubs.get(registry)
    if found is None:
        found = _hubs[registry] = ChatHub(registry)
    return found
