"""An arena tournament over the real server, checked from the outside (issue 37.5).

    python -m bench.tournament            # 64 players at 4-seat tables, 36 cards, 1 minute of pairing
    python -m bench.tournament --quick    # 33 players at 2-seat tables, 24 cards, 1 minute; under 3 minutes

A server (``python -m app`` on a fresh SQLite file, memory:// broker) with the arena runner looking
every 0.2 s. An admin (``python -m app.cli create-admin``) schedules a paid tournament (entry fee 50
coins) a few seconds ahead; every scripted player signs up, enters it, follows its event stream
(``GET /api/tournaments/{id}/events``) and, each time a ``table`` event names his next table,
connects to it and plays random legal moves until the match is over (``bench._client.autoplay``).
Bots fill a table nobody else would join within 3 s.

When the tournament is finished the bench recomputes, on its own code (not ``app.tournaments``):

* every counted match's points, from the match history's outcome (``GET /api/matches/{id}``, as the
  admin) and the seats the arena listed (``GET /api/tournaments/{id}/matches``): place k of n is
  worth n - k, shared places the better one, the durak 0, a draw (n - 1) // 2;
* the standings with the documented tie-breaks, and the prizes (50/30/20 of the pool, rounded down,
  the rest to the first place, among players who played);

and compares them with the tournament's page, and every player's balance with 1000 - fee + prize
(coins conserved: the players' coins together are what they were at the start).

``R`` (rounds) is the fewest matches any entrant played. Last line:
``tournament: <P> players, <R> rounds, <M> matches in <S> s; coins conserved; standings verified``
(or ``NOT conserved`` / ``WRONG``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from bench._client import Account, Player, autoplay
from bench._server import ROOT, durak_server

FEE = 50
START_BALANCE = 1000
PASSWORD = "pass-word-123"


def points_of(result: dict[str, Any], seats: int) -> dict[int, int]:
    """The bench's own reading of docs/tournaments.md "Points"."""
    if result.get("draw"):
        return {seat: (seats - 1) // 2 for seat in range(seats)}
    points = dict.fromkeys(range(seats), 0)
    taken = 0
    for group in result["places"]:
        best = taken + 1
        taken += len(group)
        for seat in group:
            points[seat] = 0 if seat == result.get("durak") else seats - best
    return points


def split(pool: int, ranked: list[str]) -> dict[str, int]:
    weights = [50, 30, 20][: len(ranked)]
    if not weights:
        return {}
    prizes = {ranked[i]: pool * w // sum(weights) for i, w in enumerate(weights)}
    prizes[ranked[0]] += pool - sum(prizes.values())
    return prizes


class Entrant:
    def __init__(self, account: Account) -> None:
        self.account = account
        self.tables: list[str] = []
        self.next_table = asyncio.Event()
        self.over = asyncio.Event()
        self.played = 0

    async def follow(self, tid: int) -> None:
        event = ""
        async with self.account.http.stream("GET", f"/api/tournaments/{tid}/events", timeout=None) as response:
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    data = json.loads(line[6:])
                    if event == "table" and data["code"] not in self.tables:
                        self.tables.append(data["code"])
                        self.next_table.set()
                    elif event == "standings" and data["tournament"]["status"] in ("finished", "cancelled"):
                        self.over.set()
                        return

    async def play(self, ws_url: str, seed: int) -> None:
        rng = random.Random(seed)
        done = 0
        while not self.over.is_set():
            waiter = asyncio.create_task(self.next_table.wait())
            over = asyncio.create_task(self.over.wait())
            await asyncio.wait({waiter, over}, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
            over.cancel()
            while done < len(self.tables):
                code = self.tables[done]
                done += 1
                self.next_table.clear()
                player = await Player.connect(ws_url, code, self.account.headers, self.account.name)
                try:
                    await player.hello()
                    await autoplay(player, rng, timeout=120)
                    self.played += 1
                finally:
                    await player.close()


async def run(quick: bool) -> str:
    players = 33 if quick else 64  # 33: one is always left over, and bots fill his table
    seats, deck = (2, 24) if quick else (4, 36)
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        server = durak_server(
            Path(tmp),
            extra_env={
                "DURAK_TOURNAMENT_TICK_S": "0.2",
                "DURAK_NEW_ACCOUNT_MATCHES": "0",  # fresh accounts may pay an entry fee here
                "DURAK_PAIR_DAILY_COIN_CAP": "1000000",
                # Every bench account signs up from 127.0.0.1: not related by that alone here.
                "DURAK_RELATED_SAME_IP": "false",
            },
        ).start()
        try:
            subprocess.run(
                [sys.executable, "-m", "app.cli", "create-admin", "arbiter", "--password", PASSWORD],
                env=server.env,
                cwd=ROOT,
                check=True,
                capture_output=True,
                timeout=60,
            )
            admin = httpx.AsyncClient(base_url=server.base_url, headers={"origin": server.base_url}, timeout=30)
            (await admin.post("/api/auth/login", json={"name": "arbiter", "password": PASSWORD})).raise_for_status()
            gate = asyncio.Semaphore(8)  # sign-ups hash passwords: a few at a time, none waits 30 s

            async def sign_up(i: int) -> Account:
                async with gate:
                    return await Account.create(server.base_url, f"arena{i:03d}")

            accounts = await asyncio.gather(*(sign_up(i) for i in range(players)))
            start = datetime.now(UTC) + timedelta(seconds=6)
            body = {
                "name": "Bench arena",
                "seats": seats,
                "deck": deck,
                "timer": 30,
                "starts_at": start.isoformat(),
                "duration_min": 1,
                "entry_fee": FEE,
                "bot_after_s": 3,
            }
            created = await admin.post("/api/tournaments", json=body)
            assert created.status_code == 201, created.text
            tid = created.json()["id"]
            entrants = [Entrant(a) for a in accounts]
            for e in entrants:
                r = await e.account.http.post(f"/api/tournaments/{tid}/join")
                assert r.status_code == 200, r.text
            t0 = time.monotonic()
            followers = [asyncio.create_task(e.follow(tid)) for e in entrants]
            await asyncio.gather(*(e.play(server.ws_url, i) for i, e in enumerate(entrants)))
            await asyncio.gather(*followers)
            seconds = time.monotonic() - t0
            return await verify(admin, entrants, tid, seats, players, seconds)
        finally:
            server.stop()


async def verify(
    admin: httpx.AsyncClient, entrants: list[Entrant], tid: int, seats: int, players: int, seconds: float
) -> str:
    page = (await admin.get(f"/api/tournaments/{tid}")).json()
    games = (await admin.get(f"/api/tournaments/{tid}/matches")).json()
    rows: dict[str, dict[str, Any]] = {
        e.account.name: {"points": 0, "matches": 0, "firsts": 0, "last": 0.0} for e in entrants
    }
    counted = 0
    for game in games:
        if game["status"] != "finished":
            continue
        counted += 1
        match = (await admin.get(f"/api/matches/{game['match_id']}")).json()
        by_seat = {s["seat"]: s for s in match["seats"]}
        points = points_of(match["result"], seats)
        places = match["result"].get("places") or [[]]
        firsts = set() if match["result"].get("draw") else {s for s in places[0] if s != match["result"].get("durak")}
        when = datetime.fromisoformat(game["finished_at"]).timestamp()
        for seat in game["seats"]:
            if seat["account_id"] is None:
                continue
            name = seat["name"]
            if by_seat[seat["seat"]]["display_name"] != name:
                return f"seat {seat['seat']} of {game['match_id']}: recorded {by_seat[seat['seat']]['display_name']}"
            row = rows[name]
            row["matches"] += 1
            row["firsts"] += int(seat["seat"] in firsts)
            if points[seat["seat"]]:
                row["points"] += points[seat["seat"]]
                row["last"] = when
    order = {e.account.name: i for i, e in enumerate(entrants)}  # they entered in this order
    ranked = sorted(
        rows, key=lambda n: (-rows[n]["points"], -rows[n]["firsts"], rows[n]["matches"], rows[n]["last"], order[n])
    )
    pool = FEE * len(entrants)
    prizes = split(pool, [n for n in ranked if rows[n]["matches"] > 0])
    shown = {row["name"]: row for row in page["standings"]}
    standings_ok = page["tournament"]["status"] == "finished" and page["tournament"]["pool"] == pool
    for rank, name in enumerate(ranked, 1):
        got = shown.get(name)
        want = (rank, rows[name]["points"], rows[name]["matches"], prizes.get(name, 0))
        if got is None or (got["rank"], got["points"], got["matches"], got["prize"]) != want:
            print(f"WRONG {name}: shown {got}, recomputed {want}", file=sys.stderr)
            standings_ok = False
    balances = [await e.account.balance() for e in entrants]
    conserved = sum(balances) == START_BALANCE * len(entrants) and all(
        b == START_BALANCE - FEE + prizes.get(e.account.name, 0) for b, e in zip(balances, entrants, strict=True)
    )
    rounds = min(rows[n]["matches"] for n in rows)
    with_bots = sum(1 for g in games if g["status"] == "finished" and any(s["bot_level"] for s in g["seats"]))
    print(f"matches per player: {sorted(rows[n]['matches'] for n in rows)}; {with_bots} with bots", file=sys.stderr)
    for e in entrants:
        await e.account.aclose()
    await admin.aclose()
    return (
        f"tournament: {players} players, {rounds} rounds, {counted} matches in {seconds:.0f} s; "
        f"coins {'conserved' if conserved else 'NOT conserved'}; standings {'verified' if standings_ok else 'WRONG'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="33 players, 2-seat tables; under 3 minutes")
    args = parser.parse_args()
    print(asyncio.run(run(args.quick)))


if __name__ == "__main__":
    main()
