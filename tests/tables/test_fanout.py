"""The fan-out on plain values: a Change becomes one redacted frame per recipient, and the routing
keeps frames in this process unless another process has used the channel."""

from __future__ import annotations

import gc

import orjson

from app.engine import Card, Rules, new_match
from app.tables import commands as cmd
from app.tables.commands import Command
from app.tables.fanout import Change, History, events_since
from app.tables.spec import Principal, Seat
from app.transport import channels
from app.transport.delivery import Delivery, Route
from app.transport.frames import answer_frames, presence_frames, rehello_frames, reply_frame, update_frames

CODE = "tbl"
TABLE = {"code": CODE, "status": "playing", "seats": [], "version": 3}


def _change(events: list[dict], *, spectators: bool = True) -> Change:
    game = new_match(Rules(), seed=7, dealer=0)
    return Change(CODE, 3, events, TABLE, game, ((0, "a:1"), (1, "a:2")), spectators)


def _bodies(outbox: list[tuple[str, str]]) -> dict[str, dict]:
    return {channel: orjson.loads(channels.parse_frame(text.encode()).body) for channel, text in outbox}


def test_each_player_sees_his_own_hand_and_draw_and_the_spectators_see_neither() -> None:
    change = _change([{"type": "draw", "seat": 0, "count": 1, "cards": [Card.parse("7h")]}])
    bodies = _bodies(update_frames(change))
    alice, bob = bodies[channels.person(CODE, "a:1")], bodies[channels.person(CODE, "a:2")]
    watch = bodies[channels.watch(CODE)]
    assert sorted(alice["view"]["hand"]) == sorted(str(c) for c in change.game.hands[0])
    assert sorted(bob["view"]["hand"]) == sorted(str(c) for c in change.game.hands[1])
    assert "hand" not in watch["view"] and watch["seat"] is None
    assert alice["events"][0]["cards"] == ["7h"]
    assert "cards" not in bob["events"][0] or bob["events"][0]["cards"] != ["7h"]
    assert "cards" not in watch["events"][0] or watch["events"][0]["cards"] != ["7h"]
    assert (alice["table"]["you"], bob["table"]["you"], alice["version"]) == ("a:1", "a:2", 3)
    assert watch["table"]["code"] is None and alice["table"]["code"] == CODE  # the invite code stays private


def test_no_spectators_no_watch_frame_and_presence_names_each_recipient() -> None:
    assert channels.watch(CODE) not in _bodies(update_frames(_change([], spectators=False)))
    bodies = _bodies(presence_frames(_change([])))
    assert bodies[channels.person(CODE, "a:2")] == {"type": "presence", "version": 3, "table": {**TABLE, "you": "a:2"}}
    assert bodies[channels.watch(CODE)]["table"]["code"] is None


def test_reply_channels_carry_plain_json_and_person_channels_frames() -> None:
    assert reply_frame("reply:x", {"type": "ack"}) == ("reply:x", '{"type":"ack"}')
    channel, text = reply_frame(channels.person(CODE, "a:1"), {"type": "ack", "id": "c1", "version": 2}, "conn-1")
    frame = channels.parse_frame(text.encode())
    assert channel == channels.person(CODE, "a:1")
    assert (frame.kind, frame.conn, frame.cmd_id, frame.version) == ("ack", "conn-1", "c1", 2)


def test_delivery_holds_a_commands_frames_and_routes_by_where_the_channel_was_used() -> None:
    delivery = Delivery(CODE, broker=None)  # type: ignore[arg-type]  # split() needs no broker
    mine, theirs = channels.person(CODE, "a:1"), channels.person(CODE, "a:2")
    outbox = [(mine, "1"), (theirs, "2"), (channels.watch(CODE), "3"), ("reply:r", "4")]
    assert delivery.split(outbox) == (outbox[:3], outbox[3:])
    delivery.heard_from_afar("a:2")  # bob's connection is in another process: so may be spectators
    assert delivery.split(outbox) == ([outbox[0]], outbox[1:])
    assert delivery.split(outbox, everywhere=True) == ([], outbox)


def test_a_channel_follows_its_connections_between_processes_and_back_to_local_delivery() -> None:
    delivery = Delivery(CODE, broker=None, process="proc-a")  # type: ignore[arg-type]  # split() needs no broker
    bob, watch = channels.person(CODE, "a:2"), channels.watch(CODE)
    outbox = [(bob, "1"), (watch, "2")]
    delivery.heard("c1", "a:2", "proc-b")  # bob's first tab is on process B
    assert delivery.split(outbox) == ([], outbox)
    assert delivery.routes[bob] == Route(False, ("proc-b",), False)
    delivery.heard("c2", "a:2", "proc-a")  # a second tab, on the owner's own process
    assert delivery.split(outbox) == (outbox, outbox)  # here and to B: one way to each connection
    delivery.heard("c3", "a:3", "proc-c")  # a spectator on C
    assert delivery.routes[watch] == Route(True, ("proc-b", "proc-c"), False)
    assert delivery.routes[bob] == Route(True, ("proc-b",), False)
    delivery.gone("c1")  # bob's tab on B closed: his channel is local again
    assert delivery.routes[bob] == Route(True, (), False)
    assert delivery.split([(bob, "1")]) == ([(bob, "1")], [])
    delivery.gone("c3")
    delivery.gone("c2")
    assert delivery.split(outbox) == (outbox, [])  # nobody left anywhere: here, as at the start
    delivery.heard("c4", "a:2", "")  # a sender of unknown process: on the channel itself, for good
    delivery.gone("c4")
    assert delivery.split(outbox) == ([], outbox)
    assert delivery.bundled(outbox) == outbox


def test_a_resuming_client_gets_the_missed_events_only_when_the_table_still_has_them() -> None:
    history = [(5, [{"type": "take", "seat": 1}]), (6, [{"type": "pass", "seat": 0}])]
    missed = [{"type": "take", "seat": 1, "version": 5}, {"type": "pass", "seat": 0, "version": 6}]
    assert events_since(history, 6, 4, 0) == missed
    assert events_since(history, 6, 5, None) == [{"type": "pass", "seat": 0, "version": 6}]
    assert events_since(history, 6, 6, 0) == []
    assert events_since(history, 6, 3, 0) is None  # version 4 is gone
    assert events_since(history, 6, 7, 0) is None  # a version this table never had
    assert events_since(history, 6, -1, 0) is None


def test_after_a_takeover_the_watchers_and_every_seated_person_are_asked_to_say_hello_again() -> None:
    alice, gus = Principal("a:1", "alice", 1), Principal("g:2", "gus")
    seats = [Seat(0, "human", alice), Seat(1, "bot", level="easy"), Seat(2, "human", gus), Seat(3)]
    outbox = rehello_frames(CODE, seats)
    assert outbox[0][0] == channels.watch(CODE)
    assert sorted(channel for channel, _ in outbox[1:]) == [channels.person(CODE, "a:1"), channels.person(CODE, "g:2")]
    assert {channels.parse_frame(text.encode()).kind for _, text in outbox} == {"_rehello"}


def test_an_answer_goes_to_the_rest_caller_or_to_the_connection_that_sent_the_command() -> None:
    ack = {"type": "ack", "version": 4}
    rest = answer_frames(CODE, Command(cmd.Join(), reply="reply:9"), "a:1", ack)
    assert rest == [("reply:9", orjson.dumps(ack).decode())]  # plain JSON for a REST call
    [(channel, text)] = answer_frames(CODE, Command(cmd.TakeMove(), conn="c-1"), "a:1", ack)
    frame = channels.parse_frame(text.encode())
    assert channel == channels.person(CODE, "a:1") and frame.conn == "c-1" and orjson.loads(frame.body) == ack
    assert answer_frames(CODE, Command(cmd.BotMove(1, 0, None)), "a:1", ack) == []  # a bot's decision is not answered


def test_the_history_keeps_the_last_versions_as_json_text_and_gives_them_back() -> None:
    history = History(3)
    drawn = (Card.parse("6s"), Card.parse("Ah"))
    history.append(4, [{"type": "take", "seat": 1}])
    history.append(5, [{"type": "lead", "seat": 0, "cards": (Card.parse("7d"),)}])
    history.append(6, [{"type": "draw", "seat": 1, "cards": drawn}, {"type": "draw", "seat": 0, "count": 1}])
    history.append(7, [{"type": "pass", "seat": 0}])
    assert len(history) == 3  # version 4 is gone
    versions = history.versions()
    assert [version for version, _ in versions] == [5, 6, 7]
    assert versions[0][1] == [{"type": "lead", "seat": 0, "cards": ["7d"]}]
    # Redacted when handed out, as before: only seat 1 sees the cards it drew.
    assert events_since(versions, 7, 5, 1)[0] == {"type": "draw", "seat": 1, "cards": ["6s", "Ah"], "version": 6}
    assert "cards" not in events_since(versions, 7, 5, 0)[0]
    assert events_since(versions, 7, 3, 0) is None  # versions 4 and older are not kept
    gc.collect()  # what the history keeps is nothing the collector has to walk again
    assert not any(gc.is_tracked(item) for item in history._kept)
