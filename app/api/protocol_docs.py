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
- A seat whose player disconnects is kept; reconnecting with the same session resumes it. How long
  the match waits for him: see "Deadlines" below.

## Deadlines

No seat can keep a match waiting for ever (RULES §8). Each seat the match waits for (`view.decision.seats`)
has a deadline for this decision, counted from the move that brought it, whichever comes first of:

- the move timer (`rules.timer` seconds; tables with a timer only);
- the **idle limit** (server setting `DURAK_IDLE_LIMIT_S`, 300 s by default), even without a timer;
- while his player is not connected (never connected, or gone), the **disconnect grace**
  (`DURAK_DISCONNECT_GRACE_S`, 60 s by default), from when the decision came or when he went,
  whichever is later.

When it passes, a lead or a defence is forfeited (`forfeit` event, reason `timeout`, or
`disconnected` after the grace); a throw-in is passed. `table.seats[i].deadline_ms` is the time left
for seat *i* (null when the match does not wait for it) and `table.seats[i].deadline_kind` says which
one it is: `timer`, `idle` or `grace`; `table.deadline_ms` is the earliest of them. Times are
milliseconds at the moment the message was sent; a client counts down from there. They change
without a new `version` when a player connects or goes.

## Rematch

A rematch is a proposal; nobody's coins are staked without his own click.

- After a match (`table.status` `finished`), a seated player sends `rematch` (or
  `POST /api/tables/{code}/rematch`): the first one opens the proposal, each later one agrees. Each
  agreement is a `rematch` event `{"type": "rematch", "seat": 1}`.
- `table.rematch` is null, or `{"agreed": [seats], "deadline_ms": 41000}`: the seats that agreed
  (bots agree by themselves) and the time left.
- The match starts (`match_start`; the stakes go into escrow now) as soon as every seat is taken by
  a player who agreed. A player who sits down in a free seat meanwhile agrees by sitting down.
- `leave` declines: the seat is freed at once. When the time is up (60 s), the seats of those who
  have not agreed are freed (`seat` events), the proposal ends and the table is `waiting` again:
  the players who agreed keep their seats and the match starts when the free seats fill.
- `start` is refused after a match (`match_over`): only the players' own clicks start a rematch.

## Provably fair deals

Every deal is committed to before the players add their own randomness and revealed after the last
card ([fairness.md](fairness.md) has the algorithm and a worked example).

- `table.fairness` is `{"algorithm": "durak-peak/v1", "match_number": 1, "commitment": "<64 hex>",
  "client_seeds": [seats that sent one]}`: the commitment to the secret server seed of match
  `match_number` (during a match: the running one's; after it: the next one's). Everyone, seats
  and spectators, has it from the first `welcome` on.
- After the commitment, each seated player sends `client_seed` naming it (the web client makes the
  seed with `crypto.getRandomValues`). A `client_seed` event `{"type": "client_seed", "seat": 0}`
  says who did (not the seed). Bots, and players who send none, contribute an empty seed.
- When the match ends, however it ends, the `results` event and `table.results` carry `fairness`:
  the revealed record `{algorithm, table, match_number, deck_size, commitment, server_seed,
  client_seeds, deck}`; the same update has a `commitment` event `{"type": "commitment",
  "match_number": 2, "commitment": "…"}` for the next match. The server seed appears nowhere
  before that.
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
