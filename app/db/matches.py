"""Match history: record a finished match, list a player's matches, load one for detail or replay.

The history never holds a table's invite or watch code: ``table_id`` is ``table_ref(code)``, an
opaque id that groups a table's matches. A private table's matches are visible only to the accounts
that played them and to admins (``visible_to``).

Every dealt match is recorded, however it ends (docs/fairness.md): its deal is written at the deal
(``record_deal``: a ``live_matches`` row) and removed in the transaction that records the match, so
a match that never ends — its table closed mid-match, its server restarted — is still there to be
recorded as aborted with its deal revealed (``aborted_record``; ``app.db.recovery``).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from sqlalchemy import ColumnElement, delete, exists, func, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, selectinload

from app.db import integrity, integrity_watch, ratings
from app.db.base import utcnow
from app.db.errors import MatchConflict
from app.db.models import LiveMatch, Match, MatchPlayer
from app.integrity_policy import MatchFacts
from app.tables import spec
from app.tables.results import aborted_result
from app.tables.spec import AbortReason

if TYPE_CHECKING:
    from app.engine.fairness import FairnessRecord

BotLevel = Literal["easy", "normal", "hard"]


@dataclass(frozen=True, slots=True)
class MatchRecord:
    """Everything ``record_match`` needs, to record a match together with settling."""

    match_id: str
    table_id: str
    rules: dict[str, Any]
    seed: int | str
    dealer: int
    seats: Sequence[Mapping[str, Any]]
    actions: Sequence[Mapping[str, Any]]
    result: Mapping[str, Any]
    created_at: datetime
    finished_at: datetime | None = None
    coin_changes: Mapping[int, int] | None = None
    fairness: Mapping[str, Any] | None = None  # the revealed deal (docs/fairness.md)
    private: bool = False
    # The integrity facts (docs/integrity.md): whether the match may move ratings, the farming watch.
    # None (a record made outside a table): rated as before, not watched.
    integrity: MatchFacts | None = None


table_ref = spec.table_ref  # the tables name a table so in its deals (docs/fairness.md)


def visible_to(viewer_id: int | None, *, is_admin: bool) -> ColumnElement[bool]:
    """The matches a viewer may see: every public match, and the private ones he played (all for
    admins). ``viewer_id`` None is an anonymous visitor or a guest."""
    if is_admin:
        return true()
    public = Match.private.is_(False)
    if viewer_id is None:
        return public
    seat = aliased(MatchPlayer)  # its own alias: the listing by account joins match_players too
    return or_(public, exists().where(seat.match_id == Match.id, seat.account_id == viewer_id))


class SeatRecord(BaseModel):
    """One seat as stored in ``matches.seats``: exactly one of account, guest or bot sits in it."""

    model_config = ConfigDict(extra="forbid")

    seat: int = Field(ge=0, le=5)
    account_id: int | None = None
    guest_name: str | None = None
    bot_level: BotLevel | None = None
    display_name: str = Field(min_length=1, max_length=64)

    @model_validator(mode="after")
    def _one_occupant(self) -> SeatRecord:
        occupants = [self.account_id is not None, self.guest_name is not None, self.bot_level is not None]
        if sum(occupants) != 1:
            raise ValueError("a seat holds exactly one of account_id, guest_name or bot_level")
        return self


class ResultRecord(BaseModel):
    """``matches.result``, the engine's ``Outcome.to_json()``: whether it was a draw, the durak's seat,
    the seats in the order they went out, the places (groups of seats sharing a place, best first,
    the durak last), and the seat that forfeited with the reason."""

    model_config = ConfigDict(extra="allow")

    draw: bool = False
    durak: int | None = None
    order: list[int] = Field(default_factory=list)
    places: list[list[int]] = Field(default_factory=list)
    forfeit: int | None = None
    reason: str | None = None
    aborted: bool = False  # stopped without an outcome (``reason`` says why): no durak, no places

    @model_validator(mode="after")
    def _consistent(self) -> ResultRecord:
        if self.aborted:
            if self.draw or self.durak is not None or self.places or self.forfeit is not None:
                raise ValueError("an aborted match has no outcome: no draw, durak, places or forfeit")
            return self
        if self.draw and self.durak is not None:
            raise ValueError("a draw has no durak")
        if not self.draw and self.durak is None:
            raise ValueError("a match that is not a draw has a durak")
        placed = [seat for group in self.places for seat in group]
        if len(placed) != len(set(placed)) or len(self.order) != len(set(self.order)):
            raise ValueError("a seat appears twice in the finishing order or the places")
        return self

    def seats_named(self) -> set[int]:
        named = set(self.order) | {seat for group in self.places for seat in group}
        return named | {s for s in (self.durak, self.forfeit) if s is not None}

    def place_of(self) -> dict[int, int]:
        """Seat -> place (1 = first out; tied seats share the better place, as in the engine)."""
        result: dict[int, int] = {}
        place = 1
        for group in self.places:
            for seat in group:
                result[seat] = place
            place += len(group)
        return result


def _validated(
    seats: Sequence[Mapping[str, Any]], result: Mapping[str, Any], coin_changes: Mapping[int, int]
) -> tuple[list[SeatRecord], ResultRecord, dict[int, int]]:
    try:
        seat_rows = [SeatRecord.model_validate(dict(seat)) for seat in seats]
        result_row = ResultRecord.model_validate(dict(result))
    except ValidationError as exc:
        raise ValueError(str(exc)) from exc
    numbers = [seat.seat for seat in seat_rows]
    if len(numbers) < 2 or len(set(numbers)) != len(numbers):
        raise ValueError("a match has at least two seats, each numbered once")
    accounts = [seat.account_id for seat in seat_rows if seat.account_id is not None]
    if len(set(accounts)) != len(accounts):
        raise ValueError("an account sits in only one seat")
    named = result_row.seats_named()
    if not named <= set(numbers):
        raise ValueError(f"the result names seats {sorted(named - set(numbers))} that do not exist")
    changes = {int(seat): int(change) for seat, change in coin_changes.items()}
    by_seat = {seat.seat: seat for seat in seat_rows}
    for seat, change in changes.items():
        if seat not in by_seat:
            raise ValueError(f"coin change for seat {seat}, which does not exist")
        if change and by_seat[seat].account_id is None:
            raise ValueError(f"seat {seat} holds no account and cannot win or lose coins")
    if sum(changes.values()) != 0:
        raise ValueError("coin changes must add up to zero: a match only redistributes the stakes")
    return seat_rows, result_row, changes


async def record_match(session: AsyncSession, record: MatchRecord) -> Match:
    """Store a finished match and one ``match_players`` row per seat, and rate it when every seat is
    an account (``app.db.ratings``), all inside the caller's transaction. With ``record.integrity``
    (a match played at a table), a match too short to count or between related accounts is not rated
    (``app.db.integrity.may_rate``), and the farming watch counts it (``app.db.integrity_watch.after_match``);
    a match long enough (or one recorded without ``integrity``) counts for each account's
    ``counted_matches``.

    Idempotent by ``record.match_id``: recording the same match again returns the stored row;
    recording different data under the same id raises ``MatchConflict``. ``record.result`` is the
    engine's ``Outcome.to_json()``; ``record.coin_changes`` maps seat -> coins won (+) or lost (-),
    summing to zero. ``record.table_id`` is opaque (``table_ref``), never an invite code;
    ``record.private`` hides the match from all but its players and admins; ``record.fairness`` is
    the revealed deal of a provably fair match (docs/fairness.md).
    """
    match_id, table_id, rules, seed = record.match_id, record.table_id, record.rules, record.seed
    if not match_id or len(match_id) > 64 or not table_id or len(table_id) > 64:
        raise ValueError("match_id and table_id must be 1-64 characters")
    seat_rows, result_row, changes = _validated(record.seats, record.result, record.coin_changes or {})
    finished = record.finished_at or utcnow()
    stored_seats = [seat.model_dump() for seat in seat_rows]
    stored_changes = {str(seat.seat): changes.get(seat.seat, 0) for seat in seat_rows}

    existing = await session.get(Match, match_id)
    if existing is not None:
        if (
            existing.seats != stored_seats
            or existing.seed != str(seed)
            or existing.coin_changes != stored_changes
            or existing.table_id != table_id
            or existing.private != record.private
        ):
            raise MatchConflict(f"match {match_id} was already recorded with different data")
        return existing

    match = Match(
        id=match_id,
        table_id=table_id,
        private=record.private,
        created_at=record.created_at,
        finished_at=finished,
        rules=dict(rules),
        stake=int(rules.get("stake", 0) or 0),
        cheating=bool(rules.get("cheating", False)),
        seed=str(seed),
        dealer=int(record.dealer),
        seats=stored_seats,
        actions=[dict(action) for action in record.actions],
        result=result_row.model_dump(exclude=set() if result_row.aborted else {"aborted"}),
        coin_changes=stored_changes,
        fairness=dict(record.fairness) if record.fairness is not None else None,
    )
    session.add(match)
    await session.execute(delete(LiveMatch).where(LiveMatch.match_id == match_id))  # recorded: no longer live
    await session.flush()
    places = result_row.place_of()
    for seat in seat_rows:
        session.add(
            MatchPlayer(
                match_id=match_id,
                seat=seat.seat,
                account_id=seat.account_id,
                display_name=seat.display_name,
                place=places.get(seat.seat),
                coin_change=changes.get(seat.seat, 0),
                finished_at=finished,
            )
        )
    await session.flush()
    facts = None if result_row.aborted else record.integrity  # an aborted match counts for nothing
    accounts = {seat.seat: seat.account_id for seat in seat_rows if seat.account_id is not None}
    standing = await integrity.standings(session, accounts.values()) if facts is not None else {}
    rated = not result_row.aborted and (
        facts is None or await integrity.may_rate(session, facts, accounts, result_row.forfeit, standing)
    )
    if rated:
        await ratings.rate_match(
            session,
            match_id=match_id,
            accounts={seat.seat: seat.account_id for seat in seat_rows},
            draw=result_row.draw,
            durak=result_row.durak,
            places=result_row.places,
            finished_at=finished,
        )
    if facts is not None:
        await integrity_watch.after_match(session, match, facts, standing)
    if facts is None or facts.long_enough:  # a match that counts (new accounts: docs/integrity.md)
        await integrity.count_matches(session, accounts.values())
    return match


async def list_matches(
    session: AsyncSession,
    *,
    account_id: int | None,
    viewer_id: int | None,
    viewer_is_admin: bool,
    offset: int,
    limit: int,
) -> tuple[list[Match], int]:
    """Matches the viewer may see (``visible_to``), newest first, optionally only those
    ``account_id`` played; plus their total count."""
    visible = visible_to(viewer_id, is_admin=viewer_is_admin)
    if account_id is None:
        total = await session.scalar(select(func.count()).select_from(Match).where(visible))
        ids_query = select(Match.id).where(visible).order_by(Match.finished_at.desc(), Match.id.desc())
    else:
        played = (
            select(MatchPlayer.match_id)
            .join(Match, Match.id == MatchPlayer.match_id)
            .where(MatchPlayer.account_id == account_id, visible)
        )
        total = await session.scalar(select(func.count()).select_from(played.subquery()))
        ids_query = played.order_by(MatchPlayer.finished_at.desc(), MatchPlayer.match_id.desc())
    ids = list((await session.scalars(ids_query.offset(offset).limit(limit))).all())
    if not ids:
        return [], int(total or 0)
    rows = (await session.scalars(select(Match).where(Match.id.in_(ids)).options(selectinload(Match.players)))).all()
    by_id = {row.id: row for row in rows}
    return [by_id[i] for i in ids if i in by_id], int(total or 0)


async def get_match(
    session: AsyncSession, match_id: str, *, viewer_id: int | None, viewer_is_admin: bool
) -> Match | None:
    """The match, or None when there is none or the viewer may not see it (``visible_to``)."""
    return await session.scalar(
        select(Match)
        .where(Match.id == match_id, visible_to(viewer_id, is_admin=viewer_is_admin))
        .options(selectinload(Match.players))
    )


# ---------------------------------------------------------------------- matches dealt, not yet recorded

ABORT_EVICTED = AbortReason.TABLE_CLOSED
ABORT_RESTART = AbortReason.SERVER_RESTART


def _deal_pad(secret: str, match_id: str) -> bytes:
    return hmac.new(secret.encode(), b"durak-live-deal:" + match_id.encode(), hashlib.sha256).digest()


def seal_deal(fairness: Mapping[str, Any], match_id: str, secret: str) -> dict[str, Any]:
    """A running match's deal as ``live_matches`` keeps it: its public part (commitment, client
    seeds, ...) and its server seed sealed with the server's secret key (XOR with a pad derived from
    the key and the match id), without the deck: no log line, database dump or SQL console shows the
    cards of a match being played."""
    seed = bytes.fromhex(str(fairness["server_seed"]))
    pad = _deal_pad(secret, match_id)
    kept = {key: value for key, value in fairness.items() if key not in ("server_seed", "deck")}
    return {**kept, "sealed_server_seed": bytes(a ^ b for a, b in zip(seed, pad, strict=True)).hex()}


def unseal_deal(sealed: Mapping[str, Any], match_id: str, secret: str) -> FairnessRecord:
    """The revealed deal (docs/fairness.md) of a deal kept by ``seal_deal``; ``ValueError`` when the
    key is not the one it was sealed with (the commitment would not match)."""
    from app.engine import fairness

    pad = _deal_pad(secret, match_id)
    seed = bytes(a ^ b for a, b in zip(bytes.fromhex(str(sealed["sealed_server_seed"])), pad, strict=True))
    table, number, size = str(sealed["table"]), int(sealed["match_number"]), int(sealed["deck_size"])
    seeds = [fairness.parse_client_seed(str(text)) for text in sealed["client_seeds"]]
    revealed = fairness.record(seed, table, number, size, seeds, fairness.deck_order(seed, table, number, size, seeds))
    if revealed["commitment"] != sealed.get("commitment"):
        raise ValueError(f"the deal of match {match_id} was sealed with another secret key")
    return revealed


class DealRecord(BaseModel):
    """What is kept of a match from its deal until it is recorded: enough to record it as aborted,
    its deal revealed. ``fairness`` is the deal as ``seal_deal`` keeps it."""

    model_config = ConfigDict(frozen=True)

    match_id: str = Field(min_length=1, max_length=64)
    table_id: str = Field(min_length=1, max_length=64)
    private: bool
    started_at: datetime
    rules: dict[str, Any]
    seats: list[dict[str, Any]]
    dealer: int
    fairness: dict[str, Any]


async def record_deal(session: AsyncSession, deal: DealRecord) -> None:
    """Keep a match that was just dealt until it is recorded (idempotent by match id)."""
    if await session.get(LiveMatch, deal.match_id) is not None:
        return
    if await session.get(Match, deal.match_id) is not None:
        return  # recorded already (a deal written again after a takeover)
    _validated(deal.seats, {"draw": True}, {})
    session.add(LiveMatch(**deal.model_dump()))
    await session.flush()


async def record_if_missing(session: AsyncSession, record: MatchRecord) -> None:
    """Record ``record`` unless a match with its id is recorded already (whatever it says)."""
    if await session.get(Match, record.match_id) is None:
        await record_match(session, record)


async def live_deals(session: AsyncSession) -> list[LiveMatch]:
    """Matches dealt and not recorded yet, oldest first."""
    return list((await session.scalars(select(LiveMatch).order_by(LiveMatch.started_at, LiveMatch.match_id))).all())


def aborted_record(live: LiveMatch, reason: str, secret: str, *, finished_at: datetime | None = None) -> MatchRecord:
    """The history record of a dealt match that never ended: its deal revealed (``secret``: the key
    it was sealed with), no moves (they were lost with the table), no outcome, no coins won or lost
    (its stakes are refunded)."""

    return MatchRecord(
        match_id=live.match_id,
        table_id=live.table_id,
        rules=dict(live.rules),
        seed=0,  # a fair deal's cards come from its deck
        dealer=live.dealer,
        seats=[dict(seat) for seat in live.seats],
        actions=[],
        result=aborted_result(reason),
        created_at=live.started_at,
        finished_at=finished_at or utcnow(),
        coin_changes={int(seat["seat"]): 0 for seat in live.seats},
        fairness=unseal_deal(live.fairness, live.match_id, secret),
        private=live.private,
    )
