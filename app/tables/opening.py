"""Opening tables within limits (docs/architecture.md, "Limits and eviction"): how many tables a
creator, and the address he opens them from, may have waiting for players, live (waiting or
playing), and opened within a window; how many matches of bots only he may run.

:class:`OpeningLimits` counts the tables of this process; the registry asks it before it opens a
table, and before a bot or a match at a table where no person sits.
"""

from __future__ import annotations

import contextlib
import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping

from app.config import TableLimits as TableLimits  # the settings group (DURAK_MAX_*_TABLES_*, ...)
from app.tables.actor import TableActor
from app.tables.spec import TableStatus

LIVE = (TableStatus.WAITING, TableStatus.PLAYING)  # the statuses a live table is counted (and listed) with


class TooMany(Exception):
    """A limit on tables (docs/architecture.md, "Limits and eviction") refuses the request."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Draining(TooMany):
    """This process is stopping (SIGTERM): it opens no table; another process will (retry)."""

    def __init__(self) -> None:
        super().__init__("draining", "this server is restarting: try again in a moment (another server takes it)")


def minutes(seconds: float) -> str:
    """A duration as the refusals and closing reasons say it."""
    if seconds < 120:
        return f"{seconds:g} s"
    return f"{seconds / 60:g} minutes"


def bots_only(actor: TableActor) -> bool:
    return all(seat.kind == "bot" for seat in actor.seats)


def waits_for_players(actor: TableActor) -> bool:
    """A table with an empty seat before its match: a full table waiting for its player's seed (a
    match against a bot) is not waiting for players."""
    return actor.status == TableStatus.WAITING and any(seat.kind == "empty" for seat in actor.seats)


class OpeningLimits:
    """The counts the limits of :class:`TableLimits` are checked against: the tables being opened
    right now, when each creator and address opened tables lately, and whence each table of this
    process was opened."""

    def __init__(self, limits: TableLimits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self.clock = clock
        self.created_from: dict[str, str] = {}  # table code -> the IP address it was opened from
        self.pending: list[tuple[str, str | None]] = []  # tables being opened: (creator key, address)
        self.opened: dict[str, deque[float]] = {}  # "a:<key>" / "ip:<address>" -> when it opened tables

    @contextlib.contextmanager
    def opening(self, creator: str, address: str | None, tables: Iterable[TableActor]) -> Iterator[None]:
        """Check that ``creator`` may open a table from ``address`` (raises :class:`TooMany`), count
        the opening, and hold it as being opened (counted against the next ones) until the block ends."""
        self.check(creator, address, tables)
        self.pending.append((creator, address))
        try:
            yield
        finally:
            self.pending.remove((creator, address))

    def opened_from(self, code: str, address: str | None) -> None:
        if address is not None:
            self.created_from[code] = address

    def forget(self, code: str) -> None:
        self.created_from.pop(code, None)

    def check(self, creator: str, address: str | None, tables: Iterable[TableActor]) -> None:
        """Refuse a new table when its creator, or the address it is opened from, has the limit of
        tables waiting for players, of live tables (waiting or playing: a match against a bot runs
        from its first moment), counting the tables being opened right now, or of tables opened
        lately (a match left at once is over, but its table stays in memory a while). When it
        passes, the opening is counted."""
        live = [actor for actor in tables if actor.status in LIVE]
        limits, now = self.limits, self.clock()
        mine = [actor for actor in live if actor.spec.creator.key == creator]
        opening = sum(1 for key, _ in self.pending if key == creator)
        waiting = sum(1 for actor in mine if waits_for_players(actor)) + opening
        if waiting >= limits.waiting_per_account:
            raise TooMany(
                "too_many_tables",
                f"you have {waiting} tables waiting for players and may have at most {limits.waiting_per_account}: "
                "start one, or wait until one fills or is closed for idleness",
            )
        if len(mine) + opening >= limits.live_per_account:
            raise TooMany(
                "too_many_tables",
                f"you have {len(mine) + opening} tables open (waiting or playing) and may have at most "
                f"{limits.live_per_account}: finish or leave one first",
            )
        counted = [(f"a:{creator}", limits.opened_per_account, "you opened")]
        if address is not None:
            from_there = [actor for actor in live if self.created_from.get(actor.code) == address]
            opening = sum(1 for _, where in self.pending if where == address)
            waiting = sum(1 for actor in from_there if waits_for_players(actor)) + opening
            if waiting >= limits.waiting_per_ip:
                raise TooMany(
                    "too_many_tables",
                    f"{waiting} tables opened from your address are waiting for players; "
                    f"at most {limits.waiting_per_ip} may",
                )
            if len(from_there) + opening >= limits.live_per_ip:
                raise TooMany(
                    "too_many_tables",
                    f"{len(from_there) + opening} tables opened from your address are open (waiting or playing); "
                    f"at most {limits.live_per_ip} may",
                )
            counted.append((f"ip:{address}", limits.opened_per_ip, "your address opened"))
        for who, limit, whom in counted:
            self._check_rate(who, limit, now, whom)
        for who, _, _ in counted:
            self.opened.setdefault(who, deque()).append(now)

    def _check_rate(self, who: str, limit: int, now: float, whom: str) -> None:
        """Refuse ``who`` (a creator or an address) a table when it opened ``limit`` within the window."""
        window = self.limits.opened_window_s
        opened = self.opened.get(who)
        while opened and opened[0] <= now - window:
            opened.popleft()
        if opened and len(opened) >= limit:
            wait = math.ceil(opened[0] + window - now)
            raise TooMany(
                "too_many_tables",
                f"{whom} {len(opened)} tables in the last {minutes(window)}, the most that may be: "
                f"the next one in {wait} s",
            )

    def prune(self, now: float) -> None:
        """Drop the opening counts older than the window."""
        for who, opened in list(self.opened.items()):
            while opened and opened[0] <= now - self.limits.opened_window_s:
                opened.popleft()
            if not opened:
                del self.opened[who]

    def check_bot_table(self, code: str, principal_key: str, tables: Mapping[str, TableActor]) -> None:
        """Refuse ``principal_key`` a bot or a match at table ``code`` (no person seated there) when
        he runs the limit of matches of bots only already (tables of this process)."""
        actor = tables.get(code)
        if actor is None or any(seat.kind == "human" for seat in actor.seats):
            return
        running = sum(
            1
            for other in tables.values()
            if other.code != code
            and other.status == TableStatus.PLAYING
            and other.spec.creator.key == principal_key
            and bots_only(other)
        )
        limit = self.limits.bot_tables_per_account
        if running >= limit:
            raise TooMany(
                "too_many_bot_tables",
                f"you have {running} matches of bots only running and may have at most {limit}: "
                "wait until one ends, or take a seat yourself",
            )
