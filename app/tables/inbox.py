"""A table actor's queue: its commands in order (from this process, and decoded from the table's
broker channel), and the wake-up for its next deadline."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable

from app.broker.base import Event, Gap
from app.tables.commands import BadCommand, Command, command_from_json

log = logging.getLogger("durak.table")


class Inbox:
    def __init__(self, clock: Callable[[], float], code: str = "") -> None:
        self.clock, self.code = clock, code
        self._queue: deque[Command] = deque()
        self._waiter: asyncio.Future[None] | None = None  # set while ``next`` waits
        self._alarm: asyncio.TimerHandle | None = None  # wakes ``next`` for the earliest deadline
        self._alarm_at: float | None = None

    def post(self, command: Command) -> None:
        self._queue.append(command)
        self._wake()

    def heard(self, event: Event) -> None:
        """The sink of the table's broker channel (``t:<code>:in``): each command decoded once and
        queued, right where the broker reads it (no task of its own)."""
        if isinstance(event, Gap):
            return  # commands lost in a gap are answered by the clients' own timeouts
        try:
            self.post(command_from_json(event.data))
        except BadCommand as exc:
            log.warning("table %s: dropped a command from the broker: %s", self.code[:8], exc)

    def take_all(self) -> list[Command]:
        """Empty the queue: the commands still in it, oldest first."""
        taken = list(self._queue)
        self._queue.clear()
        return taken

    def close(self) -> None:
        if self._alarm is not None:
            self._alarm.cancel()

    async def next(self, next_deadline: Callable[[], float | None]) -> Command | None:
        """The next queued command, or None when a deadline has come (a deadline that has passed goes
        before the commands queued behind it). A queued command is taken at once; while waiting, one
        timer stays armed for the earliest deadline seen and is re-armed only when that moves
        earlier (a decision timer moves later with every move: its timer then fires once, early,
        and is set again for the new deadline)."""
        queue = self._queue
        while True:
            due = next_deadline()
            if due is not None and due <= self.clock():
                return None
            if queue:
                return queue.popleft()
            if due is not None and (self._alarm_at is None or due < self._alarm_at):
                if self._alarm is not None:
                    self._alarm.cancel()
                self._alarm = asyncio.get_running_loop().call_later(due - self.clock(), self._ring)
                self._alarm_at = due
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None

    def _ring(self) -> None:
        self._alarm = self._alarm_at = None
        self._wake()

    def _wake(self) -> None:
        """Let ``next`` look again (a command came, or a deadline may have)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
