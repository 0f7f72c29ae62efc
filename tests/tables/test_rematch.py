"""A rematch is a proposal (RULES §8 as amended, issue 13.2): it starts -- and takes the stakes --
only when every seat is taken by a player who agreed with his own click; whoever has not agreed
within the window, or leaves, gives up his seat and the table reopens."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.engine import Rules
from app.tables import commands as cmd
from app.tables.actor import TableActor
from app.tables.deadlines import REMATCH_WINDOW_S
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import Principal
from tests.tables.actors import ALICE, BOB, CAROL, FakeClock, advance, seated_table
from tests.tables.harness import Player, create_table, signup

STAKED = Rules(timer=0, stake=10)


def _hooks() -> MemoryHooks:
    return MemoryHooks(balances={ALICE.account_id: 100, BOB.account_id: 100, CAROL.account_id: 100})


async def _finish_by_forfeit(registry: TableRegistry, actor: TableActor, quitter: Principal = BOB) -> None:
    """End the running match at once: ``quitter`` leaves it (a forfeit; he keeps his seat)."""
    assert (await registry.call(actor.code, cmd.Leave(), quitter))["type"] == "ack"
    assert actor.status == "finished"
    await actor._settle_task


async def _call(registry: TableRegistry, actor: TableActor, op: str, who: Principal) -> dict:
    reply = await registry.call(actor.code, cmd.body_from_json({"type": op}), who)
    assert reply["type"] == "ack", reply
    return reply


async def test_one_click_never_stakes_the_other_players_coins() -> None:
    clock, hooks = FakeClock(), _hooks()
    async with seated_table(STAKED, clock=clock, hooks=hooks) as (_, registry, actor):
        await _finish_by_forfeit(registry, actor)
        assert hooks.balances == {1: 110, 2: 90, 3: 100}
        first_match = actor.match_id
        await _call(registry, actor, "rematch", ALICE)
        table = await advance(registry, actor, clock, 10)
        # Bob, still on the results screen, is in no new match and has staked nothing.
        assert actor.status == "finished" and actor.match_id == first_match
        assert hooks.balances == {1: 110, 2: 90, 3: 100} and list(hooks.escrows) == [first_match]
        assert table["rematch"] == {"agreed": [0], "deadline_ms": int((REMATCH_WINDOW_S - 10) * 1000)}
        assert [seat["player"] for seat in table["seats"]] == [ALICE.key, BOB.key]
        # Asking twice changes nothing.
        version = actor.version
        await _call(registry, actor, "rematch", ALICE)
        assert actor.version == version and actor.status == "finished"


async def test_when_every_player_agrees_the_rematch_starts_and_only_then_escrows() -> None:
    clock, hooks = FakeClock(), _hooks()
    async with seated_table(STAKED, clock=clock, hooks=hooks) as (_, registry, actor):
        await _finish_by_forfeit(registry, actor)
        first_match = actor.match_id
        await _call(registry, actor, "rematch", BOB)
        assert hooks.balances == {1: 110, 2: 90, 3: 100}
        await advance(registry, actor, clock, REMATCH_WINDOW_S - 1)
        await _call(registry, actor, "rematch", ALICE)
        assert actor.status == "playing" and actor.match_id != first_match and actor.game.ply == 0
        assert hooks.escrows[actor.match_id] == {1: 10, 2: 10}
        assert hooks.balances == {1: 100, 2: 80, 3: 100}
        table = await advance(registry, actor, clock, 0)
        assert table["rematch"] is None and table["status"] == "playing"
        assert actor.game.dealer == 1  # the durak of the last match deals (§3)


async def test_whoever_has_not_agreed_when_the_window_closes_loses_his_seat_and_the_table_reopens() -> None:
    clock, hooks = FakeClock(), _hooks()
    async with seated_table(STAKED, clock=clock, hooks=hooks) as (_, registry, actor):
        await _finish_by_forfeit(registry, actor)
        await _call(registry, actor, "rematch", ALICE)
        await advance(registry, actor, clock, REMATCH_WINDOW_S - 1)
        assert actor.seating.seat_of(BOB) is not None and actor.status == "finished"
        table = await advance(registry, actor, clock, 1)
        assert table["status"] == "waiting" and table["rematch"] is None
        assert [seat["player"] for seat in table["seats"]] == [ALICE.key, None]
        assert hooks.balances == {1: 110, 2: 90, 3: 100}  # nothing staked
        # Bob's click comes too late: he has no seat now.
        late = await registry.call(actor.code, cmd.Rematch(), BOB)
        assert (late["type"], late["code"]) == ("error", "not_seated")
        # Someone else takes the free seat: sitting down is his agreement, and alice agreed. The
        # table waits again, so the staked match starts once both are there and ready (§8).
        await registry.call(actor.code, cmd.Hello(), CAROL, conn="carol-1")
        await _call(registry, actor, "join", CAROL)
        assert actor.status == "waiting" and hooks.balances == {1: 110, 2: 90, 3: 100}
        await _call(registry, actor, "ready", ALICE)
        assert actor.status == "playing"
        assert hooks.escrows[actor.match_id] == {1: 10, 3: 10}
        assert hooks.balances == {1: 100, 2: 90, 3: 90}


async def test_leaving_declines_and_a_newcomer_who_sits_down_completes_the_rematch() -> None:
    clock, hooks = FakeClock(), _hooks()
    async with seated_table(STAKED, clock=clock, hooks=hooks) as (_, registry, actor):
        await _finish_by_forfeit(registry, actor, quitter=ALICE)
        await _call(registry, actor, "rematch", BOB)
        await _call(registry, actor, "leave", ALICE)  # alice declines
        table = await advance(registry, actor, clock, 0)
        assert table["status"] == "finished" and table["rematch"]["agreed"] == [1]
        assert table["seats"][0]["kind"] == "empty"
        balances = dict(hooks.balances)
        await registry.call(actor.code, cmd.Hello(), CAROL, conn="carol-1")  # she is at the table
        await _call(registry, actor, "join", CAROL)
        assert actor.status == "playing" and [s.principal for s in actor.seats] == [CAROL, BOB]
        assert hooks.balances == {**balances, 2: balances[2] - 10, 3: balances[3] - 10}


async def test_the_creator_cannot_start_a_match_after_a_match_without_the_others() -> None:
    clock, hooks = FakeClock(), _hooks()
    async with seated_table(STAKED, clock=clock, hooks=hooks) as (_, registry, actor):
        await _finish_by_forfeit(registry, actor)
        refused = await registry.call(actor.code, cmd.Start(), ALICE)
        assert (refused["type"], refused["code"]) == ("error", "match_over")
        assert actor.status == "finished" and hooks.balances == {1: 110, 2: 90, 3: 100}


async def test_bots_agree_by_themselves() -> None:
    clock = FakeClock()
    async with seated_table(Rules(timer=0, seats=3), clock=clock) as (_, registry, actor):
        reply = await registry.call(actor.code, cmd.AddBot(level="easy"), ALICE)
        assert reply["type"] == "ack" and actor.status == "playing"
        await _finish_by_forfeit(registry, actor)
        await _call(registry, actor, "rematch", BOB)
        table = await advance(registry, actor, clock, 0)
        assert table["rematch"]["agreed"] == [1, 2]  # bob and the bot
        await _call(registry, actor, "rematch", ALICE)
        assert actor.status == "playing" and len(actor.seats) == 3


def test_over_the_socket_rematch_proposes_and_agrees(client: TestClient) -> None:
    alice, bob = signup(client, "alice"), signup(client, "bob")
    code = create_table(client, alice, timer=0, stake=10)["code"]
    actor = client.app.state.tables.tables[code]
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as wa,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as wb,
    ):
        pa, pb = Player(wa, "a"), Player(wb, "b")
        pa.hello()
        pb.hello()
        client.post(f"/api/tables/{code}/join", json={"seat": 0}, headers=alice)
        client.post(f"/api/tables/{code}/join", json={"seat": 1}, headers=bob)
        pa.send({"type": "ready", "id": "go"})  # the staked match starts once both are ready (§8)
        assert pa.until(lambda m: m["type"] in ("ack", "error"))["type"] == "ack"
        assert actor.status == "playing"
        client.post(f"/api/tables/{code}/leave", headers=bob)  # a forfeit: the match is over
        assert (
            pa.until(lambda m: m["type"] == "update" and m["table"]["status"] == "finished")["table"]["rematch"] is None
        )
        pa.send({"type": "rematch", "id": "r1"})
        assert pa.until(lambda m: m["type"] in ("ack", "error"))["type"] == "ack"
        proposed = pb.until(lambda m: m["type"] == "update" and m["table"]["rematch"] is not None)
        assert proposed["table"]["status"] == "finished"
        assert proposed["table"]["rematch"]["agreed"] == [0]
        assert {"type": "rematch", "seat": 0} in [{k: e[k] for k in ("type", "seat")} for e in proposed["events"]]
        assert 0 < proposed["table"]["rematch"]["deadline_ms"] <= REMATCH_WINDOW_S * 1000
        pb.send({"type": "rematch", "id": "r2"})
        pb.until(lambda m: m["type"] == "ack")
        started = pa.until(lambda m: m["type"] == "update" and m["table"]["status"] == "playing")
        assert started["table"]["rematch"] is None and started["view"]["ply"] == 0
    assert actor.status == "playing"
