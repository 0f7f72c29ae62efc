"""Generate ``docs/protocol.md`` from the protocol models: ``python -m app.api.protocol_docs``.

``tests/api/test_protocol_docs.py`` fails when the file is not what this module generates, so the
document cannot drift from the code.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path

from pydantic import BaseModel

from app.api import protocol

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

INTRO = """# Table websocket protocol

Generated from `app/api/protocol.py` by `python -m app.api.protocol_docs`; do not edit by hand.

- Endpoint: `GET /ws/tables/{code}` with `code` an invite code (play or watch) or a spectator code
  (watch only). The session cookie `durak_session` (`__Host-durak_session` over HTTPS)
  authenticates the handshake; without a cookie you watch as an anonymous spectator. An `Origin`
  that is neither the server's own nor in its allow-list, or a forged, expired or logged-out
  cookie, is refused at the handshake with HTTP 403.
- Frames are JSON text, at most 64 KiB; permessage-deflate is off. Each connection may send 20
  messages in a burst and 10 per second sustained; beyond that it gets `bye` and close code 4008.
- When the session is signed out (log-out in this browser, or `everywhere` on any device), every
  socket of that session gets `bye` with code `signed_out` and close code 4001, in every server
  process.
- Send `hello` first. The answer is `welcome`: the full snapshot (your `view`, the `table` facts,
  the `version`). With `last_version`, the events you missed come along when the table still has
  them (the last 64 versions); otherwise the snapshot alone.
- Every change at the table bumps `version` and is pushed as `update` with the events of that change
  (redacted for you: another player's drawn cards become a count) and the new view. Updates are
  pushed before the ack of the command that caused them.
- Commands carry an `id` of your choice. Each gets exactly one `ack` or `error` with that id. A
  repeated id is not applied again: the answer is the original ack with `duplicate: true`. With
  `version` (the version you acted on), a command that is no longer legal is refused with
  `stale_version` so that you know your view was out of date.
- Two tabs of one player are two connections to the same seat: both receive every update; each
  receives only the acks and errors of its own commands.
- A seat whose player disconnects is kept: at a table with a timer, until his decision timer runs
  out (then §8 applies); at a table without a timer, for 60 seconds. Reconnecting with the same
  session resumes the seat.
"""


def _section(model: type[BaseModel], example: BaseModel) -> str:
    schema = model.model_json_schema()
    doc = inspect.cleandoc(model.__doc__ or "")
    lines = [f"### `{example.model_dump()['type']}`", ""]
    if doc:
        lines += [doc, ""]
    fields = schema.get("properties", {})
    required = set(schema.get("required", []))
    lines += ["| field | type | required | description |", "|---|---|---|---|"]
    for name, spec in fields.items():
        kind = spec.get("type") or " / ".join(
            str(option.get("type", option.get("$ref", "object"))) for option in spec.get("anyOf", [])
        )
        if "const" in spec:
            kind = f"`{json.dumps(spec['const'])}`"
        description = (spec.get("description") or "").replace("\n", " ")
        lines.append(f"| `{name}` | {kind} | {'yes' if name in required else 'no'} | {description} |")
    lines += ["", "```json", json.dumps(example.model_dump(exclude_none=True), ensure_ascii=False), "```", ""]
    return "\n".join(lines)


def render() -> str:
    parts = [INTRO, "## Client to server", ""]
    server_types = {"welcome", "update", "ack", "error", "pong", "bye"}
    client_examples = [e for e in protocol.EXAMPLES if e.model_dump()["type"] not in server_types]
    server_examples = [e for e in protocol.EXAMPLES if e.model_dump()["type"] in server_types]
    for example in client_examples:
        parts.append(_section(type(example), example))
    parts += ["## Server to client", ""]
    for example in server_examples:
        parts.append(_section(type(example), example))
    parts += ["## Error codes", "", "| code | meaning |", "|---|---|"]
    parts += [f"| `{code}` | {text} |" for code, text in protocol.ERROR_CODES.items()]
    parts += ["", "## Close codes", "", "| code | meaning |", "|---|---|"]
    parts += [f"| {code} | {text} |" for code, text in protocol.CLOSE_CODES.items()]
    return "\n".join(parts) + "\n"


def main() -> None:
    DOC.write_text(render(), encoding="utf-8")
    print(f"wrote {DOC}", file=sys.stderr)


if __name__ == "__main__":
    main()
