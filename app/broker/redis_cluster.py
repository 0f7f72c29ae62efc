"""Redis Cluster for the broker and the table store: the ``redis+cluster://`` URL, the slot of a
key or channel, the slot → master map, and pipelined commands sent to the master of each slot.

A cluster spreads the 16384 hash slots over its masters. A key (or shard channel) lives in the slot
of its *hash tag* (the part between the first ``{`` and the next ``}``) when it has one, else of its
whole name; the table channels and keys carry the table code as their tag (``t:{CODE}:in``), so one
table's traffic and data live on one shard, and a Lua script may touch all of its keys.

:class:`ClusterCommands` is the hot path (SPUBLISH, the store's per-move append): one pipelined
:class:`~app.broker.redis_wire.Commands` connection per master, the map read with ``CLUSTER SLOTS``
and refreshed when a node answers ``MOVED`` (the command is then sent again where it belongs;
``ASK`` is followed for that command only) or cannot be reached. The occasional commands go through
redis-py's public cluster client (:func:`cluster_client`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import hiredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot
from redis.exceptions import ResponseError

from app.broker.base import CLUSTER_SCHEMES, BrokerUnavailable
from app.broker.redis_wire import Commands, RedisTarget, pack_command

log = logging.getLogger("app.broker.redis")

SLOTS = 16384
MAX_REDIRECTS = 5
Address = tuple[str, int]

_ASKING = pack_command("ASKING")
_CLUSTER_SLOTS = pack_command("CLUSTER", "SLOTS")


def slot_of(name: bytes | str) -> int:
    """The hash slot of a key or shard channel (its hash tag's, when it has one)."""
    return int(key_slot(name.encode() if isinstance(name, str) else name))


def _address(text: str, what: str) -> Address:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"not host:port in {what}: {text!r}")
    return host.strip("[]") or "localhost", int(port)


@dataclass(frozen=True, slots=True)
class ClusterTarget:
    """``redis+cluster://[[user]:password@]host:port[,host:port…][?query]`` (``rediss+cluster://``
    over TLS): the seed nodes to ask for the cluster's map, and how to log in on every node (the
    query keys of :class:`RedisTarget`; a cluster has database 0 only)."""

    seeds: tuple[Address, ...]
    login: RedisTarget  # user, password, client name and TLS for every node; host and port replaced

    @classmethod
    def from_url(cls, url: str) -> ClusterTarget:
        parts = urlsplit(url)
        if parts.scheme not in CLUSTER_SCHEMES:
            raise ValueError(f"not a redis+cluster:// URL: {url!r}")
        userinfo, _, hosts = parts.netloc.rpartition("@")
        seeds = tuple(_address(item.strip(), url) for item in hosts.split(",") if item.strip())
        if not seeds:
            raise ValueError(f"no node in {url!r}: use redis+cluster://host:port[,host:port...]")
        if parts.path.strip("/") not in ("", "0") or parse_qs(parts.query).get("db", ["0"])[-1] != "0":
            raise ValueError(f"a Redis Cluster has database 0 only: {url!r}")
        scheme = "rediss" if parts.scheme == "rediss+cluster" else "redis"
        host, port = seeds[0]
        netloc = (f"{userinfo}@" if userinfo else "") + (f"[{host}]" if ":" in host else host) + f":{port}"
        return cls(seeds, RedisTarget.from_url(urlunsplit((scheme, netloc, "", parts.query, ""))))

    def node(self, address: Address) -> RedisTarget:
        return dataclasses.replace(self.login, host=address[0], port=address[1], db=0)


def cluster_client(url: str, *, connect_timeout_s: float, command_timeout_s: float) -> RedisCluster:
    """redis-py's cluster client for the URL (the occasional commands: scripts, reads, lists)."""
    target = ClusterTarget.from_url(url)
    query = {name: values[-1] for name, values in parse_qs(urlsplit(url).query).items()}
    options: dict[str, Any] = {
        "startup_nodes": [ClusterNode(host, port) for host, port in target.seeds],
        "username": target.login.username,
        "password": target.login.password,
        "client_name": target.login.client_name,
        "socket_connect_timeout": connect_timeout_s,
        "socket_timeout": command_timeout_s,
        "decode_responses": False,
    }
    if target.login.tls is not None:
        options["ssl"] = True
        for name in ("ssl_cert_reqs", "ssl_ca_certs"):
            if name in query:
                options[name] = query[name]
        if "ssl_check_hostname" in query:
            options["ssl_check_hostname"] = query["ssl_check_hostname"].lower() in ("1", "true", "yes")
    return RedisCluster(**options)


class ClusterCommands:
    """Packed commands, each for one slot, sent over one pipelined connection per master.

    Commands for one master leave in one write, in the order given, so the commands of one slot
    (one table's channels) keep their order; commands for different masters go out concurrently.
    A ``MOVED`` reply updates the map for that slot, asks for a full refresh, and the command is
    sent again to the right node (it was not executed); ``ASK`` sends it once, after ``ASKING``, to
    the node named. Other error replies are returned as they are (``hiredis.ReplyError``).
    """

    def __init__(self, target: ClusterTarget, connect_timeout_s: float, command_timeout_s: float) -> None:
        self.target = target
        self._connect_timeout_s = connect_timeout_s
        self._command_timeout_s = command_timeout_s
        self._nodes: dict[Address, Commands] = {}
        self.slots: list[Address | None] = [None] * SLOTS
        self._masters: list[Address] = []
        self.version = 0  # goes up with every change of the map
        self.on_change: Callable[[], None] | None = None
        self._refreshing: asyncio.Task[None] | None = None
        self._closed = False

    def commands(self, address: Address) -> Commands:
        """The pipelined connection to one node (made on first use)."""
        node = self._nodes.get(address)
        if node is None:
            if self._closed:
                raise BrokerUnavailable("the connection is closed")
            node = self._nodes[address] = Commands(
                self.target.node(address), self._connect_timeout_s, self._command_timeout_s
            )
        return node

    def masters(self) -> list[Address]:
        """The nodes that serve slots, as the map says."""
        return self._masters

    def address_of(self, slot: int) -> Address:
        address = self.slots[slot]
        if address is None:
            self.refresh_soon()
            raise BrokerUnavailable(f"no known redis cluster node serves slot {slot}")
        return address

    # --- the map ---

    async def refresh(self) -> None:
        """Read the map again (callers at the same time share one request). Raises
        :class:`BrokerUnavailable` when no node answers."""
        task = self._refreshing
        if task is None or task.done():
            task = self._refreshing = asyncio.create_task(self._load(), name="broker-cluster-map")
        await asyncio.shield(task)

    def refresh_soon(self) -> None:
        """Read the map again in the background (a node moved or failed)."""
        if self._closed or (self._refreshing is not None and not self._refreshing.done()):
            return
        self._refreshing = task = asyncio.create_task(self._load(), name="broker-cluster-map")
        task.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def _load(self) -> None:
        candidates = list(dict.fromkeys([*self.masters(), *self.target.seeds]))
        failure: Exception | None = None
        for address in candidates:
            try:
                (reply,) = await self.commands(address).call(_CLUSTER_SLOTS, 1, "CLUSTER SLOTS")
            except (BrokerUnavailable, ResponseError) as exc:
                failure = exc
                continue
            self._apply(reply, address)
            return
        raise BrokerUnavailable(f"no node of the redis cluster answered CLUSTER SLOTS (last: {failure})")

    def _apply(self, reply: list[Any], asked: Address) -> None:
        slots: list[Address | None] = [None] * SLOTS
        for entry in reply:
            start, end, master = int(entry[0]), int(entry[1]), entry[2]
            host = master[0].decode() if isinstance(master[0], bytes) else str(master[0])
            address = (host if host not in ("", "?") else asked[0], int(master[1]))
            slots[start : end + 1] = [address] * (end - start + 1)
        self._replace(slots)

    def _replace(self, slots: list[Address | None]) -> None:
        if slots == self.slots:
            return
        self.slots = slots
        self._masters = sorted({address for address in slots if address is not None})
        self.version += 1
        for address in list(self._nodes):  # connections to nodes that serve nothing any more go
            if address not in slots:
                node = self._nodes.pop(address)
                task = asyncio.create_task(node.aclose())
                task.add_done_callback(lambda done: done.cancelled() or done.exception())
        if self.on_change is not None:
            self.on_change()

    def moved(self, slot: int, address: Address) -> None:
        """A node answered ``MOVED``: the slot is served at ``address`` now (the rest is read again)."""
        if self.slots[slot] != address:
            slots = list(self.slots)
            slots[slot] = address
            self._replace(slots)
        self.refresh_soon()

    # --- commands ---

    async def replies(self, items: Sequence[tuple[int, bytes]], what: str) -> list[Any]:
        """Send each ``(slot, packed command)`` to its slot's master; their replies in order, error
        replies other than redirections included. Raises :class:`BrokerUnavailable` when a node
        cannot be reached (commands for other nodes may have been executed)."""
        if self.version == 0:  # the map was never read: read it now
            await self.refresh()
        results: list[Any] = [None] * len(items)
        todo = list(range(len(items)))
        asking: dict[int, Address] = {}
        for _ in range(MAX_REDIRECTS + 1):
            groups: dict[Address, list[int]] = {}
            for index in todo:
                address = asking.get(index) or self.address_of(items[index][0])
                groups.setdefault(address, []).append(index)
            sent = list(groups.items())
            try:
                if len(sent) == 1:  # the usual case (the frames of one table): no task per call
                    answers = [await self._send(sent[0][0], sent[0][1], items, asking)]
                else:
                    answers = await asyncio.gather(*(self._send(where, group, items, asking) for where, group in sent))
            except BrokerUnavailable:
                self.refresh_soon()  # a master may have failed over: learn where its slots went
                raise
            todo, asking = [], {}
            for (_, group), replies in zip(sent, answers, strict=True):
                for index, reply in zip(group, replies, strict=True):
                    redirect = str(reply).split() if isinstance(reply, hiredis.ReplyError) else None
                    if redirect and redirect[0] == "MOVED" and len(redirect) == 3:
                        self.moved(int(redirect[1]), _address(redirect[2], "MOVED"))
                        todo.append(index)
                    elif redirect and redirect[0] == "ASK" and len(redirect) == 3:
                        asking[index] = _address(redirect[2], "ASK")
                        todo.append(index)
                    elif redirect and redirect[0] in ("TRYAGAIN", "CLUSTERDOWN"):
                        raise BrokerUnavailable(f"redis cluster refused {what}: {reply}")
                    else:
                        results[index] = reply
            if not todo:
                return results
            todo.sort()  # commands of one slot stay in their order
        raise BrokerUnavailable(f"redis cluster kept redirecting {what}")

    async def _send(
        self, address: Address, group: list[int], items: Sequence[tuple[int, bytes]], asking: dict[int, Address]
    ) -> list[Any]:
        if not asking:
            data = items[group[0]][1] if len(group) == 1 else b"".join(items[index][1] for index in group)
            return await self.commands(address).replies(data, len(group), "cluster command")
        data = b"".join((_ASKING if index in asking else b"") + items[index][1] for index in group)
        count = len(group) + sum(1 for index in group if index in asking)
        replies = await self.commands(address).replies(data, count, "cluster command")
        kept: list[Any] = []
        position = 0
        for index in group:
            position += index in asking  # the +OK of ASKING
            kept.append(replies[position])
            position += 1
        return kept

    async def call(self, items: Sequence[tuple[int, bytes]], what: str) -> list[Any]:
        """Like :meth:`replies`, but an error reply raises redis-py's ``ResponseError``."""
        replies = await self.replies(items, what)
        for reply in replies:
            if isinstance(reply, hiredis.ReplyError):
                raise ResponseError(str(reply))
        return replies

    async def aclose(self) -> None:
        self._closed = True
        if self._refreshing is not None:
            self._refreshing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._refreshing
        nodes, self._nodes = list(self._nodes.values()), {}
        for node in nodes:
            await node.aclose()


MAX_UNSENT = 10_000  # publish_nowait calls queued for a cluster


class ClusterPublisher:
    """``publish_nowait`` on a cluster: each call's SPUBLISH commands are queued and sent in order
    by one task over :class:`ClusterCommands`, everything queued so far in one call (one write per
    master); a failure is logged, as a publish without a reply is lost without a word."""

    def __init__(self, routes: ClusterCommands) -> None:
        self._routes = routes
        self._unsent: list[list[tuple[int, bytes]]] = []
        self._sending: asyncio.Task[None] | None = None

    def send(self, items: list[tuple[int, bytes]]) -> None:
        """Queue one call's ``(slot, command)`` items."""
        if len(self._unsent) >= MAX_UNSENT:
            raise BrokerUnavailable("the redis cluster is not keeping up with the publishes")
        self._unsent.append(items)
        if self._sending is None:
            self._sending = asyncio.get_running_loop().create_task(self._send_unsent(), name="broker-redis-sending")

    async def _send_unsent(self) -> None:
        try:
            while self._unsent:
                items = [item for batch in self._unsent for item in batch]
                self._unsent.clear()
                try:
                    await self._routes.call(items, "SPUBLISH")
                except (BrokerUnavailable, ResponseError) as exc:
                    log.warning("broker: %d sharded publishes lost: %s", len(items), exc)
        finally:
            self._sending = None

    async def aclose(self) -> None:
        if self._sending is not None:
            self._sending.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._sending
