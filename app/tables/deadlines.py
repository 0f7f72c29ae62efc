"""When a table must act without a command (§8, §9), computed from plain values.

The move timer, each waited-for player's idle limit or disconnect grace, the challenge window and a
rematch proposal's end. The actor keeps the moments (on its own clock) and asks these functions
which comes next and what each seat is shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.engine import State
from app.tables.spec import DecisionLimits, Seat

REMATCH_WINDOW_S = 60.0  # how long a rematch proposal waits for every player's agreement (§8)
RETRY_S = 1.0  # storage unreachable: try the timer or a bot again after this long


@dataclass(frozen=True, slots=True)
class Timers:
    """The move timer (or challenge window) and when the current decision came."""

    deadline: float | None  # the move timer, or the close of the challenge window
    since: float | None  # when the decision came (idle limits and graces run from it)
    window_closes: float | None  # cheating tables: when the open challenge window closes


def timers_after_change(
    game: State | None, status: str, timer_s: int, limits: DecisionLimits, window_closes: float | None, now: float
) -> Timers:
    """After every change: the decision that came with it gets its full time."""
    if status == "playing" and game is not None and game.phase == "challenge":
        # The challenge window (§9) runs from its opening, with or without a move timer; passes on
        # it do not extend it. When it closes, ``timeout_actions`` passes for everyone left. It
        # never forfeits anyone, so no idle limit or grace runs during it (no ``decision_since``).
        closes = window_closes if window_closes is not None else now + limits.challenge_window_s
        return Timers(closes, None, closes)
    if status == "playing" and game is not None and game.outcome is None:
        return Timers(now + timer_s if timer_s > 0 else None, now, None)
    return Timers(None, None, None)


def decision_limits(
    seats: list[Seat],
    deciding: list[int],
    since: float | None,
    gone_since: dict[int, float],
    limits: DecisionLimits,
    retry_at: float | None,
) -> dict[int, tuple[float, str]]:
    """For each player the match waits for: when he runs out of time for this decision besides
    the move timer, and why (§8). Connected: the idle limit after the decision came ("idle").
    Not connected (never, or gone): the disconnect grace from when the decision came or when he
    went, whichever is later ("grace"), and never past the idle limit. Not before ``retry_at``."""
    if since is None:
        return {}
    out: dict[int, tuple[float, str]] = {}
    for seat_no in deciding:
        seat = seats[seat_no]
        if seat.kind != "human":
            continue  # bots answer by themselves
        idle_at = since + limits.idle_limit_s
        when, why = idle_at, "idle"
        if not seat.connections:
            grace_at = max(since, gone_since.get(seat_no, since)) + limits.disconnect_grace_s
            if grace_at < idle_at:
                when, why = grace_at, "grace"
        if retry_at is not None and when < retry_at:
            when = retry_at
        out[seat_no] = (when, why)
    return out


def shown_deadlines(
    own_limits: dict[int, tuple[float, str]], deciding: list[int], deadline: float | None
) -> dict[int, tuple[float, str]]:
    """When each seat the match waits for must have decided, whichever comes first of the move
    timer ("timer") and its own limit ("idle" / "grace"): what the players are shown."""
    shown = dict(own_limits)
    if deadline is not None:
        for seat_no in deciding:
            limit = shown.get(seat_no)
            if limit is None or deadline <= limit[0]:
                shown[seat_no] = (deadline, "timer")
    return shown


def next_deadline(
    own_limits: dict[int, tuple[float, str]], deadline: float | None, rematch_deadline: float | None
) -> float | None:
    """The earliest moment something must happen without a command."""
    dues = [when for when, _ in own_limits.values()]
    if deadline is not None:
        dues.append(deadline)
    if rematch_deadline is not None:
        dues.append(rematch_deadline)
    return min(dues, default=None)


def first_overdue(own_limits: dict[int, tuple[float, str]], now: float) -> tuple[int, str] | None:
    """The seat whose own limit ran out first, and the forfeit reason ("disconnected" / "timeout")."""
    overdue = sorted((when, seat_no, why) for seat_no, (when, why) in own_limits.items() if when <= now)
    if not overdue:
        return None
    _, seat_no, why = overdue[0]
    return seat_no, "disconnected" if why == "grace" else "timeout"
