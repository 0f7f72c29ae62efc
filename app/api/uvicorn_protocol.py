"""uvicorn's sans-I/O websocket protocol plus one ASGI extension, ``durak.text_frames``.

``python -m app`` serves websockets with :class:`WebSocketProtocol` (uvicorn's ``ws`` setting takes
a protocol class). It is uvicorn's own ``websockets-sansio`` protocol in every respect but one: the
connection's scope carries ``scope["extensions"]["durak.text_frames"] = {"write": write}``, where
``write(payload: bytes) -> bool`` sends ``payload``, UTF-8 JSON, as one unmasked text frame straight
to the transport. A table pushes the same bytes to many connections several times a second; going
through ASGI ``websocket.send`` would decode them to ``str`` for the message, encode them back, and
build the frame through the websockets library's general path for each one. ``write`` returns False
(and sends nothing) before the handshake is complete and once the connection is closing, exactly
when an ASGI ``websocket.send`` would fail; the caller then treats the client as gone.

An application that does not know the extension sees a standard ASGI server. One that uses it
(``app/api/outgoing.py``) falls back to ``websocket.send`` when the extension is absent, as under
the test client or another server.
"""

from __future__ import annotations

import struct
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State

from app.api.outgoing import TEXT_FRAMES

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


class WebSocketProtocol(WebSocketsSansIOProtocol):
    def handle_connect(self, event: Any) -> None:
        super().handle_connect(event)  # builds self.scope; the application task has not run yet
        extensions = self.scope.setdefault("extensions", {})
        assert extensions is not None
        extensions[TEXT_FRAMES] = {"write": self.write_text_frame}

    def write_text_frame(self, payload: bytes) -> bool:
        if (
            not self.handshake_complete
            or self.close_sent
            or self.initial_response is not None
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(text_frame_header(len(payload)) + payload)
        return True
