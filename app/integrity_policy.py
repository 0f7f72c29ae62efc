"""The integrity policy of docs/integrity.md, with no database: the thresholds (``IntegrityRules``),
what a match and an account bring to them (``MatchFacts``, ``Standing``), and every decision and
wording that follows from those — who may not sit at a staked table and why (``Refusal``), which wins
are quick, how a match's coins flow between its accounts, which takes from new accounts trip the
inflow signal, the soft-play test, and the text of the warnings and flags.

app/db/integrity.py reads and writes the rows (devices, sign-up addresses, pair days, throw-in counts,
flags, warnings) and asks this module what they mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from app.config import IntegrityRules as IntegrityRules  # the settings group (DURAK_*, docs/integrity.md)

DEVICE_MAX = 64  # the column's length
SOFT_PLAY_MIN_Z = 3.0  # the two-proportion z score a soft-play flag needs besides the margin
REASON_PAIR_CAP = "pair_cap"


@dataclass(frozen=True, slots=True)
class MatchFacts:
    """What the table knows about a finished match that the integrity rules need (computed from the
    action log by ``app.tables.integrity``, in ``app.db.table_hooks``)."""

    bouts: int  # bouts opened (leads)
    seconds: float | None  # from the first deal to the end; None when unknown (a match taken over)
    rules: IntegrityRules = field(default_factory=IntegrityRules)
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


@dataclass(frozen=True, slots=True)
class Refusal:
    code: str
    message: str
    pair: tuple[int, int] | None = None  # pair_cap: the pair the cap refused
    moved: int = 0


def utc_day(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%d")


def day_start(day: str) -> datetime:
    return datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)


def valid_device(value: str | None) -> bool:
    """A device id as the server makes them (URL-safe base64 of 128 random bits, 22 characters)."""
    return (
        isinstance(value, str)
        and 16 <= len(value) <= DEVICE_MAX
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in value)
    )


# ---------------------------------------------------------------------- refusals at staked tables


def frozen_refusal(who: str | None, reason: str) -> Refusal:
    """An admin froze the staked play of ``who`` (None: of the player who asks)."""
    if who is None:
        return Refusal("staked_play_frozen", f"your staked play is frozen by an admin: {reason}")
    return Refusal("staked_play_frozen", f"{who}'s staked play is frozen by an admin: {reason}")


def new_account_refusal(who: str, standing: Standing, rules: IntegrityRules, *, yours: bool) -> Refusal:
    whose = "your account" if yours else f"{who}'s account"
    return Refusal(
        "new_account",
        f"{whose} may play for coins once it has played {rules.new_account_matches} matches that count "
        f"({standing.counted} so far; a match counts from {rules.rated_min_bouts} bouts and "
        f"{rules.rated_min_seconds:g} seconds, against people or bots): free tables are open until then",
    )


def related_refusal(name: str | None, other_name: str | None, reason: str) -> Refusal:
    """Related accounts (``reason``: "device" or "address") may not play each other for coins."""
    why = (
        "both were used on the same device"
        if reason == "device"
        else "both were created from the same network address within 24 hours"
    )
    return Refusal(
        "related_accounts",
        f"{name} and {other_name} are related accounts ({why}): "
        "related accounts may play each other at free tables only",
    )


def pair_cap_refusal(
    pair: tuple[int, int], names: Mapping[int, str], *, moved: int, stake: int, rules: IntegrityRules
) -> Refusal | None:
    """The refusal when the coins the pair moved today plus ``stake`` would pass the daily cap."""
    if moved + stake <= rules.pair_daily_coin_cap:
        return None
    a, b = pair
    return Refusal(
        "pair_cap",  # REASON_PAIR_CAP, written out: tests/api/test_protocol_docs.py reads the codes from the source
        f"{names.get(a)} and {names.get(b)} have moved {moved} coins between them today; "
        f"a table at stake {stake} could pass the daily cap of {rules.pair_daily_coin_cap}: "
        "they may play each other for coins again from 00:00 UTC",
        pair=pair,
        moved=moved,
    )


# ---------------------------------------------------------------------- ratings


def forfeited_by_new_account(
    accounts: Mapping[int, int], forfeit: int | None, standing: Mapping[int, Standing], rules: IntegrityRules
) -> bool:
    """Whether the match ended by the forfeit (``forfeit``: its seat) of an account still in its first
    matches (``accounts``: seat -> account): a new account's forfeit is the quickest rated win to hand
    out, so such a match is never rated."""
    if forfeit is None:
        return False
    forfeiter = accounts.get(forfeit)
    found = standing.get(forfeiter) if forfeiter is not None else None
    return found is not None and found.in_first_matches(rules)


# ---------------------------------------------------------------------- after a match


def accounts_of_seats(seats: Iterable[Mapping[str, Any]]) -> dict[int, int]:
    """seat -> account of a match's seats that hold an account (``Match.seats``)."""
    return {int(s["seat"]): int(s["account_id"]) for s in seats if s.get("account_id") is not None}


def wins_of(
    result: Mapping[str, Any], account_of: Mapping[int, int], *, long_enough: bool
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The (winner, loser) accounts of a match: each first place over the durak; and the quick ones
    among them, all of them in a match short of the minimum or left by the durak (none otherwise)."""
    if result.get("draw") or result.get("durak") is None:
        return [], []
    loser = account_of.get(int(result["durak"]))
    firsts = result.get("places", [[]])[0] if result.get("places") else []
    wins = [(account_of[s], loser) for s in firsts if s in account_of and loser is not None and account_of[s] != loser]
    left = result.get("reason") == "left" and result.get("forfeit") == result.get("durak")
    return wins, (wins if left or not long_enough else [])


def left_by(result: Mapping[str, Any], seats: Iterable[Mapping[str, Any]], loser: int) -> bool:
    """Whether a match ended with the account ``loser`` (the durak) leaving the table."""
    seat_of = {account: seat for seat, account in accounts_of_seats(seats).items()}
    durak = result.get("durak")
    return result.get("reason") == "left" and result.get("forfeit") == durak and seat_of.get(loser) == durak


def coins_by_account(coin_changes: Mapping[Any, int] | None, account_of: Mapping[int, int]) -> dict[int, int]:
    """Each account's net coin change in a match (``coin_changes``: seat -> change)."""
    by_account: dict[int, int] = {}
    for seat, change in (coin_changes or {}).items():
        account = account_of.get(int(seat))
        if account is not None:
            by_account[account] = by_account.get(account, 0) + int(change)
    return by_account


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


@dataclass(frozen=True, slots=True)
class Take:
    """What one account took from new accounts in one match: coins, wins and the new losers."""

    coins: int = 0
    wins: int = 0
    losers: tuple[int, ...] = ()


def takes_from_new_accounts(
    wins: Iterable[tuple[int, int]],
    flows: Mapping[tuple[int, int], int],
    standing: Mapping[int, Standing],
    rules: IntegrityRules,
    when: datetime,
) -> dict[int, Take]:
    """winner -> his take in one match from the losers that were new accounts (``standing`` before it)."""
    won = set(wins)
    taken: dict[int, Take] = {}
    for winner, loser in sorted(won | set(flows)):
        found = standing.get(loser)
        if found is None or not found.is_new(rules, when):
            continue
        take = taken.get(winner, Take())
        taken[winner] = Take(
            take.coins + flows.get((winner, loser), 0), take.wins + ((winner, loser) in won), (*take.losers, loser)
        )
    return taken


def inflow_tripped(losers: int, coins: int, rules: IntegrityRules) -> bool:
    """Whether a day's take from new accounts (``losers`` of them, ``coins``) is reported."""
    return losers >= rules.new_inflow_accounts or coins >= rules.new_inflow_coins


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


# ---------------------------------------------------------------------- the wording of warnings and flags


@dataclass(frozen=True, slots=True)
class PlayerWarning:
    """A warning's English text and what the web client needs to word it in the player's language."""

    kind: str
    text: str
    params: dict[str, Any]


def quick_wins_warning(
    winner: str | None, loser: str | None, count: int, day: str, rules: IntegrityRules
) -> PlayerWarning | None:
    """The warning at exactly ``quick_wins_warning`` quick wins of one pair in a day (None otherwise)."""
    if count != rules.quick_wins_warning:
        return None
    text = (
        f"{winner} has won {count} matches quickly against {loser} today ({day}): under "
        f"{rules.rated_min_bouts} bouts or {rules.rated_min_seconds:g} seconds, or by leaving. Repeated quick "
        f"wins between the same accounts look like coin or rating farming; at {rules.quick_wins_report} the "
        "matches are reported to the admins (docs/integrity.md)."
    )
    params: dict[str, Any] = {
        "winner": winner,
        "loser": loser,
        "count": count,
        "day": day,
        "bouts": rules.rated_min_bouts,
        "seconds": rules.rated_min_seconds,
        "report_at": rules.quick_wins_report,
    }
    return PlayerWarning("quick_wins", text, params)


def quick_wins_summary(winner: str | None, loser: str | None, count: int, day: str, rules: IntegrityRules) -> str:
    return (
        f"{winner} won {count} matches quickly against {loser} on {day} (under {rules.rated_min_bouts} "
        f"bouts or {rules.rated_min_seconds:g} s, or by {loser} leaving)."
    )


def pair_cap_summary(a: str | None, b: str | None, *, moved: int, stake: int, day: str, rules: IntegrityRules) -> str:
    return (
        f"{a} and {b} reached the daily cap of {rules.pair_daily_coin_cap} coins "
        f"moved between them on {day}: {moved} moved, a table at stake {stake} was refused."
    )


def inflow_summary(
    winner: str | None, *, coins: int, wins: int, losers: Iterable[str], day: str, rules: IntegrityRules
) -> str:
    names = list(losers)
    return (
        f"{winner} took {coins} coins and {wins} wins from {len(names)} new accounts (younger than "
        f"{rules.new_account_days:g} days or in their first {rules.new_account_matches} matches) on {day}: "
        f"{', '.join(names)}."
    )


def soft_play_summary(
    player: str | None, target: str | None, mine: tuple[int, int], others: tuple[int, int], z: float
) -> str:
    return (
        f"{player} passed up {mine[1]} of {mine[0]} legal throw-ins against {target} ({mine[1] / mine[0]:.0%}) "
        f"but {others[1]} of {others[0]} against others ({others[1] / others[0]:.0%}); z = {z:.1f}."
    )


def private_staked_summary(a: str | None, b: str | None, matches: int, rules: IntegrityRules) -> str:
    return (
        f"{a} and {b} played {matches} staked matches together at private tables in {rules.private_staked_days} days."
    )
