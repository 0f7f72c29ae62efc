"""The live-table store as the tables use it (app/store): its interface and the in-process store.
The store for a broker URL is chosen where the application is put together (``app.store.open_store``
in app/main.py), so the tables never load the Redis store."""

from app.store.base import Fenced, LogGap, TableStore
from app.store.memory import MemoryStore

__all__ = ["Fenced", "LogGap", "MemoryStore", "TableStore"]
