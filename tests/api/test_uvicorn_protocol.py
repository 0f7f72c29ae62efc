"""The ``durak.text_frames`` extension of ``python -m app``'s websocket protocol, under a real uvicorn
server and a real websocket client."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
import websockets

from app.api.outgoing import TEXT_FRAMES
from app.api.uvicorn_protocol import WebSocketProtocol, text_frame_header
from bench._server import free_port
from tests.support.wait import eventually

SIZES = [0, 1, 125, 126, 127, 65535, 65536, 200_000]


def test_headers_follow_rfc_6455_length_encoding() -> None:
    assert text_frame_header(0) == b"\x81\x00"
    assert text_frame_header(125) == b"\x81\x7d"
    assert text_frame_header(126) == b"\x81\x7e\x00\x7e"
    assert text_frame_header(65535) == b"\x81\x7e\xff\xff"
    assert text_frame_header(65536) == b"\x81\x7f" + (65536).to_bytes(8, "big")


def payload(size: int) -> bytes:
    """UTF-8 JSON text of exactly ``size`` bytes (a string, or a digit when that is too long)."""
    return b'"' + b"x" * (size - 2) + b'"' if size >= 2 else b"1" * size


class App:
    """Accepts, then writes one frame of each size through the extension, and records what
    ``write`` answers after the client has gone."""

    def __init__(self) -> None:
        self.extension: Any = "not seen"
        self.after_close: list[bool] = []
        self.done = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        assert scope["type"] == "websocket"
        self.extension = scope.get("extensions", {}).get(TEXT_FRAMES)
        write = self.extension["write"]
        assert await receive() == {"type": "websocket.connect"}
        before_accept = write(b'"too early"')
        await send({"type": "websocket.accept"})
        self.after_close.append(before_accept)
        for size in SIZES:
            assert write(payload(size))
        message = await receive()  # the client closes
        assert message["type"] == "websocket.disconnect"
        self.after_close.append(write(b'"too late"'))
        self.done.set()


@contextlib.asynccontextmanager
async def serve(app: Any) -> AsyncIterator[int]:
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, ws=WebSocketProtocol, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started or task.done(), 10, "the server listens")
    if task.done():
        task.result()  # its failure to start
        raise AssertionError("the server stopped before it listened")
    try:
        yield port
    finally:
        server.should_exit = True
        await task


@pytest.mark.timeout(30)
async def test_frames_written_through_the_extension_arrive_whole_and_in_order() -> None:
    app = App()
    async with serve(app) as port:
        async with websockets.connect(f"ws://127.0.0.1:{port}/", max_size=None, compression=None) as ws:
            received = [await ws.recv() for _ in SIZES]
        await asyncio.wait_for(app.done.wait(), 5)
    assert [text.encode() for text in received] == [payload(size) for size in SIZES]
    assert all(isinstance(text, str) for text in received)  # text frames, not binary
    assert app.after_close == [False, False]  # nothing is written before the accept or after the close


class Listener:
    """Reads two frames through ASGI, then listens: the frames queued meanwhile come first, later ones
    straight from the parser; a binary frame and the disconnect still come through receive()."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.through_receive: list[Any] = []
        self.done = asyncio.Event()
        self.listening = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        listen = scope["extensions"][TEXT_FRAMES]["listen"]
        await receive()
        await send({"type": "websocket.accept"})
        for _ in range(2):
            self.through_receive.append((await receive()).get("text"))
        # The client has sent more meanwhile: wait until the protocol (the object whose method
        # ``listen`` is) has queued the next text frame, so that ``listen`` must pass it first.
        protocol = listen.__self__
        await eventually(lambda: not protocol.queue.empty(), what="the server queues the next frame")

        def on_text(text: str) -> None:
            if text == "boom":
                raise RuntimeError("listener bug")
            self.texts.append(text)

        listen(on_text)
        self.listening.set()
        while True:
            message = await receive()
            self.through_receive.append(message.get("bytes", message["type"]))
            if message["type"] == "websocket.disconnect":
                break
        self.done.set()


@pytest.mark.timeout(30)
async def test_listen_passes_text_frames_in_order_and_leaves_the_rest_to_receive(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Listener()
    async with serve(app) as port:
        async with websockets.connect(f"ws://127.0.0.1:{port}/", compression=None) as ws:
            for text in ("a", "b", "c", "d"):
                await ws.send(text)
            await asyncio.wait_for(app.listening.wait(), 5)
            for text in ("e", "boom", "f"):
                await ws.send(text)
            await ws.send(b"\x00binary")
            await ws.send("g")
            await eventually(lambda: "g" in app.texts, what="the last text frame reaches the listener")
        await asyncio.wait_for(app.done.wait(), 5)
    assert app.through_receive[:2] == ["a", "b"]
    assert app.texts == ["c", "d", "e", "f", "g"]  # the listener's failure did not stop the next frames
    assert app.through_receive[2:] == [b"\x00binary", "websocket.disconnect"]
    assert "the application's text listener failed" in caplog.text


class RecordingTransport:
    """The protocol's transport, recording each ``write``."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class Turns:
    """Writes three frames in one turn of the loop, two in the next, then one more and closes at
    once (``ending="close"``) or returns (``ending="return"``)."""

    def __init__(self, ending: str) -> None:
        self.ending = ending
        self.writes: list[bytes] = []
        self.written_before_turn_ended: list[bytes] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        write = scope["extensions"][TEXT_FRAMES]["write"]
        protocol = write.__self__
        await receive()
        await send({"type": "websocket.accept"})
        transport = protocol.transport = RecordingTransport(protocol.transport)
        for text in (b'"a"', b'"b"', b'"c"'):
            assert write(text)
        self.written_before_turn_ended = list(transport.writes)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        for text in (b'"d"', b'"e"'):
            assert write(text)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert write(b'"f"')
        if self.ending == "close":
            await send({"type": "websocket.close", "code": 4000, "reason": "done"})
        self.writes = transport.writes


@pytest.mark.timeout(30)
async def test_the_frames_of_one_turn_go_out_in_one_write_and_in_order() -> None:
    app = Turns("close")
    async with serve(app) as port, websockets.connect(f"ws://127.0.0.1:{port}/", compression=None) as ws:
        received = [await ws.recv() for _ in range(6)]
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
    assert received == ['"a"', '"b"', '"c"', '"d"', '"e"', '"f"']
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4000  # the close came after "f"
    assert app.written_before_turn_ended == []  # nothing goes out before the turn ends
    frame = lambda text: text_frame_header(len(text)) + text  # noqa: E731
    assert app.writes[0] == frame(b'"a"') + frame(b'"b"') + frame(b'"c"')
    assert app.writes[1] == frame(b'"d"') + frame(b'"e"')
    assert app.writes[2] == frame(b'"f"')  # written before the close frame, which follows it
    assert len(app.writes) == 4


@pytest.mark.timeout(30)
async def test_frames_written_just_before_the_application_returns_still_go_out() -> None:
    app = Turns("return")
    async with serve(app) as port, websockets.connect(f"ws://127.0.0.1:{port}/", compression=None) as ws:
        received = [await ws.recv() for _ in range(6)]
    assert received == ['"a"', '"b"', '"c"', '"d"', '"e"', '"f"']


class Handshake:
    """Accepts, then records whether the protocol still holds the handshake's request and response."""

    def __init__(self) -> None:
        self.before_accept: tuple[bool, bool] | None = None
        self.after_accept: tuple[bool, bool] | None = None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        protocol = scope["extensions"][TEXT_FRAMES]["write"].__self__
        await receive()
        self.before_accept = (hasattr(protocol, "request"), hasattr(protocol, "response"))
        await send({"type": "websocket.accept", "headers": [(b"x-seen", b"yes")]})
        self.after_accept = (hasattr(protocol, "request"), hasattr(protocol, "response"))
        await send({"type": "websocket.send", "text": "after"})
        await receive()


@pytest.mark.timeout(30)
async def test_the_handshake_is_let_go_once_its_response_is_out() -> None:
    app = Handshake()
    async with serve(app) as port, websockets.connect(f"ws://127.0.0.1:{port}/", compression=None) as ws:
        assert ws.response is not None and ws.response.headers["x-seen"] == "yes"  # the response was whole
        assert await ws.recv() == "after"
    assert app.before_accept == (True, True)
    assert app.after_accept == (False, False)
