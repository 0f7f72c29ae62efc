"""Bundles: the frames a table's owner sends to another process for one command travel as one
message on that process's fan channel of the table, and the process's Relay hands them to its own
subscribers (only that table's channels); a gap on the fan channel is a gap on every channel of the
table there."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest

from app.broker import Broker, BrokerError, BrokerUnavailable, Gap, Message, open_broker
from app.transport import channels
from app.transport.delivery import Delivery, Relay

CODE = "tblcode"
OTHER = "othercode"


def test_a_bundle_unpacks_to_its_pairs_in_order_and_a_cut_one_is_refused() -> None:
    items = [
        (channels.person(CODE, "a:1"), "update|||0|\n{}"),
        (channels.watch(CODE), b"\x00\xff raw bytes"),
        (channels.person(CODE, "g:\u00e9"), ""),  # a non-ASCII key, an empty message
    ]
    packed = channels.pack_bundle(items)
    assert channels.unpack_bundle(packed) == [(c, m.encode() if isinstance(m, str) else m) for c, m in items]
    assert channels.unpack_bundle(b"") == []
    for cut in (1, 5, len(packed) - 1):
        with pytest.raises(ValueError):
            channels.unpack_bundle(packed[:cut])


@contextlib.asynccontextmanager
async def _processes(count: int) -> AsyncIterator[list[Broker]]:
    """``count`` brokers on one in-memory hub: one per server process."""
    name = f"memory://relay-{uuid.uuid4().hex}"
    async with contextlib.AsyncExitStack() as stack:
        yield [await stack.enter_async_context(open_broker(name)) for _ in range(count)]


async def _receive(sub, timeout: float = 2.0):
    async with asyncio.timeout(timeout):
        return await sub.receive()


async def test_the_owner_sends_one_bundle_per_process_and_command_and_each_relay_delivers_its_frames() -> None:
    async with _processes(3) as (owner, b, c):
        sent: list[list[tuple[str, bytes | str]]] = []
        publish_nowait = owner.publish_nowait

        def spy(messages):
            sent.append(list(messages))
            publish_nowait(messages)

        owner.publish_nowait = spy  # type: ignore[method-assign]
        delivery = Delivery(CODE, owner)
        delivery.heard_from_afar("a:1", "proc-b")
        delivery.heard_from_afar("a:2", "proc-c")
        delivery.heard_from_afar("a:3")  # a sender whose process is unknown (and the spectators')
        async with (
            Relay(b, "proc-b").joined(CODE),
            Relay(c, "proc-c").joined(CODE),
            b.subscribe(channels.person(CODE, "a:1")) as one,
            c.subscribe(channels.person(CODE, "a:2")) as two,
            c.subscribe(channels.person(CODE, "a:3")) as three,
            b.subscribe(channels.watch(CODE)) as watching_b,
            c.subscribe(channels.watch(CODE)) as watching_c,
        ):
            delivery.hold()
            delivery.send(
                [
                    (channels.person(CODE, "a:1"), "for one"),
                    (channels.person(CODE, "a:2"), "for two"),
                    (channels.person(CODE, "a:3"), "for three"),
                    (channels.watch(CODE), "for the spectators"),
                ]
            )
            delivery.send([("reply:rest-call", '{"ok":true}')])
            delivery.flush()
            # One bundle per process first, then what goes on its own channel.
            assert [[channel for channel, _ in messages] for messages in sent] == [
                [
                    channels.fan(CODE, "proc-b"),
                    channels.fan(CODE, "proc-c"),
                    channels.person(CODE, "a:3"),
                    channels.watch(CODE),  # heard from an unknown process too: on the channel itself
                    "reply:rest-call",
                ]
            ]
            bundles = {channel: channels.unpack_bundle(data) for channel, data in sent[0][:2]}  # type: ignore[arg-type]
            assert [c for c, _ in bundles[channels.fan(CODE, "proc-b")]] == [channels.person(CODE, "a:1")]
            assert [c for c, _ in bundles[channels.fan(CODE, "proc-c")]] == [channels.person(CODE, "a:2")]
            for sub, text in (
                (one, b"for one"),
                (two, b"for two"),
                (three, b"for three"),
                (watching_b, b"for the spectators"),
                (watching_c, b"for the spectators"),
            ):
                event = await _receive(sub)
                assert isinstance(event, Message) and event.data == text
            for sub in (one, two, three, watching_b, watching_c):  # each frame once
                assert sub.qsize() == 0


async def test_a_bundle_reaches_only_its_own_tables_channels() -> None:
    async with _processes(2) as (owner, here):
        relay = Relay(here, "proc-b")
        async with (
            relay.joined(CODE),
            here.subscribe(channels.person(OTHER, "a:1")) as elsewhere,
            here.subscribe(channels.person(CODE, "a:1")) as mine,
        ):
            forged = [(channels.person(OTHER, "a:1"), "not for this table"), (channels.person(CODE, "a:1"), "ok")]
            await owner.publish(channels.fan(CODE, "proc-b"), channels.pack_bundle(forged))
            event = await _receive(mine)
            assert isinstance(event, Message) and event.data == b"ok"
            assert elsewhere.qsize() == 0


async def test_a_gap_or_a_malformed_bundle_is_a_gap_on_every_channel_of_the_table_here() -> None:
    async with _processes(2) as (owner, here):
        relay = Relay(here, "proc-b")
        async with (
            relay.joined(CODE),
            here.subscribe(channels.person(CODE, "a:1")) as mine,
            here.subscribe(channels.watch(CODE)) as watching,
            here.subscribe(channels.person(OTHER, "a:1")) as elsewhere,
        ):
            await owner.publish(channels.fan(CODE, "proc-b"), b"\x00\x05cut")  # not a bundle
            for sub in (mine, watching):
                assert isinstance(await _receive(sub), Gap)
            assert elsewhere.qsize() == 0
            here.signal_gap_here(channels.of_table(CODE), besides=channels.fan(CODE, "proc-b"))
            assert isinstance(await _receive(mine), Gap)


async def test_the_relay_listens_while_a_connection_to_the_table_is_here() -> None:
    async with _processes(1) as (here,):
        relay = Relay(here, "proc-b")
        fan = channels.fan(CODE, "proc-b")
        async with relay.joined(CODE):
            async with relay.joined(CODE):
                assert here.subscriber_count(fan) == 1  # one subscription however many connections
            assert relay.listening(CODE) and here.subscriber_count(fan) == 1
        assert not relay.listening(CODE)
        for _ in range(100):
            if here.subscriber_count(fan) == 0:
                break
            await asyncio.sleep(0.01)
        assert here.subscriber_count(fan) == 0


async def test_a_relay_that_cannot_subscribe_says_so_and_tries_again_at_the_next_join() -> None:
    async with _processes(1) as (here,):
        relay = Relay(here, "proc-b")
        attach = here._attach
        failing = True

        async def flaky(sub):
            if failing:
                raise BrokerUnavailable("down")
            await attach(sub)

        here._attach = flaky  # type: ignore[method-assign]
        with pytest.raises(BrokerError):
            async with relay.joined(CODE):
                pass
        assert not relay.listening(CODE)
        failing = False
        async with relay.joined(CODE):
            assert here.subscriber_count(channels.fan(CODE, "proc-b")) == 1


async def test_the_spectators_frames_go_in_the_bundle_of_every_process_that_holds_a_connection() -> None:
    async with _processes(3) as (owner, b, c):
        delivery = Delivery(CODE, owner)
        delivery.heard_from_afar("a:1", "proc-b")
        delivery.heard_from_afar("a:2", "proc-c")
        async with (
            Relay(b, "proc-b").joined(CODE),
            Relay(c, "proc-c").joined(CODE),
            b.subscribe(channels.watch(CODE)) as watching_b,
            c.subscribe(channels.watch(CODE)) as watching_c,
        ):
            delivery.deliver([(channels.watch(CODE), "update")])
            for sub in (watching_b, watching_c):
                event = await _receive(sub)
                assert isinstance(event, Message) and event.data == b"update"
                assert sub.qsize() == 0
