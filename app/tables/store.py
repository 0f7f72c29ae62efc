"""Where live tables are kept so that another process can take one over.

Every table has a *record* (its parameters, seats, status, version, the match's seed and dealer,
the decision deadline...) and, while a match runs, an *action log*. The owning actor writes both
before it pushes anything to clients, and every write carries the owner's fencing token: a write
with a token older than the newest one seen for that table is refused (``Fenced``), so a process
that lost its lease can never overwrite its successor.

``MemoryStore`` serves ``memory://`` brokers (one process; ``memory://NAME`` shares a store between
registries of one process, which the tests use to stand in for several processes). ``RedisStore``
serves ``redis://`` and is what lets a table survive the death of its process. Redis outages raise
``BrokerUnavailable``; an owner that finds its log shorter than it should be (Redis restarted with
nothing on disk) writes it again whole.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from typing import Any, Protocol
from urllib.parse import urlsplit

import orjson

from app.broker import REDIS_SCHEMES, BrokerUnavailable


class Fenced(Exception):
    """A newer owner holds this table; this process must stop writing to it."""


class TableStore(Protocol):
    async def save(self, code: str, token: int, record: dict[str, Any], log: list[dict[str, Any]] | None) -> None:
        """Write the record; with ``log`` also make the action log exactly that list."""

    async def append(self, code: str, token: int, live: dict[str, Any], entry: dict[str, Any], index: int) -> None:
        """Put ``entry`` at position ``index`` of the action log and note ``live`` (the version and
        the decision deadline after it), which ``load`` lays over the last saved record."""

    async def claim(self, code: str, token: int) -> None:
        """Refuse every later write with a token older than ``token`` (``Fenced`` if a newer one was
        seen already). A new owner claims the table before it loads it, so that nothing the old
        owner writes afterwards can be missing from what it loaded."""

    async def load(self, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None: ...

    async def codes(self) -> list[str]: ...

    async def resolve_watch(self, watch_code: str) -> str | None: ...

    async def lobby(self) -> list[dict[str, Any]]:
        """The records of every public table (any process)."""

    async def remove(self, code: str, token: int) -> None: ...

    async def close(self) -> None: ...


class _MemoryData:
    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.logs: dict[str, list[dict[str, Any]]] = {}
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

    async def save(self, code: str, token: int, record: dict[str, Any], log: list[dict[str, Any]] | None) -> None:
        self._fence(code, token)
        self._data.records[code] = record
        self._data.live.pop(code, None)
        self._data.watch[record["spec"]["watch_code"]] = code
        if log is not None:
            self._data.logs[code] = list(log)

    async def append(self, code: str, token: int, live: dict[str, Any], entry: dict[str, Any], index: int) -> None:
        self._fence(code, token)
        log = self._data.logs.setdefault(code, [])
        if len(log) < index or code not in self._data.records:
            raise LogGap(code)
        del log[index:]
        log.append(entry)
        self._data.live[code] = live

    async def load(self, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        record = self._data.records.get(code)
        if record is None:
            return None
        return _overlay(record, self._data.live.get(code)), list(self._data.logs.get(code, []))

    async def codes(self) -> list[str]:
        return list(self._data.records)

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


# KEYS: fence, record, log, watch-index, codes-set, lobby-hash. ARGV: token, code, record json,
# watch code, public flag, mode ("save" / "append" / "replace"), index, entries...
_WRITE = """
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if fence > token then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[4], ARGV[4], ARGV[2])
redis.call('SADD', KEYS[5], ARGV[2])
if ARGV[5] == '1' then redis.call('HSET', KEYS[6], ARGV[2], ARGV[3]) else redis.call('HDEL', KEYS[6], ARGV[2]) end
local mode = ARGV[6]
if mode == 'replace' then
  redis.call('DEL', KEYS[3])
  for i = 8, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
elseif mode == 'append' then
  local index = tonumber(ARGV[7])
  local length = redis.call('LLEN', KEYS[3])
  if length < index then return -2 end
  if length > index then redis.call('LTRIM', KEYS[3], 0, index - 1) end
  redis.call('RPUSH', KEYS[3], ARGV[8])
end
return 1
"""

# KEYS: fence, record, log, live. ARGV: token, index, entry json, live json.
_APPEND = """
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
if fence > tonumber(ARGV[1]) then return -1 end
if redis.call('EXISTS', KEYS[2]) == 0 then return -2 end
local index = tonumber(ARGV[2])
local length = redis.call('LLEN', KEYS[3])
if length < index then return -2 end
if length > index then redis.call('LTRIM', KEYS[3], 0, index - 1) end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('SET', KEYS[4], ARGV[4])
return 1
"""

# KEYS: fence. ARGV: token.
_CLAIM = """
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
if fence > tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

_REMOVE = """
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
if fence > tonumber(ARGV[1]) then return -1 end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[4], ARGV[3])
redis.call('SREM', KEYS[5], ARGV[2])
redis.call('HDEL', KEYS[6], ARGV[2])
return 1
"""


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:  # what orjson refuses (integers beyond 64 bits...), json takes
        return json.dumps(value, separators=(",", ":")).encode()


class RedisStore:
    def __init__(self, url: str, prefix: str = "durak:") -> None:
        from redis.asyncio import ConnectionPool, Redis

        from app.broker.redis import Commands

        self._redis = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._p = prefix + "store:"
        self._write = self._redis.register_script(_WRITE)
        self._remove = self._redis.register_script(_REMOVE)
        self._claim = self._redis.register_script(_CLAIM)
        # The per-move append runs on a dedicated pipelined connection: no pool checkout, lock or
        # task per call (see app.broker.redis.Commands).
        self._append_pool = ConnectionPool.from_url(url, protocol=2, socket_timeout=5, socket_connect_timeout=5)
        self._commands = Commands(self._append_pool, connect_timeout_s=5, command_timeout_s=5)
        self._append_sha = hashlib.sha1(_APPEND.encode()).hexdigest().encode()

    def _keys(self, code: str) -> list[str]:
        p = self._p
        return [f"{p}fence:{code}", f"{p}rec:{code}", f"{p}log:{code}", f"{p}watch", f"{p}codes", f"{p}lobby"]

    async def _run(self, script: Any, keys: list[str], args: list[Any]) -> int:
        from redis.exceptions import RedisError

        try:
            result = await script(keys=keys, args=args)
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return int(result)

    async def _write_record(
        self, code: str, token: int, record: dict[str, Any], mode: str, index: int, entries: list[dict[str, Any]]
    ) -> int:
        args: list[Any] = [
            token,
            code,
            _dumps(record),
            record["spec"]["watch_code"],
            "0" if record["spec"]["private"] else "1",
            mode,
            index,
            *(_dumps(entry) for entry in entries),
        ]
        result = await self._run(self._write, self._keys(code), args)
        if result == -1:
            raise Fenced(code)
        return result

    async def save(self, code: str, token: int, record: dict[str, Any], log: list[dict[str, Any]] | None) -> None:
        await self._write_record(code, token, record, "save" if log is None else "replace", 0, log or [])

    async def append(self, code: str, token: int, live: dict[str, Any], entry: dict[str, Any], index: int) -> None:
        from redis.exceptions import RedisError, ResponseError

        from app.broker.redis import pack_command

        fence, record, log = self._keys(code)[:3]
        keys_args = (
            b"4",
            fence,
            record,
            log,
            f"{self._p}live:{code}",
            token,
            index,
            _dumps(entry),
            _dumps(live),
        )
        call = self._commands.call
        try:
            try:
                (result,) = await call(pack_command(b"EVALSHA", self._append_sha, *keys_args), 1, "append")
            except ResponseError as exc:
                if not str(exc).startswith("NOSCRIPT"):
                    raise
                # Not in this server's script cache yet (first use, or it restarted): EVAL caches it.
                (result,) = await call(pack_command(b"EVAL", _APPEND, *keys_args), 1, "append")
        except RedisError as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if result == -1:
            raise Fenced(code)
        if result == -2:
            raise LogGap(code)

    async def claim(self, code: str, token: int) -> None:
        if await self._run(self._claim, self._keys(code)[:1], [token]) == -1:
            raise Fenced(code)

    async def load(self, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        from redis.exceptions import RedisError

        keys = self._keys(code)
        try:
            raw = await self._redis.get(keys[1])
            live = await self._redis.get(f"{self._p}live:{code}")
            entries = await self._redis.lrange(keys[2], 0, -1)
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if raw is None:
            return None
        return _overlay(orjson.loads(raw), orjson.loads(live) if live else None), [orjson.loads(e) for e in entries]

    async def codes(self) -> list[str]:
        from redis.exceptions import RedisError

        try:
            members = await self._redis.smembers(f"{self._p}codes")
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    async def resolve_watch(self, watch_code: str) -> str | None:
        from redis.exceptions import RedisError

        try:
            code = await self._redis.hget(f"{self._p}watch", watch_code)
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if code is None:
            return None
        return code.decode() if isinstance(code, bytes) else str(code)

    async def lobby(self) -> list[dict[str, Any]]:
        from redis.exceptions import RedisError

        try:
            rows = await self._redis.hvals(f"{self._p}lobby")
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return [orjson.loads(row) for row in rows]

    async def remove(self, code: str, token: int) -> None:
        record = await self.load(code)
        watch = record[0]["spec"]["watch_code"] if record else ""
        if await self._run(self._remove, self._keys(code), [token, code, watch]) == -1:
            raise Fenced(code)

    async def close(self) -> None:
        await self._commands.aclose()
        await self._redis.aclose()
        await self._append_pool.disconnect()


def _overlay(record: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any]:
    """The saved record with the version and deadline of the moves appended since."""
    if live is None or live.get("version", -1) <= record.get("version", -1):
        return record
    return {**record, "version": live["version"], "deadline": live["deadline"]}


class LogGap(Exception):
    """The stored action log is shorter than the owner's (the store lost data): write it whole."""


def open_store(broker_url: str, prefix: str = "durak:") -> TableStore:
    scheme = urlsplit(broker_url).scheme
    if scheme in REDIS_SCHEMES:
        return RedisStore(broker_url, prefix)
    return MemoryStore(broker_url)
