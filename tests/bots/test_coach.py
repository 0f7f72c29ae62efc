"""The coach (app/bots/coach.py): estimates from the seat's own timeline, exact in the endgame,
blunders marked, reproducible, and the same decision by decision as over the whole match."""

from __future__ import annotations

from functools import cache
from typing import Any

from app.bots import make_bot
from app.bots.coach import BLUNDER, TIE, action_key, analyse, analyse_decision, choose_best
from app.bots.solver import OutOfBudget, Solver
from app.engine import Rules, action_from_json, apply, event_to_json, new_match, public_cards, view
from app.engine.replay import seat_timeline
from bench._common import play_match

RULES = Rules(deck=36, seats=2)
WORLDS = 12  # small: these tests check behaviour, not the quality of the estimates


@cache
def random_vs_hard(seed: int) -> list[dict[str, Any]]:
    """A finished match: a random player in seat 0 (it blunders) against the hard bot."""
    hard = make_bot("hard", 1, seed, 20)
    # Its search stops at a budget of plies, not at the clock: the same match however loaded the
    # machine is (on a busy CI machine the clock made other matches, whose endgames the exact
    # solver below could not finish in the test's time).
    hard.clock_guard = False  # type: ignore[attr-defined]
    played = play_match(RULES, seed, [make_bot("random", 0, seed), hard], dealer=0)
    return played.actions


@cache
def timeline(seed: int) -> list[dict[str, Any]]:
    return seat_timeline(RULES.to_json(), seed, 0, random_vs_hard(seed), 0)


@cache
def report(seed: int) -> dict[str, Any]:
    return analyse(timeline(seed), 0, worlds=WORLDS)


def test_the_timeline_is_what_the_seat_received() -> None:
    seed = 11
    actions = random_vs_hard(seed)
    entries = timeline(seed)
    assert [e["action"] for e in entries] == actions
    state = new_match(RULES, seed, 0)
    for entry in entries:
        if entry["action"]["seat"] == 0:
            assert entry["view"] == view(state, 0)
        else:
            assert "view" not in entry  # never another seat's view
        state, events = apply(state, action_from_json(entry["action"]))
        assert entry["events"] == [event_to_json(public_cards(e, 0)) for e in events]
        for event in entry["events"]:
            if event["type"] == "draw" and event["seat"] != 0:
                assert "cards" not in event  # the opponent's draws arrive as counts


def test_every_decision_of_the_seat_is_reported() -> None:
    data = report(11)
    mine = [e for e in timeline(11) if "view" in e]
    assert [d["ply"] for d in data["decisions"]] == [e["ply"] for e in mine]
    assert [d["played"] for d in data["decisions"]] == [e["action"] for e in mine]
    statuses = {d["status"] for d in data["decisions"]}
    assert "estimated" in statuses and statuses <= {"estimated", "forced", "optional", "not honest", "forfeit"}
    for decision, entry in zip(data["decisions"], mine, strict=True):
        honest = entry["view"]["legal"]
        if decision["status"] == "forced":
            assert len(honest) == 1
        if decision["status"] != "estimated":
            continue
        keys = [action_key(e["action"]) for e in decision["estimates"]]
        assert action_key(decision["played"]) in keys and action_key(decision["best"]) in keys
        assert all(action_key(e["action"]) in {action_key(a) for a in honest} for e in decision["estimates"])
        assert all(0.0 <= e["value"] <= 1.0 for e in decision["estimates"])
        by_key = {action_key(e["action"]): e["value"] for e in decision["estimates"]}
        assert decision["value_played"] == by_key[action_key(decision["played"])]
        assert decision["value_best"] == by_key[action_key(decision["best"])]
        assert decision["blunder"] == (decision["value_best"] - decision["value_played"] >= BLUNDER - 1e-6)
        assert decision["worlds"] == (1 if decision["method"] == "endgame" else WORLDS)


def test_the_endgame_estimates_are_exact() -> None:
    """With the stock empty and one opponent, every unseen card is in his hand: the coach's values
    (from the seat's view) are the true results of perfect play from the real position."""
    checked = 0
    for seed in (11, 12, 13):
        data = report(seed)
        state = new_match(RULES, seed, 0)
        decisions = {d["ply"]: d for d in data["decisions"]}
        for ply, action in enumerate(random_vs_hard(seed)):
            decision = decisions.get(ply)
            if decision is not None and decision.get("method") == "endgame":
                for estimate in decision["estimates"]:
                    child, _ = apply(state, action_from_json(estimate["action"]))
                    if child.outcome is not None:
                        truth = 0.0 if child.outcome.durak == 0 else 1.0
                    else:
                        try:
                            value = Solver(0, 2_000_000).value(child)
                        except OutOfBudget:  # too big to check exactly here: only positions with a known truth count
                            continue
                        truth = 1.0 if value >= 0.5 else 0.0
                    assert estimate["value"] == truth, (seed, ply, estimate)
                    checked += 1
            state, _ = apply(state, action_from_json(action))
    assert checked >= 5


def test_a_random_player_blunders_and_the_blunders_are_real() -> None:
    blunders = [d for seed in (11, 12, 13) for d in report(seed)["decisions"] if d.get("blunder")]
    assert blunders
    for decision in blunders:
        assert decision["value_best"] - decision["value_played"] >= BLUNDER - 1e-6
        assert action_key(decision["best"]) != action_key(decision["played"])


def test_analysis_is_reproducible_and_the_same_decision_by_decision() -> None:
    entries = timeline(12)
    whole = analyse(entries, 0, worlds=WORLDS)
    assert analyse(entries, 0, worlds=WORLDS) == whole
    for number in (0, 5, len(whole["decisions"]) - 1):
        assert analyse_decision(entries, 0, number, worlds=WORLDS) == whole["decisions"][number]
    # A decision's analysis uses nothing after it: the timeline cut just after that decision
    # gives the same result.
    number = len(whole["decisions"]) // 2
    ply = whole["decisions"][number]["ply"]
    assert analyse_decision(entries[: ply + 1], 0, number, worlds=WORLDS) == whole["decisions"][number]


def test_the_best_action_keeps_the_preference_unless_clearly_beaten() -> None:
    noise = [[1.0, 0.0] * 20, [0.0, 1.0] * 20]  # the same mean: the preferred one (index 0)
    assert choose_best(noise) == 0
    close = [[1.0] * 30 + [0.0] * 10, [1.0] * 31 + [0.0] * 9]  # better by 2.5 points, under TIE
    assert TIE > 0.025 and choose_best(close) == 0
    clear = [[1.0] * 20 + [0.0] * 20, [1.0] * 30 + [0.0] * 10, [1.0] * 36 + [0.0] * 4]
    assert choose_best(clear) == 2
    exact = [[0.0], [1.0], [1.0]]  # the endgame: the first winning action in preference order
    assert choose_best(exact) == 1


def test_a_stored_match_is_analysed_in_an_executor_with_progress() -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from app.coaching import analyse_match

    seed = 13
    match = {"rules": RULES.to_json(), "seed": str(seed), "dealer": 0, "actions": random_vs_hard(seed)}
    seen: list[tuple[int, int]] = []

    async def run() -> dict[str, Any]:
        with ThreadPoolExecutor(max_workers=2) as executor:
            return await analyse_match(
                match, 0, executor=executor, worlds=WORLDS, progress=lambda done, total: seen.append((done, total))
            )

    data = asyncio.run(run())
    assert data == report(seed)
    total = len(data["decisions"])
    assert seen == [(done, total) for done in range(1, total + 1)]
