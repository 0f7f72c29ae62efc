"""Arena tournaments in the database (docs/tournaments.md): scheduling, entries and their fees, the
tables the arena opened and the points scored there, the final standings and the prizes.

Coins: a paid tournament holds every entry fee in its own escrow ledger account (code
``tournament:<id>``, kind ``escrow``; not an ``escrows`` row, which is one match's and is refunded by
the start-up sweep). Every movement is one ledger transfer with a key of its own, so a retry never
pays twice:

* ``tournament:<id>:entry:<account>:<joins>`` — the fee, wallet to the tournament (reason ``entry_fee``);
* ``tournament:<id>:withdraw:<account>:<joins>`` — the fee back, for a withdrawal before the start;
* ``tournament:<id>:refund`` — every fee back when it is cancelled (reason ``refund``);
* ``tournament:<id>:prizes`` — the pool paid by final standing (reason ``prize``,
  ``app.arena.prize_split``).

The tournament's account is empty once it is finished or cancelled: what came in went out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app import arena
from app.db import ledger
from app.db.models import (
    KIND_ESCROW,
    Account,
    LedgerAccount,
    Tournament,
    TournamentEntry,
    TournamentGame,
    TournamentPoints,
)
from app.engine import RulesJson

REASON_ENTRY = "entry_fee"
REASON_WITHDRAW = "entry_fee_back"
REASON_REFUND = "refund"
REASON_PRIZE = "prize"


class TournamentError(Exception):
    """A tournament operation refused; ``code`` is stable (the API's ``detail`` starts with it)."""

    def __init__(self, code: str, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


def _ts(when: datetime) -> float:
    return when.timestamp()


@dataclass(frozen=True, slots=True)
class NewTournament:
    name: str
    rules: RulesJson  # the tables' rules (engine ``Rules.to_json``), stake 0
    entry_fee: int
    starts_at: datetime
    duration_s: int
    bot_after_s: float
    created_by: int | None
    official: bool


async def create(session: AsyncSession, new: NewTournament) -> Tournament:
    if new.entry_fee < 0:
        raise TournamentError("bad_fee", "the entry fee cannot be negative", 422)
    if not 2 <= int(new.rules.get("seats", 0)) <= 6:
        raise TournamentError("bad_seats", "a tournament table has 2 to 6 seats", 422)
    row = Tournament(
        name=new.name,
        created_by=new.created_by,
        official=new.official,
        status="scheduled",
        rules=new.rules,
        entry_fee=new.entry_fee,
        starts_at=new.starts_at,
        ends_at=new.starts_at + timedelta(seconds=new.duration_s),
        bot_after_s=new.bot_after_s,
        pool=0,
        notified=False,
    )
    session.add(row)
    await session.flush()
    if new.entry_fee > 0:
        account = LedgerAccount(code=f"tournament:{row.id}", kind=KIND_ESCROW, balance=0)
        session.add(account)
        await session.flush()
        row.ledger_account_id = account.id
        await session.flush()
    return row


async def get(session: AsyncSession, tournament_id: int, *, lock: bool = False) -> Tournament:
    query = select(Tournament).where(Tournament.id == tournament_id)
    if lock:
        query = query.with_for_update().execution_options(populate_existing=True)
    row = await session.scalar(query)
    if row is None:
        raise TournamentError("not_found", f"no tournament {tournament_id}", 404)
    return row


async def entry_of(session: AsyncSession, tournament_id: int, account_id: int) -> TournamentEntry | None:
    return await session.get(TournamentEntry, (tournament_id, account_id), populate_existing=True)


async def enter(session: AsyncSession, tournament_id: int, account_id: int, now: datetime) -> TournamentEntry:
    """Enter (or come back to) a tournament that has not ended; a paid one takes the fee now."""
    tournament = await get(session, tournament_id, lock=True)
    if tournament.status not in ("scheduled", "running") or now >= tournament.ends_at:
        raise TournamentError("tournament_closed", "this tournament takes no more entries")
    entry = await entry_of(session, tournament_id, account_id)
    if entry is not None and entry.status in ("active", "paused"):
        entry.status = "active"  # back from a pause
        await session.flush()
        return entry
    joins = 1 if entry is None else entry.joins + 1
    if tournament.entry_fee > 0:
        assert tournament.ledger_account_id is not None
        wallet = await ledger.wallet_id(session, account_id)
        await ledger.transfer(
            session,
            key=f"tournament:{tournament_id}:entry:{account_id}:{joins}",
            reason=REASON_ENTRY,
            moves=[(wallet, tournament.ledger_account_id, tournament.entry_fee)],
            memo=f"entry fee of tournament {tournament_id}",
        )
    if entry is None:
        entry = TournamentEntry(
            tournament_id=tournament_id,
            account_id=account_id,
            status="active",
            entered_at=now,
            fee_paid=tournament.entry_fee,
            joins=joins,
            points=0,
            prize=0,
        )
        session.add(entry)
    else:
        entry.status, entry.joins, entry.entered_at = "active", joins, now
        entry.fee_paid += tournament.entry_fee
    await session.flush()
    return entry


async def withdraw(session: AsyncSession, tournament_id: int, account_id: int) -> TournamentEntry:
    """Before the start: out, with the fee back. Once it runs: paused (not paired again until he
    comes back with ``enter``); the fee stays in the pool and his points count."""
    tournament = await get(session, tournament_id, lock=True)
    entry = await entry_of(session, tournament_id, account_id)
    if entry is None or entry.status == "withdrawn":
        raise TournamentError("not_entered", "you are not in this tournament")
    if tournament.status == "scheduled":
        await _pay(
            session,
            tournament,
            {account_id: entry.fee_paid},
            f"tournament:{tournament_id}:withdraw:{account_id}:{entry.joins}",
            REASON_WITHDRAW,
            f"withdrawn from tournament {tournament_id} before its start",
        )
        entry.fee_paid = 0
        entry.status = "withdrawn"
    elif tournament.status == "running":
        entry.status = "paused"
    else:
        raise TournamentError("tournament_closed", "this tournament is over")
    await session.flush()
    return entry


async def _pay(
    session: AsyncSession, tournament: Tournament, amounts: dict[int, int], key: str, reason: str, memo: str
) -> None:
    """From the tournament's pool to the players' wallets, in one transfer (refunds and prizes)."""
    amounts = {a: c for a, c in amounts.items() if c > 0}
    if not amounts or tournament.ledger_account_id is None:
        return
    wallets = await ledger.wallet_ids(session, amounts)
    await ledger.transfer(
        session,
        key=key,
        reason=reason,
        moves=[(tournament.ledger_account_id, wallets[a], c) for a, c in sorted(amounts.items())],
        memo=memo,
    )


async def cancel(session: AsyncSession, tournament_id: int, reason: str, now: datetime) -> Tournament:
    """Cancel a tournament that is not over: every fee paid goes back (one transfer)."""
    tournament = await get(session, tournament_id, lock=True)
    if tournament.status in ("finished", "cancelled"):
        raise TournamentError("tournament_closed", f"the tournament is {tournament.status} already")
    entries = (
        await session.scalars(select(TournamentEntry).where(TournamentEntry.tournament_id == tournament_id))
    ).all()
    await _pay(
        session,
        tournament,
        {e.account_id: e.fee_paid for e in entries},
        f"tournament:{tournament_id}:refund",
        REASON_REFUND,
        f"tournament {tournament_id} cancelled",
    )
    for entry in entries:
        entry.fee_paid = 0
    tournament.status, tournament.reason, tournament.finished_at = "cancelled", reason[:500], now
    await session.execute(
        update(TournamentGame)
        .where(TournamentGame.tournament_id == tournament_id, TournamentGame.status == "open")
        .values(status="aborted")
    )
    await session.flush()
    return tournament


async def start(session: AsyncSession, tournament_id: int, now: datetime, min_players: int = 2) -> Tournament:
    """Its start time has come: running, or cancelled (fees back) with fewer than ``min_players``."""
    tournament = await get(session, tournament_id, lock=True)
    if tournament.status != "scheduled":
        return tournament
    count = len(
        (
            await session.scalars(
                select(TournamentEntry.account_id).where(
                    TournamentEntry.tournament_id == tournament_id, TournamentEntry.status != "withdrawn"
                )
            )
        ).all()
    )
    if count < min_players:
        return await cancel(session, tournament_id, f"fewer than {min_players} players entered", now)
    tournament.status = "running"
    await session.flush()
    return tournament


# ---------------------------------------------------------------------- the arena's tables


async def open_game(
    session: AsyncSession,
    tournament_id: int,
    table_code: str,
    watch_code: str,
    seats: Sequence[dict[str, Any]],
    now: datetime,
) -> TournamentGame:
    game = TournamentGame(
        tournament_id=tournament_id,
        table_code=table_code,
        watch_code=watch_code,
        seats=list(seats),
        status="open",
        created_at=now,
    )
    session.add(game)
    await session.flush()
    return game


async def game_of_table(session: AsyncSession, table_code: str) -> TournamentGame | None:
    return await session.scalar(select(TournamentGame).where(TournamentGame.table_code == table_code))


async def finish_game(
    session: AsyncSession,
    table_code: str,
    *,
    match_id: str,
    outcome: dict[str, Any],
    seats: Sequence[dict[str, Any]],
    now: datetime,
) -> TournamentGame | None:
    """The first match of an arena table is over: its points (``arena.place_points``) to each
    entrant seated, once (a second call, or a later match at that table, changes nothing). None:
    not a tournament table, or counted already."""
    game = await session.scalar(select(TournamentGame).where(TournamentGame.table_code == table_code).with_for_update())
    if game is None or game.status != "open":
        return None
    tournament = await get(session, game.tournament_id)
    game.match_id, game.outcome, game.finished_at = match_id, outcome, now
    if outcome.get("aborted") or tournament.status != "running":
        game.status = "aborted"
        await session.flush()
        return game
    game.status = "finished"
    points = arena.place_points(outcome, len(seats))
    firsts = arena.first_places(outcome)
    entrants = {int(row["account_id"]) for row in game.seats if row.get("account_id") is not None}
    for seat in seats:
        account = seat.get("account_id")
        if account is None or int(account) not in entrants:
            continue
        number = int(seat["seat"])
        session.add(
            TournamentPoints(
                game_id=game.id,
                account_id=int(account),
                tournament_id=game.tournament_id,
                seat=number,
                points=points.get(number, 0),
                first=number in firsts,
                finished_at=now,
            )
        )
    await session.flush()
    await _refresh_points(session, game.tournament_id)
    return game


async def abort_game(session: AsyncSession, table_code: str, now: datetime) -> None:
    await session.execute(
        update(TournamentGame)
        .where(TournamentGame.table_code == table_code, TournamentGame.status == "open")
        .values(status="aborted", finished_at=now)
    )


async def _refresh_points(session: AsyncSession, tournament_id: int) -> None:
    for row in await ranking(session, tournament_id):
        await session.execute(
            update(TournamentEntry)
            .where(TournamentEntry.tournament_id == tournament_id, TournamentEntry.account_id == row.entrant)
            .values(points=row.points)
        )


async def results(session: AsyncSession, tournament_id: int) -> list[arena.Result]:
    rows = (
        await session.scalars(select(TournamentPoints).where(TournamentPoints.tournament_id == tournament_id))
    ).all()
    return [arena.Result(r.account_id, r.points, r.first, _ts(r.finished_at)) for r in rows]


async def ranking(session: AsyncSession, tournament_id: int) -> list[arena.Standing]:
    """The standings now (every entrant that did not withdraw before the start)."""
    entries = (
        await session.scalars(
            select(TournamentEntry).where(
                TournamentEntry.tournament_id == tournament_id, TournamentEntry.status != "withdrawn"
            )
        )
    ).all()
    return arena.standings([(e.account_id, _ts(e.entered_at)) for e in entries], await results(session, tournament_id))


async def finish(session: AsyncSession, tournament_id: int, now: datetime) -> Tournament:
    """Its time is up and its last table is over: the final standings, and the pool paid by them
    (``arena.prize_split`` over the entrants who played at least one match). Nobody played: the
    tournament is cancelled and every fee goes back."""
    tournament = await get(session, tournament_id, lock=True)
    if tournament.status != "running":
        return tournament
    ranked = await ranking(session, tournament_id)
    played = [row.entrant for row in ranked if row.matches > 0]
    if not played:
        return await cancel(session, tournament_id, "nobody played a match", now)
    pool = 0
    if tournament.ledger_account_id is not None:
        pool = int(
            await session.scalar(select(LedgerAccount.balance).where(LedgerAccount.id == tournament.ledger_account_id))
            or 0
        )
    prizes = arena.prize_split(pool, played)
    await _pay(
        session,
        tournament,
        prizes,
        f"tournament:{tournament_id}:prizes",
        REASON_PRIZE,
        f"prizes of tournament {tournament_id}",
    )
    for row in ranked:
        await session.execute(
            update(TournamentEntry)
            .where(TournamentEntry.tournament_id == tournament_id, TournamentEntry.account_id == row.entrant)
            .values(place=row.rank, points=row.points, prize=prizes.get(row.entrant, 0))
        )
    tournament.status, tournament.pool, tournament.finished_at = "finished", pool, now
    await session.flush()
    return tournament


# ---------------------------------------------------------------------- what the pages show


async def names(session: AsyncSession, account_ids: Sequence[int]) -> dict[int, str]:
    if not account_ids:
        return {}
    rows = (await session.execute(select(Account.id, Account.name).where(Account.id.in_(set(account_ids))))).all()
    return {int(a): str(n) for a, n in rows}


async def listing(session: AsyncSession, *, limit: int = 50) -> list[Tournament]:
    """Scheduled and running first (soonest first), then the latest finished or cancelled."""
    live = (
        await session.scalars(
            select(Tournament)
            .where(Tournament.status.in_(("scheduled", "running")))
            .order_by(Tournament.starts_at)
            .limit(limit)
        )
    ).all()
    past = (
        await session.scalars(
            select(Tournament)
            .where(Tournament.status.in_(("finished", "cancelled")))
            .order_by(Tournament.starts_at.desc())
            .limit(limit)
        )
    ).all()
    return [*live, *past]


async def entrant_counts(session: AsyncSession, ids: Sequence[int]) -> dict[int, int]:
    rows = (
        await session.execute(
            select(TournamentEntry.tournament_id, TournamentEntry.account_id).where(
                TournamentEntry.tournament_id.in_(set(ids)), TournamentEntry.status != "withdrawn"
            )
        )
    ).all()
    counts: dict[int, int] = {}
    for tid, _ in rows:
        counts[int(tid)] = counts.get(int(tid), 0) + 1
    return counts


async def games(session: AsyncSession, tournament_id: int, *, status: str | None = None) -> list[TournamentGame]:
    query = select(TournamentGame).where(TournamentGame.tournament_id == tournament_id)
    if status is not None:
        query = query.where(TournamentGame.status == status)
    return list((await session.scalars(query.order_by(TournamentGame.id))).all())


async def entries(session: AsyncSession, tournament_id: int) -> list[TournamentEntry]:
    return list(
        (await session.scalars(select(TournamentEntry).where(TournamentEntry.tournament_id == tournament_id))).all()
    )


async def player_history(session: AsyncSession, account_id: int, *, limit: int = 20) -> list[dict[str, Any]]:
    """An account's tournaments, latest first: for his profile."""
    rows = (
        await session.execute(
            select(Tournament, TournamentEntry)
            .join(TournamentEntry, TournamentEntry.tournament_id == Tournament.id)
            .where(TournamentEntry.account_id == account_id, TournamentEntry.status != "withdrawn")
            .order_by(Tournament.starts_at.desc())
            .limit(limit)
        )
    ).all()
    return [
        {
            "id": t.id,
            "name": t.name,
            "status": t.status,
            "starts_at": t.starts_at,
            "place": e.place,
            "points": e.points,
            "prize": e.prize,
        }
        for t, e in rows
    ]


async def due(session: AsyncSession, now: datetime, notice_s: float) -> list[Tournament]:
    """Tournaments with something to do: scheduled ones starting within ``notice_s`` (their notice)
    or due to start, and running ones."""
    return list(
        (
            await session.scalars(
                select(Tournament).where(
                    (Tournament.status == "running")
                    | ((Tournament.status == "scheduled") & (Tournament.starts_at <= now + timedelta(seconds=notice_s)))
                )
            )
        ).all()
    )
