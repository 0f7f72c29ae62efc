"""Match history over HTTP: the list, the detail and the replay of a match played by the engine;
who may see a private table's matches and whose coin results."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from app.db import stakes
from app.engine import Rules, action_from_json, action_to_json, apply, decision, legal_actions, new_match
from app.engine.views import sort_hand
from tests.api.support import Api
from tests.support.wait import wait_until
from tests.tables.harness import Player, create_table, play_out, signup


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


async def finish_staked_match(
    api: Api, match_id: str, ids: list[int], *, cheating: bool, minutes: int, private: bool = False
) -> Any:
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
        private=private,
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
    ann_change = 100 if winner == 0 else -100
    # Ann sees her own coin result only; Ben's seat shows his place.
    assert detail["coin_changes"] == {"0": ann_change}
    assert [(s["seat"], s["account_id"], s["coin_change"]) for s in detail["seats"]] == [
        (0, ids[0], ann_change),
        (1, ids[1], None),
    ]
    assert detail["seats"][1]["place"] == (1 if winner == 1 else 2)
    cheaty = (await ann.get("/api/matches/cheaty")).json()
    assert cheaty["cheating"] is True and detail["cheating"] is False
    for seat, client in enumerate((ann, ben)):
        mine = [(await client.get(f"/api/matches/{m}")).json()["coin_changes"] for m in ("honest", "cheaty")]
        assert all(list(changes) == [str(seat)] for changes in mine)
        won = sum(changes[str(seat)] for changes in mine)
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


async def test_coin_results_are_their_players_own_and_admins(api: Api) -> None:
    ann, ben, cid = await api.signed_up("ann"), await api.signed_up("ben"), await api.signed_up("cid")
    root, anonymous = await api.admin(), api.client()
    ids = [(await c.get("/api/me")).json()["id"] for c in (ann, ben)]
    outcome, _, _ = await finish_staked_match(api, "m1", ids, cheating=False, minutes=0)
    everyone = {1 - outcome["durak"]: 100, outcome["durak"]: -100}

    def changes(page: dict[str, Any]) -> list[int | None]:
        return [seat["coin_change"] for seat in page["items"][0]["seats"]]

    for viewer, seen in [
        (ann, [everyone[0], None]),
        (ben, [None, everyone[1]]),
        (cid, [None, None]),
        (anonymous, [None, None]),
        (root, [everyone[0], everyone[1]]),
    ]:
        for query in ({}, {"account": str(ids[0])}, {"account": str(ids[1])}):
            assert changes((await viewer.get("/api/matches", params=query)).json()) == seen
        detail = (await viewer.get("/api/matches/m1")).json()
        assert [seat["coin_change"] for seat in detail["seats"]] == seen
        assert detail["coin_changes"] == {str(seat): coins for seat, coins in enumerate(seen) if coins is not None}
        assert [seat["place"] for seat in detail["seats"]] == [1 if seat != outcome["durak"] else 2 for seat in (0, 1)]
    for client in (ann, ben, cid, root, anonymous):
        await client.aclose()


async def test_a_private_tables_matches_are_shown_only_to_their_players_and_admins(api: Api) -> None:
    ann, ben, cid = await api.signed_up("ann"), await api.signed_up("ben"), await api.signed_up("cid")
    root, anonymous = await api.admin(), api.client()
    ids = [(await c.get("/api/me")).json()["id"] for c in (ann, ben)]
    await finish_staked_match(api, "open", ids, cheating=False, minutes=0)
    await finish_staked_match(api, "secret", ids, cheating=False, minutes=10, private=True)

    async def listed(client: Any, **query: str) -> list[str]:
        page = (await client.get("/api/matches", params=query)).json()
        assert page["total"] == len(page["items"])
        return [item["id"] for item in page["items"]]

    for client in (cid, anonymous):
        assert await listed(client) == ["open"]
        assert await listed(client, account=str(ids[0])) == ["open"]
        for path in ("/api/matches/secret", "/api/matches/secret/replay"):
            hidden = await client.get(path)
            assert hidden.status_code == 404 and hidden.json()["detail"] == "no match secret"
    for client in (ann, ben, root):
        assert await listed(client) == ["secret", "open"]
        assert await listed(client, account=str(ids[1])) == ["secret", "open"]
        assert (await client.get("/api/matches/secret")).status_code == 200
        assert (await client.get("/api/matches/secret/replay")).status_code == 200
    assert await listed(ann, account="me") == ["secret", "open"]
    for client in (ann, ben, cid, root, anonymous):
        await client.aclose()


def _finish_table(client: TestClient, *, private: bool) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """A two-seat table opened by alice, played to the end by alice and bob over the websocket."""
    alice, bob = signup(client, f"alice{int(private)}"), signup(client, f"bob{int(private)}")
    table = create_table(client, alice, timer=0, private=private)
    code = table["code"]
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb,
    ):
        pa, pb = Player(wa, "a"), Player(wb, "b")
        pa.hello()
        pb.hello()
        client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
        client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
        actor = client.app.state.tables.tables[code]  # type: ignore[attr-defined]
        pb.until(lambda m: m["type"] == "update" and m["view"] is not None)
        play_out([pa, pb], lambda: actor, random.Random(3))
    wait_until(  # the match is stored by a task after the results went out
        lambda: bool(client.get("/api/matches?account=me", headers=alice).json()["total"]),
        what="alice's match is stored",
        every=0.05,
    )
    return table, alice, bob


def test_match_history_never_shows_a_tables_invite_or_watch_code(client: TestClient) -> None:
    """Before: GET /api/matches listed ``table_id`` = the invite code, and GET /api/tables/<code>
    then gave away the watch code of a private table to anyone."""
    public, _, _ = _finish_table(client, private=False)
    private, alice, bob = _finish_table(client, private=True)
    carol = signup(client, "carol")

    anonymous = client.get("/api/matches").json()
    assert anonymous["total"] == 1  # only the public table's match
    assert client.get("/api/matches", headers=carol).json()["total"] == 1
    mine = client.get("/api/matches", headers=alice).json()
    assert mine["total"] == 2
    texts = [client.get("/api/matches", headers=who).text for who in (alice, bob, carol)]
    for item in mine["items"]:
        texts += [client.get(f"/api/matches/{item['id']}", headers=alice).text]
        texts += [client.get(f"/api/matches/{item['id']}/replay", headers=alice).text]
    for table in (public, private):
        for secret in (table["code"], table["watch_code"]):
            assert all(secret not in text for text in texts)
    private_match = next(item for item in mine["items"] if item["table_id"] != anonymous["items"][0]["table_id"])
    for headers in ({}, carol):
        for path in (f"/api/matches/{private_match['id']}", f"/api/matches/{private_match['id']}/replay"):
            assert client.get(path, headers=headers).status_code == 404
    assert client.get(f"/api/matches/{private_match['id']}", headers=bob).status_code == 200
