"""Staked matches over real websockets: escrow at the start, settlement per RULES §10 at the end
(balances from ``GET /api/me``), and the stored match in the history API."""

from __future__ import annotations

import pytest

from bench._client import Player, play_out
from bench._server import ServerProcess
from tests.e2e.support import (
    accounts,
    close_all,
    connect,
    expected_payout,
    join,
    open_table,
    recorded_match,
    results_of,
    until_dealt,
)

START = 1000  # DURAK_STARTING_BALANCE default


@pytest.mark.parametrize(
    ("seats", "stake", "params"),
    [
        (2, 100, {"deck": 36, "timer": 0}),
        (3, 70, {"deck": 52, "circle": "neighbours", "transfer": True, "draws": False, "timer": 20}),
        (6, 55, {"deck": 36, "circle": "all", "draws": True, "timer": 30}),
    ],
    ids=["2-seats", "3-seats-neighbours-transfer", "6-seats"],
)
async def test_staked_match_settles_by_place_and_is_recorded(
    server: ServerProcess, seats: int, stake: int, params: dict
) -> None:
    people = await accounts(server, *(f"stk{seats}p{i}" for i in range(seats)))
    players: list[Player] = []
    try:
        assert [await p.balance() for p in people] == [START] * seats
        table = await open_table(people[0], seats=seats, stake=stake, **params)
        code = table["code"]
        assert table["table"]["rules"]["stake"] == stake
        players = [await connect(server, code, p, p.name) for p in people]
        for i, person in enumerate(people):
            assert await join(person, code, seat=i) == i  # the last join starts the match
        await until_dealt(players)
        assert [p.seat for p in players] == list(range(seats))
        # The stakes are held in escrow while the match runs.
        assert [await p.balance() for p in people] == [START - stake] * seats
        finals = await play_out(players, seed=seats)
        results = results_of(finals[0])
        outcome = results["outcome"]
        assert all(results_of(f) == results for f in finals)  # every seat saw the same result
        if not params.get("draws", True):
            assert not outcome["draw"]
        detail = await recorded_match(people[0], results["match_id"])
        balances = [await p.balance() for p in people]
    finally:
        await close_all(*players, *people)
    paid = expected_payout(outcome, stake, seats)
    assert sum(balances) == START * seats  # coins are conserved
    assert balances == [START - stake + paid[i] for i in range(seats)]
    if not outcome["draw"]:
        assert balances[outcome["durak"]] == START - stake  # the durak loses the stake
        assert outcome["places"][-1] == [outcome["durak"]]
    assert {int(k): v for k, v in results["coin_changes"].items()} == {i: paid[i] - stake for i in range(seats)}
    # The stored match agrees with what the table pushed.
    assert detail["stake"] == stake and detail["draw"] == outcome["draw"] and detail["durak"] == outcome["durak"]
    assert detail["rules"]["seats"] == seats and detail["rules"]["stake"] == stake
    # Each player's coin result is his own: the first player sees his, and the others' places only.
    assert [s["coin_change"] for s in detail["seats"]] == [paid[0] - stake] + [None] * (seats - 1)
    assert [s["account_id"] for s in detail["seats"]] == [p.me["id"] for p in people]
    assert detail["actions"] > 0
