"""The scripted table player: :class:`PlayerCore` (what a player has seen and how it words a
command, whatever carries its frames) and a client over a real websocket (the ``websockets``
library) built on it, shared by the end-to-end tests (``tests/e2e``) and the load generator
(``bench/load.py``). The in-process player of ``tests/tables/harness.py`` (a TestClient websocket)
and the reconnecting player of ``tests/cluster/harness.py`` are built on the same core. It lives
here, importing nothing from ``app`` or ``tests``, because the benchmarks must run without the
test suite and the test suite may import ``bench``.

The protocol is the one of ``app/api/protocol.py``: after ``hello`` the server answers ``welcome``;
every change of the table is pushed as an ``update`` carrying the seat's ``view`` (with the seat's
``legal`` actions and ``decision.seats``, whom the table waits for); a command is answered by
``ack``/``error`` *after* the update that reflects it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
RANK_VALUE = {rank: i for i, rank in enumerate(RANKS)}
DECK_RANKS = {24: set(RANKS[7:]), 36: set(RANKS[4:]), 52: set(RANKS)}
#: Errors a correct server may give a client that plays only actions from its own latest view:
#: the table moved on between the push and the command (another seat acted first).
RACE_ERRORS = ("stale_version", "match_not_running")


def rank_of(card: str) -> str:
    return card[:-1].upper()


def suit_of(card: str) -> str:
    return card[-1].lower()


def beats(cover: str, attack: str, trump: str) -> bool:
    """§4: a higher card of the attack's suit, or any trump on a non-trump."""
    if suit_of(cover) == suit_of(attack):
        return RANK_VALUE[rank_of(cover)] > RANK_VALUE[rank_of(attack)]
    return suit_of(cover) == trump


def is_cheat(view: dict[str, Any], action: dict[str, Any]) -> bool:
    """Whether a legal action of a cheating table breaks a card-legality rule (§9), judged from the
    seat's own view: a cover that does not beat, a throw-in of a rank not on the table, a transfer
    of another rank, more cards than the bout allows."""
    kind = action["type"]
    trump = view["trump"]
    table = view["table"]
    if kind == "cover":
        return not beats(action["card"], table[action["attack"]]["attack"], trump)
    if kind == "throw_in":
        on_table = {rank_of(c) for pair in table for c in (pair["attack"], pair["cover"]) if c}
        too_many = view.get("allowance") is not None and len(action["cards"]) > view["allowance"]
        return too_many or any(rank_of(c) not in on_table for c in action["cards"])
    if kind == "transfer":
        led = {rank_of(pair["attack"]) for pair in table}
        return any(rank_of(c) not in led for c in action["cards"])
    return False


def choose(
    view: dict[str, Any],
    rng: random.Random,
    *,
    throw_in_p: float = 0.3,
    cheat_p: float = 1.0,
    prefer: Iterable[str] = (),
) -> dict[str, Any] | None:
    """A random legal action for this seat, or None when it need not act now.

    A seat the table waits for (``decision.seats``) always acts; another seat with a throw-in (or
    a trump exchange) on offer takes one with probability ``throw_in_p``. Challenges are never made; at a cheating table
    a cheating action is kept with probability ``cheat_p`` when an honest one exists. Action types in
    ``prefer`` are taken whenever they are on offer (e.g. ``transfer``)."""
    legal = [a for a in view.get("legal") or () if a["type"] != "challenge"]
    if not legal:
        return None
    if view["seat"] not in view["decision"]["seats"]:
        optional = [a for a in legal if a["type"] in ("throw_in", "exchange_trump")]
        if not optional or rng.random() >= throw_in_p:
            return None
        legal = optional
    if view["rules"].get("cheating") and cheat_p < 1.0:
        honest = [a for a in legal if not is_cheat(view, a)]
        if honest and rng.random() >= cheat_p:
            legal = honest
    for kind in prefer:
        wanted = [a for a in legal if a["type"] == kind]
        if wanted:
            return rng.choice(wanted)
    return rng.choice(legal)


def picows_messages() -> Callable[[Any, Any, Any], bytes | None]:
    """A reader of picows frames for one kind of connection holder (anything with a ``parts``
    attribute, None between messages): ``read(holder, transport, frame)`` is the whole text message
    that ``frame`` completes, else None -- a part kept on ``holder.parts``, a ping (picows answers
    it), or a close (answered unless it answers ours, then hung up). Imports picows when made, so
    only a process that drives picows connections needs it."""
    from picows import WSMsgType

    text, continuation, close = WSMsgType.TEXT, WSMsgType.CONTINUATION, WSMsgType.CLOSE

    def read(holder: Any, transport: Any, frame: Any) -> bytes | None:
        kind = frame.msg_type
        if kind == text and frame.fin and holder.parts is None:
            payload: bytes = frame.get_payload_as_bytes()
            return payload
        if kind == text or (kind == continuation and holder.parts is not None):
            parts = holder.parts = holder.parts or []
            parts.append(frame.get_payload_as_bytes())
            if not frame.fin:
                return None
            whole, holder.parts = b"".join(parts), None
            return whole
        if kind == close:
            if not transport.is_close_frame_sent:
                transport.send_close(frame.get_close_code())
            transport.disconnect()
        return None

    return read


def command(action: dict[str, Any], cmd_id: str, version: int) -> dict[str, Any]:
    """The websocket command for a legal action of the view (the server knows the seat)."""
    return {**{k: v for k, v in action.items() if k != "seat"}, "id": cmd_id, "version": version}


# ---------------------------------------------------------------------------------------------- REST


class Account:
    """A signed-in person (account or guest): an httpx client carrying the session cookie."""

    def __init__(self, http: httpx.AsyncClient, name: str, me: dict[str, Any], cookie: str) -> None:
        self.http = http
        self.name = name
        self.me = me
        self.cookie = cookie

    @classmethod
    async def create(cls, base_url: str, name: str, *, guest: bool = False, password: str = "pass-word-123") -> Account:
        origin = base_url
        http = httpx.AsyncClient(base_url=base_url, headers={"origin": origin}, timeout=30)
        if guest:
            response = await http.post("/api/auth/guest", json={"name": name})
            expected = 200
        else:
            response = await http.post("/api/auth/signup", json={"name": name, "password": password})
            expected = 201
        if response.status_code != expected:
            await http.aclose()
            raise AssertionError(f"{name}: {response.status_code} {response.text}")
        return cls(http, name, response.json(), response.cookies["durak_session"])

    @property
    def headers(self) -> dict[str, str]:
        return {"cookie": f"durak_session={self.cookie}", "origin": str(self.http.base_url).rstrip("/")}

    async def balance(self) -> int:
        response = await self.http.get("/api/me")
        assert response.status_code == 200, response.text
        return int(response.json()["balance"])

    async def aclose(self) -> None:
        await self.http.aclose()


# ------------------------------------------------------------------------------------------ players


class PlayerCore:
    """What one scripted player has seen of a table, and its commands: every message received, the
    latest ``welcome``/``update`` (never an older one), the acks and errors. Command ids are
    ``<name>-<n>``, unique in the process."""

    _ids = itertools.count(1)

    def __init__(self, name: str) -> None:
        self.name = name
        self.messages: list[dict[str, Any]] = []
        self.last: dict[str, Any] | None = None  # latest welcome/update
        self.errors: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        self.counter = 0  # commands this player made

    def take(self, message: dict[str, Any]) -> dict[str, Any]:
        """Note one message from the server; returns it."""
        self.messages.append(message)
        kind = message["type"]
        if kind in ("update", "welcome"):
            if self.last is None or message["version"] >= self.last["version"]:
                self.last = message
        elif kind == "ack":
            self.acks.append(message)
        elif kind == "error":
            self.errors.append(message)
        return message

    @property
    def view(self) -> dict[str, Any] | None:
        return self.last["view"] if self.last else None

    @property
    def version(self) -> int:
        return int(self.last["version"]) if self.last else 0

    @property
    def seat(self) -> int | None:
        return self.last["seat"] if self.last else None

    @property
    def finished(self) -> bool:
        return self.last is not None and self.last["table"]["status"] == "finished"

    def resume_hello(self) -> dict[str, Any]:
        """The hello that resumes from the latest version seen (none yet: a plain snapshot)."""
        return {"type": "hello", "last_version": self.version if self.last is not None else None}

    def command(self, action: dict[str, Any]) -> dict[str, Any]:
        """The command for a legal action of the latest view, with a fresh id."""
        self.counter += 1
        return command(action, f"{self.name}-{next(self._ids)}", self.version)


# --------------------------------------------------------------------------------------- websockets


class Player(PlayerCore):
    """One websocket connection to a table; keeps the latest snapshot and every message received."""

    def __init__(self, ws: ClientConnection, name: str) -> None:
        super().__init__(name)
        self.ws = ws

    @classmethod
    async def connect(cls, ws_url: str, code: str, headers: dict[str, str] | None, name: str) -> Player:
        ws = await connect(
            f"{ws_url}/ws/tables/{code}", additional_headers=headers or {}, compression=None, open_timeout=10
        )
        return cls(ws, name)

    async def close(self) -> None:
        await self.ws.close()

    async def send(self, payload: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(payload))

    async def recv(self, timeout: float = 10.0) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.ws.recv(), timeout)
        return self.take(json.loads(raw))

    async def until(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - time.monotonic()))
            if predicate(message):
                return message

    async def hello(self, last_version: int | None = None) -> dict[str, Any]:
        await self.send({"type": "hello", "last_version": last_version})
        return await self.until(lambda m: m["type"] == "welcome")

    async def act(self, action: dict[str, Any]) -> str:
        payload = self.command(action)
        await self.send(payload)
        return str(payload["id"])

    async def reply(self, cmd_id: str, timeout: float = 10.0) -> dict[str, Any]:
        return await self.until(lambda m: m["type"] in ("ack", "error") and m.get("id") == cmd_id, timeout)

    async def do(self, action: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        """Send a command and wait for its ack or error."""
        return await self.reply(await self.act(action), timeout)


Policy = Callable[[dict[str, Any], random.Random], "dict[str, Any] | None"]
Watcher = Callable[[Player, dict[str, Any]], None]


async def autoplay(
    player: Player,
    rng: random.Random,
    *,
    policy: Policy = choose,
    watch: Watcher | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Play this seat until the table's match is finished; returns the finishing update. Acts on
    every fresh view the policy picks an action for, one command at a time. Any refusal other
    than a race (:data:`RACE_ERRORS`) fails. ``watch`` sees every message."""
    deadline = time.monotonic() + timeout
    acted = -1
    outstanding: str | None = None
    for message in list(player.messages):
        if watch is not None:
            watch(player, message)
    while True:
        if player.finished:
            assert player.last is not None
            return player.last
        if outstanding is None and player.view is not None and player.version > acted:
            acted = player.version
            action = policy(player.view, rng)
            if action is not None:
                outstanding = await player.act(action)
        if time.monotonic() > deadline:
            raise AssertionError(f"{player.name}: match did not finish within {timeout}s (at v{player.version})")
        message = await player.recv(max(0.01, deadline - time.monotonic()))
        if watch is not None:
            watch(player, message)
        if message["type"] in ("ack", "error") and message.get("id") == outstanding:
            outstanding = None
            if message["type"] == "error":
                assert message["code"] in RACE_ERRORS, f"{player.name}: refused {message}"


async def play_out(
    players: list[Player],
    seed: int,
    *,
    policy: Policy = choose,
    watch: Watcher | None = None,
    timeout: float = 60.0,
) -> list[dict[str, Any]]:
    """Every player plays its seat concurrently until the match is finished."""
    return list(
        await asyncio.gather(
            *(
                autoplay(p, random.Random(seed * 100 + i), policy=policy, watch=watch, timeout=timeout)
                for i, p in enumerate(players)
            )
        )
    )
