"""Integrity (docs/integrity.md): related accounts, frozen staked play, matches that count, and the
farming watch that files warnings and flags for the admins.

* Two accounts are **related** when one device cookie has seen both (``device_accounts``) or, with
  ``IntegrityRules.related_same_ip``, they signed up from the same address within
  ``related_ip_window_s`` (``signup_addresses``). Related accounts may not sit at one staked table and
  their matches against each other are never rated.
* ``staked_seat_refusal`` / ``staked_match_refusal`` say why a staked seat or match is refused:
  ``staked_play_frozen``, ``related_accounts`` or ``pair_cap`` (the coins a pair moved today plus the
  stake would pass ``pair_daily_coin_cap``).
* ``after_match`` runs in the transaction that records a finished match (once per match): the pair
  counts of the UTC day (quick wins, coins), the automatic warnings and reports, the throw-in counts
  of the soft-play signal and the private staked tables signal, and each account's take from new
  accounts (the ``new_inflow`` signal).
* **New accounts**: an account that has not yet played ``new_account_matches`` matches that count
  (the table ``counted_matches``, bumped by ``count_matches``) may not play for coins (``new_account``), and a
  forfeit of its own is not rated (``may_rate``); one that is also younger than
  ``new_account_days`` is new to the inflow signal.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import combinations
from typing import TYPE_CHECKING, Any

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
    InflowDay,
    IntegrityFlag,
    IntegrityWarning,
    Match,
    MatchPlayer,
    PairDay,
    SignupAddress,
    StakedPlayFreeze,
    ThrowInCount,
)

if TYPE_CHECKING:
    from app.config import Settings

DEVICE_MAX = 64  # the column's length
SOFT_PLAY_MIN_Z = 3.0  # the two-proportion z score a soft-play flag needs besides the margin
REASON_PAIR_CAP = "pair_cap"


@dataclass(frozen=True, slots=True)
class IntegrityRules:
    """The integrity settings (``DURAK_*``, app/config.py); the defaults are the published rules."""

    related_same_ip: bool = True
    related_ip_window_s: float = 24 * 3600.0
    rated_min_bouts: int = 3
    rated_min_seconds: float = 60.0
    quick_wins_warning: int = 3
    quick_wins_report: int = 4
    pair_daily_coin_cap: int = 2000
    soft_play_min_chances: int = 20
    soft_play_margin: float = 0.25
    private_staked_matches: int = 5
    private_staked_days: int = 7
    new_account_matches: int = 5
    new_account_days: float = 7.0
    new_inflow_accounts: int = 5
    new_inflow_coins: int = 1000

    @classmethod
    def from_settings(cls, settings: Settings) -> IntegrityRules:
        return cls(
            related_same_ip=settings.related_same_ip,
            related_ip_window_s=settings.related_ip_window_s,
            rated_min_bouts=settings.rated_min_bouts,
            rated_min_seconds=settings.rated_min_seconds,
            quick_wins_warning=settings.quick_wins_warning,
            quick_wins_report=settings.quick_wins_report,
            pair_daily_coin_cap=settings.pair_daily_coin_cap,
            soft_play_min_chances=settings.soft_play_min_chances,
            soft_play_margin=settings.soft_play_margin,
            private_staked_matches=settings.private_staked_matches,
            private_staked_days=settings.private_staked_days,
            new_account_matches=settings.new_account_matches,
            new_account_days=settings.new_account_days,
            new_inflow_accounts=settings.new_inflow_accounts,
            new_inflow_coins=settings.new_inflow_coins,
        )


@dataclass(frozen=True, slots=True)
class MatchFacts:
    """What the table knows about a finished match that the integrity rules need (computed from the
    action log by ``app.tables.integrity``, in ``app.db.table_hooks``)."""

    bouts: int  # bouts opened (leads)
    seconds: float | None  # from the first deal to the end; None when unknown (a match taken over)
    rules: IntegrityRules = IntegrityRules()
    forfeit_after_acting: bool = False  # ended by a timer or disconnect forfeit of a seat that had acted
    # (seat, defender's seat) -> (throw-in chances, passed up): the soft-play signal
    throw_ins: Mapping[tuple[int, int], tuple[int, int]] = field(default_factory=dict)

    @property
    def long_enough(self) -> bool:
        """At least the minimum bouts and seconds (an unknown duration counts as long enough)."""
        enough_time = self.seconds is None or self.seconds >= self.rules.rated_min_seconds
        return self.bouts >= self.rules.rated_min_bouts and enough_time

    @property
    def may_rate(self) -> bool:
        """Whether the match may move ratings (related accounts aside)."""
        return self.long_enough or self.forfeit_after_acting


def utc_day(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d")


def insert_for(session: AsyncSession) -> Any:
    return pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert


async def names_of(session: AsyncSession, account_ids: Iterable[int]) -> dict[int, str]:
    wanted = set(account_ids)
    if not wanted:
        return {}
    rows = (await session.execute(select(Account.id, Account.name).where(Account.id.in_(wanted)))).all()
    return {int(account_id): name for account_id, name in rows}


# ---------------------------------------------------------------------- devices and sign-up addresses


def valid_device(value: str | None) -> bool:
    """A device id as the server makes them (URL-safe base64 of 128 random bits, 22 characters)."""
    return (
        isinstance(value, str)
        and 16 <= len(value) <= DEVICE_MAX
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in value)
    )


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


@dataclass(frozen=True, slots=True)
class Standing:
    """How far an account has come: the matches that counted for it, and when it signed up."""

    counted: int
    created_at: datetime

    def in_first_matches(self, rules: IntegrityRules) -> bool:
        """Still short of the matches an account plays before it may play for coins."""
        return self.counted < rules.new_account_matches

    def is_new(self, rules: IntegrityRules, now: datetime) -> bool:
        """New to the inflow signal: in its first matches, or younger than ``new_account_days``."""
        young = now - self.created_at < timedelta(days=rules.new_account_days)
        return self.in_first_matches(rules) or young


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


def _new_account_refusal(who: str, standing: Standing, rules: IntegrityRules, *, yours: bool) -> Refusal:
    whose = "your account" if yours else f"{who}'s account"
    return Refusal(
        "new_account",
        f"{whose} may play for coins once it has played {rules.new_account_matches} matches that count "
        f"({standing.counted} so far; a match counts from {rules.rated_min_bouts} bouts and "
        f"{rules.rated_min_seconds:g} seconds, against people or bots): free tables are open until then",
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


@dataclass(frozen=True, slots=True)
class Refusal:
    code: str
    message: str
    pair: tuple[int, int] | None = None  # pair_cap: the pair the cap refused
    moved: int = 0


async def freeze_of(session: AsyncSession, account_id: int) -> StakedPlayFreeze | None:
    return await session.get(StakedPlayFreeze, account_id)


def _why(reason: str) -> str:
    if reason == "device":
        return "both were used on the same device"
    return "both were created from the same network address within 24 hours"


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
        return Refusal("staked_play_frozen", f"your staked play is frozen by an admin: {frozen.reason}")
    standing = (await standings(session, [account_id])).get(account_id)
    if standing is not None and standing.in_first_matches(rules):
        return _new_account_refusal("", standing, rules, yours=True)
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
            who = names.get(account, f"account {account}")
            return Refusal("staked_play_frozen", f"{who}'s staked play is frozen by an admin: {frozen.reason}")
    found = await standings(session, account_ids)
    for account in account_ids:
        standing = found.get(account)
        if standing is not None and standing.in_first_matches(rules):
            return _new_account_refusal(names.get(account, f"account {account}"), standing, rules, yours=False)
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
        return Refusal(
            "related_accounts",
            f"{names.get(account_id)} and {names.get(other)} are related accounts ({_why(related[other])}): "
            "related accounts may play each other at free tables only",
        )
    day = utc_day(now or utcnow())
    for other in others:
        moved = await coins_moved(session, account_id, other, day)
        if moved + stake > rules.pair_daily_coin_cap:
            return Refusal(
                "pair_cap",
                f"{names.get(account_id)} and {names.get(other)} have moved {moved} coins between them today; "
                f"a table at stake {stake} could pass the daily cap of {rules.pair_daily_coin_cap}: "
                "they may play each other for coins again from 00:00 UTC",
                pair=(account_id, other),
                moved=moved,
            )
    return None


async def file_pair_cap_flag(
    session: AsyncSession, *, pair: tuple[int, int], moved: int, stake: int, rules: IntegrityRules, now: datetime
) -> None:
    """The first time a day's pair cap refuses a table between two accounts, the admins get a flag."""
    a, b = sorted(pair)
    day = utc_day(now)
    names = await names_of(session, [a, b])
    match_ids = await _matches_between(session, a, b, since=_day_start(day), staked=True)
    await file_flag(
        session,
        kind="pair_cap",
        dedupe=f"pair_cap:{a}:{b}:{day}",
        a=a,
        b=b,
        summary=f"{names.get(a)} and {names.get(b)} reached the daily cap of {rules.pair_daily_coin_cap} coins "
        f"moved between them on {day}: {moved} moved, a table at stake {stake} was refused.",
        match_ids=match_ids,
        when=now,
    )


def _day_start(day: str) -> datetime:
    return datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)


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


async def _open_flag_exists(session: AsyncSession, kind: str, a: int, b: int) -> bool:
    found = await session.scalar(
        select(IntegrityFlag.id).where(
            IntegrityFlag.kind == kind,
            IntegrityFlag.account_a == a,
            IntegrityFlag.account_b == b,
            IntegrityFlag.status == FLAG_OPEN,
        )
    )
    return found is not None


async def _matches_between(
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


# ---------------------------------------------------------------------- after a match


def coin_flows(changes: Mapping[int, int]) -> dict[tuple[int, int], int]:
    """(winner, loser) -> coins, from each account's net change in one match: every loss is shared
    among the gainers in proportion to their gains (whole coins; a loser's remainder goes to the
    biggest gainer), so each loser's flows add up to his loss."""
    gains = {a: c for a, c in sorted(changes.items()) if c > 0}
    total = sum(gains.values())
    flows: dict[tuple[int, int], int] = {}
    if total <= 0:
        return flows
    biggest = max(gains, key=lambda a: (gains[a], -a))
    for loser, change in sorted(changes.items()):
        if change >= 0:
            continue
        loss = -change
        given = 0
        for winner, gain in gains.items():
            share = loss * gain // total
            if share:
                flows[(winner, loser)] = share
                given += share
        if loss - given:
            flows[(biggest, loser)] = flows.get((biggest, loser), 0) + loss - given
    return flows


async def _pair_day(session: AsyncSession, winner: int, loser: int, day: str) -> PairDay:
    insert = insert_for(session)
    await session.execute(
        insert(PairDay)
        .values(winner_id=winner, loser_id=loser, day=day, quick_wins=0, coins=0, quick_matches=[])
        .on_conflict_do_nothing(index_elements=["winner_id", "loser_id", "day"])
    )
    row = await session.scalar(
        select(PairDay)
        .where(PairDay.winner_id == winner, PairDay.loser_id == loser, PairDay.day == day)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    assert row is not None
    return row


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
    if not facts.may_rate:
        return False
    if forfeit is not None:
        forfeiter = accounts.get(forfeit)
        found = standing.get(forfeiter) if forfeiter is not None else None
        if found is not None and found.in_first_matches(facts.rules):
            return False
    return await related_pair(session, list(accounts.values()), facts.rules) is None


async def after_match(
    session: AsyncSession, match: Match, facts: MatchFacts, standing: Mapping[int, Standing] | None = None
) -> None:
    """The farming watch and the soft-play signals for a match just recorded (inside the recording
    transaction, once per match); ``standing`` of its accounts before the match (the inflow signal
    needs it)."""
    rules = facts.rules
    account_of = {int(s["seat"]): int(s["account_id"]) for s in match.seats if s.get("account_id") is not None}
    if len(set(account_of.values())) < 2:
        return
    result = match.result
    day = utc_day(match.finished_at)
    # Wins: the first place over the durak; quick ones in a match short of the minimum or left by the durak.
    wins: list[tuple[int, int]] = []
    quick: list[tuple[int, int]] = []
    if not result.get("draw") and result.get("durak") is not None:
        loser = account_of.get(int(result["durak"]))
        firsts = result.get("places", [[]])[0] if result.get("places") else []
        wins = [
            (account_of[s], loser) for s in firsts if s in account_of and loser is not None and account_of[s] != loser
        ]
        left = result.get("reason") == "left" and result.get("forfeit") == result.get("durak")
        if left or not facts.long_enough:
            quick = wins
    by_account: dict[int, int] = {}
    for seat, change in (match.coin_changes or {}).items():
        account = account_of.get(int(seat))
        if account is not None:
            by_account[account] = by_account.get(account, 0) + int(change)
    flows = coin_flows(by_account)
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
    taken: dict[int, tuple[int, int, list[int]]] = {}  # winner -> (coins, wins, new losers)
    for winner, loser in sorted(wins | set(flows)):
        found = standing.get(loser)
        if found is None or not found.is_new(rules, match.finished_at):
            continue
        coins, won, losers = taken.get(winner, (0, 0, []))
        taken[winner] = (coins + flows.get((winner, loser), 0), won + ((winner, loser) in wins), [*losers, loser])
    if not taken:
        return
    insert = insert_for(session)
    for winner, (coins, won, losers) in sorted(taken.items()):  # row locks in one order
        await session.execute(
            insert(InflowDay)
            .values(account_id=winner, day=day, coins=0, wins=0, losers=[], matches=[])
            .on_conflict_do_nothing(index_elements=["account_id", "day"])
        )
        row = await session.scalar(
            select(InflowDay)
            .where(InflowDay.account_id == winner, InflowDay.day == day)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        assert row is not None
        row.coins += coins
        row.wins += won
        row.losers = list(dict.fromkeys([*row.losers, *losers]))
        row.matches = [*row.matches, match.id]
        await session.flush()
        if len(row.losers) >= rules.new_inflow_accounts or row.coins >= rules.new_inflow_coins:
            await _inflow_flag(session, row, rules, when=match.finished_at)


async def _inflow_flag(session: AsyncSession, row: InflowDay, rules: IntegrityRules, *, when: datetime) -> None:
    names = await names_of(session, [row.account_id, *row.losers])
    losers = ", ".join(names.get(loser, f"account {loser}") for loser in row.losers)
    await file_flag(
        session,
        kind="new_inflow",
        dedupe=f"new_inflow:{row.account_id}:{row.day}",
        a=row.account_id,
        b=row.losers[-1],
        summary=f"{names.get(row.account_id)} took {row.coins} coins and {row.wins} wins from {len(row.losers)} new "
        f"accounts (younger than {rules.new_account_days:g} days or in their first {rules.new_account_matches} "
        f"matches) on {row.day}: {losers}.",
        match_ids=list(reversed(row.matches)),
        when=when,
    )


async def _all_left_by(session: AsyncSession, match_ids: Sequence[str], loser: int) -> bool:
    """Whether every one of these matches ended with ``loser`` (the durak) leaving the table."""
    if not match_ids:
        return False
    found = (await session.execute(select(Match.result, Match.seats).where(Match.id.in_(list(match_ids))))).all()
    for result, seats in found:
        seat_of = {int(s["account_id"]): int(s["seat"]) for s in seats if s.get("account_id") is not None}
        durak = result.get("durak")
        if not (result.get("reason") == "left" and result.get("forfeit") == durak and seat_of.get(loser) == durak):
            return False
    return len(found) == len(match_ids)


async def _quick_wins_reached(session: AsyncSession, row: PairDay, rules: IntegrityRules) -> None:
    winner, loser, count = row.winner_id, row.loser_id, row.quick_wins
    if count < rules.quick_wins_warning:
        return
    names = await names_of(session, [winner, loser])
    w, lo = names.get(winner), names.get(loser)
    if count == rules.quick_wins_warning:
        text = (
            f"{w} has won {count} matches quickly against {lo} today ({row.day}): under "
            f"{rules.rated_min_bouts} bouts or {rules.rated_min_seconds:g} seconds, or by leaving. Repeated quick "
            f"wins between the same accounts look like coin or rating farming; at {rules.quick_wins_report} the "
            "matches are reported to the admins (docs/integrity.md)."
        )
        params = {
            "winner": w,
            "loser": lo,
            "count": count,
            "day": str(row.day),
            "bouts": rules.rated_min_bouts,
            "seconds": rules.rated_min_seconds,
            "report_at": rules.quick_wins_report,
        }
        # Quick wins that all came from the loser leaving are his doing: only the quitter is warned
        # (the winner did nothing but stay); a short match warns both.
        warned = (loser,) if await _all_left_by(session, row.quick_matches, loser) else (winner, loser)
        for account in warned:
            await warn(
                session,
                account_id=account,
                text=text,
                kind="quick_wins",
                params=params,
                dedupe=f"quick_wins:{winner}:{loser}:{row.day}:{account}",
            )
    if count >= rules.quick_wins_report:
        await file_flag(
            session,
            kind="quick_wins",
            dedupe=f"quick_wins:{winner}:{loser}:{row.day}",
            a=winner,
            b=loser,
            summary=f"{w} won {count} matches quickly against {lo} on {row.day} (under {rules.rated_min_bouts} "
            f"bouts or {rules.rated_min_seconds:g} s, or by {lo} leaving).",
            match_ids=list(reversed(row.quick_matches)),
        )


def soft_play_score(mine: tuple[int, int], others: tuple[int, int], rules: IntegrityRules) -> float | None:
    """The soft-play test of docs/integrity.md: ``mine`` = (chances, passes) against one opponent,
    ``others`` = the same against everybody else. The z score when it flags, else None: both samples
    at least ``soft_play_min_chances``, the pass rate against him at least ``soft_play_margin`` above
    the rate against the others, and the two-proportion z score at least ``SOFT_PLAY_MIN_Z``."""
    (c_t, p_t), (c_o, p_o) = mine, others
    if c_t < rules.soft_play_min_chances or c_o < rules.soft_play_min_chances:
        return None
    r_t, r_o = p_t / c_t, p_o / c_o
    if r_t - r_o < rules.soft_play_margin:
        return None
    pooled = (p_t + p_o) / (c_t + c_o)
    spread = math.sqrt(pooled * (1 - pooled) * (1 / c_t + 1 / c_o))
    if spread == 0:
        return None
    z = (r_t - r_o) / spread
    return z if z >= SOFT_PLAY_MIN_Z else None


async def _count_throw_ins(
    session: AsyncSession, match: Match, account_of: Mapping[int, int], facts: MatchFacts
) -> None:
    touched: set[tuple[int, int]] = set()
    insert = insert_for(session)
    for (seat, defender_seat), (chances, passes) in sorted(facts.throw_ins.items()):
        player, defender = account_of.get(seat), account_of.get(defender_seat)
        if player is None or defender is None or player == defender or chances <= 0:
            continue
        await session.execute(
            insert(ThrowInCount)
            .values(player_id=player, defender_id=defender, chances=0, passes=0)
            .on_conflict_do_nothing(index_elements=["player_id", "defender_id"])
        )
        row = await session.scalar(
            select(ThrowInCount)
            .where(ThrowInCount.player_id == player, ThrowInCount.defender_id == defender)
            .with_for_update()
            .execution_options(populate_existing=True)
        )
        assert row is not None
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
    if z is None or await _open_flag_exists(session, "soft_play", player, target):
        return
    names = await names_of(session, [player, target])
    match_ids = await _matches_between(session, player, target, since=when - timedelta(days=30), limit=20)
    await file_flag(
        session,
        kind="soft_play",
        dedupe=f"soft_play:{player}:{target}:{utc_day(when)}",
        a=player,
        b=target,
        summary=f"{names.get(player)} passed up {mine[1]} of {mine[0]} legal throw-ins against {names.get(target)} "
        f"({mine[1] / mine[0]:.0%}) but {others[1]} of {others[0]} against others ({others[1] / others[0]:.0%}); "
        f"z = {z:.1f}.",
        match_ids=match_ids,
        when=when,
    )


async def _private_staked(session: AsyncSession, match: Match, accounts: Sequence[int], rules: IntegrityRules) -> None:
    since = match.finished_at - timedelta(days=rules.private_staked_days)
    for a, b in combinations(accounts, 2):
        match_ids = await _matches_between(session, a, b, since=since, staked=True, private=True)
        if len(match_ids) < rules.private_staked_matches:
            continue
        if await _open_flag_exists(session, "private_staked", a, b):
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
        names = await names_of(session, [a, b])
        await file_flag(
            session,
            kind="private_staked",
            dedupe=f"private_staked:{a}:{b}:{utc_day(match.finished_at)}",
            a=a,
            b=b,
            summary=f"{names.get(a)} and {names.get(b)} played {len(match_ids)} staked matches together at private "
            f"tables in {rules.private_staked_days} days.",
            match_ids=match_ids,
            when=match.finished_at,
        )


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
