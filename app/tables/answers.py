"""A table's answers to the commands it is sent: their shapes (one per kind of answer), made by the
message writers of messages.py, and :class:`Answers`, which answers a command with an id once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal, NotRequired, TypedDict, cast

from app.tables.commands import Command, Refused
from app.tables.messages import Ack, Error, InfoReply, SeatAck, StartAck, Welcome
from app.tables.spec import Principal
from app.tables.table_events import AnyEventJson
from app.tables.table_facts import Snapshot, TableFacts


class AckAnswer(TypedDict):
    """``ack``: a command was taken (a seat command's says which seat, a start's which match)."""

    type: Literal["ack"]
    id: NotRequired[str | None]  # the command's id (an ``Ack`` always carries it, null or not)
    seat: NotRequired[int]  # a seat command's (``SeatAck``)
    version: int
    match_id: NotRequired[str | None]  # a start's (``StartAck``); null: a ready check opened
    duplicate: NotRequired[bool]  # the same command was sent again: its answer, not applied twice


class ErrorAnswer(TypedDict):
    type: Literal["error"]
    id: NotRequired[str | None]
    code: str
    message: str
    retry_after_ms: NotRequired[int]
    duplicate: NotRequired[bool]


class InfoAnswer(TypedDict):
    type: Literal["info"]
    id: NotRequired[str | None]
    table: TableFacts
    watch_code: str
    duplicate: NotRequired[bool]


Answer = AckAnswer | ErrorAnswer | InfoAnswer


def facts_of(reply: Answer) -> TableFacts | None:
    """The table facts an ``info`` command was answered with (None: it was refused)."""
    return reply["table"] if reply["type"] == "info" else None


class WelcomeMessage(Snapshot):
    """The answer to ``hello`` (and what a player's connections get when they watch from then on)."""

    type: Literal["welcome"]
    events: NotRequired[list[AnyEventJson]]  # with resumed_from: every event after it
    resumed_from: NotRequired[int]
    recent: NotRequired[list[AnyEventJson]]  # else: the current (or last) match's events kept


# The writers check every field against the message's model and put them in its order (an optional
# field that is None left out); what they write is the shape named here.


def ack(cmd_id: str | None, version: int) -> AckAnswer:
    return cast(AckAnswer, Ack.wire(id=cmd_id, version=version))


def seat_ack(cmd_id: str | None, version: int, seat: int | None = None) -> AckAnswer:
    return cast(AckAnswer, SeatAck.wire(id=cmd_id, seat=seat, version=version))


def start_ack(cmd_id: str | None, version: int, match_id: str | None) -> AckAnswer:
    return cast(AckAnswer, StartAck.wire(id=cmd_id, version=version, match_id=match_id))


def error(cmd_id: str | None, code: str, message: str) -> ErrorAnswer:
    return cast(ErrorAnswer, Error.wire(id=cmd_id, code=code, message=message))


def info_reply(table: TableFacts, watch_code: str) -> InfoAnswer:
    return cast(InfoAnswer, InfoReply.wire(table=table, watch_code=watch_code))


def welcome(
    snapshot: Snapshot,
    *,
    events: list[AnyEventJson] | None = None,
    resumed_from: int | None = None,
    recent: list[AnyEventJson] | None = None,
) -> WelcomeMessage:
    return cast(WelcomeMessage, Welcome.wire(**snapshot, events=events, resumed_from=resumed_from, recent=recent))


Kept = int | tuple[str, str] | Answer  # an ack's version, an error's (code, message), else the answer


# Refusals that mean "nothing happened, try again": not kept, so the same id sent again is tried again.
RETRYABLE = ("unavailable", "moved")


class Answers:
    """A table's answers to commands. A command with an id is answered once: the answers to the last
    ``size`` of them are kept by (principal key, command id), and one sent again (a client retrying
    after a lost answer, or its connection after the table changed hands) gets the same answer,
    marked ``duplicate``, without being applied twice. A retryable refusal (``RETRYABLE``) is not
    kept: sent again, the command is tried again.

    An answer is kept in its smallest form (an ack as its version, an error as its code and message)
    and rebuilt when asked for again: a busy table keeps ``size`` of them for as long as it lives,
    208 bytes each this way against 440 as dicts in an ``OrderedDict`` (docs/performance.md)."""

    def __init__(self, size: int = 512, answered: dict[tuple[str, str], Answer] | None = None) -> None:
        self.size = size
        self._answers: dict[tuple[str, str], Kept] = {}  # oldest first
        for key, reply in (answered or {}).items():
            self._keep(key, reply)

    def __len__(self) -> int:
        return len(self._answers)

    async def answer(
        self, command: Command, principal: Principal, handler: Callable[[], Awaitable[Answer]] | None
    ) -> Answer:
        """Run ``handler`` (None: no handler for the command's type) for ``command`` from ``principal``:
        its answer, or the ``error`` it was refused with, carrying the command's id."""
        cmd_id = command.id
        key = (principal.key, str(cmd_id)) if cmd_id is not None else None
        if key is not None:
            kept = self._answers.get(key)
            if kept is not None:
                again = _rebuilt(kept, cmd_id)
                again["duplicate"] = True
                return again
        try:
            if handler is None:
                raise Refused("unknown_type", f"unknown command {command.kind!r}")
            reply = await handler()
        except Refused as refused:
            reply = error(cmd_id, refused.code, refused.message)
        if cmd_id is not None:
            reply.setdefault("id", cmd_id)
        if key is not None and reply.get("code") not in RETRYABLE:
            self._keep(key, reply)
        return reply

    def _keep(self, key: tuple[str, str], reply: Answer) -> None:
        answers = self._answers
        answers[key] = _kept(reply) if reply.get("id") == key[1] else reply.copy()
        while len(answers) > self.size:
            del answers[next(iter(answers))]


def _kept(reply: Answer) -> Kept:
    """``reply`` in the smallest form :func:`_rebuilt` turns back into it."""
    shape = reply.keys()
    if reply["type"] == "ack" and shape == {"type", "id", "version"} and type(reply["version"]) is int:
        return reply["version"]
    if reply["type"] == "error" and shape == {"type", "id", "code", "message"}:
        code, message = reply["code"], reply["message"]
        if isinstance(code, str) and isinstance(message, str):
            return code, message
    return reply.copy()


def _rebuilt(kept: Kept, cmd_id: str | None) -> Answer:
    if isinstance(kept, int):
        return ack(cmd_id, kept)
    if isinstance(kept, tuple):
        return error(cmd_id, kept[0], kept[1])
    return kept.copy()
