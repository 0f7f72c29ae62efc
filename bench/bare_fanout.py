"""The floor for ``bench/load.py``: a bare FastAPI websocket fan-out app with no game, no broker,
no database, served by uvicorn exactly like the real server (``python -m bench.bare_fanout PORT``:
the same websocket protocol class as ``python -m app``, no per-message deflate, 64 KiB frames). It
sends through plain ASGI ``websocket.send``, as any FastAPI app does.

Connections join a group (``/ws/{group}?n=4&bytes=2000``), the stand-in for a table. Each command
a member sends is parsed, bumps the group's version and is answered the way the real table answers
a command: a JSON ``update`` of about ``bytes`` bytes (serialized per recipient, as the real server
serializes one view per seat) to every member, then an ``ack`` to the sender. The update names
whose ``turn`` it is, so the load generator's clients play it like a table.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect

UPDATE_BYTES = int(os.environ.get("BARE_UPDATE_BYTES", "2000"))  # or per group: ?bytes=N

app = FastAPI(title="bare fan-out")


class Group:
    def __init__(self, size: int, update_bytes: int) -> None:
        self.size = size
        self.members: dict[int, WebSocket] = {}
        self.version = 0
        self.pad = "x" * max(0, update_bytes - _OVERHEAD)


groups: dict[str, Group] = {}


@app.get("/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


def _update(version: int, seat: int, turn: int, pad: str) -> str:
    body: dict[str, Any] = {
        "type": "update",
        "version": version,
        "seat": seat,
        "turn": turn,
        "events": [{"type": "move", "seat": turn, "version": version}],
        "view": {"pad": pad},
        "table": {"status": "playing", "version": version},
    }
    return json.dumps(body, separators=(",", ":"))


_OVERHEAD = len(_update(100, 0, 0, ""))


@app.websocket("/ws/{name}")
async def fanout(websocket: WebSocket, name: str) -> None:
    size = int(websocket.query_params.get("n", "4"))
    update_bytes = int(websocket.query_params.get("bytes", UPDATE_BYTES))
    await websocket.accept()
    group = groups.get(name) or groups.setdefault(name, Group(size, update_bytes))
    seat = len(group.members)
    group.members[seat] = websocket
    try:
        while True:
            message = json.loads(await websocket.receive_text())
            kind = message.get("type")
            if kind == "hello":
                await websocket.send_text(json.dumps({"type": "welcome", "seat": seat, "version": group.version}))
                continue
            if kind not in ("start", "cmd"):
                continue
            group.version += 1
            version = group.version
            turn = version % group.size
            for member_seat, member in list(group.members.items()):
                await member.send_text(_update(version, member_seat, turn, group.pad))
            if kind == "cmd":
                await websocket.send_text(
                    json.dumps({"type": "ack", "id": message.get("id"), "version": version}, separators=(",", ":"))
                )
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        group.members.pop(seat, None)
        if not group.members:
            groups.pop(name, None)


def main() -> None:
    import uvicorn

    from app.api.uvicorn_protocol import WebSocketProtocol

    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8001
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ws=WebSocketProtocol,
        ws_per_message_deflate=False,
        ws_max_size=64 * 1024,
    )


if __name__ == "__main__":
    main()
