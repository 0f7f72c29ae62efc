"""When bots think and what they are told, on plain values (bot_turns.py)."""

from __future__ import annotations

from typing import Any

from app.engine import Card, Rules, decision, new_match
from app.tables.bot_turns import BotTurns
from app.tables.commands import Command
from app.tables.spec import Principal, Seat


class _Runner:
    """Records what the bots are told (the BotRunner calls BotTurns makes besides ``choose``)."""

    def __init__(self) -> None:
        self.observed: list[tuple[int, list[dict[str, Any]]]] = []
        self.levels: dict[int, str] | None = None

    def observe(self, code: str, seat: int, events: list[dict[str, Any]]) -> None:
        self.observed.append((seat, events))

    def reset(self, code: str, levels: dict[int, str]) -> None:
        self.levels = levels


def _turns() -> tuple[BotTurns, _Runner, list[Command]]:
    runner, posted = _Runner(), []
    return BotTurns("tbl", runner, posted.append), runner, posted  # type: ignore[arg-type]


def test_each_bot_is_told_what_its_own_seat_may_see_and_a_new_match_sets_them_up() -> None:
    turns, runner, _ = _turns()
    seats = [Seat(0, "human", Principal("a:1", "alice", 1)), Seat(1, "bot", level="hard"), Seat(2, "bot")]
    drawn = [Card.parse("7h")]
    turns.observe(seats, [{"type": "draw", "seat": 1, "count": 1, "cards": drawn}])
    assert [seat for seat, _ in runner.observed] == [1, 2]
    assert runner.observed[0][1][0]["cards"] == ["7h"] and "cards" not in runner.observed[1][1][0]
    turns.asked[1] = 5
    turns.new_match(seats)
    assert turns.asked == {} and runner.levels == {1: "hard", 2: "normal"}


def test_an_answer_that_was_not_applied_is_asked_again_when_it_is_still_wanted() -> None:
    turns, _, _ = _turns()
    game = new_match(Rules(), seed=1, dealer=0)
    waited = decision(game)["seats"][0]
    idle = 1 - waited
    turns.asked = {waited: 3, idle: 3}
    turns.not_applied(game, idle, stale=False)
    assert turns.asked == {waited: 3, idle: 3}  # nobody waits for it, and it answered the version it saw
    turns.not_applied(game, idle, stale=True)
    turns.not_applied(game, waited, stale=False)
    assert turns.asked == {}
