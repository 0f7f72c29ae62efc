"""The loop every server-sent-event feed shares (app/event_feed.py) and its HTTP response
(app/api/event_stream.py), on a fake clock: keep-alives after the quiet interval and never before,
the pacing of joined writes, and what closing a reader or a response ends."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from app.api.event_stream import event_stream
from app.api.limits import PerAddress
from app.event_feed import KEEP_ALIVE, KEEPALIVE_S, EventFeed, sse
from tests.support.clock import FakeClock


async def let_run(turns: int = 20) -> None:
    """Let every task that can run do so (no real time passes, none is waited for)."""
    for _ in range(turns):
        await asyncio.sleep(0)


def test_an_event_is_its_name_and_one_line_of_json() -> None:
    assert sse("added", {"code": "abc", "n": [1, 2]}) == b'event: added\ndata: {"code":"abc","n":[1,2]}\n\n'
    assert KEEP_ALIVE.startswith(b":") and KEEP_ALIVE.endswith(b"\n\n")  # a comment: no event for the page
    when = object()
    text = sse("challenge", {"at": when}, default=lambda _: "then")
    assert json.loads(text.split(b"data: ", 1)[1]) == {"at": "then"}


async def test_a_quiet_reader_gets_a_keep_alive_after_the_interval_and_not_before() -> None:
    clock = FakeClock()
    feed: EventFeed[bytes] = EventFeed(clock, clock.sleep)
    texts = feed.texts(15.0)
    feed.push(b"first")
    assert await anext(texts) == b"first"
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    await clock.advance(14.9)
    await let_run()
    assert not waiting.done()  # quiet, but not for long enough
    await clock.advance(0.1)
    assert await asyncio.wait_for(waiting, 3) == KEEP_ALIVE
    # The interval starts again when the reader waits again: a text after 10 s, then 15 s of quiet.
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    await clock.advance(10)
    await let_run()
    feed.push(b"second")
    assert await asyncio.wait_for(waiting, 3) == b"second"
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    await clock.advance(14.5)  # 24.5 s since the keep-alive, 14.5 s since the text
    await let_run()
    assert not waiting.done()
    await clock.advance(0.5)
    assert await asyncio.wait_for(waiting, 3) == KEEP_ALIVE
    await texts.aclose()  # type: ignore[attr-defined]


async def test_queued_texts_go_out_before_a_keep_alive_that_came_due() -> None:
    clock = FakeClock()
    feed: EventFeed[bytes] = EventFeed(clock, clock.sleep)
    texts = feed.texts(15.0)
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    feed.push(b"one")
    feed.push(b"two")
    assert await asyncio.wait_for(waiting, 3) == b"one"
    assert await anext(texts) == b"two"
    await texts.aclose()  # type: ignore[attr-defined]


async def test_the_default_interval_is_the_one_constant() -> None:
    clock = FakeClock()
    feed: EventFeed[bytes] = EventFeed(clock, clock.sleep)
    texts = feed.texts()
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    await clock.advance(KEEPALIVE_S - 0.01)
    await let_run()
    assert not waiting.done()
    await clock.advance(0.01)
    assert await asyncio.wait_for(waiting, 3) == KEEP_ALIVE
    await texts.aclose()  # type: ignore[attr-defined]


async def test_joined_texts_go_out_at_most_once_per_interval() -> None:
    clock = FakeClock()
    feed: EventFeed[bytes] = EventFeed(clock, clock.sleep)
    texts = feed.texts(60.0, join=b"".join, min_interval_s=0.5)
    feed.push(b"a")
    assert await anext(texts) == b"a"  # the first after a quiet spell: at once
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    feed.push(b"b")
    await let_run()
    feed.push(b"c")
    await let_run()
    assert not waiting.done()  # within the interval: no write
    await clock.advance(0.5)
    assert await asyncio.wait_for(waiting, 3) == b"bc"  # both in one write
    await texts.aclose()  # type: ignore[attr-defined]


async def test_closing_a_reader_stops_its_keep_alive_timer() -> None:
    clock = FakeClock()
    feed: EventFeed[bytes] = EventFeed(clock, clock.sleep)
    texts = feed.texts(15.0)
    waiting = asyncio.ensure_future(anext(texts))
    await let_run()
    assert clock.sleeping() == 1  # the keep-alive's timer
    waiting.cancel()  # the client went away while the reader waited
    await let_run()
    assert clock.sleeping() == 0
    assert feed._ticker is not None and feed._ticker.cancelled()


async def test_a_full_queue_drops_what_comes_unless_the_reader_says_otherwise() -> None:
    feed: EventFeed[bytes] = EventFeed()
    for n in range(feed.limit + 5):
        feed.push(b"%d" % n)
    assert len(feed.queue) == feed.limit and feed.queue[-1] == b"%d" % (feed.limit - 1)

    class Latest(EventFeed[bytes]):
        limit = 3

        def overflow(self, item: bytes) -> bytes:
            self.queue.clear()
            return item

    latest = Latest()
    for n in range(4):
        latest.push(b"%d" % n)
    assert list(latest.queue) == [b"3"]


class Asgi:
    """Just enough of an ASGI server to run one response and hang up on it."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.hang_up = asyncio.Event()
        self._asked = False

    async def receive(self) -> dict[str, Any]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await self.hang_up.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")

    def headers(self) -> dict[str, str]:
        start = next(m for m in self.sent if m["type"] == "http.response.start")
        return {name.decode(): value.decode() for name, value in start["headers"]}


SCOPE = {"type": "http", "method": "GET", "path": "/feed", "headers": []}


async def test_the_response_writes_the_feed_and_gives_the_place_back_when_the_client_goes() -> None:
    streams = PerAddress(1)
    assert streams.take("10.0.0.1")
    clock = FakeClock()
    reader: EventFeed[bytes] = EventFeed(clock, clock.sleep)
    closed: list[str] = []

    @contextlib.asynccontextmanager
    async def feed() -> AsyncIterator[AsyncIterator[bytes]]:
        reader.push(sse("snapshot", {"tables": []}))
        try:
            yield reader.texts(15.0)
        finally:
            closed.append("feed")

    server = Asgi()
    response = asyncio.ensure_future(event_stream(feed, streams, "10.0.0.1")(SCOPE, server.receive, server.send))
    await let_run()
    reader.push(sse("removed", {"code": "abc"}))
    await let_run()
    await clock.advance(15)
    await let_run()
    assert server.headers()["content-type"] == "text/event-stream; charset=utf-8"
    assert server.headers()["cache-control"] == "no-store"
    assert server.body() == (
        b'event: snapshot\ndata: {"tables":[]}\n\n' + b'event: removed\ndata: {"code":"abc"}\n\n' + KEEP_ALIVE
    )
    assert streams.open == {"10.0.0.1": 1} and not closed
    server.hang_up.set()
    await asyncio.wait_for(response, 3)
    assert closed == ["feed"] and streams.open == {}  # the next feed from that address may open
    assert clock.sleeping() == 0


async def test_a_feed_that_fails_to_open_gives_the_place_back_too() -> None:
    streams = PerAddress(1)
    assert streams.take("10.0.0.1")

    @contextlib.asynccontextmanager
    async def feed() -> AsyncIterator[AsyncIterator[bytes]]:
        raise ConnectionError("the broker is down")
        yield  # pragma: no cover

    server = Asgi()
    with contextlib.suppress(ConnectionError):
        await event_stream(feed, streams, "10.0.0.1")(SCOPE, server.receive, server.send)
    assert streams.open == {}
