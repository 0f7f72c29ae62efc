"""The HTTP response of every server-sent-event feed (``GET /api/lobby/stream``,
``/api/tournaments/{id}/events``, ``/api/notices/stream``): the feed opened when the response starts,
its texts written as they come, the reader's place under the per-address limit given back when it
ends (the client went away: the response's task is cancelled). The events themselves, the
keep-alive and the reader's queue are app/event_feed.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

from fastapi.responses import StreamingResponse

from app.api.limits import PerAddress

MEDIA_TYPE = "text/event-stream"
HEADERS = {"Cache-Control": "no-store"}  # a feed is never cached, by a browser or a proxy

Feed = Callable[[], AbstractAsyncContextManager[AsyncIterator[bytes]]]


def event_stream(feed: Feed, streams: PerAddress, address: str) -> StreamingResponse:
    """The response writing ``feed``'s texts; ``address`` has taken its place in ``streams``
    already (and gets it back when the response ends, however it ends)."""

    async def body() -> AsyncIterator[bytes]:
        try:
            async with feed() as texts:
                async for text in texts:
                    yield text
        finally:
            streams.give_back(address)

    return StreamingResponse(body(), media_type=MEDIA_TYPE, headers=HEADERS)
