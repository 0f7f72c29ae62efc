"""uvicorn's sans-I/O websocket protocol plus one ASGI extension, ``durak.text_frames``.

``python -m app`` serves websockets with :class:`WebSocketProtocol` (uvicorn's ``ws`` setting takes
a protocol class). It is uvicorn's own ``websockets-sansio`` protocol in every respect but this: the
connection's scope carries ``scope["extensions"]["durak.text_frames"] = {"write": ..., "listen": ...}``.

* ``write(payload: bytes) -> bool`` sends ``payload``, UTF-8 JSON, as one unmasked text frame
  straight to the transport. A table pushes the same bytes to many connections several times a
  second; going through ASGI ``websocket.send`` would decode them to ``str`` for the message,
  encode them back, and build the frame through the websockets library's general path for each
  one. ``write`` returns False (and sends nothing) before the handshake is complete and once the
  connection is closing, exactly when an ASGI ``websocket.send`` would fail.
  The frames written to one connection in one turn of the event loop go to the transport together,
  at the end of that turn, in one ``transport.write`` (one system call): the update a move causes and
  the ack of that move reach the player who made it as one TCP segment, not two. Every other write
  (an ASGI ``send``, the close when the application returns) writes the waiting frames first, so
  nothing overtakes them; pings and pongs may, as control frames may.
* Once the handshake's response is out, the protocol lets go of the handshake's request and
  response, which uvicorn would keep for the connection's whole life.
* ``listen(on_text)`` makes the protocol call ``on_text(text)`` for every complete text message as it
  is parsed, instead of queueing a ``websocket.receive`` event for the application to ``receive()``
  in its task: no queue, no task wake-up and no pause/resume of reading per message. Text messages
  already queued are passed first, in order. Everything else (binary messages, the disconnect) still
  comes through ``receive()``. ``on_text`` must not block; an exception it raises is logged.

The subclass uses uvicorn internals (the frame buffer, receive queue, read pausing, handshake and
close flags, three methods). ``pyproject.toml`` therefore pins the uvicorn minor version it was
tested on (0.54), and ``tests/api/test_uvicorn_internals.py`` checks each internal it uses, failing
with a message that names this file when an upgrade changes one of them.

An application that does not know the extension sees a standard ASGI server. One that uses it
(``app/api/outgoing.py``) falls back to ``websocket.send`` when the extension is absent, as under
the test client or another server.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

from app.api.outgoing import TEXT_FRAMES

log = logging.getLogger("app.api.uvicorn_protocol")

_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")
_FIN_TEXT = 0x81  # FIN bit + opcode 1 (text); server frames are never masked


def text_frame_header(length: int) -> bytes:
    """The RFC 6455 header of an unmasked, final text frame whose payload is ``length`` bytes."""
    if length < 126:
        return _SHORT.pack(_FIN_TEXT, length)
    if length < 1 << 16:
        return _MEDIUM.pack(_FIN_TEXT, 126, length)
    return _LONG.pack(_FIN_TEXT, 127, length)


# The connections of each event loop with frames waiting for the end of the current turn.
_waiting: dict[asyncio.AbstractEventLoop, list[WebSocketProtocol]] = {}


def _write_waiting(loop: asyncio.AbstractEventLoop) -> None:
    for protocol in _waiting.pop(loop, ()):
        try:
            protocol.write_waiting()
        except Exception:  # one broken transport must not keep the others' frames back
            log.exception("writing the frames of a turn failed")


class WebSocketProtocol(WebSocketsSansIOProtocol):
    on_text: Callable[[str], None] | None = None
    waiting: list[bytes] | None = None  # text frames written in this turn of the loop, not yet sent

    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)  # builds self.scope; the application task has not run yet
        extensions = self.scope.setdefault("extensions", {})
        assert extensions is not None
        extensions[TEXT_FRAMES] = {"write": self.write_text_frame, "listen": self.listen}
        app = self.app  # run_asgi (already created, not started) calls self.app: wrapped here

        async def app_then_write_waiting(scope: Any, receive: Any, send: Any) -> None:
            try:
                await app(scope, receive, send)
            finally:  # before uvicorn closes the transport
                self.write_waiting()

        self.app = app_then_write_waiting

    async def send(self, message: Any) -> None:
        if self.waiting is not None:  # the frames written before this message go first
            self.write_waiting()
        await super().send(message)
        if message["type"] == "websocket.accept" and self.handshake_complete:
            # The handshake's request and response are never read again once the response is out,
            # yet uvicorn keeps them, with their two sets of headers (a list per header name): a
            # dozen containers per connection for the garbage collector to walk while it lasts.
            vars(self).pop("request", None)
            vars(self).pop("response", None)

    def listen(self, on_text: Callable[[str], None]) -> None:
        waiting = []
        while not self.queue.empty():
            waiting.append(self.queue.get_nowait())
        self.on_text = on_text
        for message in waiting:
            text = message.get("text") if message["type"] == "websocket.receive" else None
            if isinstance(text, str):
                self._pass_text(text)
            else:
                self.queue.put_nowait(message)  # binary messages and the disconnect, still in order
        if self.read_paused and self.queue.empty():
            self.read_paused = False
            self.transport.resume_reading()

    def send_receive_event_to_app(self) -> None:
        if self.on_text is None or self.curr_msg_data_type != "text" or self.close_sent:
            super().send_receive_event_to_app()
            return
        data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
        self.frames = []
        try:
            text = data.decode()
        except UnicodeDecodeError:  # as uvicorn does: close with 1007 (invalid frame payload data)
            self.conn.send_close(1007)
            self.handle_parser_exception()
            return
        self._pass_text(text)

    def _pass_text(self, text: str) -> None:
        assert self.on_text is not None
        try:
            self.on_text(text)
        except Exception:
            log.exception("the application's text listener failed")

    def write_text_frame(self, payload: bytes) -> bool:
        waiting = self.waiting
        if waiting is not None:  # the first frame of this turn found the socket open; write_waiting looks again
            waiting.append(payload)
            return True
        if (
            not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            return False
        self.waiting = [payload]
        loop = self.loop
        connections = _waiting.get(loop)
        if connections is None:
            connections = _waiting[loop] = []
            loop.call_soon(_write_waiting, loop)
        connections.append(self)
        return True

    def write_waiting(self) -> None:
        """Send the frames written so far in this turn, in one write to the transport."""
        frames, self.waiting = self.waiting, None
        if not frames or self.close_sent or self.conn.state is not State.OPEN or self.transport.is_closing():
            return
        if len(frames) == 1:
            self.transport.write(text_frame_header(len(frames[0])) + frames[0])
            return
        parts = []
        for payload in frames:
            parts.append(text_frame_header(len(payload)))
            parts.append(payload)
        self.transport.write(b"".join(parts))
