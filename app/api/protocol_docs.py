"""Generate ``docs/protocol.md`` from the protocol models: ``python -m app.api.protocol_docs``.

``tests/api/test_protocol_docs.py`` fails when the file is not what this module generates, and when
a view field, an event type or an error code the code produces is not in the models, so the
document cannot drift from the code. After changing a message, a view field or an event: describe
it in ``app/api/protocol.py`` (an example in ``app/api/protocol_examples.py``), then run the command above.
"""

from __future__ import annotations

import inspect
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from app.api import protocol, protocol_examples

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

INTRO = """# Table websocket protocol

Generated from `app/api/protocol.py` by `python -m app.api.protocol_docs`; do not edit by hand.

## Connecting

- Endpoint: `GET /ws/tables/{code}` with `code` an invite code (play or watch) or a spectator code
  (watch only). The session cookie `durak_session` (`__Host-durak_session` over HTTPS)
  authenticates the handshake; without a cookie you watch as an anonymous spectator. A forged,
  expired or logged-out cookie is refused at the handshake with HTTP 403.
- **Origin policy.** The handshake follows the REST routes' rule (docs/security.md): it is refused
  with HTTP 403 when its `Origin` header is neither the server's own origin (the scheme and `Host`
  of the request) nor in `DURAK_ALLOWED_ORIGINS` (empty by default), or when its `Sec-Fetch-Site`
  says `cross-site` or `same-site`. A browser always sends `Origin`, so no other origin's page, a
  sibling port or subdomain of the same host included, can open a socket with its visitor's
  cookie. A handshake *without* `Origin` is
  accepted, with whatever cookie it carries: only a non-browser client (a script, a bot, a native
  app) can leave the header out, and such a client can present only a cookie it holds itself
  (no page can make a victim's browser omit `Origin` or hand over an HttpOnly cookie). Non-browser
  clients therefore sign in through the REST API (`POST /api/auth/login`) and send the cookie
  they got.
- Frames are JSON text, at most 64 KiB; permessage-deflate is off.
- **Rate limit.** Each connection may send 20 messages at once and 10 per second sustained
  (`DURAK_WS_BURST`, `DURAK_WS_RATE_PER_S`), and every new table version it receives (an `update`
  or `welcome`) gives one message back: a client that answers each update at once is never limited,
  however fast the match goes. A message over the limit is refused on its own with an `error` of
  code `rate_limited` and `retry_after_ms` (send it again after that); only a connection still over
  the limit after 10 seconds of such refusals gets `bye` `rate_limited` and close code 4008.
- When the session is signed out (log-out in this browser, or `everywhere` on any device), every
  socket of that session gets `bye` with code `signed_out` and close code 4001, in every server
  process.

## Hello, versions, updates and presence

- **`hello` is required.** Send it first. The answer is `welcome`: the full snapshot (your `view`,
  the `table` facts, the `version`). Until its `welcome` a connection receives no `update` and no
  `presence` (a connection's first message from the table is always its `welcome`); commands sent
  before `hello` are answered, but you would not see the table change. With `last_version`, the
  events you missed come along (`events`, `resumed_from`) when the table still has them (the last
  64 versions); otherwise, and for a `last_version` the table never reached, the snapshot alone.
- **Versions.** Every change of the table's state (a move, a seat taken or freed, a match starting
  or ending) bumps `version` by one and is pushed as one `update` with the events of that change
  (redacted for you: another player's drawn cards become a count) and the new view. Updates are
  pushed before the ack of the command that caused them.
- **Presence.** Connections coming and going (a player's tab opening or closing, a spectator) do
  not change the table's state: they are pushed as `presence`, with the table facts (who is
  `connected`, how many `spectators`) and the version you already have.
- Commands carry an `id` of your choice. Each gets exactly one `ack` or `error` with that id. A
  repeated id is not applied again: the answer is the original one with `duplicate: true` (except
  after the retryable refusals `unavailable` and `moved`, after which the same id is
  tried again). With `version` (the version you acted on), a command that is no longer legal is
  refused with `stale_version` so that you know your view was out of date.
- Two tabs of one player are two connections to the same seat: both receive every update; each
  receives only the acks and errors of its own commands.

## Restarts and lost connections

Each live table is served by one server process; when that process stops (a deploy) or dies,
another one takes the table over, at the same version (at once after a stop: the stopping server
hands it over before it says `bye`; three to four seconds after a crash). With the embedded
default (one server, no Redis) a stopped server keeps its tables and serves them again when it
starts. Nothing a player did is lost, and nobody is forfeited for the wait:

- **A command sent while the table has no server** (between the old one's end and the takeover) is
  held by the server your socket is on and handed to the table once it has one again: you get its
  answer then. When no server has answered for the table within 20 s, you get `error`
  `unavailable` instead; send it again, with the same id, if your view says it is still needed.
- **A command in flight while a server stops** is either answered by it (it was queued before the
  table was handed over) or refused with `moved`, which the server your socket is on never passes
  on: it sends the command to the table's next owner (same id) and passes on that answer. A REST
  call refused `moved` is made again the same way; `moved` is retryable wherever you meet it.
- **A stopping server** sends `bye` with code `shutdown` and `reconnect_after_ms`, then closes the
  socket with 1012. Reconnect to the same address after that wait (the stopping server takes no new
  connections: your proxy sends you to another), send `hello` with `last_version`, then every
  command you have had no answer to, each with its own id: one the table applied already is
  answered from its record (`duplicate: true`), never applied twice. Do the same after a close
  without `bye` (a server that died), with your own backoff.
- After a takeover every connection, on any server, gets a fresh `welcome` without asking (its
  server says `hello` for it, with the last version it passed on): the table as it is, with who is
  connected now.
- The decision's move timer goes on with the time it had when the old server last saved the table,
  plus 3 s; the idle limit and the disconnect grace start again. An open rematch proposal keeps its
  agreements and its time (plus 3 s).

## Seats and sockets

- Seats are taken through the REST API (`POST /api/tables/{code}/join`, see docs/api.md), never
  over the socket. **A socket opened before its REST join** (say, the invite page connects, then
  the player clicks Join) watches as a spectator until then; when that player joins, the same
  socket becomes the seat's connection: the `update` of the join carries your `seat`, and your
  `hand` and `legal` actions from then on. Nothing needs reconnecting. A socket opened with a
  spectator code, or without a session, always watches.
- `leave` (or `POST /api/tables/{code}/leave`) between matches frees the seat: the player's
  connections get an unasked `welcome` (with `seat` null) and watch from then on. During a match it
  forfeits (§8); the seat stays the player's until the match ends.
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

## Ready check

A staked match takes every seated player's coins, so it starts only when every human seated is
connected and has confirmed he is ready (rule book §8); free tables start as before.

- When a staked match would start -- its last seat fills, the creator sends `start` (or
  `POST /api/tables/{code}/start`, which then answers `match_id: null`), or every seat agreed to a
  rematch -- the table opens a **ready check** instead: a `ready_check` event
  `{"type": "ready_check", "ready": [1]}`, and `table.ready_check` is `{"ready": [seats],
  "deadline_ms": 30000}` until it ends. What opened it counts as the confirmation of whoever made
  it, if connected: the player who filled the seat, the creator who started, the players who
  agreed to the rematch.
- Each other seated player sends `ready` (or `POST /api/tables/{code}/ready`) from a connected
  table: a `ready` event `{"type": "ready", "seat": 0}`. A confirmation lapses when the player's
  last connection closes (he confirms again when back).
- The match starts (`match_start`; the stakes go into escrow now) the moment every human seated is
  connected and has confirmed. A seat that changes (someone leaves or sits down) ends the check; a
  full table opens a new one.
- When the time is up (`DURAK_READY_CHECK_S`, 30 s), the seats of those who have not confirmed, or
  are not connected, are freed (`seat` events) and the table waits for players again.

Apart from that, at every waiting table (free or staked), a seated player who has had no
connection to it for `DURAK_WAITING_SEAT_AWAY_S` (180 s) loses his seat (a `seat` event): nobody is
dealt into a match he has left.

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

# How the documentation names the objects inside messages (a section each).
OBJECTS: dict[type[BaseModel], str] = {
    protocol.View: "view",
    protocol.PlayerView: "view.players[]",
    protocol.TablePair: "view.table[]",
    protocol.Decision: "view.decision",
    protocol.ActionView: "action",
    protocol.OutcomeView: "outcome",
    protocol.RulesInfo: "rules",
    protocol.TableInfo: "table",
    protocol.SeatInfo: "table.seats[]",
    protocol.Results: "table.results",
}


def _is_event_union(annotation: Any) -> bool:
    members = (
        typing.get_args(typing.get_args(annotation)[0]) if typing.get_origin(annotation) is typing.Annotated else ()
    )
    return bool(members) and all(isinstance(m, type) and issubclass(m, protocol._Event) for m in members)


def _type_text(annotation: Any) -> str:
    if _is_event_union(annotation):
        return "[event](#events)"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_text(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(arg) for arg in args)
    if origin is typing.Literal:
        return " / ".join(f"`{json.dumps(arg)}`" for arg in args)
    if origin is list:
        return f"array of {_type_text(args[0])}"
    if origin is dict:
        return f"object: {_type_text(args[0])} → {_type_text(args[1])}"
    if annotation is type(None):
        return "null"
    if annotation in OBJECTS:
        return f"`{OBJECTS[annotation]}` object"
    return {int: "integer", str: "string", bool: "boolean", float: "number"}.get(annotation, "any JSON")


def _in_wire_order(value: Any, *, event: bool = False) -> Any:
    """Keys as the server sends them: ``type`` first; an event's ``version`` last (the actor adds it)."""
    if isinstance(value, list):
        return [_in_wire_order(item, event=event) for item in value]
    if not isinstance(value, dict):
        return value
    ordered = {key: _in_wire_order(item, event=key == "events") for key, item in value.items()}
    if "type" in ordered:
        ordered = {"type": ordered.pop("type"), **ordered}
    if event and "version" in ordered:
        ordered["version"] = ordered.pop("version")
    return ordered


def _example_json(model: BaseModel) -> str:
    data = model.model_dump(mode="json", exclude_unset=True)
    return json.dumps(_in_wire_order(data, event=isinstance(model, protocol._Event)), ensure_ascii=False)


def _fields(model: type[BaseModel]) -> list[str]:
    sent_by_client = issubclass(model, protocol._Command | protocol.Hello | protocol.Ping)
    presence = "required" if sent_by_client else "always there"
    lines = [f"| field | type | {presence} | description |", "|---|---|---|---|"]
    names = list(model.model_fields)
    names.sort(key=lambda name: (name != "type", issubclass(model, protocol._Event) and name == "version"))
    for name in names:
        info = model.model_fields[name]
        description = (info.description or "").replace("\n", " ")
        required = "yes" if info.is_required() else "no"
        lines.append(f"| `{info.alias or name}` | {_type_text(info.annotation)} | {required} | {description} |")
    return lines


def _section(title: str, model: type[BaseModel], examples: list[BaseModel], *, prefix: str = "") -> str:
    lines = [f"### {prefix}`{title}`", ""]
    doc = inspect.cleandoc(model.__doc__ or "")
    if doc:
        lines += [doc, ""]
    lines += _fields(model)
    for example in examples:
        lines += ["", "```json", _example_json(example), "```"]
    lines.append("")
    return "\n".join(lines)


def _kind(example: BaseModel) -> str:
    return str(example.model_dump()["type"])


def render() -> str:
    examples = protocol_examples.examples()
    by_model: dict[type[BaseModel], list[BaseModel]] = {}
    for example in examples:
        by_model.setdefault(type(example), []).append(example)
    client_models = typing.get_args(typing.get_args(protocol.ClientMessage)[0])
    client = [model for model in by_model if model in client_models]
    server = [model for model in by_model if model not in client]
    parts = [INTRO, "## Client to server", ""]
    parts += [_section(_kind(by_model[model][0]), model, by_model[model]) for model in client]
    parts += ["## Server to client", ""]
    parts += [_section(_kind(by_model[model][0]), model, by_model[model]) for model in server]
    update = next(e for e in examples if isinstance(e, protocol.Update))
    welcome = next(e for e in examples if isinstance(e, protocol.Welcome))
    parts += [
        "## The view object",
        "",
        "`welcome.view` and `update.view`: the match as you see it. The examples are the view of the",
        "update above (the defender's, after the lead) and its parts.",
        "",
    ]
    assert update.view is not None and welcome.view is not None
    samples: dict[type[BaseModel], list[BaseModel]] = {
        protocol.View: [update.view],
        protocol.PlayerView: [update.view.players[0]],
        protocol.TablePair: [update.view.table[0]],
        protocol.Decision: [update.view.decision],
        protocol.ActionView: list((update.view.legal or [])[:2]),
        protocol.OutcomeView: [protocol_examples.OUTCOME],
        protocol.RulesInfo: [update.view.rules],
    }
    for model, samples_of_model in samples.items():
        parts.append(_section(OBJECTS[model], model, samples_of_model))
    parts += ["## The table object", "", "`welcome.table`, `update.table`, `presence.table`.", ""]
    table_samples: dict[type[BaseModel], list[BaseModel]] = {
        protocol.TableInfo: [welcome.table],
        protocol.SeatInfo: [welcome.table.seats[0]],
        protocol.Results: [
            protocol.Results(
                outcome=protocol_examples.OUTCOME,
                coin_changes={0: 100, 1: -100},
                match_id="5d1f0c2e9a6b4e8f8a1c3b7d9e0f2a4c",
            )
        ],
    }
    for model, samples_of_model in table_samples.items():
        parts.append(_section(OBJECTS[model], model, samples_of_model))
    parts += [
        "## Events",
        "",
        "`update.events` (and `welcome.events` when resuming): what each change did, in order. Every",
        "event carries the `version` of the change that made it.",
        "",
    ]
    events: dict[type[BaseModel], list[BaseModel]] = {}
    for event in protocol_examples.event_examples():
        events.setdefault(type(event), []).append(event)
    parts += [_section(_kind(found[0]), model, found, prefix="event ") for model, found in events.items()]
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
