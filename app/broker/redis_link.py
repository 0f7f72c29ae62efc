"""The Redis broker's pub/sub links: a :class:`Link` is one dedicated connection in pub/sub mode,
on our own wire (:class:`~app.broker.redis_wire.Wire`, which says why it is not redis-py's), that fans
what it parses out to the subscribers in the read callback and PINGs every ``health_interval_s`` to
notice a silent peer; a :class:`Shard` is one node's link and the channels subscribed on it (the only
one for a single Redis; one per master of a cluster). The broker (app/broker/redis.py) supervises
them: connecting, subscribing again after an outage, moving channels when a cluster's slots move.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import hiredis
from redis.exceptions import ResponseError

from app.broker.base import BrokerUnavailable
from app.broker.redis_cluster import Address
from app.broker.redis_wire import RedisTarget, Wire, pack_command, retrieve


def moved_to(error: BaseException) -> tuple[int, Address] | None:
    """The slot and node of a ``MOVED`` error reply."""
    parts = str(error).split()
    if len(parts) == 3 and parts[0] == "MOVED":
        host, _, port = parts[2].rpartition(":")
        return int(parts[1]), (host, int(port))
    return None


_CONFIRMATIONS = (b"subscribe", b"unsubscribe", b"ssubscribe", b"sunsubscribe")


class Link(Wire):
    """A pub/sub connection (RESP2): messages are fanned out as they are parsed; a watchdog task
    PINGs it so a silent peer is noticed too, not only a closed socket. Confirmations and error
    replies come back in the order of the requests; a ``sunsubscribe`` nobody asked for (the
    cluster moved the channel's slot away from this node) goes to ``on_dropped``."""

    def __init__(
        self,
        on_message: Callable[[bytes, bytes], None],
        on_dropped: Callable[[bytes], None],
        health_interval_s: float,
    ) -> None:
        super().__init__()
        self._on_message = on_message
        self._on_dropped = on_dropped
        self._health_interval_s = health_interval_s
        self._pending: deque[tuple[bytes, bytes, asyncio.Future[None]]] = deque()
        self._watchdog: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._watchdog = asyncio.create_task(self._watch(), name="broker-redis-watchdog")

    def _failed(self, reason: str) -> None:
        pending, self._pending = self._pending, deque()
        for _, _, fut in pending:
            if not fut.done():
                fut.set_exception(BrokerUnavailable(reason))
                fut.exception()

    def _reply(self, reply: Any) -> None:
        if type(reply) is list and len(reply) == 3 and (reply[0] == b"message" or reply[0] == b"smessage"):
            self._on_message(reply[1], reply[2])
            return
        if isinstance(reply, hiredis.ReplyError):  # the answer to the oldest request (MOVED, say)
            if self._pending:
                fut = self._pending.popleft()[2]
                if not fut.done():
                    fut.set_exception(ResponseError(str(reply)))
                    fut.exception()  # whoever awaits it still gets it; nobody else logs it
            return
        if not isinstance(reply, list) or len(reply) < 2:
            return  # +PONG outside subscribed mode, or anything else without a payload for us
        kind, name = reply[0], reply[1]
        if kind in _CONFIRMATIONS:
            pending = self._pending
            if pending and pending[0][0] == kind and pending[0][1] == name:
                fut = pending.popleft()[2]
                if not fut.done():
                    fut.set_result(None)
            elif kind == b"sunsubscribe":
                self._on_dropped(name)

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self._health_interval_s
        ping = pack_command("PING")
        while self.up:
            await asyncio.sleep(interval)
            if loop.time() - self.last_seen > 2.5 * interval:
                self.fail(f"no reply from redis for {loop.time() - self.last_seen:.1f}s")
                return
            try:
                self._write(ping)
            except Exception as exc:
                self.fail(f"PING failed: {exc!r}")
                return

    async def request(
        self, commands: Sequence[tuple[str | bytes, ...]], expect: Sequence[tuple[bytes, bytes]], timeout: float
    ) -> list[BaseException | None]:
        """Send (UN)SUBSCRIBE commands in one write and wait for one confirmation per
        ``(kind, channel)`` in ``expect``, in order: ``None`` for each confirmed, the error reply
        (``ResponseError``) for each refused. A lost link raises :class:`BrokerUnavailable`."""
        if not self.up:
            raise BrokerUnavailable(f"redis pub/sub link is down: {self.lost.result()}")
        futures: list[asyncio.Future[None]] = []
        for kind, name in expect:
            fut: asyncio.Future[None] = self._loop.create_future()
            self._pending.append((kind, name, fut))
            futures.append(fut)
        try:
            self._write(b"".join(pack_command(*command) for command in commands))
            async with asyncio.timeout(timeout):
                outcomes = await asyncio.gather(*futures, return_exceptions=True)
        except TimeoutError as exc:
            self.fail(f"no confirmation of {commands[0][0]!r} within {timeout}s")
            raise BrokerUnavailable(f"redis did not confirm {commands[0][0]!r} within {timeout}s") from exc
        finally:
            for fut in futures:
                retrieve(fut)
        for outcome in outcomes:
            if isinstance(outcome, BrokerUnavailable):
                raise outcome
        return [outcome if isinstance(outcome, BaseException) else None for outcome in outcomes]

    async def aclose(self, reason: str = "closed") -> None:
        self.fail(reason)
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watchdog


class Shard:
    """One Redis node's pub/sub link and the channels subscribed on it (the only one for a single
    Redis; one per master of a cluster)."""

    def __init__(self, address: Address | None, target: RedisTarget) -> None:
        self.address = address
        self.target = target
        self.link: Link | None = None
        self.remote: set[str] = set()  # channels subscribed on the current link
        self.supervisor: asyncio.Task[None] | None = None
        self.first_attempt: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.last_error = "not connected yet"

    @property
    def up(self) -> bool:
        return self.link is not None and self.link.up

    def __repr__(self) -> str:
        return f"<shard {self.target} up={self.up} channels={len(self.remote)}>"
