"""The arena runner (docs/tournaments.md): for the life of the app, it starts tournaments when their
time comes (an "about to start" Web Push notice first), pairs the waiting entrants the moment they are
free (``arena.pair``), opens their tables through the table registry's ``create`` and seats them with
the table's own ``join`` and ``add_bot`` commands, counts each table's first match when it ends
(``ArenaHooks``, around the server's match hooks), and once the time is up and the last table is
over, pays the prizes. Its live standings go out as server-sent events, as the lobby's do.

Every process runs a runner; a tournament is run by the one holding its broker lease
(``tournament:<id>``, taken again at every pass), whose registry opens its tables and so hears their
matches end (the finished-match callback is in-process). A table taken over by another process is
found gone at the runner's next pass: its game is aborted (no points) and its players are free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from app import arena
from app.config import TournamentSettings
from app.db import integrity, ratings
from app.db import tournaments as store
from app.db.models import Tournament
from app.db.session import Database
from app.engine import Rules
from app.event_feed import KEEPALIVE_S, EventFeed, sse
from app.integrity_policy import IntegrityRules, utc_day
from app.tables.commands import AddBot, Join
from app.tables.hooks import DealtMatch, FinishedMatch, MatchHooks, RatingChange
from app.tables.registry import TableGone, TableRegistry
from app.tables.spec import Principal, TableSpec

log = logging.getLogger("durak.tournaments")

BOT_LEVEL = "normal"
LEASE_S = 30.0  # a runner that stops passing loses its tournaments to another process after this


def _utc_now() -> datetime:
    return datetime.now(UTC)


class ArenaHooks:
    """The server's ``MatchHooks`` with one addition: when a match ends, the arena hears of it
    (after the match is recorded). Everything else is passed through unchanged."""

    def __init__(self, inner: MatchHooks) -> None:
        self.inner = inner
        self.on_finished: list[Callable[[FinishedMatch], None]] = []

    async def may_sit(self, *, account_id: int | None, others: list[int], stake: int) -> tuple[str, str] | None:
        return await self.inner.may_sit(account_id=account_id, others=others, stake=stake)

    async def match_started(self, *, match_id: str, stake: int, account_ids: list[int]) -> None:
        await self.inner.match_started(match_id=match_id, stake=stake, account_ids=account_ids)

    async def match_dealt(self, deal: DealtMatch) -> None:
        await self.inner.match_dealt(deal)

    async def match_finished(self, match: FinishedMatch) -> dict[int, RatingChange] | None:
        answer = await self.inner.match_finished(match)
        for listener in self.on_finished:
            try:
                listener(match)
            except Exception:  # the table never fails for the arena
                log.exception("tournament: match %s not passed on", match.match_id)
        return answer

    async def match_abandoned(self, *, match_id: str) -> None:
        await self.inner.match_abandoned(match_id=match_id)


class Viewer(EventFeed[bytes]):
    """One event-stream reader of one tournament (``account_id``: his own next table too)."""

    limit = 101

    def __init__(self, account_id: int | None) -> None:
        super().__init__()
        self.account_id = account_id

    def overflow(self, item: bytes) -> bytes:
        # A reader that fell behind: the standings are whole each time, so the older ones go; his
        # latest table never does.
        self.queue = deque([t for t in self.queue if t.startswith(b"event: table")][-1:])
        return item


@dataclass
class Live:
    """What the runner keeps in memory of one running tournament."""

    since: dict[int, float] = field(default_factory=dict)  # entrant -> waiting since (epoch s)
    seated: dict[int, str] = field(default_factory=dict)  # entrant -> the table code of his open game
    forbidden: frozenset[frozenset[int]] = frozenset()
    forbidden_for: frozenset[int] = frozenset()  # the entrants ``forbidden`` was computed for
    tables: int = 0


class ArenaRunner:
    def __init__(
        self,
        db: Database,
        registry: TableRegistry,
        settings: TournamentSettings | None = None,
        *,
        integrity_rules: IntegrityRules | None = None,
        clock: Callable[[], datetime] = _utc_now,
        notify: Callable[[int, Tournament, int], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.db = db
        self.registry = registry
        self.settings = settings or TournamentSettings()
        self.integrity_rules = integrity_rules or IntegrityRules()
        self.clock = clock
        self.notify = notify  # (account id, tournament, minutes) -> the "about to start" notice
        self.sleep = sleep  # waits between passes (tests pass a fake clock's)
        self.live: dict[int, Live] = {}
        self.viewers: dict[int, set[Viewer]] = {}
        self.wake = asyncio.Event()
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ the finished-match callback

    def match_finished(self, match: FinishedMatch) -> None:
        task = asyncio.get_running_loop().create_task(self._count(match))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _count(self, match: FinishedMatch) -> None:
        now = self.clock()
        try:
            game = await self.db.write(
                lambda s: store.finish_game(
                    s,
                    match.table_code,
                    match_id=match.match_id,
                    outcome=dict(match.outcome),
                    seats=[dict(seat) for seat in match.seats],
                    now=now,
                )
            )
        except Exception:
            log.exception("tournament: could not count match %s", match.match_id)
            return
        if game is None:
            return
        live = self.live.get(game.tournament_id)
        if live is not None:
            for seat in game.seats:
                account = seat.get("account_id")
                if account is not None and live.seated.get(int(account)) == match.table_code:
                    del live.seated[int(account)]
                    live.since[int(account)] = now.timestamp()
        self.wake.set()

    # ------------------------------------------------------------------ the loop

    async def run_forever(self) -> None:
        """A pass every ``tick_s`` on ``sleep``'s clock, and at once when a match ends (``wake``)."""
        while True:
            try:
                await self.step()
            except Exception:
                log.exception("tournament runner: a pass failed; trying again")
            woken = asyncio.ensure_future(self.wake.wait())
            ticked = asyncio.ensure_future(self.sleep(self.settings.tick_s))
            try:
                await asyncio.wait((woken, ticked), return_when=asyncio.FIRST_COMPLETED)
            finally:
                woken.cancel()
                ticked.cancel()
            self.wake.clear()

    async def step(self) -> None:
        async with self._lock:
            now = self.clock()
            async with self.db.session() as session:
                due = await store.due(session, now, self.settings.notice_s)
            for tournament in due:
                try:
                    await self._step_one(tournament, now)
                except Exception:
                    log.exception("tournament %s: a pass failed", tournament.id)

    async def _step_one(self, tournament: Tournament, now: datetime) -> None:
        tid = tournament.id
        # One process runs each tournament: the one holding its lease (renewed at every pass).
        held = await self.registry.broker.acquire_lease(f"tournament:{tid}", self.registry.owner, LEASE_S)
        if held is None:
            return
        if tournament.status == "scheduled":
            if not tournament.notified:
                await self._send_notices(tournament, now)
            if now < tournament.starts_at:
                return
            tournament = await self.db.write(lambda s: store.start(s, tid, now))
            await self.publish(tid)
            if tournament.status != "running":
                return
        live = self.live.setdefault(tid, Live())
        changed = await self._forget_gone_tables(tid, live, now)
        if now < tournament.ends_at:
            changed = await self._pair(tournament, live, now) or changed
        else:
            async with self.db.session() as session:
                open_games = await store.games(session, tid, status="open")
            if not open_games:
                await self.db.write(lambda s: store.finish(s, tid, now))
                self.live.pop(tid, None)
                changed = True
        if changed:
            await self.publish(tid)

    async def _send_notices(self, tournament: Tournament, now: datetime) -> None:
        tid = tournament.id

        async def mark(session: Any) -> list[int]:
            row = await store.get(session, tid, lock=True)
            if row.notified:
                return []
            row.notified = True
            return [e.account_id for e in await store.entries(session, tid) if e.status == "active"]

        accounts = await self.db.write(mark)
        minutes = max(0, round((tournament.starts_at - now).total_seconds() / 60))
        if self.notify is not None:
            for account in accounts:
                self.notify(account, tournament, minutes)

    async def _forget_gone_tables(self, tid: int, live: Live, now: datetime) -> bool:
        """Open games whose table is no longer here (closed, evicted): aborted, their players free."""
        async with self.db.session() as session:
            open_games = await store.games(session, tid, status="open")
        changed = False
        for game in open_games:
            if game.table_code in self.registry.tables:
                for seat in game.seats:
                    if seat.get("account_id") is not None:
                        live.seated.setdefault(int(seat["account_id"]), game.table_code)
                continue
            code = game.table_code
            await self.db.write(lambda s: store.abort_game(s, code, now))  # noqa: B023 - awaited here
            for seat in game.seats:
                account = seat.get("account_id")
                if account is not None and live.seated.get(int(account)) == game.table_code:
                    del live.seated[int(account)]
                    live.since[int(account)] = now.timestamp()
            changed = True
        return changed

    async def _forbidden(self, tournament: Tournament, live: Live, entrants: list[int]) -> frozenset[frozenset[int]]:
        """Pairs that may not share a table of a paid tournament (docs/integrity.md): related
        accounts, and pairs whose coins moved today plus the entry fee pass the daily pair cap.
        Computed again when the entrants change."""
        if tournament.entry_fee <= 0:
            return frozenset()
        wanted = frozenset(entrants)
        if wanted == live.forbidden_for:
            return live.forbidden
        pairs: set[frozenset[int]] = set()
        day = utc_day(self.clock())
        rules = self.integrity_rules
        async with self.db.session() as session:
            ordered = sorted(wanted)
            for i, account in enumerate(ordered):
                others = ordered[i + 1 :]
                for other in await integrity.related_to(session, account, others, rules):
                    pairs.add(frozenset((account, other)))
                for other in others:
                    moved = await integrity.coins_moved(session, account, other, day)
                    if moved + tournament.entry_fee > rules.pair_daily_coin_cap:
                        pairs.add(frozenset((account, other)))
        live.forbidden, live.forbidden_for = frozenset(pairs), wanted
        return live.forbidden

    async def _pair(self, tournament: Tournament, live: Live, now: datetime) -> bool:
        tid = tournament.id
        async with self.db.session() as session:
            entries = await store.entries(session, tid)
            ranked = {row.entrant: row for row in await store.ranking(session, tid)}
            finished = await store.games(session, tid, status="finished")
        active = [e for e in entries if e.status == "active"]
        recent: dict[int, list[frozenset[int]]] = {}
        for game in finished:  # in the order they were opened
            people = [int(s["account_id"]) for s in game.seats if s.get("account_id") is not None]
            for account in people:
                recent.setdefault(account, []).append(frozenset(people) - {account})
        waiting = []
        for entry in active:
            if entry.account_id in live.seated:
                continue
            since = live.since.setdefault(entry.account_id, max(now.timestamp(), tournament.starts_at.timestamp()))
            standing = ranked.get(entry.account_id)
            waiting.append(
                arena.Waiting(
                    entry.account_id,
                    standing.points if standing else 0,
                    since,
                    tuple(recent.get(entry.account_id, [])[-2:]),
                )
            )
        if not waiting:
            return False
        forbidden = await self._forbidden(tournament, live, [e.account_id for e in active])
        rules = arena.PairingRules(int(tournament.rules["seats"]), tournament.bot_after_s, forbidden)
        tables = arena.pair(waiting, rules, now.timestamp())
        for table in tables:
            await self._open_table(tournament, live, table, now)
        return bool(tables)

    async def _open_table(self, tournament: Tournament, live: Live, table: arena.Table, now: datetime) -> None:
        tid = tournament.id
        live.tables += 1
        rules = Rules.from_json({**tournament.rules, "stake": 0})
        # A creator of its own per table: the registry's per-creator limits are for people.
        creator = Principal(f"tournament:{tid}:{live.tables}", tournament.name)
        spec = TableSpec(rules=rules, creator=creator, name=tournament.name[:64], private=True, bot_delay_ms=400)
        async with self.db.session() as session:
            people = await store.names(session, list(table.players))
            seat_ratings = {a: await ratings.seat_rating(session, a) for a in table.players}
        seats: list[dict[str, Any]] = [
            {"seat": i, "account_id": account, "name": people.get(account, "?"), "bot_level": None}
            for i, account in enumerate(table.players)
        ]
        seats += [
            {"seat": len(table.players) + j, "account_id": None, "name": f"Bot ({BOT_LEVEL})", "bot_level": BOT_LEVEL}
            for j in range(table.bots)
        ]
        actor = await self.registry.create(spec)
        code = actor.code
        await self.db.write(lambda s: store.open_game(s, tid, code, spec.watch_code, seats, now))
        for account in table.players:
            live.seated[account] = code
        try:
            for seat in seats:
                if seat["account_id"] is not None:
                    principal = Principal(f"a:{seat['account_id']}", seat["name"], seat["account_id"])
                    reply = await self.registry.call(
                        code, Join(seat=seat["seat"], rating=seat_ratings.get(seat["account_id"])), principal
                    )
                else:
                    reply = await self.registry.call(code, AddBot(level=BOT_LEVEL, seat=seat["seat"]), creator)
                if reply.get("type") != "ack":
                    raise RuntimeError(f"{reply.get('code')}: {reply.get('message')}")
        except (RuntimeError, TimeoutError, TableGone) as exc:
            log.warning("tournament %s: table %s could not be seated (%s)", tid, code[:8], exc)
            await self.registry.close_table(code, "the tournament could not seat it")
            await self.db.write(lambda s: store.abort_game(s, code, now))
            for account in table.players:
                live.seated.pop(account, None)
            return
        for viewer in self.viewers.get(tid, set()):
            if viewer.account_id in table.players:
                viewer.push(sse("table", {"code": code}))

    # ------------------------------------------------------------------ what the pages see

    async def state(self, tid: int) -> dict[str, Any]:
        """The tournament as its page shows it: facts, standings, the tables playing now."""
        async with self.db.session() as session:
            tournament = await store.get(session, tid)
            ranked = await store.ranking(session, tid)
            entries = {e.account_id: e for e in await store.entries(session, tid)}
            open_games = await store.games(session, tid, status="open")
            counted = len(await store.games(session, tid, status="finished"))
            people = await store.names(session, list(entries))
        rows = []
        for row in ranked:
            entry = entries[row.entrant]
            rows.append(
                {
                    "rank": entry.place or row.rank,
                    "name": people.get(row.entrant, "?"),
                    "points": row.points,
                    "matches": row.matches,
                    "firsts": row.firsts,
                    "status": entry.status,
                    "prize": entry.prize,
                    "playing": row.entrant
                    in {int(s["account_id"]) for g in open_games for s in g.seats if s.get("account_id")},
                }
            )
        return {
            "tournament": describe(tournament, len(rows)),
            "standings": rows,
            "tables": [
                {
                    "watch_code": g.watch_code,
                    "players": [s["name"] for s in g.seats],
                    "bots": sum(1 for s in g.seats if s.get("bot_level")),
                }
                for g in open_games
            ],
            "matches": counted,
            "server_time": self.clock().isoformat(),
        }

    def table_of(self, tid: int, account_id: int) -> str | None:
        live = self.live.get(tid)
        return None if live is None else live.seated.get(account_id)

    async def publish(self, tid: int) -> None:
        viewers = self.viewers.get(tid)
        if not viewers:
            return
        text = sse("standings", await self.state(tid))
        for viewer in viewers:
            viewer.push(text)

    @contextlib.asynccontextmanager
    async def feed(
        self, tid: int, account_id: int | None, keepalive_s: float = KEEPALIVE_S
    ) -> AsyncIterator[AsyncIterator[bytes]]:
        """Server-sent events of one tournament: ``standings`` (the whole page state) now and at every
        change, and ``table`` (``{code}``) to an entrant when his next table is ready."""
        viewer = Viewer(account_id)
        viewer.push(sse("standings", await self.state(tid)))
        if account_id is not None and (code := self.table_of(tid, account_id)) is not None:
            viewer.push(sse("table", {"code": code}))
        self.viewers.setdefault(tid, set()).add(viewer)

        try:
            yield viewer.texts(keepalive_s)
        finally:
            self.viewers.get(tid, set()).discard(viewer)
            viewer.close()


def describe(t: Tournament, players: int | None = None) -> dict[str, Any]:
    return {
        "id": t.id,
        "name": t.name,
        "status": t.status,
        "official": t.official,
        "rules": t.rules,
        "seats": int(t.rules.get("seats", 2)),
        "deck": t.rules.get("deck"),
        "entry_fee": t.entry_fee,
        "starts_at": t.starts_at.isoformat(),
        "ends_at": t.ends_at.isoformat(),
        "duration_s": int((t.ends_at - t.starts_at).total_seconds()),
        "bot_after_s": t.bot_after_s,
        "pool": t.pool,
        "players": players,
        "reason": t.reason,
    }
