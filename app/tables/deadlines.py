"""When a table must act without a command (§8, §9), computed from plain values.

The move timer, each waited-for player's idle limit or disconnect grace, the challenge window and a
rematch proposal's end. The actor keeps the moments (on its own clock) in a :class:`TableTimers`
and asks it, and these functions, which comes next, what each seat is shown and what a seat whose
time ran out does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from app.engine import Action, Forfeit, ForfeitReason, State, decision, legal_actions, timeout_actions
from app.engine.state import CHALLENGE
from app.tables.spec import DeadlineKind, DecisionLimits, Seat, TableStatus

REMATCH_WINDOW_S = 60.0  # how long a rematch proposal waits for every player's agreement (§8)
RETRY_S = 1.0  # storage unreachable: try the timer or a bot again after this long
START_AGAIN_S = 2.0  # a deal that could not be kept (storage unreachable): dealt again after this long

DueTimes = dict[int, tuple[float, DeadlineKind]]  # seat -> when its decision is due, and why


@dataclass(frozen=True, slots=True)
class Timers:
    """The move timer (or challenge window) and when the current decision came."""

    deadline: float | None  # the move timer, or the close of the challenge window
    since: float | None  # when the decision came (idle limits and graces run from it)
    window_closes: float | None  # cheating tables: when the open challenge window closes


def timers_after_change(
    game: State | None,
    status: TableStatus,
    timer_s: int,
    limits: DecisionLimits,
    window_closes: float | None,
    now: float,
) -> Timers:
    """After every change: the decision that came with it gets its full time."""
    if status == TableStatus.PLAYING and game is not None and game.phase == CHALLENGE:
        # The challenge window (§9) runs from its opening, with or without a move timer; passes on
        # it do not extend it. When it closes, ``timeout_actions`` passes for everyone left. It
        # never forfeits anyone, so no idle limit or grace runs during it (no ``decision_since``).
        closes = window_closes if window_closes is not None else now + limits.challenge_window_s
        return Timers(closes, None, closes)
    if status == TableStatus.PLAYING and game is not None and game.outcome is None:
        return Timers(now + timer_s if timer_s > 0 else None, now, None)
    return Timers(None, None, None)


def decision_limits(
    seats: list[Seat],
    deciding: list[int],
    since: float | None,
    gone_since: dict[int, float],
    limits: DecisionLimits,
    retry_at: float | None,
) -> DueTimes:
    """For each player the match waits for: when he runs out of time for this decision besides
    the move timer, and why (§8). Connected: the idle limit after the decision came ("idle").
    Not connected (never, or gone): the disconnect grace from when the decision came or when he
    went, whichever is later ("grace"), and never past the idle limit. Not before ``retry_at``."""
    if since is None:
        return {}
    out: DueTimes = {}
    for seat_no in deciding:
        seat = seats[seat_no]
        if seat.kind != "human":
            continue  # bots answer by themselves
        idle_at = since + limits.idle_limit_s
        when, why = idle_at, DeadlineKind.IDLE
        if not seat.connections:
            grace_at = max(since, gone_since.get(seat_no, since)) + limits.disconnect_grace_s
            if grace_at < idle_at:
                when, why = grace_at, DeadlineKind.GRACE
        if retry_at is not None and when < retry_at:
            when = retry_at
        out[seat_no] = (when, why)
    return out


def shown_deadlines(
    own_limits: DueTimes, deciding: list[int], deadline: float | None
) -> DueTimes:
    """When each seat the match waits for must have decided, whichever comes first of the move
    timer ("timer") and its own limit ("idle" / "grace"): what the players are shown."""
    shown = dict(own_limits)
    if deadline is not None:
        for seat_no in deciding:
            limit = shown.get(seat_no)
            if limit is None or deadline <= limit[0]:
                shown[seat_no] = (deadline, DeadlineKind.TIMER)
    return shown


def next_deadline(
    own_limits: DueTimes, deadline: float | None, rematch_deadline: float | None
) -> float | None:
    """The earliest moment something must happen without a command."""
    dues = [when for when, _ in own_limits.values()]
    if deadline is not None:
        dues.append(deadline)
    if rematch_deadline is not None:
        dues.append(rematch_deadline)
    return min(dues, default=None)


def first_overdue(own_limits: DueTimes, now: float) -> tuple[int, ForfeitReason] | None:
    """The seat whose own limit ran out first, and the forfeit reason ("disconnected" / "timeout")."""
    overdue = sorted((when, seat_no, why) for seat_no, (when, why) in own_limits.items() if when <= now)
    if not overdue:
        return None
    _, seat_no, why = overdue[0]
    return seat_no, "disconnected" if why == DeadlineKind.GRACE else "timeout"


def still_applies(game: State, action: Action) -> bool:
    """Whether a move timer's timeout action (one of ``timeout_actions``) may still be applied to
    ``game``, after the ones applied before it."""
    return action in legal_actions(game, action.seat) or isinstance(action, Forfeit)


def ran_out_action(game: State, seat_no: int, reason: ForfeitReason) -> Action | None:
    """What a seat whose idle limit or grace ran out does (§8): it forfeits a lead or a defence
    (for ``reason``), and passes on a throw-in, as when the move timer runs out. None: nothing to do."""
    action = next((a for a in timeout_actions(game) if a.seat == seat_no), None)
    if isinstance(action, Forfeit):
        return Forfeit(seat_no, reason)
    if action is None or action not in legal_actions(game, seat_no):
        return None
    return action


@dataclass
class TableTimers:
    """A table's moments, on its actor's clock. ``game`` arguments are the running match's state,
    None when no match runs."""

    deadline: float | None = None  # the move timer (tables with a timer), or the challenge window's close
    decision_since: float | None = None  # when the current decision came (the last move)
    window_closes: float | None = None  # cheating tables: when the open challenge window closes (§9)
    retry_at: float | None = None  # a timed-out decision could not be saved: retry then
    start_again_at: float | None = None  # a full table's deal could not be kept: dealt again then
    _deciding_of: State | None = None  # the game ``_deciding`` was computed for
    _deciding: list[int] = field(default_factory=list)

    def deciding(self, game: State | None) -> list[int]:
        """The seats the running match waits for (computed once per game state)."""
        if game is None:
            return []
        if self._deciding_of is not game:
            self._deciding_of, self._deciding = game, decision(game)["seats"]
        return self._deciding

    def own_limits(
        self, game: State | None, seats: list[Seat], gone_since: dict[int, float], limits: DecisionLimits
    ) -> DueTimes:
        """Each waited-for player's idle limit or grace (:func:`decision_limits`)."""
        if self.decision_since is None:
            return {}
        return decision_limits(seats, self.deciding(game), self.decision_since, gone_since, limits, self.retry_at)

    def shown(self, own_limits: DueTimes, game: State | None) -> DueTimes:
        return shown_deadlines(own_limits, self.deciding(game), self.deadline)

    def next(self, own_limits: DueTimes, rematch_deadline: float | None) -> float | None:
        due = next_deadline(own_limits, self.deadline, rematch_deadline)
        if self.start_again_at is not None and (due is None or self.start_again_at < due):
            return self.start_again_at
        return due

    def reset(self, game: State | None, status: TableStatus, timer_s: int, limits: DecisionLimits, now: float) -> None:
        """After every change: the decision that came with it gets its full time."""
        self.retry_at = None
        timers = timers_after_change(game, status, timer_s, limits, self.window_closes, now)
        self.deadline, self.decision_since, self.window_closes = timers.deadline, timers.since, timers.window_closes

    def taken_over(self, game: State | None, deadline: float | None, now: float) -> None:
        """A running match restored by a new owner: the move timer goes on from ``deadline``; idle
        limits and graces start again."""
        self.decision_since, self.deadline = now, deadline
        if deadline is not None and game is not None and game.phase == CHALLENGE:
            self.window_closes = deadline

    def deadline_epoch(self, now: float) -> float | None:
        """The move timer's deadline in epoch seconds (saved with the table), ``now`` on this clock."""
        return None if self.deadline is None else time.time() + (self.deadline - now)

    def due_actions(
        self, game: State, own_limits: DueTimes, now: float
    ) -> tuple[list[Action], bool]:
        """What the running match's due deadlines do at ``now``, and whether it is the move timer's:
        a seat whose idle limit or grace ran out forfeits or passes (§8, :func:`ran_out_action`),
        else the move timer's timeout actions (each applied only if it :func:`still_applies`)."""
        if (overdue := first_overdue(own_limits, now)) is not None:
            action = ran_out_action(game, *overdue)
            if action is None:  # cannot happen: the seat is one the match waits for
                self.retry_at = now + RETRY_S
            return ([] if action is None else [action]), False
        if self.deadline is not None and self.deadline <= now:
            self.deadline = None
            return timeout_actions(game), True
        return [], False

    def retry_later(self, now: float, by_timer: bool) -> None:
        """A due action could not be saved: its deadline comes again after ``RETRY_S``."""
        if by_timer:
            self.deadline = now + RETRY_S
        else:
            self.retry_at = now + RETRY_S
