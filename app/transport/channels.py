"""Broker channel names of a table (the broker adds its own prefix), and the frame format on the
person and spectator channels: one header line, then the exact JSON text the client receives, so
that a connection forwards a frame without parsing or re-encoding it."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import orjson


def of_table(code: str) -> str:
    """What every channel of the table starts with. The code in braces is the channels' Redis
    Cluster hash tag: every channel of one table (and its lease, record and log, tagged the same
    way) lives in one slot, on one shard; a single Redis ignores the braces."""
    return f"t:{{{code}}}:"


def inbox(code: str) -> str:
    return f"{of_table(code)}in"


def person(code: str, principal_key: str) -> str:
    return f"{of_table(code)}p:{principal_key}"


def persons(code: str) -> str:
    """What every person channel of the table starts with (``person`` is this and the key)."""
    return f"{of_table(code)}p:"


def watch(code: str) -> str:
    return f"{of_table(code)}watch"


def fan(code: str, process: str) -> str:
    """Where the table's owner publishes, as one bundle per command, the frames for the connections
    that ``process`` (a registry's ``owner`` id) holds (:func:`pack_bundle`); that process listens
    while it has a connection to the table."""
    return f"{of_table(code)}fan:{process}"


def chat(code: str) -> str:
    """The table's chat channel (both chats: each line says which one it belongs to; app/tables/chat.py)."""
    return f"{of_table(code)}chat"


_ITEM_HEAD = struct.Struct(">HI")  # a bundled item: its channel's length, its message's length


def pack_bundle(items: Sequence[tuple[str, str | bytes]]) -> bytes:
    """Several (channel, message) pairs as one broker message: a crossing costs one publish, not one
    per recipient (docs/broker.md, "Bundles")."""
    parts: list[bytes] = []
    for channel, message in items:
        name = channel.encode()
        data = message.encode() if isinstance(message, str) else message
        parts += (_ITEM_HEAD.pack(len(name), len(data)), name, data)
    return b"".join(parts)


def unpack_bundle(data: bytes) -> list[tuple[str, bytes]]:
    """The pairs of :func:`pack_bundle`; raises ``ValueError`` for anything else."""
    items: list[tuple[str, bytes]] = []
    at, end, head = 0, len(data), _ITEM_HEAD.size
    while at < end:
        if at + head > end:
            raise ValueError("a bundle ends inside an item's header")
        name_len, data_len = _ITEM_HEAD.unpack_from(data, at)
        at += head
        stop = at + name_len + data_len
        if stop > end:
            raise ValueError("a bundle ends inside an item")
        items.append((data[at : at + name_len].decode(), data[at + name_len : stop]))
        at = stop
    return items


class Frame(NamedTuple):
    kind: str  # the message type: update, welcome, ack, error, _rehello
    conn: str  # the connection the message is for, or "" for every connection of the channel
    version: int
    seat: int | None
    cmd_id: str
    body: bytes  # the JSON to send, UTF-8

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def dumps(value: Any) -> str:
    """Compact JSON text of a message or a part of one (integer keys become strings)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def frame(payload: Mapping[str, Any], conn: str | None = None) -> str:
    return frame_text(
        str(payload.get("type", "")),
        dumps(payload),
        conn=conn,
        version=int(payload.get("version", -1)),
        seat=payload.get("seat"),
        cmd_id=str(payload.get("id") or ""),
    )


def frame_text(
    kind: str, text: str, *, conn: str | None = None, version: int = -1, seat: int | None = None, cmd_id: str = ""
) -> str:
    """A frame around JSON text that is already encoded."""
    clean_id = cmd_id.replace("|", "").replace("\n", "") if cmd_id else ""  # (most frames have none)
    return f"{kind}|{conn or ''}|{version}|{'' if seat is None else seat}|{clean_id}\n{text}"


def parse_frame(data: bytes) -> Frame:
    """Raises ``ValueError`` for anything that is not a frame."""
    cut = data.index(b"\n")
    kind, conn, version, seat, cmd_id = data[:cut].decode("utf-8").split("|", 4)
    return Frame(kind, conn, int(version), int(seat) if seat else None, cmd_id, data[cut + 1 :])
