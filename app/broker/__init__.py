"""Cross-process pub/sub, leases and shared capped lists, chosen by URL.

    async with open_broker(settings.storage.broker_url) as broker:
        async with broker.subscribe("table:42") as sub:
            await broker.publish("table:42", b"...")
            async for event in sub:
                if isinstance(event, Gap):
                    ...  # messages may be missing: resync from a snapshot
                else:
                    handle(event.data)

``memory://`` (in-process; ``memory://NAME`` shares one hub between brokers of this process),
``redis://host:port/db`` / ``rediss://`` / ``unix://`` (one Redis) and
``redis+cluster://host:port[,host:port...]`` (a Redis Cluster, with sharded pub/sub) are
understood. The interface, delivery guarantees and outage behaviour are described in
``docs/broker.md``.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from app.broker.base import (
    REDIS_SCHEMES,
    Broker,
    BrokerClosed,
    BrokerError,
    BrokerOptions,
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
    "BrokerOptions",
    "BrokerUnavailable",
    "Event",
    "Gap",
    "GapReason",
    "LeaseHolder",
    "Message",
    "Subscription",
    "open_broker",
]


def open_broker(url: str, options: BrokerOptions | None = None) -> Broker:
    """A not-yet-started broker for ``url``; ``async with`` it (or ``await start()``/``aclose()``).
    ``options`` (prefix, queue bound, Redis timeouts and backoff) default to ``BrokerOptions()``."""
    scheme = urlsplit(url).scheme
    if scheme == "memory":
        from app.broker.memory import MemoryBroker

        return MemoryBroker(url, options)
    if scheme in REDIS_SCHEMES:
        from app.broker.redis import RedisBroker

        return RedisBroker(url, options)
    raise ValueError(
        f"unsupported broker URL {url!r}: use memory://, redis://host:port/db, unix:///path?db=0"
        " or redis+cluster://host:port[,host:port...]"
    )
