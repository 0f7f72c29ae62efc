"""When the bots at a table think: each bot seat with something to do is asked once per version (at
once when it may act, after the table's bot delay when the match waits for it), and its answer comes
back to the actor as a ``bot`` command, applied like any other."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from app.engine import (
    Action,
    State,
    ViewJson,
    action_from_json,
    decision,
    event_to_json,
    legal_actions,
    public_cards,
    view,
)
from app.engine.actions import ActionParseError
from app.tables.bot_runner import BotRunner
from app.tables.commands import BotMove, Command, Wake
from app.tables.deadlines import RETRY_S
from app.tables.spec import Seat
from app.tables.table_events import AnyEvent, is_table_event

log = logging.getLogger("durak.table")


class BotTurns:
    def __init__(self, code: str, bots: BotRunner, post: Callable[[Command], None]) -> None:
        self.code = code
        self.bots = bots
        self.post = post
        self.asked: dict[int, int] = {}  # bot seat -> the version it was last asked about
        self.thinking: dict[int, asyncio.Task[None]] = {}

    def new_match(self, seats: list[Seat]) -> None:
        """A match starts: its bots are set up afresh and nobody has been asked anything yet."""
        self.asked.clear()
        self.bots.reset(self.code, {s.seat: s.level or "normal" for s in seats if s.kind == "bot"})

    def observe(self, seats: list[Seat], events: Sequence[AnyEvent]) -> None:
        """Tell each bot what happened in the match, as its seat may see it (the table's own events,
        seats and results, tell a bot nothing it plays by)."""
        played = [event for event in events if not is_table_event(event)]
        for seat in seats:
            if seat.kind == "bot":
                self.bots.observe(self.code, seat.seat, [event_to_json(public_cards(e, seat.seat)) for e in played])

    def schedule(self, game: State, seats: list[Seat], version: int, delay_s: float) -> None:
        idle_bots = [seat for seat in seats if seat.kind == "bot" and seat.seat not in self.thinking]
        if not idle_bots:
            return  # the common case on every change at a table of people: nothing to compute
        waiting = set(decision(game)["seats"])
        for seat in idle_bots:
            if not legal_actions(game, seat.seat):
                continue
            must = seat.seat in waiting
            if not must and self.asked.get(seat.seat) == version:
                continue
            self.asked[seat.seat] = version
            seat_view = view(game, seat.seat)
            thinking = self._think(seat.seat, version, seat_view, delay_s if must else 0.0)
            self.thinking[seat.seat] = asyncio.create_task(thinking)

    def answered(self, seat: int) -> None:
        self.thinking.pop(seat, None)

    def ask_again(self, seat: int) -> None:
        self.asked.pop(seat, None)

    def retry_later(self, seat: int) -> None:
        """The bot's answer could not be saved (the store is down): ask it again after ``RETRY_S``."""
        self.ask_again(seat)
        asyncio.get_running_loop().call_later(RETRY_S, self.post, Command(Wake()))

    def not_applied(self, game: State, seat: int, stale: bool) -> None:
        """A bot's answer was not applied: ask it again if the match still waits for it, or if the
        answer was for an older version (``stale``)."""
        if stale or seat in decision(game)["seats"]:
            self.ask_again(seat)

    async def _think(self, seat: int, version: int, seat_view: ViewJson, delay: float) -> None:
        action: Action | None = None
        try:
            if delay:
                await asyncio.sleep(delay)
            choice = await self.bots.choose(self.code, seat, seat_view, seat_view["legal"])
            if choice is not None:
                action = action_from_json({**choice, "seat": seat})
        except ActionParseError as exc:
            log.warning("table %s: bot %d chose an illegal action: %s", self.code[:8], seat, exc)
        except Exception:
            log.exception("table %s: bot in seat %d failed", self.code[:8], seat)
        self.post(Command(BotMove(seat, version, action)))
