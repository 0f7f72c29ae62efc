"""What a table needs from the rest of the server when a match starts and ends.

The actor calls these; ``app.db.table_hooks`` implements them on the ledger and match history.
``MemoryHooks`` keeps everything in memory (tests, and tables with no database).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, TypedDict

from app.engine import ActionJson, OutcomeJson, RulesJson
from app.engine.fairness import FairnessRecord


class CannotStart(Exception):
    """A match could not start (a player cannot pay the stake...). ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class SeatRecord(TypedDict):
    """Who sat in a seat of a match, as its record keeps it (one of account, guest or bot)."""

    seat: int
    account_id: int | None
    guest_name: str | None
    bot_level: str | None
    display_name: str


class AbortedOutcome(TypedDict):
    """The ``outcome`` of a match stopped without one (its table closed mid-match)."""

    draw: bool
    durak: int | None
    order: list[int]
    places: list[list[int]]
    forfeit: int | None
    reason: str
    aborted: bool


class RatingChange(TypedDict):
    """What a match did to a seat's ratings: all time, and in the season (None: not rated in one)."""

    rating: int
    change: int
    provisional: bool
    season_rating: int | None
    season_change: int | None


@dataclass(frozen=True, slots=True)
class FinishedMatch:
    match_id: str
    table_code: str
    rules: RulesJson
    seed: str
    dealer: int
    seats: list[SeatRecord]
    actions: list[ActionJson]
    outcome: OutcomeJson | AbortedOutcome
    stake: int
    payouts: dict[int, int]  # account id -> coins paid out of escrow
    coin_changes: dict[int, int]  # seat -> net change
    hands: list[list[str]]
    fairness: FairnessRecord | None = None  # the revealed deal (docs/fairness.md)
    private: bool = False  # a private table: its history is shown only to its players and admins
    started_at: float | None = None  # when the match was dealt (epoch seconds, kept across takeovers)


@dataclass(frozen=True, slots=True)
class DealtMatch:
    """A match just dealt: what keeps it from going unrevealed should it never end (docs/fairness.md).
    ``fairness`` is its whole deal, the server seed included (the server's own record)."""

    match_id: str
    table_code: str
    rules: RulesJson
    seats: list[SeatRecord]
    dealer: int
    fairness: FairnessRecord
    private: bool = False


class MatchHooks(Protocol):
    async def may_sit(self, *, account_id: int | None, others: list[int], stake: int) -> tuple[str, str] | None:
        """Why this account may not sit down with the accounts seated already, as ``(code, message)``
        (a staked table: frozen staked play, related accounts, the pair's daily coin cap); None: it may."""

    async def match_started(self, *, match_id: str, stake: int, account_ids: list[int]) -> None:
        """A match is dealt (every match, free ones too: ``account_ids`` are then the accounts
        seated): note when; at a staked table move every stake into the match's escrow, all or
        none; raise ``CannotStart``."""

    async def match_dealt(self, deal: DealtMatch) -> None:
        """Keep the deal of a match that starts now until the match is recorded; raise when it
        cannot be kept (the match is then not dealt)."""

    async def match_finished(self, match: FinishedMatch) -> dict[int, RatingChange] | None:
        """Settle the escrow and record the match (an aborted one, its outcome ``aborted``: refund
        every stake and record it). Idempotent by ``match_id``. May answer what the match did to the
        seats' ratings (seat -> ``{rating, change, provisional, season_rating, season_change}``),
        which the table adds to its results; None: nothing to tell."""

    async def match_abandoned(self, *, match_id: str) -> None:
        """Refund every stake of a match that cannot go on."""


@dataclass
class MemoryHooks:
    """In-memory stand-in with the same contract: balances per account, one settlement per match."""

    balances: dict[int, int] = field(default_factory=dict)
    escrows: dict[str, dict[int, int]] = field(default_factory=dict)
    finished: dict[str, FinishedMatch] = field(default_factory=dict)
    refunded: set[str] = field(default_factory=set)
    related: set[frozenset[int]] = field(default_factory=set)  # pairs of related accounts
    dealt: dict[str, DealtMatch] = field(default_factory=dict)  # dealt, not recorded yet

    async def may_sit(self, *, account_id: int | None, others: list[int], stake: int) -> tuple[str, str] | None:
        if stake > 0 and account_id is not None and any(frozenset((account_id, o)) in self.related for o in others):
            return "related_accounts", "related accounts may play each other at free tables only"
        return None

    async def match_started(self, *, match_id: str, stake: int, account_ids: list[int]) -> None:
        if match_id in self.escrows or stake <= 0:
            return
        for account in account_ids:
            if self.balances.get(account, 0) < stake:
                raise CannotStart("insufficient_funds", f"account {account} cannot cover the stake of {stake}")
        for account in account_ids:
            self.balances[account] = self.balances.get(account, 0) - stake
        self.escrows[match_id] = dict.fromkeys(account_ids, stake)

    async def match_dealt(self, deal: DealtMatch) -> None:
        if deal.match_id not in self.finished:
            self.dealt[deal.match_id] = deal

    async def match_finished(self, match: FinishedMatch) -> dict[int, RatingChange] | None:
        if match.match_id in self.finished or match.match_id in self.refunded:
            return None
        self.dealt.pop(match.match_id, None)
        if match.outcome.get("aborted"):
            for account, coins in self.escrows.get(match.match_id, {}).items():
                self.balances[account] = self.balances.get(account, 0) + coins
            self.finished[match.match_id] = match
            return None
        escrow = self.escrows.get(match.match_id, {})
        if sum(match.payouts.values()) != sum(escrow.values()):
            raise ValueError("payouts do not add up to the escrow")
        for account, coins in match.payouts.items():
            self.balances[account] = self.balances.get(account, 0) + coins
        self.finished[match.match_id] = match
        return None

    async def match_abandoned(self, *, match_id: str) -> None:
        if match_id in self.finished or match_id in self.refunded:
            return
        for account, coins in self.escrows.get(match_id, {}).items():
            self.balances[account] = self.balances.get(account, 0) + coins
        self.refunded.add(match_id)
