"""``RedisStore``: the table store of ``redis://``, ``rediss://`` and ``unix://`` brokers, which is
what lets a table survive the death of its process.

Each write is one Lua script that checks the fencing token first. The per-move append runs on a
dedicated pipelined connection of our own (:class:`app.broker.redis_wire.Commands`), the rest on
redis-py. Redis outages raise ``BrokerUnavailable``; an owner that finds its log shorter than it
should be (Redis restarted with nothing on disk) gets ``LogGap`` and writes it again whole.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from app.broker import BrokerUnavailable
from app.broker.redis_wire import Commands, RedisTarget, pack_command
from app.store.base import Fenced, LogGap, overlay

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
        self._redis = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self._p = prefix + "store:"
        self._write = self._redis.register_script(_WRITE)
        self._remove = self._redis.register_script(_REMOVE)
        self._claim = self._redis.register_script(_CLAIM)
        # The per-move append runs on a dedicated pipelined connection: no pool checkout, lock or
        # task per call (see app.broker.redis_wire.Commands).
        self._commands = Commands(RedisTarget.from_url(url), connect_timeout_s=5, command_timeout_s=5)
        self._append_sha = hashlib.sha1(_APPEND.encode()).hexdigest().encode()

    def _keys(self, code: str) -> list[str]:
        p = self._p
        return [f"{p}fence:{code}", f"{p}rec:{code}", f"{p}log:{code}", f"{p}watch", f"{p}codes", f"{p}lobby"]

    async def _run(self, script: Any, keys: list[str], args: list[Any]) -> int:
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
        keys = self._keys(code)
        try:
            raw = await self._redis.get(keys[1])
            live = await self._redis.get(f"{self._p}live:{code}")
            entries = await self._redis.lrange(keys[2], 0, -1)
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if raw is None:
            return None
        return overlay(orjson.loads(raw), orjson.loads(live) if live else None), [orjson.loads(e) for e in entries]

    async def codes(self) -> list[str]:
        try:
            members = await self._redis.smembers(f"{self._p}codes")
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    async def resolve_watch(self, watch_code: str) -> str | None:
        try:
            code = await self._redis.hget(f"{self._p}watch", watch_code)
        except (RedisError, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if code is None:
            return None
        return code.decode() if isinstance(code, bytes) else str(code)

    async def lobby(self) -> list[dict[str, Any]]:
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

