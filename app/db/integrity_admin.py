"""The admins' side of integrity (docs/integrity.md): flags with the matches and the pair's coin flow
behind them; dismiss, warn, freeze and unfreeze staked play, and reverse a match's coin movements.
Every action is a row of ``admin_actions``; a reversal is a new ledger transfer (never an edit)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import ledger
from app.db.base import utcnow
from app.db.integrity import insert_for, names_of, warn
from app.db.models import (
    FLAG_DISMISSED,
    FLAG_WARNED,
    Account,
    AdminAction,
    IntegrityFlag,
    Match,
    MatchPlayer,
    MatchReversal,
    PairDay,
    StakedPlayFreeze,
)
from app.integrity_policy import utc_day

REASON_REVERSAL = "match_reversal"
COIN_FLOW_DAYS = 30  # the days of a pair's coin flow a flag shows


class NotFound(LookupError):
    pass


class AlreadyReversed(Exception):
    """``already_reversed``: the match's coin movements were reversed before."""


class NothingToReverse(Exception):
    """``nothing_to_reverse``: the match moved no coins (a free table, or a draw)."""


def replay_url(match_id: str) -> str:
    """The replay page the match history links to."""
    return f"/#/replay/{match_id}"


# ---------------------------------------------------------------------- reading flags


async def flag_page(session: AsyncSession, *, status: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Flags with ``status`` ("all": every one), newest first, and how many there are."""
    where = [] if status == "all" else [IntegrityFlag.status == status]
    total = int(await session.scalar(select(func.count()).select_from(IntegrityFlag).where(*where)) or 0)
    rows = (
        await session.scalars(
            select(IntegrityFlag).where(*where).order_by(IntegrityFlag.id.desc()).offset(offset).limit(limit)
        )
    ).all()
    return [await flag_view(session, row) for row in rows], total


async def get_flag(session: AsyncSession, flag_id: int) -> dict[str, Any]:
    row = await session.get(IntegrityFlag, flag_id)
    if row is None:
        raise NotFound(f"no flag {flag_id}")
    return await flag_view(session, row)


async def flag_view(session: AsyncSession, flag: IntegrityFlag) -> dict[str, Any]:
    """A flag as the admin API shows it: both accounts, its matches, the pair's coin flow."""
    a, b = flag.account_a, flag.account_b
    names = await names_of(session, [a, b])
    frozen = set(
        (
            await session.scalars(select(StakedPlayFreeze.account_id).where(StakedPlayFreeze.account_id.in_([a, b])))
        ).all()
    )
    return {
        "id": flag.id,
        "kind": flag.kind,
        "status": flag.status,
        "created_at": flag.created_at,
        "summary": flag.summary,
        "accounts": [{"id": i, "name": names.get(i, f"#{i}"), "frozen": i in frozen} for i in (a, b)],
        "matches": await match_rows(session, flag.match_ids),
        "coin_flow": await coin_flow(session, a, b, since=flag.created_at),
        "note": flag.note,
    }


async def match_rows(session: AsyncSession, match_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The matches behind a flag, newest first: when, the replay link, the coins moved, the winner,
    whether an admin reversed them."""
    if not match_ids:
        return []
    matches = (await session.scalars(select(Match).where(Match.id.in_(set(match_ids))))).all()
    reversed_ids = set(
        (await session.scalars(select(MatchReversal.match_id).where(MatchReversal.match_id.in_(set(match_ids))))).all()
    )
    rows = []
    for match in sorted(matches, key=lambda m: (m.finished_at, m.id), reverse=True):
        result = match.result
        winner = None
        places = result.get("places") or []
        if not result.get("draw") and places and places[0]:
            first = places[0][0]
            winner = next((s["display_name"] for s in match.seats if int(s["seat"]) == first), None)
        rows.append(
            {
                "id": match.id,
                "finished_at": match.finished_at,
                "url": replay_url(match.id),
                "coins": sum(int(c) for c in (match.coin_changes or {}).values() if int(c) > 0),
                "winner": winner,
                "reversed": match.id in reversed_ids,
            }
        )
    return rows


async def coin_flow(
    session: AsyncSession, a: int, b: int, *, since: datetime | None = None, days: int = COIN_FLOW_DAYS
) -> dict[str, Any]:
    """Coins and quick wins between ``a`` and ``b`` per UTC day (the days with any, oldest first)
    from ``days`` days before ``since`` (a flag's filing; default now) until today, and the coins
    in each direction over them."""
    start = min(since or utcnow(), utcnow())
    first_day = utc_day(start - timedelta(days=days - 1))
    rows = (
        await session.scalars(
            select(PairDay).where(PairDay.winner_id.in_([a, b]), PairDay.loser_id.in_([a, b]), PairDay.day >= first_day)
        )
    ).all()
    per_day: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row.winner_id == row.loser_id:
            continue
        day = per_day.setdefault(
            row.day, {"day": row.day, "a_to_b": 0, "b_to_a": 0, "quick_wins_a": 0, "quick_wins_b": 0}
        )
        if row.winner_id == a:  # b lost to a: coins from b to a
            day["b_to_a"] += row.coins
            day["quick_wins_a"] += row.quick_wins
        else:
            day["a_to_b"] += row.coins
            day["quick_wins_b"] += row.quick_wins
    ordered = [per_day[day] for day in sorted(per_day)]
    return {
        "a_to_b": sum(day["a_to_b"] for day in ordered),
        "b_to_a": sum(day["b_to_a"] for day in ordered),
        "days": ordered,
    }


# ---------------------------------------------------------------------- reviewing flags


async def review_flag(
    session: AsyncSession, *, flag_id: int, admin_id: int | None, verdict: str, note: str
) -> dict[str, Any]:
    """Dismiss a flag, or warn both its accounts (a warning each reads, quoting the admin's note).
    Audited for both accounts."""
    if verdict not in (FLAG_DISMISSED, FLAG_WARNED):
        raise ValueError(f"a review is {FLAG_DISMISSED} or {FLAG_WARNED}")
    flag = await session.get(IntegrityFlag, flag_id, with_for_update=True)
    if flag is None:
        raise NotFound(f"no flag {flag_id}")
    note = note.strip()
    flag.status = verdict
    flag.note = note or None
    flag.reviewed_by = admin_id
    flag.reviewed_at = utcnow()
    for account in (flag.account_a, flag.account_b):
        session.add(
            AdminAction(
                admin_id=admin_id,
                target_id=account,
                action="flag_warn" if verdict == FLAG_WARNED else "flag_dismiss",
                reason=f"flag {flag.id} ({flag.kind}): {note}" if note else f"flag {flag.id} ({flag.kind})",
            )
        )
    if verdict == FLAG_WARNED:
        names = await names_of(session, [flag.account_a, flag.account_b])
        text = (
            f"An admin reviewed the matches between {names.get(flag.account_a)} and {names.get(flag.account_b)} "
            f"and warns both accounts" + (f": {note}" if note else ".") + " Farming coins or rating breaks the "
            "rules (docs/integrity.md); staked play can be frozen and coin movements reversed."
        )
        params = {"a": names.get(flag.account_a), "b": names.get(flag.account_b), "note": note or ""}
        for account in (flag.account_a, flag.account_b):
            await warn(session, account_id=account, text=text, kind="admin_warned", params=params, flag_id=flag.id)
    await session.flush()
    return await flag_view(session, flag)


# ---------------------------------------------------------------------- freezing staked play


async def freeze(session: AsyncSession, *, account_id: int, admin_id: int | None, reason: str) -> dict[str, Any]:
    """Freeze an account's staked play (again: the reason is replaced). Audited."""
    reason = reason.strip()
    if not reason:
        raise ValueError("a freeze needs a reason")
    if await session.get(Account, account_id) is None:
        raise NotFound(f"no account {account_id}")
    row = await session.get(StakedPlayFreeze, account_id, with_for_update=True)
    if row is None:
        session.add(StakedPlayFreeze(account_id=account_id, reason=reason, admin_id=admin_id, since=utcnow()))
    else:
        row.reason, row.admin_id = reason, admin_id
    session.add(AdminAction(admin_id=admin_id, target_id=account_id, action="freeze_staked", reason=reason))
    await session.flush()
    return {"id": account_id, "frozen": True, "reason": reason}


async def unfreeze(session: AsyncSession, *, account_id: int, admin_id: int | None) -> dict[str, Any]:
    """Let the account play for coins again. Audited (also when it was not frozen)."""
    if await session.get(Account, account_id) is None:
        raise NotFound(f"no account {account_id}")
    row = await session.get(StakedPlayFreeze, account_id, with_for_update=True)
    if row is not None:
        await session.delete(row)
    session.add(
        AdminAction(
            admin_id=admin_id,
            target_id=account_id,
            action="unfreeze_staked",
            reason="staked play unfrozen" if row is not None else "was not frozen",
        )
    )
    await session.flush()
    return {"id": account_id, "frozen": False, "reason": None}


# ---------------------------------------------------------------------- reversing a match


def _shares(total: int, weights: dict[int, int]) -> dict[int, int]:
    """``total`` split in proportion to ``weights`` (whole coins; the remainder to the largest weights)."""
    whole = sum(weights.values())
    if whole <= 0 or total <= 0:
        return dict.fromkeys(weights, 0)
    shares = {k: total * w // whole for k, w in weights.items()}
    left = total - sum(shares.values())
    for k in sorted(weights, key=lambda k: (-weights[k], k))[:left]:
        shares[k] += 1
    return shares


async def reverse_match(session: AsyncSession, *, match_id: str, admin_id: int | None, note: str) -> dict[str, Any]:
    """Give the coins a match moved back: each account that won coins pays them back to those who
    lost them, as one new ledger transfer (key ``reverse:<match id>``), audited per account.

    A winner who no longer holds all he won pays what he holds (his balance never goes below zero);
    the losers get back what was taken, in proportion to their losses, and the rest is the
    ``shortfall`` (recorded with the reversal and in the audit). Raises ``NotFound``,
    ``AlreadyReversed`` (any second reversal) and ``NothingToReverse``."""
    note = note.strip()
    match = await session.get(Match, match_id)
    if match is None:
        raise NotFound(f"no match {match_id}")
    insert = insert_for(session)
    claimed = await session.scalar(
        insert(MatchReversal)
        .values(match_id=match_id, admin_id=admin_id, note=note, returned=0, shortfall=0, created_at=utcnow())
        .on_conflict_do_nothing(index_elements=["match_id"])
        .returning(MatchReversal.match_id)
    )
    if claimed is None:
        raise AlreadyReversed(f"already_reversed: the coins of match {match_id} were reversed before")
    rows = (
        await session.execute(
            select(MatchPlayer.account_id, MatchPlayer.coin_change).where(
                MatchPlayer.match_id == match_id, MatchPlayer.account_id.is_not(None)
            )
        )
    ).all()
    changes: dict[int, int] = {}
    for account, change in rows:
        if account is not None and change:
            changes[int(account)] = changes.get(int(account), 0) + int(change)
    won = {a: c for a, c in changes.items() if c > 0}
    lost = {a: -c for a, c in changes.items() if c < 0}
    if not won or not lost:
        raise NothingToReverse(f"nothing_to_reverse: match {match_id} moved no coins")
    wallets = await ledger.wallet_ids(session, changes)
    locked = await ledger.lock_accounts(session, wallets.values())
    taken = {a: min(c, max(0, locked[wallets[a]].balance)) for a, c in won.items()}
    returned = sum(taken.values())
    given = _shares(returned, lost)
    moves = _pair_up(taken, given, wallets)
    transfer_id = None
    if moves:
        transfer = await ledger.transfer(
            session,
            key=f"reverse:{match_id}",
            reason=REASON_REVERSAL,
            moves=moves,
            actor_id=admin_id,
            match_id=match_id,
            memo=note or None,
        )
        transfer_id = transfer.id
    shortfall = sum(won.values()) - returned
    reversal = await session.get(MatchReversal, match_id)
    assert reversal is not None
    reversal.transfer_id, reversal.returned, reversal.shortfall = transfer_id, returned, shortfall
    names = await names_of(session, changes)
    deltas = {a: -taken[a] for a in won} | {a: given[a] for a in lost}
    for account, delta in sorted(deltas.items()):
        reason = f"reversed match {match_id}" + (f": {note}" if note else "")
        if account in won and taken[account] < won[account]:
            reason += f" (held only {taken[account]} of {won[account]} won; shortfall {won[account] - taken[account]})"
        session.add(
            AdminAction(
                admin_id=admin_id,
                target_id=account,
                action="reverse_match",
                amount=delta,
                reason=reason,
                transfer_id=transfer_id,
            )
        )
    await session.flush()
    return {
        "match_id": match_id,
        "transfers": [{"account": names.get(a, f"#{a}"), "amount": d} for a, d in sorted(deltas.items())],
        "reversed": True,
        "shortfall": shortfall,
    }


def _pair_up(taken: dict[int, int], given: dict[int, int], wallets: dict[int, int]) -> list[tuple[int, int, int]]:
    """Ledger moves from the winners' wallets to the losers', matching amounts in account order."""
    payers = [[a, c] for a, c in sorted(taken.items()) if c > 0]
    payees = [[a, c] for a, c in sorted(given.items()) if c > 0]
    moves: list[tuple[int, int, int]] = []
    i = j = 0
    while i < len(payers) and j < len(payees):
        amount = min(payers[i][1], payees[j][1])
        moves.append((wallets[payers[i][0]], wallets[payees[j][0]], amount))
        payers[i][1] -= amount
        payees[j][1] -= amount
        if payers[i][1] == 0:
            i += 1
        if payees[j][1] == 0:
            j += 1
    return moves
