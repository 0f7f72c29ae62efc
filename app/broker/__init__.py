"""Cross-process pub/sub, leases and shared counters, chosen by URL.

    async with open_broker(settings.broker_url) as broker:
        async with broker.subscribe("table:42") as sub:
            await broker.publish("table:42", b"...")
            async for event in sub:
                if isinstance(event, Gap):
                    ...  # messages may be missing: resync from a snapshot
                else:
                    handle(event.data)

``memory://`` (in-process; ``memory://NAME`` shares one hub between brokers of this process) and
``redis://host:port/db`` / ``rediss://`` are understood. The interface, delivery guarantees and
outage behaviour are described in ``docs/broker.md``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from app.broker.base import (
    DEFAULT_MAX_QUEUE,
    DEFAULT_PREFIX,
    REDIS_SCHEMES,
    Broker,
    BrokerClosed,
    BrokerError,
    BrokerUnavailable,
    Event,
    Gap,
    GapReason,
    LeaseHolder,
    Message,
    Subscription,
)

__all__ = [
    "REDIS_SCHEMES",
    "Broker",
    "BrokerClosed",
    "BrokerError",
    "BrokerUnavailable",
    "Event",
    "Gap",
    "GapReason",
    "LeaseHolder",
    "Message",
    "Subscription",
    "open_broker",
]


def open_broker(
    url: str,
    *,
    prefix: str = DEFAULT_PREFIX,
    max_queue: int = DEFAULT_MAX_QUEUE,
    reconnect_initial_s: float = 0.1,
    reconnect_max_s: float = 2.0,
    health_interval_s: float = 3.0,
    connect_timeout_s: float = 5.0,
    command_timeout_s: float = 5.0,
) -> Broker:
    """A not-yet-started broker for ``url``; ``async with`` it (or ``await start()``/``aclose()``).

    ``prefix`` namespaces channels and keys. ``max_queue`` bounds each subscription's queue.
    The remaining options only matter for Redis: reconnect backoff (doubling from
    ``reconnect_initial_s`` up to ``reconnect_max_s``), the PING interval of the pub/sub link,
    and timeouts for connecting and for single commands.
    """
    scheme = urlsplit(url).scheme
    if scheme == "memory":
        from app.broker.memory import MemoryBroker

        return MemoryBroker(url, prefix=prefix, max_queue=max_queue)
    if scheme in REDIS_SCHEMES:
        from app.broker.redis import RedisBroker

        return RedisBroker(
            url,
            prefix=prefix,
            max_queue=max_queue,
            reconnect_initial_s=reconnect_initial_s,
            reconnect_max_s=reconnect_max_s,
            health_interval_s=health_interval_s,
            connect_timeout_s=connect_timeout_s,
            command_timeout_s=command_timeout_s,
        )
    raise ValueError(f"unsupported broker URL {url!r}: use memory://, redis://host:port/db or unix:///path?db=0")
