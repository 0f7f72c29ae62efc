"""``MemoryStore``: the table store of ``memory://`` brokers, in this process.

``memory://NAME`` shares one store between the registries of a process that open the same name,
which the tests use to stand in for several processes sharing one Redis.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from app.store.base import Fenced, LogGap, overlay


class _MemoryData:
    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.logs: dict[str, list[str]] = {}
        self.fences: dict[str, int] = {}
        self.watch: dict[str, str] = {}
        self.live: dict[str, dict[str, Any]] = {}


_named: weakref.WeakValueDictionary[str, _MemoryData] = weakref.WeakValueDictionary()


class MemoryStore:
    def __init__(self, url: str = "memory://") -> None:
        name = urlsplit(url).netloc or urlsplit(url).path.strip("/")
        data = _named.get(name) if name else None
        if data is None:
            data = _MemoryData()
            if name:
                _named[name] = data
        self._data = data  # strong reference keeps a named store alive while someone uses it
        self.private = not name  # nobody else can read it: there is nothing to take over

    def _fence(self, code: str, token: int) -> None:
        if self._data.fences.get(code, 0) > token:
            raise Fenced(code)
        self._data.fences[code] = token

    async def claim(self, code: str, token: int) -> None:
        self._fence(code, token)

    async def save(
        self, code: str, token: int, record: Mapping[str, Any], log: list[str] | None, *, create: bool = False
    ) -> None:
        if code not in self._data.fences and not create:
            raise LogGap(code)
        self._fence(code, token)
        self._data.records[code] = dict(record)
        self._data.live.pop(code, None)
        self._data.watch[record["spec"]["watch_code"]] = code
        if log is not None:
            self._data.logs[code] = list(log)

    async def append(self, code: str, token: int, live: Mapping[str, Any], entry: str, index: int) -> None:
        if self._data.fences.get(code, 0) > token:  # checked, not set (as the Redis store does)
            raise Fenced(code)
        log = self._data.logs.setdefault(code, [])
        if len(log) < index or code not in self._data.records:
            raise LogGap(code)
        del log[index:]
        log.append(entry)
        self._data.live[code] = dict(live)

    async def load(self, code: str) -> tuple[dict[str, Any], list[str]] | None:
        record = self._data.records.get(code)
        if record is None:
            return None
        return overlay(record, self._data.live.get(code)), list(self._data.logs.get(code, []))

    async def exists(self, code: str) -> bool:
        return code in self._data.records

    async def codes(self) -> list[str]:
        return list(self._data.records)

    async def statuses(self, codes: list[str]) -> list[str | None]:
        records = self._data.records
        return [records[code]["status"] if code in records else None for code in codes]

    async def resolve_watch(self, watch_code: str) -> str | None:
        return self._data.watch.get(watch_code)

    async def lobby(self) -> list[dict[str, Any]]:
        return [r for r in self._data.records.values() if not r["spec"]["private"]]

    async def remove(self, code: str, token: int) -> None:
        self._fence(code, token)
        record = self._data.records.pop(code, None)
        self._data.logs.pop(code, None)
        self._data.live.pop(code, None)
        if record is not None:
            self._data.watch.pop(record["spec"]["watch_code"], None)

    async def close(self) -> None:
        return None
