"""RULES §8 as amended (issue 13.1): no seat keeps a match -- and the stakes in it -- hanging.

A player who is not connected when his decision comes (never connected, or gone) has the disconnect
grace to come back, timer or not; a connected one may hold a decision at most the idle limit. Both
run on the table's own clock, which these tests move by hand."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from app.engine import Rules, decision, legal_actions
from app.tables import commands as cmd
from app.tables.actor import TableActor
from app.tables.commands import Command
from app.tables.hooks import MemoryHooks
from app.tables.record import logged_actions
from app.tables.registry import TableRegistry
from app.tables.spec import DecisionLimits, Principal
from tests.support.wait import wait_until
from tests.tables.actors import ALICE, BOB, FakeClock, advance, away, seated_table
from tests.tables.harness import Player, create_table, signup

LIMITS = DecisionLimits(disconnect_grace_s=60.0, idle_limit_s=300.0)
PEOPLE = (ALICE, BOB)


async def _connect(registry: TableRegistry, actor: TableActor, who: Principal) -> str:
    """A connection of ``who`` says hello (as the table socket would), and the table has seen it."""
    conn = f"conn-{who.name}-{uuid.uuid4().hex[:6]}"
    actor.post(Command(cmd.Hello(), principal=who, conn=conn))
    await registry.call(actor.code, cmd.Info(), who)
    return conn


async def _disconnect(registry: TableRegistry, actor: TableActor, who: Principal, conn: str) -> None:
    actor.post(Command(cmd.Bye(), principal=who, conn=conn))
    await registry.call(actor.code, cmd.Info(), who)


async def _lead(registry: TableRegistry, actor: TableActor, seat: int) -> None:
    lead = next(a for a in legal_actions(actor.game, seat) if a.kind == "lead")
    reply = await registry.call(actor.code, cmd.move_of(lead), PEOPLE[seat], id=f"lead-{actor.version}")
    assert reply["type"] == "ack", reply


async def test_a_staked_match_nobody_stays_at_ends_after_the_grace_and_settles() -> None:
    """The issue's repro: seats 2, timer 0, stake 10; both confirm and the match starts (§8), then
    both close their sockets at once."""
    clock, hooks = FakeClock(), MemoryHooks(balances={1: 100, 2: 100})
    async with seated_table(Rules(timer=0, stake=10), clock=clock, hooks=hooks, limits=LIMITS) as (_, registry, actor):
        assert actor.status == "playing" and hooks.balances == {1: 90, 2: 90}  # both stakes in escrow
        await away(registry, actor, ALICE, BOB)
        leader = actor.game.attacker
        table = await advance(registry, actor, clock, 0)
        assert table["deadline_ms"] == 60_000  # shown to everyone like the move timer
        assert table["seats"][leader]["deadline_ms"] == 60_000
        assert table["seats"][leader]["deadline_kind"] == "grace"
        assert table["seats"][1 - leader]["deadline_ms"] is None  # not his decision

        table = await advance(registry, actor, clock, 59)
        assert actor.status == "playing" and table["seats"][leader]["deadline_ms"] == 1000
        await advance(registry, actor, clock, 1)
        assert actor.status == "finished"
        outcome = actor.game.outcome
        assert (outcome.forfeit, outcome.durak, outcome.reason) == (leader, leader, "disconnected")
        await actor._settle_task
    winner = 1 - leader
    assert hooks.balances == {PEOPLE[winner].account_id: 110, PEOPLE[leader].account_id: 90}
    assert actor.match_id in hooks.finished


async def test_only_the_leader_stays_and_leads_the_absent_defender_forfeits_after_the_grace() -> None:
    clock, hooks = FakeClock(), MemoryHooks(balances={1: 100, 2: 100})
    async with seated_table(Rules(timer=0, stake=10), clock=clock, hooks=hooks, limits=LIMITS) as (_, registry, actor):
        leader = actor.game.attacker
        defender = actor.game.defender
        await away(registry, actor, PEOPLE[defender])  # he confirmed, the match started, he went
        table = await advance(registry, actor, clock, 30)  # the leader thinks for half a minute
        assert table["seats"][leader]["deadline_kind"] == "idle"
        assert table["seats"][leader]["deadline_ms"] == 270_000
        await _lead(registry, actor, leader)
        assert decision(actor.game)["seats"] == [defender]
        # The grace counts from when the decision came to the defender, not from the match start.
        table = await advance(registry, actor, clock, 59)
        assert actor.status == "playing"
        assert (table["seats"][defender]["deadline_kind"], table["seats"][defender]["deadline_ms"]) == ("grace", 1000)
        await advance(registry, actor, clock, 1)
        assert actor.status == "finished"
        outcome = actor.game.outcome
        assert (outcome.forfeit, outcome.reason) == (defender, "disconnected")
        await actor._settle_task
    assert hooks.balances == {PEOPLE[leader].account_id: 110, PEOPLE[defender].account_id: 90}


async def test_a_connected_player_who_sits_on_his_decision_forfeits_after_the_idle_limit() -> None:
    clock = FakeClock()
    async with seated_table(Rules(timer=0), clock=clock, limits=LIMITS) as (_, registry, actor):
        for who in PEOPLE:
            await _connect(registry, actor, who)
        leader = actor.game.attacker
        table = await advance(registry, actor, clock, 299)
        assert actor.status == "playing"
        assert (table["seats"][leader]["deadline_kind"], table["seats"][leader]["deadline_ms"]) == ("idle", 1000)
        await advance(registry, actor, clock, 1)
        assert actor.status == "finished"
        assert (actor.game.outcome.forfeit, actor.game.outcome.reason) == (leader, "timeout")


async def test_the_grace_of_a_player_who_goes_counts_from_when_he_went_but_never_past_the_idle_limit() -> None:
    clock = FakeClock()
    async with seated_table(Rules(timer=0), clock=clock, limits=LIMITS) as (_, registry, actor):
        conns = {who.key: await _connect(registry, actor, who) for who in PEOPLE}
        leader = actor.game.attacker
        await advance(registry, actor, clock, 100)
        await _disconnect(registry, actor, PEOPLE[leader], conns[PEOPLE[leader].key])
        await advance(registry, actor, clock, 59)  # 159 s into his decision, 59 s after he went
        assert actor.status == "playing"
        conns[PEOPLE[leader].key] = await _connect(registry, actor, PEOPLE[leader])  # back in time
        table = await advance(registry, actor, clock, 100)
        assert actor.status == "playing" and table["seats"][leader]["deadline_kind"] == "idle"
        await _disconnect(registry, actor, PEOPLE[leader], conns[PEOPLE[leader].key])  # at 259 s: 41 s left
        table = await advance(registry, actor, clock, 0)
        assert (table["seats"][leader]["deadline_kind"], table["seats"][leader]["deadline_ms"]) == ("idle", 41_000)
        await advance(registry, actor, clock, 41)
        assert actor.status == "finished"
        assert (actor.game.outcome.forfeit, actor.game.outcome.reason) == (leader, "timeout")


async def test_a_throw_in_left_too_long_is_a_pass_not_a_forfeit() -> None:
    clock = FakeClock()
    async with seated_table(Rules(timer=0), clock=clock, limits=LIMITS) as (_, registry, actor):
        for who in PEOPLE:
            await _connect(registry, actor, who)
        leader, defender = actor.game.attacker, actor.game.defender
        await _lead(registry, actor, leader)
        reply = await registry.call(actor.code, cmd.TakeMove(), PEOPLE[defender], id="take-1")
        assert reply["type"] == "ack", reply
        assert decision(actor.game) == {"kind": "throw_in_after_take", "seats": [leader], "forfeits": False}
        await advance(registry, actor, clock, 300)
        assert actor.status == "playing"
        assert logged_actions(actor.log[-1:]) == [{"type": "pass", "seat": leader}]
        assert decision(actor.game)["kind"] == "lead"  # the defender took: the same attacker leads again
        table = await advance(registry, actor, clock, 0)
        assert table["seats"][leader]["deadline_ms"] == 300_000  # a new decision, its full time


async def test_a_move_timer_shorter_than_the_grace_still_decides_first() -> None:
    clock = FakeClock()
    async with seated_table(Rules(timer=20), clock=clock, limits=LIMITS) as (_, registry, actor):
        leader = actor.game.attacker
        table = await advance(registry, actor, clock, 0)
        assert (table["seats"][leader]["deadline_kind"], table["seats"][leader]["deadline_ms"]) == ("timer", 20_000)
        assert table["deadline_ms"] == 20_000
        await advance(registry, actor, clock, 20)
        assert actor.status == "finished" and actor.game.outcome.reason == "timeout"


async def test_at_a_table_with_a_long_move_timer_the_grace_of_an_absent_player_decides_first() -> None:
    clock = FakeClock()
    async with seated_table(Rules(timer=120), clock=clock, limits=LIMITS) as (_, registry, actor):
        leader = actor.game.attacker
        await _connect(registry, actor, PEOPLE[1 - leader])  # only the other player is here
        table = await advance(registry, actor, clock, 0)
        assert (table["seats"][leader]["deadline_kind"], table["seats"][leader]["deadline_ms"]) == ("grace", 60_000)
        await advance(registry, actor, clock, 60)
        assert actor.status == "finished"
        assert (actor.game.outcome.forfeit, actor.game.outcome.reason) == (leader, "disconnected")


def test_on_the_ledger_the_forfeit_of_a_seat_that_went_settles_the_stakes(client: TestClient) -> None:
    """The same repro through REST and sockets on a real database: both confirm (the match starts,
    §8) and close their sockets; after the grace the escrow is paid out as for any forfeit (§10)."""
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, seats=2, timer=0, stake=10)["code"]
    actor = client.app.state.tables.tables[code]
    clock = actor.clock = FakeClock()
    url = f"/ws/tables/{code}"
    with client.websocket_connect(url, headers=alice) as one, client.websocket_connect(url, headers=bob) as two:
        Player(one, "alice").hello()
        Player(two, "bob").hello()
        assert client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice).status_code == 200
        assert client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob).status_code == 200
        assert client.post(f"/api/tables/{code}/ready", headers=alice).status_code == 200
        assert actor.status == "playing"
    wait_until(  # both sockets closed, and the table knows
        lambda: not any(seat["connected"] for seat in client.get(f"/api/tables/{code}").json()["seats"]),
        what="both players are gone",
        every=0.05,
    )
    assert [_balance(client, who) for who in (alice, bob)] == [990, 990]
    leader = actor.game.attacker
    clock.now += 60
    table = client.get(f"/api/tables/{code}").json()  # any command: the passed deadline goes first
    assert table["status"] == "finished" and table["deadline_ms"] is None
    assert (actor.game.outcome.forfeit, actor.game.outcome.reason) == (leader, "disconnected")
    expected = [1010, 1010]
    expected[leader] = 990
    wait_until(  # the stakes are settled by a task after the match ends
        lambda: [_balance(client, who) for who in (alice, bob)] == expected,
        what=f"the balances are {expected}",
        every=0.05,
    )
    for seat, who in enumerate((alice, bob)):  # each player sees his own coin result
        detail = client.get(f"/api/matches/{actor.match_id}", headers=who).json()
        assert detail["seats"][seat]["coin_change"] == expected[seat] - 1000


def _balance(client: TestClient, headers: dict[str, str]) -> int:
    response = client.get("/api/me", headers=headers)
    assert response.status_code == 200
    return int(response.json()["balance"])
