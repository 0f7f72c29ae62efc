"""The tables' transport over the broker: the implementations of the ports ``TableTransport`` and
``Transport`` (app/tables/ports.py) that app/main.py gives the registry.

A table's messages become frames (``frames.py``) and are routed by its :class:`Delivery`
(``delivery.py``): to this process's connections at once, to each other process in one bundle per
command. Commands reach the table on its inbox channel; request/reply calls are ``calls.py``'s; the
tables served elsewhere reach this process's connections through its :class:`Relay`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterable

from app.broker.base import Broker, Event
from app.tables.answers import Answer
from app.tables.commands import Body, Command
from app.tables.fanout import Change
from app.tables.ports import Message, Recipient
from app.tables.spec import Principal, Seat
from app.transport import channels, frames
from app.transport.calls import call_table
from app.transport.delivery import Delivery, Relay
from app.transport.frames import Outbox


class BrokerTableTransport:
    """One table's transport (``TableTransport``): frames out through its :class:`Delivery`."""

    def __init__(self, code: str, broker: Broker, process: str) -> None:
        self.code = code
        self.broker = broker
        self.delivery = Delivery(code, broker, process)  # where each channel's connections are

    @contextlib.asynccontextmanager
    async def listen(self, sink: Callable[[Event], None]) -> AsyncIterator[None]:
        async with self.broker.subscribe(channels.inbox(self.code)) as sub:
            sub.set_sink(sink)
            yield

    def connected(self, command: Command) -> None:
        # A command from another process names the process of its connection (``via``; "" when it
        # does not: a REST call on behalf of a connection); any other is from this process.
        assert command.conn and command.principal is not None
        process = (command.via or "") if command.remote else self.delivery.process
        self.delivery.heard(command.conn, command.principal.key, process)

    def gone(self, conn: str) -> None:
        self.delivery.gone(conn)

    def hold(self) -> None:
        self.delivery.hold()

    def flush(self) -> None:
        self.delivery.flush()

    def send(self, to: Recipient, message: Message) -> None:
        self.delivery.send([frames.message_frame(self.code, to, message)])

    def send_now(self, to: Recipient, message: Message) -> None:
        self.deliver([frames.message_frame(self.code, to, message)])

    def send_all(self, change: Change) -> None:
        self.delivery.send(frames.change_frames(change))

    def rehello(self, seats: Iterable[Seat]) -> None:
        self.deliver(frames.rehello_frames(self.code, seats), everywhere=True)

    def deliver(self, outbox: Outbox, *, everywhere: bool = False) -> None:
        """Route frames at once (``Delivery.deliver``)."""
        self.delivery.deliver(outbox, everywhere=everywhere)


class BrokerTransport:
    """This process's side (``Transport``): ``process`` is its registry's owner id, which its
    connections name when they send a command to a table served elsewhere."""

    def __init__(self, broker: Broker, process: str) -> None:
        self.broker = broker
        self.process = process
        self.relay = Relay(broker, process)  # frames from tables owned elsewhere, to our connections

    def table(self, code: str) -> BrokerTableTransport:
        return BrokerTableTransport(code, self.broker, self.process)

    def joined(self, code: str) -> contextlib.AbstractAsyncContextManager[None]:
        return self.relay.joined(code)

    def lost(self, code: str) -> None:
        # Every channel of the table here but this process's own fan channel (whose relay goes on).
        self.broker.signal_gap_here(channels.of_table(code), besides=channels.fan(code, self.process))

    async def call(
        self, code: str, body: Body, principal: Principal, *, id: str | None = None, conn: str | None = None
    ) -> Answer:
        return await call_table(self.broker, code, body, principal, id=id, conn=conn)
