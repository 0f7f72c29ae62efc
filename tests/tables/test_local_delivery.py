"""Frames for connections in the table's own process skip the broker; once a connection in another
process has sent the table a command, its channels go through the broker (and stay there), all of a
command's frames for other processes bundled in one message on the table's fan channel."""

from __future__ import annotations

import asyncio
import uuid

from app.broker import open_broker
from app.engine import Rules
from app.tables import channels, fanout
from app.tables.commands import Command, command_to_json
from app.tables.hooks import MemoryHooks
from app.tables.registry import TableRegistry
from app.tables.spec import TableSpec
from app.tables.store import MemoryStore
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
        registry = TableRegistry(owner_broker, MemoryHooks(), store=MemoryStore(name), supervise=False)
        async with registry:
            spec = TableSpec(rules=Rules(timer=0), creator=ALICE, bot_delay_ms=0)
            actor = await registry.create(spec)
            code = spec.code
            alice_channel, bob_channel = channels.person(code, ALICE.key), channels.person(code, BOB.key)
            async with (
                owner_broker.subscribe(alice_channel) as alice_here,
                fanout.Relay(other_broker, "proc-b").joined(code),  # what Bob's connection does first
                other_broker.subscribe(bob_channel) as bob_there,
            ):
                # Alice's connection lives with the actor: her hello is posted, her frames stay here.
                actor.post(Command("hello", principal=ALICE, conn="c-a", last_version=-1))
                assert (await _next_frame(alice_here)).kind == "welcome"
                assert alice_channel not in published

                # Bob's connection is in another process: his hello comes through the broker, and
                # from then on his channel (and the spectators') goes through it too.
                hello = Command("hello", principal=BOB, conn="c-b", last_version=-1, via="proc-b")
                await other_broker.publish(channels.inbox(code), command_to_json(hello))
                assert (await _next_frame(bob_there)).kind == "welcome"
                assert bob_channel in published

                published.clear()
                bundles = 0
                await registry.call(code, "join", ALICE)
                await registry.call(code, "join", BOB)
                assert bundles == 2  # one per command, whoever its frames are for
                assert actor.status == "playing"
                for sub in (alice_here, bob_there):  # both see the match start
                    frames = [await _next_frame(sub) for _ in range(2)]
                    assert frames[-1].kind == "update" and frames[-1].seat is not None
                assert bob_channel in published and channels.watch(code) in published
                assert alice_channel not in published
