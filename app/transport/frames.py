"""From what a table sends to whom to the frames on its channels (channel, frame text).

A table hands its transport messages for recipients (``TableTransport.send``) and its changes
(``send_all``, a :class:`~app.tables.fanout.Change`); here they become frames: a person's messages on
his person channel, the spectators' on the watch channel, a request/reply caller's on its reply
channel (plain JSON there, no frame header). A change is encoded once per recipient, and the parts
every recipient shares (the public view, the table facts, the events when nobody drew a card) once
in all, spliced into each recipient's text by the message writers (``Update.spliced``,
``Presence.spliced``, app/tables/messages.py).
"""

from __future__ import annotations

from collections.abc import Iterable

from app.tables.commands import Command
from app.tables.fanout import Change
from app.tables.messages import Presence, Rehello, Update, dumps
from app.tables.ports import Caller, Connection, Message, Person, Recipient, answer_to
from app.tables.spec import Seat
from app.transport import channels

Outbox = list[tuple[str, str]]  # (channel, frame text), in the order they must arrive


def change_frames(change: Change) -> Outbox:
    """The frames of a change: an update, or a presence."""
    return update_frames(change) if change.kind == "update" else presence_frames(change)


def update_frames(change: Change) -> Outbox:
    """An ``update`` for every connected player and one for the spectators, each redacted for its
    recipient; what they share is encoded once (the writer, ``Update.spliced``, splices it)."""
    version = change.version
    table_json = dumps(change.table_of(0))
    public = change.public_view()
    public_json = dumps(public)[:-1] if public is not None else ""
    shared_events = dumps(change.events_of(None)) if change.events_shared() else None
    own_view, events_of = change.own_view, change.events_of
    joined_view, spliced, frame_text = Update.joined_view, Update.spliced, channels.frame_text
    person = channels.persons(change.code)  # each player's channel is this and the key
    outbox: Outbox = []
    for seat, key in change.players:
        view_json = joined_view(public_json, seat, own_view(seat)) if public is not None else "null"
        events_json = shared_events or dumps(events_of(seat))
        text = spliced(version, seat, events_json, view_json, table_json, key)
        outbox.append((person + key, frame_text("update", text, version=version, seat=seat)))
    if change.spectators:
        view_json = Update.joined_view(public_json, None) if public is not None else "null"
        events_json = shared_events or dumps(change.events_of(None))
        text = Update.spliced(version, None, events_json, view_json, dumps(change.table_of(None)))
        outbox.append((channels.watch(change.code), channels.frame_text("update", text, version=version)))
    return outbox


def presence_frames(change: Change) -> Outbox:
    """Who is here changed, not the table's state: every connection gets the table facts again."""
    table_json = dumps(change.table_of(0))
    version = change.version
    person = channels.persons(change.code)  # each player's channel is this and the key
    outbox: Outbox = []
    for seat, key in change.players:
        text = Presence.spliced(version, table_json, key)
        outbox.append((person + key, channels.frame_text("presence", text, version=version, seat=seat)))
    if change.spectators:
        text = Presence.spliced(change.version, dumps(change.table_of(None)))
        outbox.append((channels.watch(change.code), channels.frame_text("presence", text, version=change.version)))
    return outbox


def rehello_frames(code: str, seats: Iterable[Seat]) -> Outbox:
    """After a takeover: every connection, on any process, is asked to say ``hello`` again (the
    spectators' channel and each seated person's)."""
    rehello = channels.frame(Rehello.wire())
    people = {seat.principal.key for seat in seats if seat.principal is not None}
    return [(channels.watch(code), rehello), *((channels.person(code, key), rehello) for key in people)]


def message_frame(code: str, to: Recipient, message: Message) -> tuple[str, str]:
    """A message for one recipient: on a caller's reply channel as plain JSON; on a person's channel
    as a frame, marked for the one connection when it is for that connection alone."""
    if isinstance(to, Connection):
        return channels.person(code, to.key), channels.frame(message, to.conn)
    if isinstance(to, Caller):
        return to.reply, dumps(message)
    assert isinstance(to, Person)
    return channels.person(code, to.key), channels.frame(message)


def answer_frames(code: str, command: Command, principal_key: str, answer: Message) -> Outbox:
    """Where the answer to ``command`` goes (``answer_to``): to its REST caller's reply channel, or
    to the sender's connection; nowhere for a command with neither (a bot's decision)."""
    to = answer_to(command, principal_key)
    return [] if to is None else [message_frame(code, to, answer)]


def reply_frame(channel: str, payload: Message, conn: str | None = None) -> tuple[str, str]:
    """Person and spectator channels carry frames; reply channels (REST calls) plain JSON."""
    return channel, dumps(payload) if channel.startswith("reply:") else channels.frame(payload, conn)
