"""Which tables of this process have been idle too long (docs/architecture.md, "Limits and
eviction"): when each last changed and last had someone connected, since when its match of bots only
runs, and the codes of closed tables with why they were closed (so that later requests are told)."""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Mapping

from app.tables.actor import TableActor
from app.tables.opening import TableLimits, bots_only, minutes
from app.tables.spec import TableStatus

SWEEP_S = 5.0  # how often idle tables are looked for
CLOSED_REMEMBERED = 100_000  # codes of closed tables kept to answer "closed" rather than "no such table"


def connected(actor: TableActor) -> bool:
    return bool(actor.seating.spectators) or any(seat.connections for seat in actor.seats)


class IdleTables:
    """The moments the idle limits of :class:`TableLimits` are measured from (on the registry's
    clock), and the closed tables remembered."""

    def __init__(self, limits: TableLimits) -> None:
        self.limits = limits
        self.changed_at: dict[str, float] = {}  # table code -> its last change
        self.seen_at: dict[str, float] = {}  # table code -> when someone was last connected to it
        self.bots_since: dict[str, float] = {}  # table code -> when its match of bots only started
        self.closed: OrderedDict[str, str] = OrderedDict()  # closed table's code or watch code -> why

    def adopted(self, code: str, now: float) -> None:
        self.seen_at[code] = self.changed_at[code] = now

    def changed(self, actor: TableActor, now: float) -> None:
        self.changed_at[actor.code] = now
        if actor.status == TableStatus.PLAYING and actor.code not in self.bots_since and bots_only(actor):
            self.bots_since[actor.code] = now

    def forget(self, code: str) -> None:
        for facts in (self.changed_at, self.seen_at, self.bots_since):
            facts.pop(code, None)

    def due(self, tables: Mapping[str, TableActor], now: float) -> list[tuple[str, str]]:
        """The tables to close now, each with why: a waiting table with no change and nobody
        connected for ``idle_ttl_s``, a finished one likewise for ``finished_ttl_s``, and a match of
        bots only nobody watches for ``bot_table_unwatched_s`` or that has run ``bot_match_max_s``.
        Running matches of people are never closed here: their timers end them."""
        limits = self.limits
        closing: list[tuple[str, str]] = []
        for code, actor in list(tables.items()):
            if connected(actor):
                self.seen_at[code] = now
            quiet_s = now - max(self.seen_at.get(code, now), self.changed_at.get(code, now))
            unwatched_s = now - self.seen_at.get(code, now)
            if actor.status == TableStatus.WAITING and quiet_s >= limits.idle_ttl_s:
                closing.append((code, f"it waited {minutes(limits.idle_ttl_s)} for players and nobody came"))
            elif actor.status == TableStatus.FINISHED and quiet_s >= limits.finished_ttl_s:
                closing.append(
                    (code, f"its match ended and nobody was at the table for {minutes(limits.finished_ttl_s)}")
                )
            elif actor.status == TableStatus.PLAYING and bots_only(actor):
                since = self.bots_since.setdefault(code, now)
                if unwatched_s >= limits.bot_table_unwatched_s:
                    closing.append((code, "its match of bots only was stopped: nobody was watching it"))
                elif now - since >= limits.bot_match_max_s:
                    closing.append(
                        (code, f"its match of bots only was stopped after {minutes(limits.bot_match_max_s)}")
                    )
            else:
                self.bots_since.pop(code, None)
        return closing

    def remember_closed(self, codes: tuple[str, ...], why: str) -> None:
        """Later requests for ``codes`` (a table's code and watch code) are told it was closed, and why."""
        # One string per reason, however many tables it closes: the codes are what is remembered.
        message = sys.intern(f"this table was closed: {why}; its finished matches stay in the match history")
        for code in codes:
            self.closed[code] = message
        while len(self.closed) > CLOSED_REMEMBERED:
            self.closed.popitem(last=False)
