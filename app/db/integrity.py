"""Integrity (docs/integrity.md), the rows: related accounts, frozen staked play, matches that count,
and the flags and warnings for the admins and the players. What the rows mean — the thresholds, the
refusals and their wording — is app/integrity_policy.py (no database); the farming watch that runs after
a recorded match is app/db/integrity_watch.py.

* Two accounts are **related** when one device cookie has seen both (``device_accounts``) or, with
  ``IntegrityRules.related_same_ip``, they signed up from the same address within
  ``related_ip_window_s`` (``signup_addresses``). Related accounts may not sit at one staked table and
  their matches against each other are never rated.
* ``staked_seat_refusal`` / ``staked_match_refusal`` say why a staked seat or match is refused:
  ``staked_play_frozen``, ``related_accounts`` or ``pair_cap`` (the coins a pair moved today plus the
  stake would pass ``pair_daily_coin_cap``).
* **New accounts**: an account that has not yet played ``new_account_matches`` matches that count
  (the table ``counted_matches``, bumped by ``count_matches``) may not play for coins (``new_account``), and a
  forfeit of its own is not rated (``may_rate``); one that is also younger than
  ``new_account_days`` is new to the inflow signal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.base import utcnow
from app.db.models import (
    FLAG_OPEN,
    Account,
    CountedMatches,
    DeviceAccount,
    IntegrityFlag,
    IntegrityWarning,
    Match,
    MatchPlayer,
    PairDay,
    SignupAddress,
    StakedPlayFreeze,
)
from app.integrity_policy import (
    IntegrityRules,
    MatchFacts,
    Refusal,
    Standing,
    day_start,
    forfeited_by_new_account,
    frozen_refusal,
    new_account_refusal,
    pair_cap_refusal,
    pair_cap_summary,
    related_refusal,
    utc_day,
    valid_device,
)


def insert_for(session: AsyncSession) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


async def names_of(session: AsyncSession, account_ids: Iterable[int]) -> dict[int, str]:
    wanted = set(account_ids)
    if not wanted:
        return {}
    rows = (await session.execute(select(Account.id, Account.name).where(Account.id.in_(wanted)))).all()
    return {int(account_id): name for account_id, name in rows}


# ---------------------------------------------------------------------- devices and sign-up addresses


async def saw_device(session: AsyncSession, *, device: str | None, account_id: int) -> None:
    """Remember that ``account_id`` used ``device`` (inside the caller's transaction)."""
    if not valid_device(device):
        return
    insert = insert_for(session)
    await session.execute(
        insert(DeviceAccount)
        .values(device=device, account_id=account_id, first_at=utcnow())
        .on_conflict_do_nothing(index_elements=["device", "account_id"])
    )


async def knows_device(session: AsyncSession, *, device: str | None, account_id: int) -> bool:
    """Whether ``account_id`` was seen on ``device`` already (or ``device`` is no device id)."""
    if not valid_device(device):
        return True
    return await session.get(DeviceAccount, (device, account_id)) is not None


async def record_signup_address(session: AsyncSession, *, account_id: int, address: str) -> None:
    session.add(SignupAddress(account_id=account_id, address=address[:64], created_at=utcnow()))
    await session.flush()


# ---------------------------------------------------------------------- new accounts


async def standings(session: AsyncSession, account_ids: Iterable[int]) -> dict[int, Standing]:
    wanted = set(account_ids)
    if not wanted:
        return {}
    rows = await session.execute(
        select(Account.id, func.coalesce(CountedMatches.matches, 0), Account.created_at)
        .outerjoin(CountedMatches, CountedMatches.account_id == Account.id)
        .where(Account.id.in_(wanted))
    )
    return {int(account): Standing(int(counted), created) for account, counted, created in rows.all()}


async def count_matches(session: AsyncSession, account_ids: Iterable[int]) -> None:
    """One more match that counted for each account (in the recording transaction)."""
    insert = insert_for(session)
    for account in sorted(set(account_ids)):  # row locks in one order
        statement = insert(CountedMatches).values(account_id=account, matches=1)
        await session.execute(
            statement.on_conflict_do_update(index_elements=["account_id"], set_={"matches": CountedMatches.matches + 1})
        )


# ---------------------------------------------------------------------- related accounts


async def related_to(
    session: AsyncSession, account_id: int, others: Iterable[int], rules: IntegrityRules
) -> dict[int, str]:
    """Which of ``others`` are related to ``account_id``, and why ("device" or "address")."""
    wanted = {o for o in others if o != account_id}
    if not wanted:
        return {}
    mine, theirs = aliased(DeviceAccount), aliased(DeviceAccount)
    rows = await session.scalars(
        select(theirs.account_id)
        .join(mine, mine.device == theirs.device)
        .where(mine.account_id == account_id, theirs.account_id.in_(wanted))
    )
    found = dict.fromkeys((int(other) for other in rows), "device")
    if rules.related_same_ip:
        me = await session.get(SignupAddress, account_id)
        if me is not None:
            window = timedelta(seconds=rules.related_ip_window_s)
            rows2 = await session.scalars(
                select(SignupAddress).where(
                    SignupAddress.address == me.address,
                    SignupAddress.account_id.in_(wanted),
                    SignupAddress.created_at >= me.created_at - window,
                    SignupAddress.created_at <= me.created_at + window,
                )
            )
            for row in rows2:
                found.setdefault(int(row.account_id), "address")
    return found


async def related_pair(
    session: AsyncSession, account_ids: Sequence[int], rules: IntegrityRules
) -> tuple[int, int, str] | None:
    """The first pair of related accounts among ``account_ids`` and why, or None."""
    ids = sorted(set(account_ids))
    for i, account in enumerate(ids[:-1]):
        found = await related_to(session, account, ids[i + 1 :], rules)
        if found:
            other = min(found)
            return account, other, found[other]
    return None


# ---------------------------------------------------------------------- refusals at staked tables


async def freeze_of(session: AsyncSession, account_id: int) -> StakedPlayFreeze | None:
    return await session.get(StakedPlayFreeze, account_id)


async def coins_moved(session: AsyncSession, a: int, b: int, day: str) -> int:
    """Coins that went between ``a`` and ``b`` (either way) on UTC ``day``."""
    total = await session.scalar(
        select(func.coalesce(func.sum(PairDay.coins), 0)).where(
            PairDay.day == day,
            or_(
                and_(PairDay.winner_id == a, PairDay.loser_id == b),
                and_(PairDay.winner_id == b, PairDay.loser_id == a),
            ),
        )
    )
    return int(total or 0)


async def staked_seat_refusal(
    session: AsyncSession,
    *,
    account_id: int,
    others: Sequence[int],
    stake: int,
    rules: IntegrityRules,
    now: datetime | None = None,
) -> Refusal | None:
    """Why ``account_id`` may not sit at a staked table where ``others`` sit (None: he may)."""
    if stake <= 0:
        return None
    frozen = await freeze_of(session, account_id)
    if frozen is not None:
        return frozen_refusal(None, frozen.reason)
    standing = (await standings(session, [account_id])).get(account_id)
    if standing is not None and standing.in_first_matches(rules):
        return new_account_refusal("", standing, rules, yours=True)
    return await _pair_refusal(session, account_id, [o for o in others if o != account_id], stake, rules, now)


async def staked_match_refusal(
    session: AsyncSession,
    *,
    account_ids: Sequence[int],
    stake: int,
    rules: IntegrityRules,
    now: datetime | None = None,
) -> Refusal | None:
    """Why a staked match of ``account_ids`` may not start (None: it may): checked again as the
    stakes are taken, for a rematch or anything that changed since the players sat down."""
    if stake <= 0:
        return None
    names = await names_of(session, account_ids)
    for account in account_ids:
        frozen = await freeze_of(session, account)
        if frozen is not None:
            return frozen_refusal(names.get(account, f"account {account}"), frozen.reason)
    found = await standings(session, account_ids)
    for account in account_ids:
        standing = found.get(account)
        if standing is not None and standing.in_first_matches(rules):
            return new_account_refusal(names.get(account, f"account {account}"), standing, rules, yours=False)
    ids = list(account_ids)
    for i, account in enumerate(ids):
        refusal = await _pair_refusal(session, account, ids[i + 1 :], stake, rules, now)
        if refusal is not None:
            return refusal
    return None


async def _pair_refusal(
    session: AsyncSession,
    account_id: int,
    others: Sequence[int],
    stake: int,
    rules: IntegrityRules,
    now: datetime | None,
) -> Refusal | None:
    if not others:
        return None
    names = await names_of(session, [account_id, *others])
    related = await related_to(session, account_id, others, rules)
    if related:
        other = min(related)
        return related_refusal(names.get(account_id), names.get(other), related[other])
    day = utc_day(now or utcnow())
    for other in others:
        moved = await coins_moved(session, account_id, other, day)
        refusal = pair_cap_refusal((account_id, other), names, moved=moved, stake=stake, rules=rules)
        if refusal is not None:
            return refusal
    return None


async def file_pair_cap_flag(
    session: AsyncSession, *, pair: tuple[int, int], moved: int, stake: int, rules: IntegrityRules, now: datetime
) -> None:
    """The first time a day's pair cap refuses a table between two accounts, the admins get a flag."""
    a, b = sorted(pair)
    day = utc_day(now)
    names = await names_of(session, [a, b])
    match_ids = await matches_between(session, a, b, since=day_start(day), staked=True)
    await file_flag(
        session,
        kind="pair_cap",
        dedupe=f"pair_cap:{a}:{b}:{day}",
        a=a,
        b=b,
        summary=pair_cap_summary(names.get(a), names.get(b), moved=moved, stake=stake, day=day, rules=rules),
        match_ids=match_ids,
        when=now,
    )


# ---------------------------------------------------------------------- flags and warnings


async def file_flag(
    session: AsyncSession,
    *,
    kind: str,
    dedupe: str,
    a: int,
    b: int,
    summary: str,
    match_ids: Sequence[str],
    when: datetime | None = None,
) -> bool:
    """File a flag unless one with ``dedupe`` exists (then its matches are brought up to date).
    Whether a new flag was filed."""
    insert = insert_for(session)
    inserted = await session.scalar(
        insert(IntegrityFlag)
        .values(
            kind=kind,
            status=FLAG_OPEN,
            dedupe=dedupe,
            account_a=a,
            account_b=b,
            summary=summary,
            match_ids=list(match_ids),
            created_at=when or utcnow(),
        )
        .on_conflict_do_nothing(index_elements=["dedupe"])
        .returning(IntegrityFlag.id)
    )
    if inserted is None:
        existing = await session.scalar(select(IntegrityFlag).where(IntegrityFlag.dedupe == dedupe))
        if existing is not None and existing.match_ids != list(match_ids):
            existing.match_ids = list(dict.fromkeys([*existing.match_ids, *match_ids]))
            existing.summary = summary
            await session.flush()
        return False
    return True


async def warn(
    session: AsyncSession,
    *,
    account_id: int,
    text: str,
    kind: str | None = None,
    params: dict[str, Any] | None = None,
    dedupe: str | None = None,
    flag_id: int | None = None,
) -> None:
    """A warning the player reads (``GET /api/me/integrity``); once per ``dedupe`` when given.
    ``text`` is its English wording; ``kind`` and ``params`` let the web client word it in the
    player's language."""
    insert = insert_for(session)
    statement = insert(IntegrityWarning).values(
        account_id=account_id,
        text=text,
        kind=kind,
        params=params,
        dedupe=dedupe,
        flag_id=flag_id,
        created_at=utcnow(),
    )
    if dedupe is not None:
        statement = statement.on_conflict_do_nothing(index_elements=["dedupe"])
    await session.execute(statement)


async def open_flag_exists(session: AsyncSession, kind: str, a: int, b: int) -> bool:
    found = await session.scalar(
        select(IntegrityFlag.id).where(
            IntegrityFlag.kind == kind,
            IntegrityFlag.account_a == a,
            IntegrityFlag.account_b == b,
            IntegrityFlag.status == FLAG_OPEN,
        )
    )
    return found is not None


async def matches_between(
    session: AsyncSession,
    a: int,
    b: int,
    *,
    since: datetime,
    staked: bool = False,
    private: bool = False,
    limit: int = 50,
) -> list[str]:
    """Matches ``a`` and ``b`` both played since ``since``, newest first."""
    first, second = aliased(MatchPlayer), aliased(MatchPlayer)
    query = (
        select(Match.id)
        .join(first, first.match_id == Match.id)
        .join(second, second.match_id == Match.id)
        .where(first.account_id == a, second.account_id == b, Match.finished_at >= since)
    )
    if staked:
        query = query.where(Match.stake > 0)
    if private:
        query = query.where(Match.private.is_(True))
    rows = await session.scalars(query.order_by(Match.finished_at.desc(), Match.id.desc()).limit(limit))
    return list(rows)


# ---------------------------------------------------------------------- ratings


async def may_rate(
    session: AsyncSession,
    facts: MatchFacts,
    accounts: Mapping[int, int],
    forfeit: int | None,
    standing: Mapping[int, Standing],
) -> bool:
    """Whether a match played at a table moves ratings (``accounts``: seat -> account of the seats
    that hold one; ``forfeit``: the seat that forfeited; ``standing`` of those accounts before this
    match): long enough, or ended by a timer or disconnect forfeit of a player who had moved; never
    when it ended by the forfeit of an account in its first matches (a new account's forfeit is the
    quickest rated win to hand out), however long it was; and never between related accounts."""
    if not facts.may_rate or forfeited_by_new_account(accounts, forfeit, standing, facts.rules):
        return False
    return await related_pair(session, list(accounts.values()), facts.rules) is None


# ---------------------------------------------------------------------- what a player reads


async def player_view(session: AsyncSession, account_id: int, *, limit: int = 50) -> dict[str, Any]:
    """``GET /api/me/integrity``: the freeze of his staked play (if any) and his warnings, newest first."""
    frozen = await freeze_of(session, account_id)
    rows = (
        await session.scalars(
            select(IntegrityWarning)
            .where(IntegrityWarning.account_id == account_id)
            .order_by(IntegrityWarning.id.desc())
            .limit(limit)
        )
    ).all()
    return {
        "frozen": None if frozen is None else {"reason": frozen.reason, "since": frozen.since},
        "warnings": [
            {"id": row.id, "text": row.text, "kind": row.kind, "params": row.params, "at": row.created_at}
            for row in rows
        ],
    }
