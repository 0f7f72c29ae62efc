"""Frames written outside a coroutine keep their order whether or not the server's send waits."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.api.outgoing import Outgoing
from tests.support.wait import loop_turns


class Server:
    """An ASGI send that records frames; ``waits`` makes every send yield to the loop first (as the
    test client does), ``gate`` holds sends until it is set, ``fail_after`` refuses from then on."""

    def __init__(self, *, waits: bool = False, fail_after: int | None = None) -> None:
        self.waits = waits
        self.fail_after = fail_after
        self.gate: asyncio.Event | None = None
        self.frames: list[str] = []
        self.steps = 0

    async def send(self, message: dict[str, Any]) -> None:
        self.steps += 1
        if self.waits:
            await asyncio.sleep(0)
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_after is not None and len(self.frames) >= self.fail_after:
            raise OSError("client gone")
        assert message["type"] == "websocket.send"
        self.frames.append(message["text"])


async def test_a_send_that_does_not_wait_is_done_before_write_returns() -> None:
    server = Server()
    out = Outgoing(server.send)
    out.write("a")
    assert server.frames == ["a"]  # no task, no loop iteration
    out.write("b")
    assert server.frames == ["a", "b"]
    await out.flush()


async def test_a_send_that_waits_finishes_in_a_task_and_later_frames_queue_behind_it() -> None:
    server = Server(waits=True)
    out = Outgoing(server.send)
    for text in "abcde":
        out.write(text)
    assert server.frames == []  # the first send yielded to the loop
    await out.flush()
    assert server.frames == list("abcde")
    out.write("f")  # the backlog is empty again: the next write starts a fresh send
    await out.flush()
    assert server.frames == list("abcdef")


async def test_frames_wait_for_a_blocked_send_and_keep_their_order() -> None:
    server = Server()
    server.gate = asyncio.Event()
    out = Outgoing(server.send)
    out.write("1")
    out.write("2")
    await loop_turns()
    assert server.frames == [] and server.steps == 1  # "1" waits at the gate, "2" behind it
    server.gate.set()
    await out.flush()
    assert server.frames == ["1", "2"]


@pytest.mark.parametrize("waits", [False, True])
async def test_a_refused_send_marks_the_client_gone_and_drops_the_rest(waits: bool) -> None:
    server = Server(waits=waits, fail_after=1)
    out = Outgoing(server.send)
    out.write("kept")
    out.write("refused")
    await out.flush()
    out.write("dropped")
    await out.flush()
    assert server.frames == ["kept"]
    assert out.broken


async def test_cancel_stops_a_waiting_send() -> None:
    server = Server()
    server.gate = asyncio.Event()
    out = Outgoing(server.send)
    out.write("stuck")
    await asyncio.sleep(0)
    out.cancel()
    await loop_turns()
    server.gate.set()
    await loop_turns()  # a send still alive would pass the gate and record the frame now
    assert server.frames == []


async def test_with_the_text_frames_extension_json_bytes_go_out_as_they_are() -> None:
    server = Server()
    sent: list[bytes] = []
    open_ = [True]

    def write_frame(payload: bytes) -> bool:
        if open_[0]:
            sent.append(payload)
        return open_[0]

    out = Outgoing(server.send, write_frame)
    out.write_json(b'{"a":1}')
    out.write("é")
    assert sent == [b'{"a":1}', "é".encode()]
    assert server.frames == []  # the ASGI send is not used at all
    open_[0] = False
    out.write_json(b"{}")
    assert out.broken
    out.write_json(b"[]")
    assert sent == [b'{"a":1}', "é".encode()]


async def test_without_the_extension_json_bytes_are_sent_as_text() -> None:
    server = Server()
    out = Outgoing(server.send)
    out.write_json('{"a":"é"}'.encode())
    assert server.frames == ['{"a":"é"}']
