"""What the Redis broker keeps in keys, through redis-py's client (a pool for one Redis, redis-py's
cluster client for a Redis Cluster): leases with fencing tokens, and capped lists (a table's chat
history). Any connection-level failure is raised as :class:`BrokerUnavailable`.

Leases are one string key ``<prefix>lease:<name>`` holding ``"<token>:<owner>"`` with a PX
expiry, changed only by Lua scripts that check owner and token. Tokens come from INCR on the
companion key ``<prefix>fence:<name>``, which never expires; when it does not exist (first use,
or a Redis restarted without persistence) it is seeded from the server clock in milliseconds,
so tokens keep growing across such a restart. Both keys carry the name's hash tag (the name
itself as the tag when it has none), so they share a cluster slot. Lists are ``<prefix>kv:<key>``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.exceptions import ClusterError, RedisClusterException
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.broker.base import BrokerUnavailable, LeaseHolder, check_name, encode_message, ttl_ms

LOST = (RedisConnectionError, RedisTimeoutError, ClusterError, RedisClusterException, OSError, TimeoutError)

_ACQUIRE = """
local current = redis.call('GET', KEYS[1])
if current then
  local sep = string.find(current, ':', 1, true)
  if string.sub(current, sep + 1) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return tonumber(string.sub(current, 1, sep - 1))
  end
  return false
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%03d', math.floor(tonumber(now[2]) / 1000)))
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], tostring(token) .. ':' .. ARGV[1], 'PX', ARGV[2])
return token
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# KEYS: the leases; ARGV[1]: the expiry (ms), then each lease's "<token>:<owner>". Returns 1/0 each.
_RENEW_MANY = """
local kept = {}
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i + 1] then
    redis.call('PEXPIRE', key, ARGV[1])
    kept[i] = 1
  else
    kept[i] = 0
  end
end
return kept
"""
RENEW_BATCH = 500  # leases renewed by one script call

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

# KEYS: the list. ARGV: item, how many to keep, expiry in ms (0: none).
_PUSH_CAPPED = """
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
"""


@contextlib.contextmanager
def unavailable(what: str) -> Iterator[None]:
    """Raise a lost connection during ``what`` as :class:`BrokerUnavailable`."""
    try:
        yield
    except LOST as exc:
        raise BrokerUnavailable(f"redis unavailable during {what}: {exc}") from exc


def _holder(value: bytes | str | None) -> LeaseHolder | None:
    """A lease key's value, ``"<token>:<owner>"``, read."""
    if value is None:
        return None
    text = value.decode("utf-8") if isinstance(value, bytes) else value
    token, _, owner = text.partition(":")
    return LeaseHolder(owner, int(token))


def has_hash_tag(name: str) -> bool:
    """Whether ``name`` has a Redis Cluster hash tag: a non-empty part between its first ``{`` and
    the next ``}``."""
    start = name.find("{")
    return start >= 0 and name.find("}", start + 1) > start + 1


def tagged(name: str) -> str:
    """``name`` as the part of a key that decides its cluster slot: as it is when it carries a hash
    tag, else the whole name as the tag (so that the keys made from one name share a slot)."""
    return name if has_hash_tag(name) else "{" + name + "}"


def connection_pool(url: str, *, connect_timeout_s: float, command_timeout_s: float) -> ConnectionPool:
    """redis-py's pool for one Redis (a cluster has :func:`~app.broker.redis_cluster.cluster_client`).
    One quick retry covers a pooled connection that died since its last use; the real reconnect
    policy is the broker's supervisor's, and callers see BrokerUnavailable right away."""
    options: dict[str, Any] = {
        "socket_connect_timeout": connect_timeout_s,
        "socket_timeout": command_timeout_s,
        "retry": Retry(NoBackoff(), 1),
        "health_check_interval": 0,
        **parse_url(url),  # what the URL says wins, as with Redis.from_url
        "decode_responses": False,
    }
    return ConnectionPool(**options)


class RedisKeys:
    """The leases and lists of one broker (``prefix``) on ``client``. The broker checks that it is
    open before each call."""

    def __init__(self, client: Redis | RedisCluster, prefix: str) -> None:
        self._client = client
        self.prefix = prefix
        self._acquire: AsyncScript = client.register_script(_ACQUIRE)
        self._renew: AsyncScript = client.register_script(_RENEW)
        self._renew_many: AsyncScript = client.register_script(_RENEW_MANY)
        self._release: AsyncScript = client.register_script(_RELEASE)
        self._push_capped: AsyncScript = client.register_script(_PUSH_CAPPED)

    # --- leases ---

    def lease_keys(self, name: str) -> list[str]:
        """The lease's key and its fencing counter's, in one cluster slot."""
        tag = tagged(check_name("lease name", name))
        return [f"{self.prefix}lease:{tag}", f"{self.prefix}fence:{tag}"]

    async def acquire_lease(self, name: str, owner: str, ttl_s: float) -> int | None:
        check_name("owner", owner)
        with unavailable("acquire_lease"):
            token = await self._acquire(keys=self.lease_keys(name), args=[owner, ttl_ms(ttl_s)])
        return None if token is None else int(token)

    async def renew_lease(self, name: str, owner: str, token: int, ttl_s: float) -> bool:
        with unavailable("renew_lease"):
            done = await self._renew(keys=self.lease_keys(name)[:1], args=[f"{token}:{owner}", ttl_ms(ttl_s)])
        return bool(done)

    async def renew_leases(self, owner: str, leases: Sequence[tuple[str, int]], ttl_s: float) -> list[bool]:
        """One script call per ``RENEW_BATCH`` leases (a process renews every table it owns each
        second: one round trip each would cost it a loop turn per table). On a cluster the leases
        live in the slots of their tables, and one script may touch one slot only: one by one there."""
        if isinstance(self._client, RedisCluster):
            return [await self.renew_lease(name, owner, token, ttl_s) for name, token in leases]
        kept: list[bool] = []
        ttl = ttl_ms(ttl_s)
        for start in range(0, len(leases), RENEW_BATCH):
            batch = leases[start : start + RENEW_BATCH]
            keys = [self.lease_keys(name)[0] for name, _ in batch]
            with unavailable("renew_leases"):
                done = await self._renew_many(keys=keys, args=[ttl, *(f"{token}:{owner}" for _, token in batch)])
            kept.extend(bool(int(flag)) for flag in done)
        return kept

    async def release_lease(self, name: str, owner: str, token: int) -> bool:
        with unavailable("release_lease"):
            done = await self._release(keys=self.lease_keys(name)[:1], args=[f"{token}:{owner}"])
        return bool(done)

    async def lease_holder(self, name: str) -> LeaseHolder | None:
        with unavailable("lease_holder"):
            value = await self._client.get(self.lease_keys(name)[0])
        return _holder(value)

    async def lease_holders(self, names: Sequence[str]) -> list[LeaseHolder | None]:
        """One MGET (on a cluster, redis-py splits it by slot)."""
        if not names:
            return []
        keys = [self.lease_keys(name)[0] for name in names]
        client = self._client
        with unavailable("lease_holders"):
            if isinstance(client, RedisCluster):
                values = await client.mget_nonatomic(keys)
            else:
                values = await client.mget(keys)
        return [_holder(value) for value in values]

    # --- lists ---

    def _key(self, key: str) -> str:
        return f"{self.prefix}kv:{check_name('key', key)}"

    async def push_capped(self, key: str, item: bytes | str, limit: int, *, ttl_s: float | None = None) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        expiry = 0 if ttl_s is None else ttl_ms(ttl_s)
        with unavailable("push_capped"):
            await self._push_capped(keys=[self._key(key)], args=[encode_message(item), int(limit), expiry])

    async def read_list(self, key: str) -> list[bytes]:
        with unavailable("read_list"):
            items = await self._client.lrange(self._key(key), 0, -1)
        return [item if isinstance(item, bytes) else item.encode() for item in items]

    async def delete(self, *keys: str) -> int:
        if not keys:
            return 0
        with unavailable("delete"):
            return int(await self._client.delete(*(self._key(key) for key in keys)))
