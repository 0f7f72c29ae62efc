"""What a match's end costs the server, beside what its moves cost: in one process, on CPU time.

    python -m bench.match_end                       # 40 matches on a SQLite file, then on PostgreSQL if it runs
    python -m bench.match_end --quick               # 12 matches, SQLite only; well under 30 s
    python -m bench.match_end --database postgres   # PostgreSQL only (a scratch database)

A four-seat table (36 cards, the default rules) on the in-process broker and store, with the server's
own match hooks (``DbHooks``: the match history, and the ledger for a staked table) on a migrated
database. Its four players and one spectator are the server's own websocket connections
(``app.api.table_connection.Connection``) on in-memory sockets: a command goes in as the text frame a
browser sends and is done when its ack is written back, so every move includes the table's fan-out
(an update frame to each seat and the spectator). The players make random legal moves, as in
``bench.views``; they are guests, as in ``bench.capacity``: a match is recorded but not rated. The
lobby feed is not here (``bench.lobby`` measures it per viewer and change).

For every command the process's CPU time (all threads: SQLite's worker thread too) is read before
and after; a match is split into

* its moves (every command but the last), per command;
* its end: the move that ends it (the results and the next commitment pushed, the settlement started)
  and the settlement itself (``settle``: the match history written in one transaction), per match
  (the settlement's task may begin while the last move's ack is still on its way, so the settlement
  alone can read a little low; the end as a whole is counted in full);
* the rematch: four ``rematch`` votes, each acked, and the next deal, per match.

Figures are medians over the matches (the first two, which warm SQLAlchemy's caches, are left out).
``bench.capacity`` sees about 0.002 finished matches per player per second at a human pace and
0.37 commands, so a match's end weighs ``0.002 * end`` against ``0.37 * command`` per player.

Last line: ``match_end: <ms> ms of CPU per finished match (settlement <ms> ms) against <ms> ms per move``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import orjson
from fastapi import WebSocket

from app.api.outgoing import TEXT_FRAMES
from app.api.table_connection import Connection
from app.broker import open_broker
from app.db.migrate import upgrade
from app.db.session import Database
from app.db.table_hooks import DbHooks
from app.engine import Action, Rules, State, action_to_json, legal_actions
from app.tables import commands as cmd
from app.tables.registry import TableRegistry
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport.table_transport import BrokerTransport
from bench.engine import actors

PLAYERS = [Principal(f"guest:bench{i}", f"guest {i}", None) for i in range(4)]
WATCHER = Principal("anon:bench", "spectator", None)
WARM = 2  # matches left out of the medians


class MemorySocket:
    """The server side of one websocket, in memory: what ``Connection`` needs of a socket (the
    ``durak.text_frames`` extension of app/api/uvicorn_protocol.py), counting the frames written and
    noticing the ack or error that answers a command."""

    def __init__(self) -> None:
        self.scope = {"extensions": {TEXT_FRAMES: {"write": self.write, "listen": self.listen}}}
        self.on_text: Callable[[str], None] | None = None
        self.frames = 0
        self.answered: asyncio.Future[bytes] | None = None
        self.waiting_for = b""

    def write(self, payload: bytes) -> bool:
        self.frames += 1
        if self.answered is not None and self.waiting_for in payload and not self.answered.done():
            self.answered.set_result(payload)
        return True

    def listen(self, on_text: Callable[[str], None]) -> None:
        self.on_text = on_text

    async def close(self, code: int = 1000, reason: str = "") -> None:
        return None

    async def send(self, message: dict[str, Any]) -> None:
        """What ``Connection`` sends by ASGI (only with no text-frames extension: never here)."""
        raise AssertionError(f"unexpected ASGI send: {message}")

    async def command(self, kind: str, **fields: Any) -> bytes:
        """Send one command as a browser would and wait for its answer (the ack, or an error)."""
        key = uuid.uuid4().hex[:16]
        self.waiting_for = f'"id":"{key}"'.encode()
        self.answered = asyncio.get_running_loop().create_future()
        assert self.on_text is not None
        self.on_text(orjson.dumps({"type": kind, "id": key, **fields}).decode())
        answer = await self.answered
        self.answered = None
        if not answer.startswith(b'{"type":"ack"'):
            raise RuntimeError(f"the table refused {kind} {fields}: {answer.decode()}")
        return answer


@dataclass
class Costs:
    move_ms: list[float] = field(default_factory=list)  # per command, every match
    end_ms: list[float] = field(default_factory=list)  # per match: the last move and the settlement
    settle_ms: list[float] = field(default_factory=list)
    rematch_ms: list[float] = field(default_factory=list)
    moves: list[int] = field(default_factory=list)
    frames_per_move: float = 0.0


def random_move(state: State, rng: random.Random) -> Action:
    """One of the legal moves of every seat that may act now (as ``bench.views`` plays)."""
    return rng.choice([action for seat in actors(state) for action in legal_actions(state, seat)])


async def play(database_url: str, matches: int, seed: int) -> Costs:
    await upgrade(database_url)
    db = Database(database_url)
    name = f"memory://match-end-{uuid.uuid4().hex}"
    rng = random.Random(seed)
    costs = Costs()
    gone = asyncio.get_running_loop().create_future()

    async def receive() -> dict[str, Any]:  # the client stays until the end
        await gone
        return {"type": "websocket.disconnect"}

    try:
        async with open_broker(name) as broker:
            registry = TableRegistry(
                broker, DbHooks(db), store=MemoryStore(name), supervise=False, transport=BrokerTransport
            )
            async with registry:
                actor = await registry.create(TableSpec(rules=Rules(deck=36, seats=4), creator=PLAYERS[0]))
                for player in PLAYERS:
                    await registry.call(actor.code, cmd.Join(), player)
                sockets = [MemorySocket() for _ in (*PLAYERS, WATCHER)]
                connections = [
                    asyncio.create_task(
                        Connection(
                            cast(WebSocket, socket), receive, socket.send, registry, actor.code, who, f"bench{i}"
                        ).run()
                    )
                    for i, (socket, who) in enumerate(zip(sockets, (*PLAYERS, WATCHER), strict=True))
                ]
                for socket in sockets:
                    while socket.on_text is None:
                        await asyncio.sleep(0)
                    socket.on_text('{"type":"hello"}')
                await asyncio.sleep(0.05)  # the welcomes
                frames = moved = 0
                for number in range(matches):
                    moves: list[float] = []
                    before = sum(socket.frames for socket in sockets)
                    while actor.status == "playing":
                        assert actor.game is not None
                        action = random_move(actor.game, rng)
                        fields = {k: v for k, v in action_to_json(action).items() if k not in ("seat", "type")}
                        started = time.process_time()
                        await sockets[action.seat].command(action.kind, version=actor.version, **fields)
                        moves.append(1000 * (time.process_time() - started))
                    last = moves.pop()
                    frames += sum(socket.frames for socket in sockets) - before
                    moved += len(moves) + 1
                    started = time.process_time()
                    task = actor._settle_task
                    if task is None or not await task:
                        raise RuntimeError("the match was not settled")
                    settle = 1000 * (time.process_time() - started)
                    started = time.process_time()
                    for socket in sockets[: len(PLAYERS)]:
                        await socket.command("rematch")
                    rematch = 1000 * (time.process_time() - started)
                    if actor.status != "playing":
                        raise RuntimeError(f"the rematch did not start: {actor.status}")
                    if number >= WARM:
                        costs.move_ms.extend(moves)
                        costs.end_ms.append(last + settle)
                        costs.settle_ms.append(settle)
                        costs.rematch_ms.append(rematch)
                        costs.moves.append(len(moves) + 1)
                costs.frames_per_move = frames / max(1, moved)
                gone.set_result(None)
                await asyncio.gather(*connections)
    finally:
        await db.dispose()
    return costs


def report(label: str, costs: Costs) -> tuple[float, float, float]:
    """Print one database's figures; (the end and the rematch per match, the settlement, a move) in ms."""
    move = statistics.median(costs.move_ms)
    end = statistics.median(costs.end_ms)
    settle = statistics.median(costs.settle_ms)
    rematch = statistics.median(costs.rematch_ms)
    per_match = statistics.median(costs.moves)
    weight = 0.002 * (end + rematch) / (0.002 * (end + rematch) + 0.37 * move)
    print(
        f"{label:10s} {len(costs.end_ms)} matches of {per_match:.0f} commands ({costs.frames_per_move:.1f} frames a "
        f"command): move {move:.3f} ms, "
        f"end {end:.2f} ms (settlement {settle:.2f} ms), rematch and deal {rematch:.2f} ms; "
        f"at a human pace (0.37 moves and 0.002 ends a second per player) the ends are {100 * weight:.0f}% "
        "of the table's work (the lobby feed aside)",
        flush=True,
    )
    return end + rematch, settle, move


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.match_end", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="12 matches, SQLite only")
    parser.add_argument("--matches", type=int, default=None, help="matches per database (default 40, quick 12)")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default=None)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    matches = args.matches or (12 if args.quick else 40)
    which = args.database or ("sqlite" if args.quick else "both")
    if matches <= WARM:
        parser.error(f"--matches must be more than {WARM}")
    results: dict[str, tuple[float, float, float]] = {}
    if which in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite+aiosqlite:///{Path(folder) / 'match_end.sqlite3'}"
            results["sqlite"] = report("sqlite", asyncio.run(play(url, matches, args.seed)))
    if which in ("postgres", "both"):
        from bench.harness import database  # a scratch database, or a SQLite URL when PostgreSQL is not reachable

        with database(Path(tempfile.gettempdir())) as url:
            if url.startswith("sqlite"):
                print("postgres   not measured: nothing listens on 127.0.0.1:5432", flush=True)
            else:
                results["postgres"] = report("postgres", asyncio.run(play(url, matches, args.seed)))
    if not results:
        raise SystemExit("match_end: no database to measure")
    label, (per_match, settle, move) = next(iter(results.items()))
    print(
        f"match_end: {per_match:.1f} ms of CPU per finished match (settlement {settle:.1f} ms) against "
        f"{move:.3f} ms per move ({label})"
    )


if __name__ == "__main__":
    main()
