"""The farming watch (docs/integrity.md): after a match is recorded, in the same transaction, the
pair counts of the UTC day (quick wins, coins), the automatic warnings and reports, the throw-in counts
of the soft-play signal, the private staked tables signal and each account's take from new accounts
(the ``new_inflow`` signal). What the counts mean is app/integrity_policy.py; the rows they live in,
the flags and the warnings are app/db/integrity.py's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from itertools import combinations
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import integrity
from app.db.base import Base
from app.db.models import FLAG_OPEN, InflowDay, IntegrityFlag, Match, PairDay, ThrowInCount
from app.integrity_policy import (
    IntegrityRules,
    MatchFacts,
    Standing,
    accounts_of_seats,
    coin_flows,
    coins_by_account,
    inflow_summary,
    inflow_tripped,
    left_by,
    private_staked_summary,
    quick_wins_summary,
    quick_wins_warning,
    soft_play_score,
    soft_play_summary,
    takes_from_new_accounts,
    utc_day,
    wins_of,
)

M = TypeVar("M", bound=Base)


async def _locked_row(session: AsyncSession, model: type[M], keys: dict[str, Any], zeros: dict[str, Any]) -> M:
    """The counter row of ``model`` with these key columns, made with ``zeros`` if it is missing, and
    locked for update (concurrent matches add to the same rows)."""
    await session.execute(
        integrity.insert_for(session)(model).values(**keys, **zeros).on_conflict_do_nothing(index_elements=list(keys))
    )
    row = await session.scalar(
        select(model).filter_by(**keys).with_for_update().execution_options(populate_existing=True)
    )
    assert row is not None
    return row


async def after_match(
    session: AsyncSession, match: Match, facts: MatchFacts, standing: Mapping[int, Standing] | None = None
) -> None:
    """The farming watch and the soft-play signals for a match just recorded (inside the recording
    transaction, once per match); ``standing`` of its accounts before the match (the inflow signal
    needs it)."""
    rules = facts.rules
    account_of = accounts_of_seats(match.seats)
    if len(set(account_of.values())) < 2:
        return
    day = utc_day(match.finished_at)
    wins, quick = wins_of(match.result, account_of, long_enough=facts.long_enough)
    flows = coin_flows(coins_by_account(match.coin_changes, account_of))
    for winner, loser in sorted(set(quick) | set(flows)):  # row locks in one order
        row = await _pair_day(session, winner, loser, day)
        row.coins += flows.get((winner, loser), 0)
        if (winner, loser) in quick:
            row.quick_wins += 1
            row.quick_matches = [*row.quick_matches, match.id]
            await session.flush()
            await _quick_wins_reached(session, row, rules)
    await session.flush()
    if standing is not None:
        await _inflow(session, match, day, set(wins), flows, standing, rules)
    await _count_throw_ins(session, match, account_of, facts)
    if match.private and match.stake > 0:
        await _private_staked(session, match, sorted(set(account_of.values())), rules)


async def _pair_day(session: AsyncSession, winner: int, loser: int, day: str) -> PairDay:
    row = await _locked_row(
        session, PairDay, {"winner_id": winner, "loser_id": loser, "day": day},
        {"quick_wins": 0, "coins": 0, "quick_matches": []},
    )  # fmt: skip
    return row


async def _inflow(
    session: AsyncSession,
    match: Match,
    day: str,
    wins: set[tuple[int, int]],
    flows: Mapping[tuple[int, int], int],
    standing: Mapping[int, Standing],
    rules: IntegrityRules,
) -> None:
    """Each account's take from new accounts today, across all its opponents: a star of fresh
    accounts each losing once to the same account trips no pair's watch, but it trips this one."""
    taken = takes_from_new_accounts(wins, flows, standing, rules, match.finished_at)
    if not taken:
        return
    for winner, take in sorted(taken.items()):  # row locks in one order
        row = await _locked_row(
            session, InflowDay, {"account_id": winner, "day": day}, {"coins": 0, "wins": 0, "losers": [], "matches": []}
        )
        row.coins += take.coins
        row.wins += take.wins
        row.losers = list(dict.fromkeys([*row.losers, *take.losers]))
        row.matches = [*row.matches, match.id]
        await session.flush()
        if inflow_tripped(len(row.losers), row.coins, rules):
            await _inflow_flag(session, row, rules, when=match.finished_at)


async def _inflow_flag(session: AsyncSession, row: InflowDay, rules: IntegrityRules, *, when: datetime) -> None:
    names = await integrity.names_of(session, [row.account_id, *row.losers])
    losers = [names.get(loser, f"account {loser}") for loser in row.losers]
    await integrity.file_flag(
        session,
        kind="new_inflow",
        dedupe=f"new_inflow:{row.account_id}:{row.day}",
        a=row.account_id,
        b=row.losers[-1],
        summary=inflow_summary(
            names.get(row.account_id), coins=row.coins, wins=row.wins, losers=losers, day=row.day, rules=rules
        ),
        match_ids=list(reversed(row.matches)),
        when=when,
    )


async def _all_left_by(session: AsyncSession, match_ids: Sequence[str], loser: int) -> bool:
    """Whether every one of these matches ended with ``loser`` (the durak) leaving the table."""
    if not match_ids:
        return False
    found = (await session.execute(select(Match.result, Match.seats).where(Match.id.in_(list(match_ids))))).all()
    return len(found) == len(match_ids) and all(left_by(result, seats, loser) for result, seats in found)


async def _quick_wins_reached(session: AsyncSession, row: PairDay, rules: IntegrityRules) -> None:
    winner, loser, count = row.winner_id, row.loser_id, row.quick_wins
    if count < rules.quick_wins_warning:
        return
    names = await integrity.names_of(session, [winner, loser])
    w, lo = names.get(winner), names.get(loser)
    warning = quick_wins_warning(w, lo, count, str(row.day), rules)
    if warning is not None:
        # Quick wins that all came from the loser leaving are his doing: only the quitter is warned
        # (the winner did nothing but stay); a short match warns both.
        warned = (loser,) if await _all_left_by(session, row.quick_matches, loser) else (winner, loser)
        for account in warned:
            await integrity.warn(
                session,
                account_id=account,
                text=warning.text,
                kind=warning.kind,
                params=warning.params,
                dedupe=f"quick_wins:{winner}:{loser}:{row.day}:{account}",
            )
    if count >= rules.quick_wins_report:
        await integrity.file_flag(
            session,
            kind="quick_wins",
            dedupe=f"quick_wins:{winner}:{loser}:{row.day}",
            a=winner,
            b=loser,
            summary=quick_wins_summary(w, lo, count, str(row.day), rules),
            match_ids=list(reversed(row.quick_matches)),
        )


async def _count_throw_ins(
    session: AsyncSession, match: Match, account_of: Mapping[int, int], facts: MatchFacts
) -> None:
    touched: set[tuple[int, int]] = set()
    for (seat, defender_seat), (chances, passes) in sorted(facts.throw_ins.items()):
        player, defender = account_of.get(seat), account_of.get(defender_seat)
        if player is None or defender is None or player == defender or chances <= 0:
            continue
        row = await _locked_row(
            session, ThrowInCount, {"player_id": player, "defender_id": defender}, {"chances": 0, "passes": 0}
        )
        row.chances += chances
        row.passes += passes
        touched.add((player, defender))
    await session.flush()
    for player, defender in sorted(touched):
        await _soft_play_check(session, player, defender, match.finished_at, facts.rules)


async def _soft_play_check(
    session: AsyncSession, player: int, target: int, when: datetime, rules: IntegrityRules
) -> None:
    rows = (await session.scalars(select(ThrowInCount).where(ThrowInCount.player_id == player))).all()
    mine = next(((r.chances, r.passes) for r in rows if r.defender_id == target), (0, 0))
    others = (
        sum(r.chances for r in rows if r.defender_id != target),
        sum(r.passes for r in rows if r.defender_id != target),
    )
    z = soft_play_score(mine, others, rules)
    if z is None or await integrity.open_flag_exists(session, "soft_play", player, target):
        return
    names = await integrity.names_of(session, [player, target])
    match_ids = await integrity.matches_between(session, player, target, since=when - timedelta(days=30), limit=20)
    await integrity.file_flag(
        session,
        kind="soft_play",
        dedupe=f"soft_play:{player}:{target}:{utc_day(when)}",
        a=player,
        b=target,
        summary=soft_play_summary(names.get(player), names.get(target), mine, others, z),
        match_ids=match_ids,
        when=when,
    )


async def _private_staked(session: AsyncSession, match: Match, accounts: Sequence[int], rules: IntegrityRules) -> None:
    since = match.finished_at - timedelta(days=rules.private_staked_days)
    for a, b in combinations(accounts, 2):
        match_ids = await integrity.matches_between(session, a, b, since=since, staked=True, private=True)
        if len(match_ids) < rules.private_staked_matches:
            continue
        if await integrity.open_flag_exists(session, "private_staked", a, b):
            existing = await session.scalar(
                select(IntegrityFlag).where(
                    IntegrityFlag.kind == "private_staked",
                    IntegrityFlag.account_a == a,
                    IntegrityFlag.account_b == b,
                    IntegrityFlag.status == FLAG_OPEN,
                )
            )
            if existing is not None:
                existing.match_ids = list(dict.fromkeys([*match_ids, *existing.match_ids]))
                await session.flush()
            continue
        names = await integrity.names_of(session, [a, b])
        await integrity.file_flag(
            session,
            kind="private_staked",
            dedupe=f"private_staked:{a}:{b}:{utc_day(match.finished_at)}",
            a=a,
            b=b,
            summary=private_staked_summary(names.get(a), names.get(b), len(match_ids), rules),
            match_ids=match_ids,
            when=match.finished_at,
        )
