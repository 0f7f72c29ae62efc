"""The seat commands on plain values: join, leave between matches, add and remove a bot, a client
seed, a rematch, ready (before a staked match) -- and a rematch proposal or a ready check that ran
out, and seats whose players were away from a waiting table too long.

Each one checks the command against the table as it is (:class:`SeatTable`), changes the seats
(``seating.py``) and the next deal's seeds (``fair.py``), and returns a :class:`SeatChange`: the
events, the answer's own fields, whether the match may start now and whose connections watch from
now on. The actor saves and announces the change as one version and then tries to start the match.
A leave while the player's match runs is a forfeit: that is the actor's (it goes to the engine).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from app.tables.commands import AddBot, ClientSeed, Join, Leave, Ready, Refused, Rematch, RemoveBot, SeatBody
from app.tables.deadlines import REMATCH_WINDOW_S
from app.tables.fair import FairDeals
from app.tables.hooks import MatchHooks
from app.tables.seating import Seating, require_creator
from app.tables.spec import Principal, TableSpec, TableStatus
from app.tables.table_events import TableEvent, seat_event

StartWhen = Literal["no", "if_ready", "if_ready_or_refuse"]


@dataclass
class SeatTable:
    """The parts of a table a seat command reads and changes (``now`` on the actor's clock)."""

    spec: TableSpec
    seating: Seating
    fair: FairDeals
    hooks: MatchHooks
    status: TableStatus
    stake: int
    now: float


@dataclass
class SeatChange:
    events: list[TableEvent]
    seat: int | None = None  # the seat taken (join, add_bot): the ack says which
    # After the change: "if_ready" tries to start the match (a refusal is only announced);
    # "if_ready_or_refuse" also answers the command with the refusal (the last rematch vote).
    start: StartWhen = "no"
    watching: list[Principal] = field(default_factory=list)  # players whose connections watch from now on
    # The table waits for players again (a new version, rules for all its seats): every seat agreed
    # to the rematch, or the proposal ran out.
    waiting: bool = False
    # Seats that confirm, by this change, that they are ready for a staked match (the ready check):
    # the player who fills the table, those who agreed to the rematch, a ``ready``.
    ready: list[int] = field(default_factory=list)


async def join(table: SeatTable, principal: Principal, command: Join) -> SeatChange:
    """A player takes a seat: the one he asked for, or the first free one. Sitting down after a
    match is agreeing to the next one."""
    seating, fair = table.seating, table.fair
    seating.may_sit(principal, table.status, table.stake)
    seed = fair.checked_client_seed(command.client_seed, command.commitment) if command.client_seed else None
    seating.free_seat(command.seat)  # no such seat, taken, full: refused before asking the database
    others = [s.principal.account_id for s in seating.seats if s.principal and s.principal.account_id is not None]
    if refusal := await table.hooks.may_sit(account_id=principal.account_id, others=others, stake=table.stake):
        raise Refused(*refusal)  # docs/integrity.md: frozen, related accounts, the pair's coin cap
    seat = seating.sit(principal, command.seat, command.rating)
    if seed is not None:
        fair.client_seeds[principal.key] = seed  # sitting down with a seed: before the match can start
    last_vote = table.status == TableStatus.FINISHED and _agree(table, seat.seat)
    event = seat_event(seat.seat, principal.name, "human")
    ready = _human_seats(table) if last_vote else [seat.seat]
    return SeatChange([event], seat.seat, start="if_ready", waiting=last_vote, ready=ready)


async def leave(table: SeatTable, principal: Principal, command: Leave) -> SeatChange:
    """A player gives up his seat between matches (declining a rematch); his connections watch."""
    seat = table.seating.seated(principal, "you have no seat at this table")
    if table.status == TableStatus.PLAYING:
        raise Refused("match_running", "you are already out; you can leave when the match ends")
    table.fair.forget(principal.key)  # his seed does not count for the next deal
    had_connections = table.seating.vacate(seat)
    return SeatChange([seat_event(seat.seat, None, "empty")], watching=[principal] if had_connections else [])


async def client_seed(table: SeatTable, principal: Principal, command: ClientSeed) -> SeatChange:
    """A seated player's own randomness for the next deal: accepted only between matches and only
    as an answer to the table's current commitment (the server is bound to its seed first)."""
    seat = table.seating.seated(principal, "only a player seated at this table contributes a client seed")
    if table.status == TableStatus.PLAYING:
        raise Refused("match_running", "the deal of this match is fixed; send a client seed for the next one")
    table.fair.client_seeds[principal.key] = table.fair.checked_client_seed(command.seed, command.commitment)
    start: StartWhen = "if_ready" if table.spec.deal_on_seed else "no"  # the seed this table waits for
    return SeatChange([{"type": "client_seed", "seat": seat.seat}], start=start)


async def add_bot(table: SeatTable, principal: Principal, command: AddBot) -> SeatChange:
    require_creator(table.spec, principal)
    seat = table.seating.seat_bot(command.level, command.seat, table.status, table.stake)
    return SeatChange([seat_event(seat.seat, seat.name, "bot")], seat.seat, start="if_ready")


async def remove_bot(table: SeatTable, principal: Principal, command: RemoveBot) -> SeatChange:
    require_creator(table.spec, principal)
    seat_no = table.seating.unseat_bot(command.seat, table.status)
    return SeatChange([seat_event(seat_no, None, "empty")])


async def rematch(table: SeatTable, principal: Principal, command: Rematch) -> SeatChange:
    """Proposing or agreeing to a rematch (§8, seating.py); it starts once every seat agreed."""
    seat = table.seating.seated(principal, "only a player seated at this table can ask for a rematch")
    if table.status != TableStatus.FINISHED:
        running = table.status == TableStatus.PLAYING
        raise Refused("match_running" if running else "no_match", "no finished match to rematch")
    proposal = table.seating.rematch
    if proposal is not None and seat.seat in proposal.agreed:
        return SeatChange([])  # asked again: nothing changes
    last_vote = _agree(table, seat.seat)
    ready = _human_seats(table) if last_vote else []
    return SeatChange(
        [{"type": "rematch", "seat": seat.seat}], start="if_ready_or_refuse", waiting=last_vote, ready=ready
    )


async def ready(table: SeatTable, principal: Principal, command: Ready) -> SeatChange:
    """A seated player confirms he is ready for the staked match the ready check is about (§8); it
    starts once every human seated has, each connected."""
    seat = table.seating.seated(principal, "only a player seated at this table confirms he is ready")
    if table.status != TableStatus.WAITING or table.seating.ready is None:
        raise Refused("no_ready_check", "there is no ready check to answer: the match is not about to start")
    if not seat.connections:
        raise Refused("not_connected", "open the table first: a player confirms he is ready with the table open")
    if not table.seating.confirm([seat.seat]):
        return SeatChange([])  # confirmed already
    return SeatChange([{"type": "ready", "seat": seat.seat}], start="if_ready", ready=[seat.seat])


def _human_seats(table: SeatTable) -> list[int]:
    return [seat.seat for seat in table.seating.seats if seat.kind == "human"]


def _agree(table: SeatTable, seat: int) -> bool:
    """``seat`` agrees to the rematch. Whether every seat has agreed now: the proposal has done its
    work and the table waits to start the match."""
    table.seating.agree(seat, table.now, REMATCH_WINDOW_S)
    if not table.seating.all_agreed():
        return False
    table.seating.rematch = None
    return True


def rematch_expired(table: SeatTable) -> SeatChange | None:
    """Nobody plays a match he did not agree to: the seats of those who did not agree in time are
    freed; the others keep theirs and the table waits for players again. None: nothing changes."""
    freed = table.seating.expire_rematch(finished=table.status == TableStatus.FINISHED)
    if freed is None:
        return None
    for _, principal, _ in freed:
        table.fair.forget(principal.key)
    watching = [principal for _, principal, had_connections in freed if had_connections]
    return SeatChange([seat_event(seat_no, None, "empty") for seat_no, *_ in freed], watching=watching, waiting=True)


def ready_expired(table: SeatTable) -> SeatChange | None:
    """Nobody is pulled into a staked match he did not confirm: when the ready check runs out, the
    seats of those who did not confirm (or are not connected) are freed; the table waits."""
    return _freed(table, table.seating.expire_ready_check())


def away_expired(table: SeatTable, away_s: float) -> SeatChange | None:
    """The seats of the players who have been away from the waiting table (no connection) for
    ``away_s`` are freed: nobody is dealt into a match he has left."""
    return _freed(table, table.seating.free_away(table.now, away_s))


def _freed(table: SeatTable, freed: list[tuple[int, Principal, bool]]) -> SeatChange | None:
    if not freed:
        return None
    for _, principal, _ in freed:
        table.fair.forget(principal.key)  # his seed does not count for the next deal
    watching = [principal for _, principal, had_connections in freed if had_connections]
    return SeatChange([seat_event(seat_no, None, "empty") for seat_no, *_ in freed], watching=watching)


def may_start(table: SeatTable, principal: Principal) -> None:
    """The creator may start a waiting table before every seat is taken (a match needs two)."""
    require_creator(table.spec, principal)
    if table.status == TableStatus.PLAYING:
        raise Refused("match_running", "the match is already running")
    if table.status == TableStatus.FINISHED:
        raise Refused("match_over", "the match is over: a rematch starts when every player has asked for it")


SeatCommand = Callable[[SeatTable, Principal, Any], Awaitable[SeatChange]]
# The handler of each seat command, by the command's type.
SEAT_COMMANDS: dict[type[SeatBody], SeatCommand] = {
    Join: join,
    Leave: leave,
    ClientSeed: client_seed,
    AddBot: add_bot,
    RemoveBot: remove_bot,
    Rematch: rematch,
    Ready: ready,
}
