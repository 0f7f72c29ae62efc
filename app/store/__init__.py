"""Where live tables are kept so that another process can take one over.

One interface (:class:`TableStore`, ``app/store/base.py``) and two stores behind it, chosen by the
broker URL with :func:`open_store`:

* ``MemoryStore`` (``app/store/memory.py``) for ``memory://``: one process (``memory://NAME``
  shares a store between registries of one process, which the tests use to stand in for several);
* ``RedisStore`` (``app/store/redis.py``) for ``redis://``, ``rediss://`` and ``unix://``: what
  lets a table survive the death of its process. It talks to Redis through redis-py and the
  broker's own pipelined connection (``app/broker/redis_wire.py``).

This package stands beside ``app/broker`` (it uses the broker's Redis connection code and errors;
the broker knows nothing of it) and below ``app/tables`` (the actor and registry write and read
tables through it; ``app/tables/store.py`` re-exports it).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from app.broker import REDIS_SCHEMES
from app.broker.base import DEFAULT_PREFIX
from app.store.base import Fenced, LogGap, TableStore
from app.store.memory import MemoryStore

__all__ = ["Fenced", "LogGap", "MemoryStore", "TableStore", "open_store"]


def open_store(broker_url: str, prefix: str = DEFAULT_PREFIX) -> TableStore:
    """The table store that goes with the broker at ``broker_url``; on Redis its keys begin with
    ``prefix``, the broker's (``DURAK_REDIS_PREFIX``)."""
    scheme = urlsplit(broker_url).scheme
    if scheme in REDIS_SCHEMES:
        from app.store.redis import RedisStore  # a memory:// deployment never loads redis-py

        return RedisStore(broker_url, prefix)
    return MemoryStore(broker_url)
