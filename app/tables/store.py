"""The table store, as the actor and the registry see it: the interface, its errors, the in-memory
store and the factory. They live in ``app/store`` (the Redis store, ``app/store/redis.py``, beside the
broker's Redis code); this module re-exports them so that ``app/tables`` imports its store from one place."""

from __future__ import annotations

from app.store import Fenced, LogGap, MemoryStore, TableStore, open_store

__all__ = ["Fenced", "LogGap", "MemoryStore", "TableStore", "open_store"]
