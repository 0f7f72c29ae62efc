"""Frames for connections in the table's own process skip the broker; once a connection in another
process has sent the table a command, its channels go through the broker too, all of a command's
frames for other processes bundled in one message on the table's fan channel. A channel follows the
connections: one that moves to the owner's process (its own died) is served there again, and so are
the spectators there."""

from __future__ import annotations

import asyncio
import uuid

from app.broker import Subscription, open_broker
from app.engine import Rules, decision, legal_actions
from app.tables import commands as cmd
from app.tables.commands import Command, command_to_json
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import Principal, TableSpec
from app.tables.store import MemoryStore
from app.transport import channels
from app.transport.delivery import Relay
from app.transport.table_transport import BrokerTransport
from tests.tables.actors import ALICE, BOB


async def _next_frame(sub, timeout: float = 2.0) -> channels.Frame:
    async with asyncio.timeout(timeout):
        return channels.parse_frame((await sub.receive()).data)


async def test_local_frames_skip_the_broker_and_remote_players_get_theirs_through_it() -> None:
    name = f"memory://local-{uuid.uuid4().hex}"
    async with open_broker(name) as owner_broker, open_broker(name) as other_broker:
        published: list[str] = []  # the channels of what the owner sent through the backend
        bundles = 0  # messages on the table's fan channel
        publish_many, publish_nowait = owner_broker.publish_many, owner_broker.publish_nowait

        def seen(messages):
            nonlocal bundles
            for channel, message in messages:
                assert ":p:" not in channel and not channel.endswith(":watch")  # never one by one
                if channel.endswith(":fan:proc-b"):  # a bundle: what is in it
                    bundles += 1
                    published.extend(inner for inner, _ in channels.unpack_bundle(message))
                else:
                    published.append(channel)

        async def spy_many(messages):
            seen(messages)
            await publish_many(messages)

        def spy_nowait(messages):
            seen(messages)
            publish_nowait(messages)

        owner_broker.publish_many = spy_many  # type: ignore[method-assign]
        owner_broker.publish_nowait = spy_nowait  # type: ignore[method-assign]
        registry = TableRegistry(
            owner_broker, MemoryHooks(), store=MemoryStore(name), supervise=False, transport=BrokerTransport
        )
        async with registry:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            code = spec.code
            alice_channel, bob_channel = channels.person(code, ALICE.key), channels.person(code, BOB.key)
            async with (
                owner_broker.subscribe(alice_channel) as alice_here,
                Relay(other_broker, "proc-b").joined(code),  # what Bob's connection does first
                other_broker.subscribe(bob_channel) as bob_there,
            ):
                # Alice's connection lives with the actor: her hello is posted, her frames stay here.
                actor.post(Command(cmd.Hello(last_version=-1), principal=ALICE, conn="c-a"))
                assert (await _next_frame(alice_here)).kind == "welcome"
                assert alice_channel not in published

                # Bob's connection is in another process: his hello comes through the broker, and
                # from then on his channel (and the spectators') goes through it too.
                hello = Command(cmd.Hello(last_version=-1), principal=BOB, conn="c-b", via="proc-b")
                await other_broker.publish(channels.inbox(code), command_to_json(hello))
                assert (await _next_frame(bob_there)).kind == "welcome"
                assert bob_channel in published

                published.clear()
                bundles = 0
                await registry.call(code, cmd.Join(), ALICE)
                await registry.call(code, cmd.Join(), BOB)
                assert bundles == 2  # one per command, whoever its frames are for
                assert actor.status == "playing"
                for sub in (alice_here, bob_there):  # both see the match start
                    frames = [await _next_frame(sub) for _ in range(2)]
                    assert frames[-1].kind == "update" and frames[-1].seat is not None
                assert bob_channel in published and channels.watch(code) in published
                assert alice_channel not in published


async def _frames_until(sub: Subscription, kind: str, cmd_id: str = "") -> list[channels.Frame]:
    """The frames on ``sub`` up to the first of ``kind`` (with ``cmd_id``, when given)."""
    frames = [await _next_frame(sub)]
    while frames[-1].kind != kind or (cmd_id and frames[-1].cmd_id != cmd_id):
        frames.append(await _next_frame(sub))
    return frames


async def test_a_player_whose_process_died_is_served_by_the_owners_process_when_he_reconnects_there() -> None:
    """Bob's first connection and a spectator's are on process B; B dies (no ``bye``), and both
    reconnect to the owner's own process A. Their frames must reach them there, not go on to B."""
    name = f"memory://moved-{uuid.uuid4().hex}"
    async with open_broker(name) as owner_broker, open_broker(name) as other_broker:
        registry = TableRegistry(
            owner_broker,
            MemoryHooks(),
            store=MemoryStore(name),
            owner="proc-a",
            supervise=False,
            transport=BrokerTransport,
        )
        async with registry:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            code = spec.code
            await registry.call(code, cmd.Join(), ALICE)
            await registry.call(code, cmd.Join(), BOB)
            bob_channel, watch_channel = channels.person(code, BOB.key), channels.watch(code)
            first_spectator = Principal("anon:s1", "spectator")
            async with (
                Relay(other_broker, "proc-b").joined(code),
                other_broker.subscribe(bob_channel) as bob_there,
            ):
                for who, conn in ((BOB, "c-b1"), (first_spectator, "c-s1")):
                    hello = Command(cmd.Hello(last_version=-1), principal=who, conn=conn, via="proc-b")
                    await other_broker.publish(channels.inbox(code), command_to_json(hello))
                assert (await _next_frame(bob_there)).kind == "welcome"
            # Process B is gone without a word. Bob and a spectator come back on the owner's process.
            spectator = Principal("anon:s2", "spectator")
            async with (
                owner_broker.subscribe(bob_channel) as bob_here,
                owner_broker.subscribe(channels.person(code, spectator.key)) as spectator_here,
                owner_broker.subscribe(watch_channel) as watching_here,
            ):
                actor.post(Command(cmd.Hello(last_version=-1), principal=BOB, conn="c-b2"))
                assert (await _next_frame(bob_here)).kind == "welcome"
                actor.post(Command(cmd.Hello(last_version=-1), principal=spectator, conn="c-s2"))
                assert (await _next_frame(spectator_here)).kind == "welcome"
                # Moves of both players until Bob has made one over his new connection: he gets each
                # update and his ack, and so do the spectators here.
                bob_moved = False
                for step in range(40):
                    seat = decision(actor.game)["seats"][0]
                    action = next(a for a in legal_actions(actor.game, seat) if a.kind != "challenge")
                    version = actor.version
                    if actor.seats[seat].principal == BOB:
                        cmd_id = f"m{step}"
                        actor.post(Command(cmd.move_of(action), BOB, "c-b2", id=cmd_id))
                        frames = await _frames_until(bob_here, "ack", cmd_id)
                        assert [f.kind for f in frames if f.kind != "presence"] == ["update", "ack"]
                        bob_moved = True
                    else:
                        reply = await registry.call(code, cmd.move_of(action), ALICE, id=f"m{step}")
                        assert reply["type"] == "ack", reply
                        assert (await _frames_until(bob_here, "update"))[-1].version == version + 1
                    assert (await _frames_until(watching_here, "update"))[-1].version == version + 1
                    if bob_moved:
                        break
                assert bob_moved
