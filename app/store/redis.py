"""``RedisStore``: the table store of ``redis://``, ``rediss://``, ``unix://`` and ``redis+cluster://``
brokers, which is what lets a table survive the death of its process.

Each write is a Lua script that checks the fencing token first. The per-move append runs on a
dedicated pipelined connection of our own (:class:`app.broker.redis_wire.Commands`; on a cluster one
per master, :class:`app.broker.redis_cluster.ClusterCommands`), the rest on redis-py. Redis outages
raise ``BrokerUnavailable``; an owner that finds its log shorter than it should be (Redis restarted
with nothing on disk) gets ``LogGap`` and writes it again whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import orjson
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisClusterException, RedisError, ResponseError

from app.broker import BrokerUnavailable
from app.broker.base import CLUSTER_SCHEMES, DEFAULT_PREFIX
from app.broker.redis_cluster import ClusterCommands, ClusterTarget, cluster_client, slot_of
from app.broker.redis_wire import Commands, RedisTarget, pack_command
from app.store.base import Fenced, LogGap, overlay

# The writes are Lua scripts that check the fencing token first. A table's own keys (fence,
# record, log, live) carry its code as their hash tag, so they share a Redis Cluster slot; the
# indexes of all tables (watch codes, table codes, lobby rows) share another one. One Redis runs
# each write as one script over both; a cluster runs the table's part, then (if it was allowed)
# the indexes' part, which checks the token again against the newest one it has seen per table.

# KEYS: fence, record, log. ARGV: token, code, record json, watch code, public flag, mode ("save",
# "replace", or "create": a replace that may find the table missing), entries... -1: fenced out;
# -2: the table is missing and this is no "create" (the store lost it: LogGap).
_WRITE_TABLE = """
local fence = redis.call('GET', KEYS[1])
if not fence then
  if ARGV[6] ~= 'create' then return -2 end
elseif tonumber(fence) > tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[3])
if ARGV[6] ~= 'save' then
  redis.call('DEL', KEYS[3])
  for i = 7, #ARGV do redis.call('RPUSH', KEYS[3], ARGV[i]) end
end
"""

# The last three KEYS: watch index, codes set, lobby hash. Same ARGV.
_WRITE_INDEX = """
local k = #KEYS - 3
redis.call('HSET', KEYS[k + 1], ARGV[4], ARGV[2])
redis.call('SADD', KEYS[k + 2], ARGV[2])
if ARGV[5] == '1' then
  redis.call('HSET', KEYS[k + 3], ARGV[2], ARGV[3])
else
  redis.call('HDEL', KEYS[k + 3], ARGV[2])
end
return 1
"""

# (Cluster) KEYS[1]: the indexes' own record of the newest token per table. ARGV[1] token, ARGV[2] code.
_INDEX_FENCE = """
local seen = tonumber(redis.call('HGET', KEYS[1], ARGV[2]) or '0')
if seen > tonumber(ARGV[1]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[1])
"""

_WRITE = _WRITE_TABLE + _WRITE_INDEX  # one Redis: everything in one script
_WRITE_TABLE_ONLY = _WRITE_TABLE + "return 1\n"
_WRITE_INDEX_FENCED = _INDEX_FENCE + _WRITE_INDEX

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

# KEYS: fence, record, log, live. ARGV: token, code, watch code.
_REMOVE_TABLE = """
local fence = tonumber(redis.call('GET', KEYS[1]) or '0')
if fence > tonumber(ARGV[1]) then return -1 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
"""

# The last three KEYS: watch index, codes set, lobby hash. Same ARGV.
_REMOVE_INDEX = """
local k = #KEYS - 3
redis.call('HDEL', KEYS[k + 1], ARGV[3])
redis.call('SREM', KEYS[k + 2], ARGV[2])
redis.call('HDEL', KEYS[k + 3], ARGV[2])
return 1
"""

_REMOVE = _REMOVE_TABLE + _REMOVE_INDEX
_REMOVE_TABLE_ONLY = _REMOVE_TABLE + "return 1\n"
_REMOVE_INDEX_FENCED = _INDEX_FENCE + _REMOVE_INDEX


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:  # what orjson refuses (integers beyond 64 bits...), json takes
        return json.dumps(value, separators=(",", ":")).encode()


class RedisStore:
    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX) -> None:
        self._routes: ClusterCommands | None = None
        self._commands: Commands | None = None
        self._redis: Redis | RedisCluster
        if urlsplit(url).scheme in CLUSTER_SCHEMES:
            self._redis = cluster_client(url, connect_timeout_s=5, command_timeout_s=5)
            self._routes = ClusterCommands(ClusterTarget.from_url(url), connect_timeout_s=5, command_timeout_s=5)
        else:
            self._redis = Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
            # The per-move append runs on a dedicated pipelined connection: no pool checkout, lock
            # or task per call (see app.broker.redis_wire.Commands).
            self._commands = Commands(RedisTarget.from_url(url), connect_timeout_s=5, command_timeout_s=5)
        self._p = prefix + "store:"
        self._index = f"{self._p}{{index}}:"  # the hash tag of the indexes' slot
        cluster = self._routes is not None
        self._write = self._redis.register_script(_WRITE_TABLE_ONLY if cluster else _WRITE)
        self._write_index = self._redis.register_script(_WRITE_INDEX_FENCED)
        self._remove = self._redis.register_script(_REMOVE_TABLE_ONLY if cluster else _REMOVE)
        self._remove_index = self._redis.register_script(_REMOVE_INDEX_FENCED)
        self._claim = self._redis.register_script(_CLAIM)
        self._append_sha = hashlib.sha1(_APPEND.encode()).hexdigest().encode()

    def _table_keys(self, code: str) -> list[str]:
        """The table's fence, record, log and live keys: one hash tag, one cluster slot."""
        p, tag = self._p, "{" + code + "}"
        return [f"{p}fence:{tag}", f"{p}rec:{tag}", f"{p}log:{tag}", f"{p}live:{tag}"]

    def _index_keys(self) -> list[str]:
        """The indexes of every table: watch code -> code, the codes, the public tables' records."""
        return [f"{self._index}watch", f"{self._index}codes", f"{self._index}lobby"]

    async def _run(self, script: Any, keys: list[str], args: list[Any]) -> int:
        try:
            result = await script(keys=keys, args=args)
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return int(result)

    async def _fenced(self, code: str, table: Any, index: Any, keys: list[str], args: list[Any]) -> None:
        """Run a write: on one Redis one script; on a cluster the table's part, then the indexes'."""
        if self._routes is None:
            result = await self._run(table, keys + self._index_keys(), args)
        else:
            result = await self._run(table, keys, args)
            if result == 1:
                result = await self._run(index, [f"{self._index}tokens", *self._index_keys()], args)
        if result == -1:
            raise Fenced(code)
        if result == -2:
            raise LogGap(code)

    async def save(
        self, code: str, token: int, record: Mapping[str, Any], log: list[str] | None, *, create: bool = False
    ) -> None:
        if create and log is None:
            raise ValueError("a create write carries the whole log")
        args: list[Any] = [
            token,
            code,
            _dumps(record),
            record["spec"]["watch_code"],
            "0" if record["spec"]["private"] else "1",
            "create" if create else "save" if log is None else "replace",
            *(log or []),
        ]
        await self._fenced(code, self._write, self._write_index, self._table_keys(code)[:3], args)

    async def append(self, code: str, token: int, live: Mapping[str, Any], entry: str, index: int) -> None:
        keys: list[bytes | str | int] = [b"4", *self._table_keys(code)]
        keys_args = (*keys, token, index, entry, _dumps(live))
        try:
            try:
                result = await self._call(code, pack_command(b"EVALSHA", self._append_sha, *keys_args))
            except ResponseError as exc:
                if not str(exc).startswith("NOSCRIPT"):
                    raise
                # Not in this server's script cache yet (first use, or it restarted): EVAL caches it.
                result = await self._call(code, pack_command(b"EVAL", _APPEND, *keys_args))
        except RedisError as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if result == -1:
            raise Fenced(code)
        if result == -2:
            raise LogGap(code)

    async def _call(self, code: str, command: bytes) -> Any:
        """One command about a table on the hot path's own connection (on a cluster: to the master
        of the table's slot)."""
        if self._routes is not None:
            (result,) = await self._routes.call([(slot_of("{" + code + "}"), command)], "append")
            return result
        assert self._commands is not None
        (result,) = await self._commands.call(command, 1, "append")
        return result

    async def claim(self, code: str, token: int) -> None:
        if await self._run(self._claim, self._table_keys(code)[:1], [token]) == -1:
            raise Fenced(code)

    async def load(self, code: str) -> tuple[dict[str, Any], list[str]] | None:
        _, rec, log, live_key = self._table_keys(code)
        try:
            raw = await self._redis.get(rec)
            live = await self._redis.get(live_key)
            entries = await self._redis.lrange(log, 0, -1)
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if raw is None:
            return None
        moves = [entry if isinstance(entry, str) else entry.decode() for entry in entries]
        return overlay(orjson.loads(raw), orjson.loads(live) if live else None), moves

    async def exists(self, code: str) -> bool:
        try:
            return bool(await self._redis.exists(self._table_keys(code)[1]))
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc

    async def codes(self) -> list[str]:
        try:
            members = await self._redis.smembers(self._index_keys()[1])
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)

    async def statuses(self, codes: list[str]) -> list[str | None]:
        """One pipeline of GETs (on a cluster, one per master), not a round trip per table."""
        if not codes:
            return []
        try:
            pipe = self._redis.pipeline(transaction=False)
            for code in codes:
                pipe.get(self._table_keys(code)[1])
            raws = await pipe.execute()
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return [None if raw is None else orjson.loads(raw).get("status") for raw in raws]

    async def resolve_watch(self, watch_code: str) -> str | None:
        try:
            code = await self._redis.hget(self._index_keys()[0], watch_code)
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        if code is None:
            return None
        return code.decode() if isinstance(code, bytes) else str(code)

    async def lobby(self) -> list[dict[str, Any]]:
        try:
            rows = await self._redis.hvals(self._index_keys()[2])
        except (RedisError, RedisClusterException, OSError) as exc:
            raise BrokerUnavailable(f"table store unreachable: {exc}") from exc
        return [orjson.loads(row) for row in rows]

    async def remove(self, code: str, token: int) -> None:
        record = await self.load(code)
        watch = record[0]["spec"]["watch_code"] if record else ""
        await self._fenced(code, self._remove, self._remove_index, self._table_keys(code), [token, code, watch])

    async def close(self) -> None:
        if self._commands is not None:
            await self._commands.aclose()
        if self._routes is not None:
            await self._routes.aclose()
        await self._redis.aclose()
