"""Cheating tables: the challenge window of a played-out bout runs on the actor's own clock, shows as
the table's deadline, is not extended by passes, and closes by passing for everyone left (§9)."""

from __future__ import annotations

import random
import uuid

import pytest
from fastapi.testclient import TestClient

from app.config import get_settings
from app.engine import Rules, decision
from app.main import create_app
from app.tables import commands as cmd
from app.tables.record import logged_actions
from app.tables.spec import DecisionLimits
from tests.tables.actors import ALICE, BOB, play_moves, seated_table


class FakeClock:
    """Time stands still until the test moves it (it starts where the actor's clock was)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def _until_window(registry, actor) -> None:  # type: ignore[no-untyped-def]
    """Random legal moves until a bout is played out with both players able to challenge (a window
    only one of them may challenge is passed on, like any other decision)."""
    rng = random.Random(7)
    for _ in range(200):
        if actor.game.phase == "challenge" and decision(actor.game)["seats"] == [0, 1]:
            return
        assert await play_moves(registry, actor.code, 1, rng) == 1
    raise AssertionError("no bout was played out")


async def test_the_window_closes_on_the_actors_clock_and_resolves_the_bout() -> None:
    async with seated_table(Rules(timer=0, cheating=True)) as (_, registry, actor):
        clock = actor.clock = FakeClock(actor.clock())
        assert actor.limits.challenge_window_s == get_settings().decisions.challenge_window_s == 5.0
        await _until_window(registry, actor)
        opened = clock.now
        assert actor.timers.deadline == opened + 5.0  # even without a move timer
        info = await registry.call(actor.code, cmd.Info(), ALICE)
        assert info["table"]["deadline_ms"] == 5000
        assert decision(actor.game)["kind"] == "challenge" and not decision(actor.game)["forfeits"]
        ply = actor.game.ply

        # Alice passes after 3 s: the window is not extended for Bob.
        clock.now = opened + 3.0
        reply = await registry.call(actor.code, cmd.PassMove(), ALICE, id=uuid.uuid4().hex)
        assert reply["type"] == "ack", reply
        assert actor.game.phase == "challenge" and decision(actor.game)["seats"] == [1]
        assert actor.timers.deadline == opened + 5.0
        assert (await registry.call(actor.code, cmd.Info(), ALICE))["table"]["deadline_ms"] == 2000

        clock.now = opened + 4.9
        await registry.call(actor.code, cmd.Info(), ALICE)  # the actor looks at its clock: not yet
        assert actor.game.phase == "challenge" and actor.game.ply == ply + 1

        clock.now = opened + 5.0
        await registry.call(actor.code, cmd.Info(), ALICE)  # a deadline that has come goes first
        assert actor.status == "playing" and actor.game.phase == "lead"
        assert logged_actions(actor.log[-2:]) == [{"type": "pass", "seat": 0}, {"type": "pass", "seat": 1}]
        assert actor.timers.deadline is None and actor.timers.window_closes is None  # no move timer at this table


async def test_a_timed_table_runs_the_window_instead_of_the_move_timer_then_the_timer_again() -> None:
    async with seated_table(Rules(timer=30, cheating=True)) as (_, registry, actor):
        clock = actor.clock = FakeClock(actor.clock())
        actor.limits = DecisionLimits(challenge_window_s=2.0)
        await _until_window(registry, actor)
        opened = clock.now
        assert actor.timers.deadline == opened + 2.0
        for who in (ALICE, BOB):  # both pass: the bout is resolved at once, the move timer runs
            reply = await registry.call(actor.code, cmd.PassMove(), who, id=uuid.uuid4().hex)
            assert reply["type"] == "ack", reply
        assert actor.game.phase == "lead"  # the stock lasts a few bouts: nobody is out yet
        assert actor.timers.deadline == clock.now + 30 and actor.timers.window_closes is None


async def test_the_window_length_is_a_server_setting(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("DURAK_CHALLENGE_WINDOW_S", "2.5")
    monkeypatch.setenv("DURAK_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'w.sqlite3'}")
    get_settings.cache_clear()
    try:
        app = create_app()
        with TestClient(app):
            assert app.state.tables.limits.challenge_window_s == 2.5
    finally:
        get_settings.cache_clear()
