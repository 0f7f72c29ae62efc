"""The arena's pure rules: points by place (RULES §10), standings and tie-breaks, the prize split,
and the pairing's properties (hypothesis)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from app import arena
from app.arena import PairingRules, Result, Waiting, pair, place_points, prize_split, standings


def test_points_follow_the_weights_of_section_10() -> None:
    outcome = {"draw": False, "durak": 2, "places": [[1], [3], [0], [2]]}
    assert place_points(outcome, 4) == {1: 3, 3: 2, 0: 1, 2: 0}
    assert place_points({"draw": False, "durak": 0, "places": [[1], [0]]}, 2) == {1: 1, 0: 0}


def test_shared_places_take_the_better_place_and_a_draw_the_average() -> None:
    outcome = {"draw": False, "durak": 0, "places": [[1, 2], [0]]}
    assert place_points(outcome, 3) == {1: 2, 2: 2, 0: 0}
    assert place_points({"draw": True, "durak": None, "places": [[0, 1, 2, 3]]}, 4) == dict.fromkeys(range(4), 1)
    assert place_points({"draw": True, "durak": None, "places": [[0, 1]]}, 2) == {0: 0, 1: 0}
    assert place_points({"aborted": True}, 2) == {}


def test_tie_breaks_firsts_then_fewer_matches_then_earlier() -> None:
    results = [
        Result(1, 3, True, 10.0),  # 1: 3 points, a first place
        Result(2, 2, False, 11.0),
        Result(2, 1, False, 12.0),  # 2: 3 points, no first place
        Result(3, 3, False, 5.0),  # 3: 3 points in one match, reached earlier than 4
        Result(4, 3, False, 9.0),
        Result(5, 0, False, 1.0),
    ]
    ranked = standings([(a, float(a)) for a in range(1, 7)], results)
    assert [s.entrant for s in ranked] == [1, 3, 4, 2, 6, 5]
    assert [s.rank for s in ranked] == [1, 2, 3, 4, 5, 6]
    assert ranked[0].points == 3 and ranked[0].firsts == 1 and ranked[3].matches == 2


def test_prize_split_examples() -> None:
    assert prize_split(1000, [7, 8, 9, 10]) == {7: 500, 8: 300, 9: 200}
    assert prize_split(101, [7, 8, 9]) == {7: 51, 8: 30, 9: 20}
    assert prize_split(100, [7, 8]) == {7: 63, 8: 37}  # 5/8 and 3/8, the odd coin to the first
    assert prize_split(5, [7]) == {7: 5}
    assert prize_split(0, [7, 8]) == {} and prize_split(10, []) == {}


@given(st.integers(0, 10**9), st.lists(st.integers(1, 10**6), min_size=1, max_size=40, unique=True))
def test_prize_split_is_exact_and_ordered(pool: int, ranked: list[int]) -> None:
    shares = prize_split(pool, ranked)
    assert sum(shares.values()) == pool
    assert set(shares) <= set(ranked[:3])
    paid = [shares.get(a, 0) for a in ranked[:3]]
    assert all(x >= y for x, y in pairwise(paid))


# ---------------------------------------------------------------------- pairing properties

entrants = st.lists(st.integers(1, 60), min_size=0, max_size=30, unique=True)


@st.composite
def situations(draw: st.DrawFn) -> tuple[list[Waiting], PairingRules, float]:
    ids = draw(entrants)
    seats = draw(st.integers(2, 6))
    waiting = []
    for entrant in ids:
        others = [o for o in ids if o != entrant]
        recent = draw(
            st.lists(st.frozensets(st.sampled_from(others), max_size=seats - 1), max_size=2) if others else st.just([])
        )
        waiting.append(Waiting(entrant, draw(st.integers(0, 40)), draw(st.floats(0, 100)), tuple(recent)))
    forbidden: frozenset[frozenset[int]] = frozenset()
    if len(ids) >= 2:
        pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids)), max_size=6))
        forbidden = frozenset(frozenset(p) for p in pairs if p[0] != p[1])
    rules = PairingRules(seats, draw(st.floats(0, 120)), forbidden)
    return waiting, rules, draw(st.floats(0, 200))


@settings(max_examples=300, deadline=None)
@given(situations())
def test_pairing_properties(situation: tuple[list[Waiting], PairingRules, float]) -> None:
    waiting, rules, now = situation
    by_id = {w.entrant: w for w in waiting}
    tables = pair(waiting, rules, now)
    seated = [p for t in tables for p in t.players]
    assert len(seated) == len(set(seated)), "someone is at two tables"
    assert set(seated) <= set(by_id), "someone who was not waiting"
    for table in tables:
        assert 1 <= len(table.players) <= rules.seats
        assert len(table.players) + table.bots == rules.seats
        everyone = frozenset(table.players)
        for a in table.players:
            for b in table.players:
                assert a == b or frozenset((a, b)) not in rules.forbidden, "a forbidden pair sat together"
            assert not arena.repeats_too_often(by_id[a], everyone - {a}), "the same opponents a third time"
        if table.bots:  # bots only for someone who waited long enough
            assert any(now - by_id[p].since >= rules.bot_after_s for p in table.players)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 50), min_size=0, max_size=30),
    st.integers(2, 6),
)
def test_without_constraints_everyone_who_can_fill_a_table_is_seated_by_close_score(
    scores: list[int], seats: int
) -> None:
    waiting = [Waiting(i + 1, score, 0.0) for i, score in enumerate(scores)]
    tables = pair(waiting, PairingRules(seats, 1e9, frozenset()), 1.0)
    assert len(tables) == len(waiting) // seats
    assert all(t.bots == 0 for t in tables)
    # The tables take the players in score order: each table's scores are a contiguous run.
    order = sorted(waiting, key=lambda w: (-w.points, w.since, w.entrant))
    position = {w.entrant: i for i, w in enumerate(order)}
    for table in tables:
        places = sorted(position[p] for p in table.players)
        assert places == list(range(places[0], places[0] + seats))


def test_two_players_do_not_meet_a_third_time_in_a_row() -> None:
    a = Waiting(1, 5, 0.0, (frozenset({2}), frozenset({2})))
    b = Waiting(2, 5, 0.0, (frozenset({1}), frozenset({1})))
    c = Waiting(3, 0, 0.0)
    assert pair([a, b], PairingRules(2, 60.0), 10.0) == []
    tables = pair([a, b, c], PairingRules(2, 60.0), 10.0)
    assert len(tables) == 1 and 3 in tables[0].players
    # After waiting long enough, each gets a bot instead.
    tables = pair([a, b], PairingRules(2, 60.0), 61.0)
    assert sorted(t.players for t in tables) == [(1,), (2,)] and all(t.bots == 1 for t in tables)


def test_a_reader_who_falls_behind_keeps_his_next_table() -> None:
    from app.tournaments.runner import Viewer, sse

    viewer = Viewer(7)
    viewer.push(sse("table", {"code": "abc"}))
    for i in range(150):
        viewer.push(sse("standings", {"n": i}))
    assert viewer.queue[0] == sse("table", {"code": "abc"})
    assert viewer.queue[-1] == sse("standings", {"n": 149}) and len(viewer.queue) < 60
