"""What a table needs from the world, as interfaces: its transport (what goes to whom). The
database is reached through ``MatchHooks`` (hooks.py), the store through ``TableStore``
(app/store/base.py). The implementations are injected: ``app/transport/table_transport.py`` (the
transport over the broker, given to the registry by app/main.py), ``app/db/table_hooks.py`` and the
store for the broker URL (app/main.py).

The tables say what goes to whom: an answer or a welcome to a recipient (:meth:`TableTransport.send`),
a change of the table to everyone connected, each redacted for himself (:meth:`TableTransport.send_all`).
Where a connection lives (this process or another, through the broker), channel names, frame headers,
bundles and the JSON splicing of the parts recipients share are the transport's (app/transport).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from app.broker.base import Event
from app.tables.answers import Answer, WelcomeMessage
from app.tables.commands import Body, Command
from app.tables.fanout import Change
from app.tables.spec import Principal, Seat


@dataclass(frozen=True, slots=True)
class Person:
    """Every connection of one person (his principal key) at the table, wherever they are."""

    key: str


@dataclass(frozen=True, slots=True)
class Connection:
    """The one connection ``conn`` of a person that sent a command (its answer is for it alone)."""

    key: str
    conn: str


@dataclass(frozen=True, slots=True)
class Caller:
    """A request/reply call waiting for its answer (a REST call, ``Command.reply`` names it)."""

    reply: str


Recipient = Person | Connection | Caller
Message = Answer | WelcomeMessage


def answer_to(command: Command, principal_key: str) -> Recipient | None:
    """Who gets the answer to ``command``: its caller, or the connection that sent it; nobody for a
    command with neither (a bot's decision)."""
    if command.reply:
        return Caller(command.reply)
    if command.conn:
        return Connection(principal_key, command.conn)
    return None


class TableTransport(Protocol):
    """One table's transport. What the actor sends while it handles one command is held and goes
    out together, in order, when the command is done (:meth:`hold`, :meth:`flush`)."""

    def listen(self, sink: Callable[[Event], None]) -> AbstractAsyncContextManager[None]:
        """The table's commands sent from anywhere (other processes, request/reply calls) go to
        ``sink`` while the context is open; it is live when the body starts."""
        ...

    def connected(self, command: Command) -> None:
        """A connection sent ``command`` (it has ``conn`` and a principal): that person's messages
        go where the connection is from now on."""

    def gone(self, conn: str) -> None:
        """Connection ``conn`` closed."""

    def hold(self) -> None: ...

    def flush(self) -> None: ...

    def send(self, to: Recipient, message: Message) -> None:
        """``message`` for ``to`` (held while a command is handled)."""

    def send_now(self, to: Recipient, message: Message) -> None:
        """``message`` for ``to`` at once, never held (a command refused outside the actor's turn)."""

    def send_all(self, change: Change) -> None:
        """``change`` to every player with a connection and to the spectators, each getting it as
        he may see it (``Change``: its redaction for one recipient)."""

    def rehello(self, seats: Iterable[Seat]) -> None:
        """After a takeover, at once: every connection of the seated people and every spectator,
        on any process, is asked to say ``hello`` again (nobody is known to be anywhere yet)."""


class Transport(Protocol):
    """This process's side of the tables' transport: each table's, the tables served elsewhere
    (their frames reach this process's connections), and request/reply calls to any table."""

    def table(self, code: str) -> TableTransport:
        """The transport of table ``code``, served by this process."""
        ...

    def joined(self, code: str) -> AbstractAsyncContextManager[None]:
        """This process has a connection to table ``code`` for the body: the table's messages for it
        reach this process wherever the table is served."""
        ...

    def lost(self, code: str) -> None:
        """Another process took table ``code`` over: this process's connections to it are asked to
        say hello again (so that the new owner hears them)."""

    async def call(
        self, code: str, body: Body, principal: Principal, *, id: str | None = None, conn: str | None = None
    ) -> Answer:
        """Send a command to table ``code`` wherever it runs and wait for its answer (``TimeoutError``
        when none comes in time, ``TableGone`` when nobody answers)."""
        ...
