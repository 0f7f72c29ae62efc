"""What a table actor is asked to do: one typed value per command, whoever sends it.

A websocket frame is parsed once (``app/api/routes/play.py``) into a :class:`Command` carrying the
engine ``Action`` of a play command; a REST call (``registry.call``), a bot's decision and the
connection's own ``hello``/``bye`` are commands too. In the same process the value goes straight
onto the actor's queue; across processes :func:`command_to_json` / :func:`command_from_json` are the
one wire codec (the command's JSON on ``t:<code>:in``, decoded once by the receiving actor).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from app.engine import Action, IllegalAction, action_from_json, action_to_json
from app.engine.actions import ActionParseError
from app.tables.spec import Principal

# The commands a player's connection may send that become an engine action (docs/protocol.md).
PLAY_COMMANDS = ("lead", "throw_in", "cover", "transfer", "take", "pass", "challenge", "exchange_trump")
_PROCESS_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
UNSEATED = -1  # the seat of a play command's action until the actor knows the sender's seat


class Refused(Exception):
    """A command the table does not carry out: answered with an ``error`` of this code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class BadCommand(ValueError):
    """Wire JSON that is no command."""


@dataclass(frozen=True, slots=True)
class Command:
    """One command for a table actor.

    ``type`` is a play command (``PLAY_COMMANDS``, with ``action``), a seat or match command
    (``join``, ``leave``, ``add_bot``, ``remove_bot``, ``start``, ``rematch``, ``info``), a
    connection's ``hello`` / ``bye``, or internal: ``bot`` (a bot's decision: ``seat``, ``version``,
    ``action`` or None) and ``wake`` (let the bots think again)."""

    type: str
    principal: Principal | None = None
    conn: str | None = None  # the websocket connection it came from (its answer goes only there)
    reply: str | None = None  # a REST call's reply channel
    id: str | None = None  # the client's command id, echoed in the answer
    version: int | None = None  # the table version the client acted on
    action: Action | None = None  # play commands: seat UNSEATED; bot: the bot's own seat
    seat: Any = None  # join / add_bot / remove_bot: the seat asked for; bot: the bot's seat
    level: Any = None  # add_bot
    rating: Any = None  # join: the account's rating when it sits down ({"rating", "provisional"})
    client_seed: Any = None  # client_seed (or join): the player's seed for the next deal, 32 hex digits
    commitment: Any = None  # ... answering this commitment of the table (docs/fairness.md)
    last_version: Any = None  # hello
    remote: bool = False  # came through the broker (its connection lives in another process)
    via: str | None = None  # the process of the websocket connection that sent it (its fan channel)

    def seated_action(self, seat: int) -> Action:
        """The play command's action for the sender's seat."""
        assert self.action is not None
        return dataclasses.replace(self.action, seat=seat)


def refused_move(exc: IllegalAction, seen: int | None, version: int) -> Refused:
    """Why the engine did not take a play command: ``stale_version`` when its sender had not seen
    the table's ``version`` (he saw ``seen``), else the engine's own code."""
    if seen is not None and seen < version:
        return Refused("stale_version", f"the table moved on (version {version}, you saw {seen}): {exc}")
    return Refused(exc.code, str(exc))


def unavailable() -> Refused:
    """A change the table could not save: the store is unreachable, nothing happened."""
    return Refused("unavailable", "the table cannot save moves right now (storage unreachable); try again shortly")


def play_action(kind: str, fields: dict[str, Any]) -> Action:
    """The engine action of play command ``kind`` with ``fields`` (its cards, attack, card or move),
    not yet seated (raises ``ActionParseError``)."""
    return action_from_json({**fields, "type": kind, "seat": UNSEATED})


_WIRE_FIELDS = (
    *("conn", "reply", "id", "version", "seat", "level"),
    *("rating", "client_seed", "commitment", "last_version"),
)


def command_to_json(command: Command, *, via: str | None = None) -> bytes:
    """The command as JSON for the broker (only the fields that are set); ``via``, when given, in
    place of the command's own (the sending process: no copy of the command made for it)."""
    data: dict[str, Any] = {"type": command.type}
    if command.principal is not None:
        data["principal"] = command.principal.to_json()
    for name in _WIRE_FIELDS:
        value = getattr(command, name)
        if value is not None:
            data[name] = value
    via = via or command.via
    if via is not None:
        data["via"] = via
    if command.action is not None:
        data["action"] = action_to_json(command.action)
    return orjson.dumps(data)


def command_from_json(raw: bytes | str) -> Command:
    """Decode a command that came through the broker (raises :class:`BadCommand`)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadCommand(f"not JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise BadCommand("a command is a JSON object with a string type")
    try:
        principal = Principal.from_json(data["principal"]) if data.get("principal") is not None else None
        action = action_from_json(data["action"]) if data.get("action") is not None else None
    except (ActionParseError, KeyError, TypeError, ValueError) as exc:
        raise BadCommand(str(exc)) from exc
    if data["type"] in PLAY_COMMANDS and action is None:
        raise BadCommand(f"{data['type']} without an action")
    return Command(
        type=data["type"],
        principal=principal,
        conn=_text(data.get("conn")),
        reply=_text(data.get("reply")),
        id=_text(data.get("id")),
        version=data["version"] if isinstance(data.get("version"), int) else None,
        action=action,
        seat=data.get("seat"),
        level=data.get("level"),
        rating=data.get("rating") if isinstance(data.get("rating"), dict) else None,
        client_seed=_text(data.get("client_seed")),
        commitment=_text(data.get("commitment")),
        last_version=data.get("last_version"),
        remote=True,
        via=_process(data.get("via")),
    )


def _process(value: Any) -> str | None:
    """A process id fit for a channel name, or None."""
    return value if isinstance(value, str) and _PROCESS_ID.fullmatch(value) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


Kept = int | tuple[str, str] | dict[str, Any]  # an ack's version, an error's (code, message), else the answer


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

    def __init__(self, size: int = 512, answered: dict[tuple[str, str], dict[str, Any]] | None = None) -> None:
        self.size = size
        self._answers: dict[tuple[str, str], Kept] = {}  # oldest first
        for key, reply in (answered or {}).items():
            self._keep(key, reply)

    def __len__(self) -> int:
        return len(self._answers)

    async def answer(
        self, command: Command, principal: Principal, handler: Callable[[], Awaitable[dict[str, Any]]] | None
    ) -> dict[str, Any]:
        """Run ``handler`` (None: no handler for the command's type) for ``command`` from ``principal``:
        its answer, or the ``error`` it was refused with, carrying the command's id."""
        cmd_id = command.id
        key = (principal.key, str(cmd_id)) if cmd_id is not None else None
        if key is not None:
            kept = self._answers.get(key)
            if kept is not None:
                return {**_rebuilt(kept, cmd_id), "duplicate": True}
        try:
            if handler is None:
                raise Refused("unknown_type", f"unknown command {command.type!r}")
            reply = await handler()
        except Refused as refused:
            reply = {"type": "error", "id": cmd_id, "code": refused.code, "message": refused.message}
        if cmd_id is not None:
            reply.setdefault("id", cmd_id)
        if key is not None and reply.get("code") not in RETRYABLE:
            self._keep(key, reply)
        return reply

    def _keep(self, key: tuple[str, str], reply: dict[str, Any]) -> None:
        answers = self._answers
        answers[key] = _kept(reply) if reply.get("id") == key[1] else dict(reply)
        while len(answers) > self.size:
            del answers[next(iter(answers))]


def _kept(reply: dict[str, Any]) -> Kept:
    """``reply`` in the smallest form :func:`_rebuilt` turns back into it."""
    shape = reply.keys()
    if reply.get("type") == "ack" and shape == {"type", "id", "version"} and type(reply["version"]) is int:
        return reply["version"]
    if reply.get("type") == "error" and shape == {"type", "id", "code", "message"}:
        code, message = reply["code"], reply["message"]
        if isinstance(code, str) and isinstance(message, str):
            return code, message
    return dict(reply)


def _rebuilt(kept: Kept, cmd_id: Any) -> dict[str, Any]:
    if isinstance(kept, int):
        return {"type": "ack", "id": cmd_id, "version": kept}
    if isinstance(kept, tuple):
        return {"type": "error", "id": cmd_id, "code": kept[0], "message": kept[1]}
    return dict(kept)
