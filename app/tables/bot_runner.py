"""Bots decide off the event loop, in a small thread pool, each with its own time budget.

The actor hands a bot only what its seat may see: the redacted events (``observe``) and, when it is
asked, its seat's view with the legal actions. Bot objects live here, keyed by table and seat.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from concurrent.futures import ThreadPoolExecutor

from app.bots import Bot
from app.engine import ActionJson, EventJson, ViewJson


class BotRunner:
    def __init__(self, workers: int = 2, time_budget_ms: int = 200) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bot")
        self._bots: dict[tuple[str, int], Bot] = {}
        self._pending: dict[tuple[str, int], list[EventJson]] = {}
        self._lock = threading.Lock()
        self.time_budget_ms = time_budget_ms

    def reset(self, code: str, levels: dict[int, str]) -> None:
        """A new match: fresh bots for these seats (their memory starts empty)."""
        from app.bots import make_bot

        with self._lock:
            for key in [k for k in self._bots if k[0] == code]:
                self._bots.pop(key, None)
                self._pending.pop(key, None)
            for seat, level in levels.items():
                self._bots[(code, seat)] = make_bot(
                    level, seat, secrets.randbits(32), time_budget_ms=self.time_budget_ms
                )
                self._pending[(code, seat)] = []

    def forget(self, code: str) -> None:
        with self._lock:
            for key in [k for k in self._bots if k[0] == code]:
                self._bots.pop(key, None)
                self._pending.pop(key, None)

    def observe(self, code: str, seat: int, events: list[EventJson]) -> None:
        with self._lock:
            pending = self._pending.get((code, seat))
            if pending is not None:
                pending.extend(events)

    async def choose(self, code: str, seat: int, view: ViewJson, legal: list[ActionJson]) -> ActionJson | None:
        with self._lock:
            bot = self._bots.get((code, seat))
            events = self._pending.get((code, seat), [])
            self._pending[(code, seat)] = []
        if bot is None:
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, _decide, bot, events, view, legal)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _decide(bot: Bot, events: list[EventJson], view: ViewJson, legal: list[ActionJson]) -> ActionJson | None:
    for event in events:
        bot.observe(event)
    return bot.choose(view, legal)
