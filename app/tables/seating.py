"""Who sits where at a table and who is connected, on plain values.

:class:`Seating` holds the seats, the connections (a seated player's in his seat, the others'
as spectators), when each gone player left, the rematch proposal and the ready check before a
staked match (RULES §8), and since when each player seated at a waiting table has had no
connection. Its methods make the seat changes a command asks for, or refuse them with
:class:`Refused`; the actor saves and announces what changed. Nothing here waits or talks to anyone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.engine import Rules, RulesError
from app.tables.commands import Refused
from app.tables.spec import (
    BOT_LEVELS,
    Principal,
    ReadyCheck,
    RematchProposal,
    Seat,
    SeatRating,
    TableSpec,
    TableStatus,
)


def require_creator(spec: TableSpec, principal: Principal) -> None:
    if principal.key != spec.creator.key:
        raise Refused("not_creator", "only the table's creator can do that")


def is_seat_number(wanted: Any, seats: int) -> bool:
    return isinstance(wanted, int) and not isinstance(wanted, bool) and 0 <= wanted < seats


@dataclass
class Seating:
    seats: list[Seat]
    spectators: set[str] = field(default_factory=set)  # the connections that watch
    conn_owner: dict[str, str] = field(default_factory=dict)  # connection id -> principal key
    gone_since: dict[int, float] = field(default_factory=dict)  # seat -> when its player's last connection closed
    rematch: RematchProposal | None = None
    ready: ReadyCheck | None = None  # before a staked match: who confirmed, until when
    away_since: dict[int, float] = field(default_factory=dict)  # waiting table: seat -> no connection since
    series: dict[str, tuple[int, int]] = field(default_factory=dict)  # wins and losses at this table (series_key)

    def seat_of(self, principal: Principal) -> Seat | None:
        for seat in self.seats:
            if seat.principal is not None and seat.principal.key == principal.key:
                return seat
        return None

    def seated(self, principal: Principal, refusal: str) -> Seat:
        """The principal's seat, or ``not_seated`` with ``refusal`` as its message."""
        seat = self.seat_of(principal)
        if seat is None:
            raise Refused("not_seated", refusal)
        return seat

    # ------------------------------------------------------------------ connections

    def connect(self, conn: str | None, principal: Principal) -> tuple[Seat | None, bool]:
        """A connection said hello: (the principal's seat, whether the connection is new here)."""
        seat = self.seat_of(principal)
        arrived = bool(conn) and conn not in self.conn_owner
        if conn:
            self.conn_owner[conn] = principal.key
            if seat is not None:
                seat.connections.add(conn)
                self.gone_since.pop(seat.seat, None)
            else:
                self.spectators.add(conn)
        return seat, arrived

    def disconnect(self, conn: str, playing: bool, now: float) -> None:
        """A connection closed; a player of a running match with none left is gone from ``now``;
        between matches his confirmation in a ready check no longer holds (he is not there)."""
        self.spectators.discard(conn)
        self.conn_owner.pop(conn, None)
        for seat in self.seats:
            if conn in seat.connections:
                seat.connections.discard(conn)
                if not seat.connections and playing:
                    self.gone_since[seat.seat] = now
                elif not seat.connections and self.ready is not None:
                    self.ready.ready.discard(seat.seat)

    def players(self) -> tuple[tuple[int, str], ...]:
        """(seat, principal key) of each seated player with a connection: who hears a change."""
        return tuple(
            (seat.seat, seat.principal.key)
            for seat in self.seats
            if seat.kind == "human" and seat.principal is not None and seat.connections
        )

    # ------------------------------------------------------------------ taking and leaving seats

    def may_sit(self, principal: Principal, status: TableStatus, stake: int) -> None:
        """Refuse a player who cannot sit down at this table now."""
        if self.seat_of(principal) is not None:
            raise Refused("already_seated", "you already have a seat at this table")
        if status == TableStatus.PLAYING:
            raise Refused("match_running", "the match is running; join after it ends or watch")
        if stake > 0 and principal.is_guest:
            raise Refused("guests_free_tables_only", "guests can sit only at free tables; sign up to play for coins")

    def sit(self, principal: Principal, wanted: Any, rating: SeatRating | None) -> Seat:
        """Seat a player (``may_sit`` said yes) in the seat he asked for or the first free one; his
        connections stop watching. ``rating`` (as the command carried it) is kept for accounts only."""
        seat = self.free_seat(wanted)
        self.ready = None  # a seat changed: a ready check open now is over (a new one may open)
        seat.kind, seat.principal, seat.level = "human", principal, None
        seat.rating = None
        if rating is not None and principal.account_id is not None:
            seat.rating = {"rating": rating["rating"]}
            if "provisional" in rating:
                seat.rating["provisional"] = bool(rating["provisional"])
        seat.connections = {c for c, key in self.conn_owner.items() if key == principal.key}
        self.spectators -= seat.connections
        return seat

    def free_seat(self, wanted: Any) -> Seat:
        if wanted is not None:
            if not is_seat_number(wanted, len(self.seats)):
                raise Refused("bad_seat", f"there is no seat {wanted!r} at this table")
            seat: Seat = self.seats[wanted]
            if seat.kind != "empty":
                raise Refused("seat_taken", f"seat {wanted} is taken")
            return seat
        for seat in self.seats:
            if seat.kind == "empty":
                return seat
        raise Refused("table_full", "every seat at this table is taken")

    def vacate(self, seat: Seat) -> bool:
        """Free a player's seat between matches; his connections watch from now on. Whether he had any."""
        moved, self.spectators = seat.connections, self.spectators | seat.connections
        seat.kind, seat.principal, seat.connections, seat.rating = "empty", None, set(), None
        if self.rematch is not None:
            self.rematch.agreed.discard(seat.seat)
        self.ready = None
        self.away_since.pop(seat.seat, None)
        return bool(moved)

    def seat_bot(self, level: Any, wanted: Any, status: TableStatus, stake: int) -> Seat:
        if status == TableStatus.PLAYING:
            raise Refused("match_running", "bots can be seated only between matches")
        if level not in BOT_LEVELS:
            raise Refused("bad_level", f"bot level must be one of {', '.join(BOT_LEVELS)}")
        if stake > 0:
            raise Refused("bots_free_tables_only", "bots hold no coins: they sit only at free tables")
        seat = self.free_seat(wanted)
        self.ready = None
        seat.kind, seat.principal, seat.level = "bot", None, str(level)
        return seat

    def unseat_bot(self, wanted: Any, status: TableStatus) -> int:
        if status == TableStatus.PLAYING:
            raise Refused("match_running", "bots can be removed only between matches")
        if not isinstance(wanted, int) or not 0 <= wanted < len(self.seats) or self.seats[wanted].kind != "bot":
            raise Refused("bad_seat", f"there is no bot in seat {wanted!r}")
        self.seats[wanted].kind, self.seats[wanted].level = "empty", None
        return wanted

    # ------------------------------------------------------------------ a match's seats

    def for_match(self, rules: Rules) -> Rules:
        """Close the gaps before a match: the taken seats, renumbered in order, and the rules for
        that many players (a match needs two)."""
        taken = [seat for seat in self.seats if seat.kind != "empty"]
        if len(taken) < 2:
            raise Refused("not_enough_players", "a match needs at least 2 seated players")
        if len(taken) == len(self.seats):
            return rules
        try:
            rules = rules.with_changes(seats=len(taken))
        except RulesError as exc:
            raise Refused("bad_rules", str(exc)) from exc
        self.seats = [Seat(i, s.kind, s.principal, s.level, s.connections) for i, s in enumerate(taken)]
        return rules

    def stake_accounts(self) -> list[int]:
        """The accounts that pay a staked match's stakes, one per seat."""
        accounts = [s.principal.account_id for s in self.seats if s.principal and s.principal.account_id is not None]
        if len(accounts) != len(self.seats):
            raise Refused("guests_free_tables_only", "every seat at a staked table needs an account")
        return accounts

    def account_ids(self) -> list[int]:
        """The accounts seated (guests and bots have none)."""
        return [s.principal.account_id for s in self.seats if s.principal and s.principal.account_id is not None]

    def match_started(self) -> None:
        """A match started: no rematch or ready check is open, nobody is gone or away yet."""
        self.rematch = None
        self.ready = None
        self.gone_since.clear()
        self.away_since.clear()

    def enough_players(self) -> None:
        """Refuse a match (or its ready check) with fewer than two seated."""
        if sum(1 for seat in self.seats if seat.kind != "empty") < 2:
            raise Refused("not_enough_players", "a match needs at least 2 seated players")

    # ------------------------------------------------------------------ between matches (RULES §8)
    # Before a staked match every human seated must be connected and confirm: the ready check opens
    # when the match would start (the last seat fills, the creator starts early, every seat agreed
    # to a rematch), with the confirmations that came with that (the player who filled the table,
    # the creator who pressed start, the players who agreed to the rematch) if they are connected.
    # A confirmation lapses when its player's last connection closes; any seat change ends the
    # check. When it runs out, the seats of those who have not confirmed are freed.

    def open_ready_check(self, now: float, window_s: float, ready: list[int]) -> ReadyCheck:
        self.ready = ReadyCheck(deadline=now + window_s)
        self.confirm(ready)
        return self.ready

    def confirm(self, seats: list[int]) -> list[int]:
        """Seats confirm they are ready (those connected); the ones newly confirmed."""
        check = self.ready
        if check is None:
            return []
        new = [n for n in seats if n not in check.ready and self.seats[n].kind == "human" and self.seats[n].connections]
        check.ready.update(new)
        return new

    def everyone_ready(self) -> bool:
        """Every human seated is connected and has confirmed."""
        check = self.ready
        return check is not None and all(
            seat.connections and seat.seat in check.ready for seat in self.seats if seat.kind == "human"
        )

    def expire_ready_check(self) -> list[tuple[int, Principal, bool]]:
        """The check ran out: the seats of those who did not confirm (or are not connected) are
        freed; for each, (seat, player, whether he had connections)."""
        check, self.ready = self.ready, None
        if check is None:
            return []
        freed: list[tuple[int, Principal, bool]] = []
        for seat in self.seats:
            confirmed = seat.seat in check.ready and seat.connections
            if seat.kind == "human" and seat.principal is not None and not confirmed:
                principal = seat.principal
                freed.append((seat.seat, principal, self.vacate(seat)))
        return freed

    def sync_away(self, now: float) -> None:
        """At a waiting table: since when each seated player has had no connection (from ``now``
        for those just found without one)."""
        for seat in self.seats:
            if seat.kind == "human" and not seat.connections:
                self.away_since.setdefault(seat.seat, now)
            else:
                self.away_since.pop(seat.seat, None)

    def free_away(self, now: float, away_s: float) -> list[tuple[int, Principal, bool]]:
        """Free the seats of the players away from a waiting table for ``away_s`` by ``now``."""
        freed: list[tuple[int, Principal, bool]] = []
        for seat in self.seats:
            since = self.away_since.get(seat.seat)
            if since is not None and since + away_s <= now and seat.principal is not None:
                principal = seat.principal
                freed.append((seat.seat, principal, self.vacate(seat)))
        return freed

    def due(self, away_s: float) -> float | None:
        """The earliest deadline between matches: the rematch proposal's, the ready check's, or
        when the first away player loses his seat."""
        dues = [min(self.away_since.values()) + away_s] if self.away_since else []
        if self.rematch is not None:
            dues.append(self.rematch.deadline)
        if self.ready is not None:
            dues.append(self.ready.deadline)
        return min(dues, default=None)

    # ------------------------------------------------------------------ rematch (RULES §8)
    # The first ``rematch`` after a match opens a proposal, every seated player agrees with his own
    # (bots agree by themselves, a player who sits down in a free seat agrees by sitting), and the
    # match starts -- and takes the stakes -- only when every seat is taken by someone who agreed.
    # ``leave`` declines. When the window closes, the seats of those who have not agreed are freed.

    def agree(self, seat: int, now: float, window_s: float) -> None:
        if self.rematch is None:
            self.rematch = RematchProposal(deadline=now + window_s)
        self.rematch.agreed.add(seat)

    def all_agreed(self) -> bool:
        """Every seat agreed to the proposed rematch: it starts."""
        return self.rematch is not None and len(self.agreed()) >= len(self.seats)

    def agreed(self) -> list[int]:
        """The seats that agreed to the proposed rematch, bots included."""
        agreed = self.rematch.agreed if self.rematch is not None else set()
        return [s.seat for s in self.seats if s.kind == "bot" or (s.kind == "human" and s.seat in agreed)]

    def expire_rematch(self, finished: bool) -> list[tuple[int, Principal, bool]] | None:
        """The proposal's window closed: it is dropped and, after a match (``finished``), the seats
        of the players who did not agree are freed. For each, (seat, player, whether he had
        connections); None when nothing was freed because there was no proposal or no match over."""
        proposal, self.rematch = self.rematch, None
        if proposal is None or not finished:
            return None
        freed: list[tuple[int, Principal, bool]] = []
        for seat in self.seats:
            if seat.kind == "human" and seat.principal is not None and seat.seat not in proposal.agreed:
                principal = seat.principal
                freed.append((seat.seat, principal, self.vacate(seat)))
        return freed
