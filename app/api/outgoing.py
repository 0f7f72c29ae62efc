"""Frames to one websocket client, handed to the server the moment they are produced, in order.

A table's frames reach a connection inside the broker's delivery (see ``Subscription.set_sink``),
which is not a coroutine. :class:`Outgoing` runs the server's ASGI ``send`` right there: uvicorn's
``send`` of a ``websocket.send`` message writes to the transport and returns without waiting, so
the coroutine finishes in its first step and nothing is scheduled. A server whose ``send`` does
wait (flow control, or the test client, which yields to the loop on every send) gets the same
frames through a task instead: the unfinished send is finished there and every later frame queues
behind it until the backlog is empty, so the order never changes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from typing import Any, cast

from starlette.types import Send

TEXT_FRAMES = "durak.text_frames"  # the ASGI extension of app/api/uvicorn_protocol.py


class Outgoing:
    """``write_frame``, when the server offers it (``app/api/uvicorn_protocol.py``), sends UTF-8 JSON
    as a text frame directly (the server writes a turn's frames to the socket together, at the end
    of the turn); otherwise every frame goes through the ASGI ``send``."""

    def __init__(self, send: Send, write_frame: Callable[[bytes], bool] | None = None) -> None:
        self._send = send
        self._write_frame = write_frame
        self._backlog: deque[str] | None = None  # not None while a send is waiting in a task
        self._task: asyncio.Task[None] | None = None
        self.broken = False  # the server refused a send: the client is gone

    def write_json(self, payload: bytes) -> None:
        """Send UTF-8 JSON as one text frame now, or after the frames still waiting; never blocks."""
        write_frame = self._write_frame
        if write_frame is None:
            self.write(payload.decode("utf-8"))
        elif not self.broken and not write_frame(payload):
            self.broken = True

    def write(self, text: str) -> None:
        """Send one text frame now, or after the frames still waiting; never blocks."""
        if self.broken:
            return
        if self._write_frame is not None:
            self.write_json(text.encode("utf-8"))
            return
        if self._backlog is not None:
            self._backlog.append(text)
            return
        coro = cast(Coroutine[Any, Any, None], self._send({"type": "websocket.send", "text": text}))
        try:
            waiting_on = coro.send(None)
        except StopIteration:
            return  # sent
        except Exception:
            self.broken = True
            return
        self._backlog = deque()
        self._task = asyncio.get_running_loop().create_task(self._drain(coro, waiting_on))

    async def _drain(self, coro: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        try:
            await _Resumed(coro, waiting_on)
            backlog = self._backlog
            while backlog:
                await self._send({"type": "websocket.send", "text": backlog.popleft()})
        except asyncio.CancelledError:
            raise
        except Exception:
            self.broken = True
        finally:
            self._backlog = None
            self._task = None

    async def flush(self) -> None:
        """Wait until every frame written so far has been handed to the server."""
        while self._task is not None:
            await asyncio.shield(self._task)

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()


class _Resumed:
    """Await a coroutine that has already run up to its first suspension, ``waiting_on`` being what
    it yielded then: hand that to the running task, then keep passing values and exceptions through
    until the coroutine returns (what ``yield from`` does for a coroutine not started yet)."""

    def __init__(self, coro: Coroutine[Any, Any, None], waiting_on: Any) -> None:
        self.coro = coro
        self.waiting_on = waiting_on

    def __await__(self) -> Generator[Any, Any, None]:
        value = self.waiting_on
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                self.coro.close()
                raise
            except BaseException as exc:
                try:
                    value = self.coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    value = self.coro.send(sent)
                except StopIteration:
                    return
