""" "Your turn" by Web Push, for a player who went away: when the match waits for a seat whose player
has no connection open (his reconnect grace runs, docs/protocol.md "Deadlines"), his browsers get one
push per decision, saying how long he has to come back. The table registry calls this after every
change of a table (a move, a connection gone).
"""

from __future__ import annotations

from app.push import PushSender, your_turn_notice
from app.tables.actor import TableActor
from app.tables.spec import DeadlineKind, TableStatus


class AwayTurns:
    def __init__(self, sender: PushSender) -> None:
        self.sender = sender
        self.told: dict[str, set[tuple[str | None, int, int]]] = {}  # table code -> (match, seat, ply) told

    def __call__(self, actor: TableActor) -> None:
        game = actor.game
        if actor.status != TableStatus.PLAYING or game is None:
            self.told.pop(actor.code, None)
            return
        limits = actor.timers.own_limits(game, actor.seats, actor.seating.gone_since, actor.limits)
        waiting = [(seat_no, when) for seat_no, (when, why) in limits.items() if why == DeadlineKind.GRACE]
        if not waiting:
            return
        told = self.told.setdefault(actor.code, set())
        now = actor.clock()
        for seat_no, when in waiting:
            key = (actor.match_id, seat_no, game.ply)
            if key in told:
                continue
            if len(told) > 256:
                told.clear()
            told.add(key)
            principal = actor.seats[seat_no].principal
            if principal is not None and principal.account_id is not None:
                seconds = max(1, int(when - now))
                self.sender.notify_soon(principal.account_id, your_turn_notice(actor.spec.name, actor.code, seconds))
