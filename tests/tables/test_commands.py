"""Commands on plain values: a frame parsed once into its own command type, one wire codec, and
the protocol's play models are the tables' list of play commands."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from app.api.protocol import PLAY_MODELS, client_message
from app.api.table_connection import command_of
from app.engine import Card, Cover, Lead
from app.engine.errors import NotYourTurn
from app.tables import commands as cmd
from app.tables.answers import Answers
from app.tables.commands import (
    PLAY_COMMANDS,
    BadCommand,
    Command,
    Refused,
    command_from_json,
    command_to_json,
    refused_move,
)
from app.tables.spec import Principal

ALICE = Principal(key="a:1", name="alice", account_id=1)


def test_a_frame_is_parsed_once_into_its_own_command_type_and_seated_by_the_table() -> None:
    message = client_message.validate_json('{"type":"cover","id":"c1","version":4,"attack":0,"card":"9h"}')
    command = command_of(message, ALICE, "c-1")
    assert command == Command(cmd.CoverMove(0, Card.parse("9h")), ALICE, "c-1", id="c1", version=4)
    assert isinstance(command.body, cmd.CoverMove) and command.body.action(1) == Cover(1, 0, Card.parse("9h"))
    leave = command_of(client_message.validate_json('{"type":"leave","id":"l"}'), ALICE, "c-1")
    assert leave == Command(cmd.Leave(), ALICE, "c-1", id="l")
    seed = client_message.validate_json(
        '{"type":"client_seed","id":"s","seed":"' + "ab" * 16 + '","commitment":"' + "0" * 64 + '"}'
    )
    assert command_of(seed, ALICE, "c-1").body == cmd.ClientSeed("ab" * 16, "0" * 64)


def test_every_play_command_makes_the_move_it_names_and_back() -> None:
    lead = Lead(2, (Card.parse("7h"), Card.parse("7s")))
    assert cmd.move_of(lead) == cmd.LeadMove(lead.cards) and cmd.move_of(lead).action(2) == lead
    assert [move.kind for move in cmd.MOVES] == list(PLAY_COMMANDS)


def test_the_broker_wire_round_trips_a_command_and_marks_it_remote() -> None:
    lead = cmd.LeadMove((Card.parse("7h"),))
    sent = Command(lead, principal=ALICE, conn="c-1", id="x", version=3, via="host-1a2b")
    assert orjson.loads(command_to_json(sent))["cards"] == ["7h"]  # the move's own fields, no seat
    back = command_from_json(command_to_json(sent))
    assert back == Command(**{**{f: getattr(sent, f) for f in sent.__slots__}, "remote": True})
    join = Command(cmd.Join(seat=2), principal=ALICE, reply="reply:1")
    assert orjson.loads(command_to_json(join)) == {
        "type": "join",
        "principal": ALICE.to_json(),
        "reply": "reply:1",
        "seat": 2,
    }
    assert command_from_json(command_to_json(join)).principal == ALICE  # a Principal, decoded once here
    rated = Command(cmd.Rated("m-1", {0: {"rating": 1510, "change": 10}}))
    assert command_from_json(command_to_json(rated)).body == rated.body
    # An older process's play command (its action beside the type) is still understood.
    old = {"type": "cover", "id": "c", "action": {"type": "cover", "seat": -1, "attack": 0, "card": "9h"}}
    assert command_from_json(orjson.dumps(old)).body == cmd.CoverMove(0, Card.parse("9h"))
    # The sending process names a fan channel: anything that could not be part of one is dropped.
    for bad in ("", "a b", "x" * 129, "t:{other}:p", 7):
        raw = orjson.dumps({"type": "hello", "via": bad})
        assert command_from_json(raw).via is None


def test_every_body_with_every_field_set_crosses_the_broker_wire_unchanged() -> None:
    seven, nine = Card.parse("7h"), Card.parse("9h")
    bodies = [
        cmd.LeadMove((seven,)),
        cmd.ThrowInMove((seven, nine)),
        cmd.CoverMove(1, nine),
        cmd.TransferMove((seven,)),
        cmd.ChallengeMove(3),
        cmd.Join(seat=1, rating={"rating": 1500, "provisional": True}, client_seed="ab" * 16, commitment="0" * 64),
        cmd.ClientSeed("ab" * 16, "0" * 64),
        cmd.AddBot(level="hard", seat=2),
        cmd.RemoveBot(seat=2),
        cmd.Hello(last_version=7),
        cmd.BotMove(1, 9, Cover(1, 0, nine)),
        cmd.Rated("m-1", {0: {"rating": 1510, "change": 10}}),
    ]
    assert {type(body) for body in bodies} == {cls for cls in cmd.BODIES.values() if dataclasses.fields(cls)}
    for body in bodies:
        assert command_from_json(command_to_json(Command(body))).body == body


@pytest.mark.parametrize(
    "raw",
    [
        b"not json",
        b"[]",
        b'{"type": 3}',
        b'{"type": "dance"}',
        b'{"type": "lead"}',
        b'{"type": "lead", "cards": []}',
        b'{"type": "lead", "cards": ["1x"]}',
        b'{"type": "cover", "attack": "0", "card": "9h"}',
        b'{"type": "client_seed", "commitment": "x"}',
    ],
)
def test_wire_json_that_is_no_command_is_refused(raw: bytes) -> None:
    with pytest.raises(BadCommand):
        command_from_json(raw)


def test_one_list_of_play_commands() -> None:
    assert tuple(PLAY_MODELS) == PLAY_COMMANDS


async def test_a_command_is_answered_once_and_a_refusal_becomes_an_error_with_its_id() -> None:
    answers = Answers(size=2)
    applied: list[str] = []

    async def ack() -> dict:
        applied.append("lead")
        return {"type": "ack", "version": len(applied)}

    lead = Command(cmd.LeadMove((Card.parse("7h"),)), principal=ALICE, id="m1")
    assert await answers.answer(lead, ALICE, ack) == {"type": "ack", "version": 1, "id": "m1"}
    again = await answers.answer(lead, ALICE, ack)
    assert again == {"type": "ack", "version": 1, "id": "m1", "duplicate": True} and applied == ["lead"]
    bob = Principal(key="a:2", name="bob", account_id=2)
    assert (await answers.answer(lead, bob, ack))["version"] == 2  # another player's id is his own

    async def refuse() -> dict:
        raise Refused("not_your_turn", "wait")

    error = await answers.answer(Command(cmd.TakeMove(), id="m2"), ALICE, refuse)
    assert error == {"type": "error", "id": "m2", "code": "not_your_turn", "message": "wait"}
    assert (await answers.answer(Command(cmd.TakeMove(), id="m2"), ALICE, ack))["duplicate"]  # errors too
    assert (await answers.answer(lead, ALICE, ack)).get("duplicate") is None  # only the last 2 are kept
    unknown = await answers.answer(Command(cmd.Wake(), id="d"), ALICE, None)  # a command nobody answers
    assert (unknown["code"], unknown["id"]) == ("unknown_type", "d")
    rematch = Command(cmd.Rematch(), id="r")  # any command with an id: a connection may send it again
    await answers.answer(rematch, ALICE, ack)
    assert (await answers.answer(rematch, ALICE, ack))["duplicate"]
    join = Command(cmd.Join())  # a REST call has no id: never remembered
    await answers.answer(join, ALICE, ack)
    assert "duplicate" not in await answers.answer(join, ALICE, ack)

    async def unavailable() -> dict:
        raise Refused("unavailable", "the store is down")

    cover = Command(cmd.PassMove(), id="m3")
    assert (await answers.answer(cover, ALICE, unavailable))["code"] == "unavailable"
    again = await answers.answer(cover, ALICE, ack)  # nothing happened: the same id is tried again
    assert again["type"] == "ack" and "duplicate" not in again


async def test_kept_answers_come_back_exactly_as_they_were_sent() -> None:
    """Answers are kept in a smaller form (an ack as its version, an error as its code and message)
    and rebuilt: a retried command gets the very answer it would have got, whatever its shape."""
    answers = Answers(size=3)
    sent = [
        {"type": "ack", "version": 7},
        {"type": "ack", "version": 8, "match_id": "m-1"},  # another shape: kept as it is
        {"type": "ack", "version": True},  # not a version: kept as it is
    ]
    replies = []
    for n, reply in enumerate(sent):

        async def handler(reply: dict = reply) -> dict:
            return dict(reply)

        command = Command(cmd.PassMove(), id=f"c{n}")
        replies.append((command, await answers.answer(command, ALICE, handler)))

    async def refuse() -> dict:
        raise Refused("not_your_turn", "seat 2 defends")

    refused = await answers.answer(Command(cmd.TakeMove(), id="c9"), ALICE, refuse)
    replies.append((Command(cmd.TakeMove(), id="c9"), refused))
    assert len(answers) == 3  # the oldest went

    async def never() -> dict:
        raise AssertionError("a duplicate is never applied")

    for command, first in replies[1:]:
        again = await answers.answer(command, ALICE, never)
        assert again == {**first, "duplicate": True} and list(again)[:-1] == list(first)
    assert refused == {"type": "error", "id": "c9", "code": "not_your_turn", "message": "seat 2 defends"}
    restored = Answers(answered={("a:1", "r1"): {"type": "ack", "id": "r1", "version": 4}})  # from a stored table
    assert await restored.answer(Command(cmd.PassMove(), id="r1"), ALICE, never) == {
        "type": "ack", "id": "r1", "version": 4, "duplicate": True,
    }  # fmt: skip


def test_a_move_the_engine_refuses_is_stale_when_its_sender_had_not_seen_the_latest_version() -> None:
    turn = NotYourTurn("seat 1 does not defend")
    assert (refused_move(turn, 9, 9).code, refused_move(turn, None, 9).code) == ("not_your_turn", "not_your_turn")
    stale = refused_move(turn, 7, 9)
    assert stale.code == "stale_version" and "version 9, you saw 7" in stale.message
