"""Friends over HTTP: requests and accepting, removing, blocks, challenges (a private table opened by
the table routes' own path, coins through the ledger at a staked one), presence and "at which table"
as table privacy allows, rate limits and clear refusals of bad input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from app.config import Settings
from app.db import friends
from app.main import create_app
from tests.api.support import SECRET, Api, at_table
from tests.db.helpers import assert_ledger_sound
from tests.limits import RELAXED_LIMITS
from tests.support.wait import eventually


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def social(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    settings = Settings(
        database_url=database_url,
        secret_key=SECRET,
        friend_requests_per_hour=3,
        challenges_per_hour=4,
        **RELAXED_LIMITS,
    )
    app = create_app(settings)
    app.state.clock = Clock()
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


async def befriend(a: httpx.AsyncClient, b: httpx.AsyncClient, a_name: str, b_name: str) -> None:
    assert (await a.post(f"/api/friends/{b_name}")).json()["status"] == "requested"
    assert (await b.post(f"/api/friends/{a_name}")).json()["status"] == "friends"


async def my_id(client: httpx.AsyncClient) -> int:
    return int((await client.get("/api/me")).json()["id"])


async def test_a_request_waits_until_accepted_and_either_may_end_it(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("Bob")
    sent = await alice.post("/api/friends/bob")  # names are case-insensitive
    assert sent.status_code == 200 and sent.json() == {"name": "Bob", "status": "requested"}
    assert (await alice.post("/api/friends/bob")).json()["status"] == "requested"  # asking again changes nothing
    mine, his = (await alice.get("/api/friends")).json(), (await bob.get("/api/friends")).json()
    assert [p["name"] for p in mine["outgoing"]] == ["Bob"] and mine["friends"] == []
    assert [p["name"] for p in his["incoming"]] == ["alice"]
    assert (await bob.post("/api/friends/alice")).json() == {"name": "alice", "status": "friends"}
    mine = (await alice.get("/api/friends")).json()
    assert [f["name"] for f in mine["friends"]] == ["Bob"] and mine["outgoing"] == []
    assert mine["friends"][0]["online"] is False and mine["friends"][0]["table"] is None
    assert (await bob.delete("/api/friends/alice")).status_code == 204
    assert (await alice.get("/api/friends")).json()["friends"] == []
    assert (await bob.delete("/api/friends/alice")).status_code == 404
    # a request declined is a request deleted
    await alice.post("/api/friends/bob")
    assert (await bob.delete("/api/friends/alice")).status_code == 204
    assert (await alice.get("/api/friends")).json()["outgoing"] == []


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/api/friends/nobody", 404),
        ("POST", "/api/friends/alice", 422),  # yourself
        ("POST", "/api/friends/a%00b", 404),  # NUL in any path: BrowserGuard
        ("POST", "/api/friends/x", 422),
        ("POST", "/api/friends/" + "n" * 25, 422),
        ("POST", "/api/blocks/nobody", 404),
        ("DELETE", "/api/blocks/nobody", 404),
        ("POST", "/api/challenges/0/accept", 422),
        ("POST", "/api/challenges/99999/accept", 404),
        ("POST", "/api/challenges/99999/decline", 404),
        ("DELETE", "/api/challenges/99999", 404),
        ("POST", "/api/challenges/99999999999999999999/accept", 422),
    ],
)
async def test_bad_requests_are_refused_clearly(social: Api, method: str, path: str, status: int) -> None:
    alice = await social.signed_up("alice")
    response = await alice.request(method, path)
    assert response.status_code == status, response.text
    assert "detail" in response.json()


async def test_guests_and_strangers_have_no_friends(social: Api) -> None:
    await social.signed_up("alice")
    guest = await social.guest("visitor")
    assert (await guest.post("/api/friends/alice")).status_code == 403
    assert (await guest.get("/api/friends")).status_code == 403
    assert (await social.client().get("/api/friends")).status_code == 401
    assert (await social.client().get("/api/notices/stream")).status_code == 401


async def test_friend_requests_are_rate_limited(social: Api) -> None:
    alice = await social.signed_up("alice")
    for name in ("b1", "b2", "b3", "b4"):
        await social.signed_up(name)
    for name in ("b1", "b2", "b3"):
        assert (await alice.post(f"/api/friends/{name}")).status_code == 200
    refused = await alice.post("/api/friends/b4")
    assert refused.status_code == 429 and refused.headers["Retry-After"]
    assert refused.json()["detail"].startswith("too_many")


async def test_a_block_ends_friendship_and_refuses_requests_and_challenges_both_ways(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    await befriend(alice, bob, "alice", "bob")
    blocked = await alice.post("/api/blocks/bob")
    assert blocked.status_code == 200 and blocked.json() == {"name": "bob", "blocked": True}
    assert (await bob.get("/api/friends")).json()["friends"] == []
    assert [p["name"] for p in (await alice.get("/api/friends")).json()["blocked"]] == ["bob"]
    for client, other in ((bob, "alice"), (alice, "bob")):
        refused = await client.post(f"/api/friends/{other}")
        assert refused.status_code == 409 and refused.json()["detail"].startswith("cannot_befriend")
        refused = await client.post(f"/api/friends/{other}/challenge", json={})
        assert refused.status_code == 409 and refused.json()["detail"].startswith("blocked")
    assert (await alice.delete("/api/blocks/bob")).status_code == 204
    assert (await alice.delete("/api/blocks/bob")).status_code == 404
    assert (await bob.post("/api/friends/alice")).json()["status"] == "requested"


async def table(client: httpx.AsyncClient, code: str) -> dict[str, Any]:
    data: dict[str, Any] = (await client.get(f"/api/tables/{code}")).json()
    return data


async def test_a_challenge_opens_a_private_table_with_its_rules_and_the_friend_sits_down(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    refused = await alice.post("/api/friends/bob/challenge", json={})
    assert refused.status_code == 409 and refused.json()["detail"].startswith("not_friends")
    await befriend(alice, bob, "alice", "bob")
    made = await alice.post("/api/friends/bob/challenge", json={"deck": 24, "seats": 2, "timer": 45, "private": False})
    assert made.status_code == 201, made.text
    sent = made.json()
    assert sent["from"] == "alice" and sent["to"] == "bob" and sent["status"] == "pending"
    assert sent["rules"]["deck"] == 24 and sent["rules"]["timer"] == 45
    info = await table(alice, sent["code"])
    assert info["private"] is True and info["status"] == "waiting"  # private whatever the body said
    assert [seat["name"] for seat in info["seats"] if seat["kind"] == "human"] == ["alice"]
    again = await alice.post("/api/friends/bob/challenge", json={})
    assert again.status_code == 409 and again.json()["detail"].startswith("challenge_pending")
    listed = (await bob.get("/api/challenges")).json()
    assert [c["id"] for c in listed["incoming"]] == [sent["id"]] and listed["outgoing"] == []
    assert (await alice.post(f"/api/challenges/{sent['id']}/accept")).status_code == 403  # not hers to accept
    accepted = await bob.post(f"/api/challenges/{sent['id']}/accept")
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["code"] == sent["code"] and accepted.json()["challenge"]["status"] == "accepted"
    await eventually(lambda: _playing(alice, sent["code"]), what="the match started", every=0.02)
    again = await bob.post(f"/api/challenges/{sent['id']}/accept")
    assert again.status_code == 409 and again.json()["detail"].startswith("challenge_closed")
    assert (await bob.get("/api/challenges")).json()["incoming"] == []


async def _playing(client: httpx.AsyncClient, code: str) -> bool:
    return (await table(client, code))["status"] == "playing"


async def test_declined_cancelled_and_expired_challenges(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    await befriend(alice, bob, "alice", "bob")
    first = (await alice.post("/api/friends/bob/challenge", json={})).json()
    declined = await bob.post(f"/api/challenges/{first['id']}/decline")
    assert declined.status_code == 200 and declined.json()["status"] == "declined"
    refused = await bob.post(f"/api/challenges/{first['id']}/accept")
    assert refused.status_code == 409
    second = (await alice.post("/api/friends/bob/challenge", json={})).json()
    assert (await bob.delete(f"/api/challenges/{second['id']}")).status_code == 403  # only the challenger cancels
    assert (await alice.delete(f"/api/challenges/{second['id']}")).status_code == 204
    closed = await alice.get(f"/api/tables/{second['code']}")  # nobody left at it: closed
    assert closed.status_code == 410 and closed.json()["detail"].startswith("table_closed")
    third = (await alice.post("/api/friends/bob/challenge", json={})).json()
    social.app.state.clock.now += timedelta(seconds=social.settings.friends.challenge_ttl_s + 1)
    assert (await bob.get("/api/challenges")).json()["incoming"] == []
    expired = await bob.post(f"/api/challenges/{third['id']}/accept")
    assert expired.status_code == 409 and "expired" in expired.json()["detail"]
    # a stranger's challenge is nobody else's business
    carol = await social.signed_up("carol")
    assert (await carol.post(f"/api/challenges/{third['id']}/decline")).status_code == 404


async def test_challenges_are_rate_limited(social: Api) -> None:
    alice = await social.signed_up("alice")
    for name in ("f1", "f2", "f3"):
        other = await social.signed_up(name)
        await befriend(alice, other, "alice", name)
    sent = 0
    for _ in range(2):
        for name in ("f1", "f2", "f3"):
            response = await alice.post(f"/api/friends/{name}/challenge", json={})
            if response.status_code == 201:
                sent += 1
                await alice.delete(f"/api/challenges/{response.json()['id']}")
            else:
                assert response.status_code == 429, response.text
    assert sent == 4


async def test_a_staked_challenge_moves_coins_through_the_ledger(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    await befriend(alice, bob, "alice", "bob")
    too_much = await alice.post("/api/friends/bob/challenge", json={"stake": 5000})
    assert too_much.status_code == 409 and too_much.json()["detail"].startswith("insufficient_funds")
    sent = (await alice.post("/api/friends/bob/challenge", json={"stake": 100, "timer": 60})).json()
    for client in (alice, bob):  # both have the table open: a staked match starts once both are ready
        await at_table(social, client, sent["code"])
    await bob.post(f"/api/challenges/{sent['id']}/accept")  # filling the table, bob is ready
    assert (await alice.post(f"/api/tables/{sent['code']}/ready")).status_code == 200
    await eventually(lambda: _playing(alice, sent["code"]), what="the match started", every=0.02)
    assert (await bob.post(f"/api/tables/{sent['code']}/leave")).status_code == 200  # a forfeit

    async def settled() -> bool:
        return int((await alice.get("/api/me")).json()["balance"]) == 1100

    await eventually(settled, timeout=10, what="the stake is paid out", every=0.05)
    assert int((await bob.get("/api/me")).json()["balance"]) == 900
    await assert_ledger_sound(social.db)


async def test_friends_see_who_is_online_and_at_which_table_as_privacy_allows(social: Api) -> None:
    alice, bob, carol = [await social.signed_up(n) for n in ("alice", "bob", "carol")]
    await befriend(alice, bob, "alice", "bob")
    bob_id = await my_id(bob)
    now = social.app.state.clock.now
    await social.db.write(lambda s: friends.seen(s, bob_id, now))  # bob's page is open
    carols = (await carol.post("/api/tables", json={"private": True})).json()["code"]
    assert (await bob.post(f"/api/tables/{carols}/join", json={})).status_code == 200
    friend = (await alice.get("/api/friends")).json()["friends"][0]
    assert friend["online"] is True
    assert friend["table"] == {"code": None, "name": None, "private": True, "status": "waiting"}
    assert (await alice.post(f"/api/tables/{carols}/join", json={})).status_code == 200  # she got the link
    friend = (await alice.get("/api/friends")).json()["friends"][0]
    assert friend["table"]["code"] == carols and friend["table"]["name"]
    public = (await carol.post("/api/tables", json={"seats": 3})).json()["code"]
    assert (await bob.post(f"/api/tables/{public}/join", json={})).status_code == 200
    assert (await alice.get("/api/friends")).json()["friends"][0]["table"]["code"] == public
    social.app.state.clock.now = now + friends.ONLINE_WITHIN + timedelta(seconds=1)
    gone = (await alice.get("/api/friends")).json()["friends"][0]
    assert gone["online"] is False and gone["table"] is None


async def test_a_friend_seated_by_quick_play_is_seen_at_that_table(social: Api) -> None:
    alice, bob = await social.signed_up("alice"), await social.signed_up("bob")
    await befriend(alice, bob, "alice", "bob")
    bob_id = await my_id(bob)
    now = social.app.state.clock.now
    await social.db.write(lambda s: friends.seen(s, bob_id, now))
    seated = await bob.post("/api/quickplay", json={"seats": 3, "deck": 36})
    assert seated.status_code == 200, seated.text
    friend = (await alice.get("/api/friends")).json()["friends"][0]
    assert friend["table"]["code"] == seated.json()["code"] and friend["table"]["name"] == "Quick game"
