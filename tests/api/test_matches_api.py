"""Match history over HTTP: the list, the detail and the replay of a match played by the engine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from app.db import stakes
from app.engine import Rules, action_from_json, action_to_json, apply, decision, legal_actions, new_match
from app.engine.views import sort_hand
from tests.api.support import Api


def play(rules: Rules, seed: int, dealer: int) -> tuple[list[dict[str, Any]], dict[str, Any], list[list[str]]]:
    """Play a whole match with the first legal action each time; returns actions, outcome, dealt hands."""
    state = new_match(rules, seed, dealer)
    dealt = [[str(card) for card in hand] for hand in state.hands]
    actions: list[dict[str, Any]] = []
    while state.outcome is None:
        seat = decision(state)["seats"][0]
        action = legal_actions(state, seat)[0]
        actions.append(action_to_json(action))
        state, _ = apply(state, action)
        assert len(actions) < 5000
    return actions, state.outcome.to_json(), dealt


def sorted_hand(hand: Any, trump: str) -> list[str]:
    return [str(card) for card in sort_hand(hand, trump)]


async def finish_staked_match(api: Api, match_id: str, ids: list[int], *, cheating: bool, minutes: int) -> Any:
    rules = Rules(deck=36, seats=2, stake=100, cheating=cheating)
    seed, dealer = 20250101 + minutes, 0
    actions, outcome, dealt = play(rules, seed, dealer)
    await stakes.open_escrow(api.db, match_id=match_id, stake=100, account_ids=ids)
    durak = outcome["durak"]
    payouts = {account: (0 if seat == durak else 200) for seat, account in enumerate(ids)}
    if outcome["draw"]:
        payouts = dict.fromkeys(ids, 100)
    started = datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes)
    record = stakes.MatchRecord(
        match_id=match_id,
        table_id="tbl",
        rules=rules.to_json(),
        seed=seed,
        dealer=dealer,
        seats=[{"seat": seat, "account_id": a, "display_name": f"p{seat}"} for seat, a in enumerate(ids)],
        actions=actions,
        result=outcome,
        created_at=started,
        finished_at=started + timedelta(minutes=3),
    )
    await stakes.settle_escrow(api.db, match_id=match_id, payouts=payouts, record=record)
    return outcome, dealt, actions


async def test_list_detail_and_replay(api: Api) -> None:
    ann, ben = await api.signed_up("ann"), await api.signed_up("ben")
    ids = [(await c.get("/api/me")).json()["id"] for c in (ann, ben)]
    outcome, dealt, actions = await finish_staked_match(api, "honest", ids, cheating=False, minutes=0)
    await finish_staked_match(api, "cheaty", ids, cheating=True, minutes=10)

    listing = (await ann.get("/api/matches", params={"account": "me", "page_size": 1})).json()
    assert listing["total"] == 2 and [m["id"] for m in listing["items"]] == ["cheaty"]
    second = (await ann.get("/api/matches", params={"account": str(ids[1]), "page": 2, "page_size": 1})).json()
    assert [m["id"] for m in second["items"]] == ["honest"]
    assert (await api.client().get("/api/matches?account=me")).status_code == 401
    assert (await ann.get("/api/matches?account=999999")).status_code == 404
    assert (await ann.get("/api/matches?account=bob")).status_code == 422

    detail = (await ann.get("/api/matches/honest")).json()
    assert detail["stake"] == 100 and detail["result"] == outcome and detail["actions"] == len(actions)
    assert "seed" not in detail  # the seed would reveal every hand
    durak = outcome["durak"]
    winner = 1 - durak
    assert detail["coin_changes"] == {str(durak): -100, str(winner): 100}
    assert [(s["seat"], s["account_id"], s["coin_change"]) for s in detail["seats"]] == [
        (0, ids[0], detail["coin_changes"]["0"]),
        (1, ids[1], detail["coin_changes"]["1"]),
    ]
    cheaty = (await ann.get("/api/matches/cheaty")).json()
    assert cheaty["cheating"] is True and detail["cheating"] is False
    for seat, client in enumerate((ann, ben)):
        won = detail["coin_changes"][str(seat)] + cheaty["coin_changes"][str(seat)]
        assert (await client.get("/api/me")).json()["balance"] == 1000 + won

    replay = (await ann.get("/api/matches/honest/replay")).json()
    assert len(replay) == len(actions) + 1
    assert all("hand" not in view and "revealed_hands" not in view for view in replay[:-1])
    assert replay[-1]["outcome"] == outcome
    assert replay[-1]["revealed_hands"]["dealt"] == dealt
    assert replay[-1]["revealed_hands"]["final"][winner] == []
    # The match is over: every step shows every hand face up (issue 18), as the engine held them.
    state = new_match(Rules(deck=36, seats=2, stake=100), 20250101, 0)
    for view, action in zip(replay, [*actions, None], strict=True):
        assert view["hands"] == [sorted_hand(hand, state.trump) for hand in state.hands]
        if action is not None:
            state, _ = apply(state, action_from_json(action))
    # A cheating table too: its deck is published with the match, so its hands are no secret after it.
    cheat_replay = (await ann.get("/api/matches/cheaty/replay")).json()
    assert all(len(view["hands"]) == 2 for view in cheat_replay) and "revealed_hands" in cheat_replay[-1]

    assert (await ann.get("/api/matches/nope")).status_code == 404
    assert (await ann.get("/api/matches/nope/replay")).status_code == 404
    for client in (ann, ben):
        await client.aclose()
