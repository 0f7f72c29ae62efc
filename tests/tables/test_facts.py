"""What a table shows, built from plain values (facts.py): the table facts with each seat's time
left, a connection's snapshot, and the welcome that resumes or starts a connection."""

from __future__ import annotations

from typing import Any

from app.engine import Rules, new_match
from app.tables.facts import snapshot, table_facts, welcome
from app.tables.seating import Seating
from app.tables.spec import Principal, Seat, TableSpec

ALICE = Principal("a:1", "alice", 1)
BOB = Principal("g:2", "bob")
SPEC = TableSpec(Rules(), ALICE, name="evening", code="invite", watch_code="watch")


def _facts(seating: Seating, **values: Any) -> dict[str, Any]:
    defaults: dict[str, Any] = {
        "status": "playing",
        "rules": Rules(),
        "shown": {},
        "deadline": None,
        "now": 100.0,
        "grace_s": 60.0,
        "fairness": {"commitment": "c"},
        "match_id": "m1",
        "results": None,
        "version": 7,
        "you": None,
    }
    return table_facts(SPEC, seating, **{**defaults, **values})


def test_each_waited_for_seat_shows_its_time_left_and_why_and_the_table_the_earliest() -> None:
    seating = Seating([Seat(0, "human", ALICE, connections={"c"}), Seat(1, "human", BOB)], spectators={"w1", "w2"})
    facts = _facts(seating, shown={0: (130.0, "timer"), 1: (112.5, "grace")}, deadline=130.0, you="a:1")
    assert [(s["seat"], s["deadline_ms"], s["deadline_kind"]) for s in facts["seats"]] == [
        (0, 30000, "timer"),
        (1, 12500, "grace"),
    ]
    assert facts["deadline_ms"] == 12500 and facts["spectators"] == 2 and facts["you"] == "a:1"
    assert [s["connected"] for s in facts["seats"]] == [True, False] and facts["seats"][1]["guest"]
    assert (facts["code"], facts["name"], facts["creator"], facts["version"]) == ("invite", "evening", "a:1", 7)
    past = _facts(seating, shown={0: (90.0, "idle")})
    assert past["deadline_ms"] == 0 and past["seats"][1]["deadline_ms"] is None  # never below zero
    timer_only = _facts(seating, deadline=101.0)
    assert timer_only["deadline_ms"] == 1000  # nobody waited for: the move timer


def test_the_series_is_shown_by_seat_and_the_rematch_with_who_agreed() -> None:
    seating = Seating([Seat(0, "human", ALICE), Seat(1, "bot", level="easy")], series={"a:1": (2, 1)})
    facts = _facts(seating, status="finished")
    assert facts["series"] == {0: (2, 1), 1: (0, 0)} and facts["rematch"] is None
    seating.agree(0, now=100.0, window_s=60.0)
    assert _facts(seating, now=120.0)["rematch"] == {"agreed": [0, 1], "deadline_ms": 40000}


def test_a_snapshot_hides_the_invite_code_from_anonymous_watchers_only() -> None:
    game = new_match(Rules(), seed=3, dealer=0)
    seating = Seating([Seat(0, "human", ALICE), Seat(1, "human", BOB)])
    mine = snapshot(_facts(seating), 7, 0, game, ALICE)
    assert mine["table"]["code"] == "invite" and mine["seat"] == 0 and len(mine["view"]["hand"]) == 6
    watcher = snapshot(_facts(seating), 7, None, game, Principal("anon:x", "someone"))
    assert watcher["table"]["code"] is None and "hand" not in watcher["view"]
    assert snapshot(_facts(seating), 7, None, None, None)["view"] is None


def test_a_welcome_resumes_from_the_history_or_gives_the_matchs_recent_events() -> None:
    history = [
        (5, [{"type": "match_start", "match_id": "m"}]),
        (6, [{"type": "seat", "seat": 0}]),
        (7, [{"type": "seat", "seat": 1}]),
    ]
    base = {"version": 7, "seat": None, "view": None, "table": {}}
    resumed = welcome(base, history, 5, None)
    assert resumed["type"] == "welcome" and resumed["resumed_from"] == 5
    assert [e["version"] for e in resumed["events"]] == [6, 7] and "recent" not in resumed
    fresh = welcome(base, history, None, None)
    assert "resumed_from" not in fresh and [e["version"] for e in fresh["recent"]] == [5, 6, 7]
    too_old = welcome(base, history[1:], 4, None)  # version 5 is gone: a snapshot with the recent events
    assert "resumed_from" not in too_old and [e["version"] for e in too_old["recent"]] == [6, 7]
    assert "resumed_from" not in welcome(base, history, True, None)  # not a version
