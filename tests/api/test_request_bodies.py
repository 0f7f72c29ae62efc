"""Bad JSON bodies get a clear 4xx naming the field, never a 500, never an echo of a password or a
large input, and change nothing: NaN, Infinity, 1e400, wrong types, lone surrogates, oversized
bodies, sent to every route that takes a JSON body (the list comes from the app's routes)."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fastapi.testclient import TestClient
from pydantic import BaseModel
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.body_limit import MAX_BODY_BYTES
from app.api.schemas import RequestBody
from app.config import Settings
from app.db import integrity
from app.db.models import Account, IntegrityFlag, LedgerAccount, LedgerTransfer, Match
from app.main import create_app
from tests.api.support import PASSWORD, SECRET, Api, at_table
from tests.support.wait import eventually
from tests.tables.harness import Player, started_table


def _request_models() -> dict[str, type[RequestBody]]:
    found: dict[str, type[RequestBody]] = {}
    todo = [RequestBody]
    while todo:
        for model in todo.pop().__subclasses__():
            found[model.__name__] = model
            todo.append(model)
    return found


def _body_routes() -> dict[str, str]:
    """``"METHOD /path"`` → the name of its body's schema, for every operation in the OpenAPI that
    takes a request body."""
    schema = create_app(Settings(database_url="sqlite+aiosqlite://", secret_key=SECRET)).openapi()
    out: dict[str, str] = {}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                body = operation["requestBody"]["content"]["application/json"]["schema"]
                ref = next(branch["$ref"] for branch in body.get("anyOf", [body]) if "$ref" in branch)
                out[f"{method.upper()} {path}"] = ref.rsplit("/", 1)[1]
    return out


BODY_ROUTES = _body_routes()


@dataclass
class Target:
    """A route, filled in: the client that may call it, its path and a valid body."""

    client: httpx.AsyncClient
    path: str
    body: dict[str, Any]
    ok: int  # the status the valid body gets
    headers: dict[str, str] | None = None
    method: str = "POST"


async def _account_id(client: httpx.AsyncClient) -> int:
    me: dict[str, Any] = (await client.get("/api/me")).json()
    return int(me["id"])


async def _open_table(client: httpx.AsyncClient, **params: Any) -> str:
    response = await client.post("/api/tables", json={"timer": 0, "bot_delay_ms": 0, **params})
    assert response.status_code == 201, response.text
    code: str = response.json()["code"]
    return code


Setup = Callable[[Api], Awaitable[Target]]


async def _signup(api: Api) -> Target:
    return Target(api.client(), "/api/auth/signup", {"name": "newbie", "password": PASSWORD}, 201)


async def _login(api: Api) -> Target:
    await api.signed_up("alice")
    return Target(api.client(), "/api/auth/login", {"name": "alice", "password": PASSWORD}, 200)


async def _guest(api: Api) -> Target:
    return Target(api.client(), "/api/auth/guest", {"name": "visitor"}, 200)


async def _adjust(api: Api) -> Target:
    alice = await api.signed_up("alice")
    path = f"/api/admin/accounts/{await _account_id(alice)}/adjust"
    return Target(await api.admin(), path, {"amount": 50, "reason": "a gift"}, 200, {"Idempotency-Key": "gift-0001"})


async def _create_table(api: Api) -> Target:
    body = {
        "preset": "durak_peak",
        "deck": 36,
        "seats": 2,
        "circle": "all",
        "transfer": False,
        "draws": True,
        "timer": 30,
        "stake": 10,
        "cheating": False,
        "private": False,
        "chat": False,
        "name": "evening",
        "bot_delay_ms": 0,
    }
    return Target(await api.signed_up("alice"), "/api/tables", body, 201)


async def _join(api: Api) -> Target:
    alice = await api.signed_up("alice")
    code = await _open_table(alice, seats=3, stake=10)
    return Target(await api.signed_up("bob"), f"/api/tables/{code}/join", {"seat": 1}, 200)


async def _add_bot(api: Api) -> Target:
    alice = await api.signed_up("alice")
    code = await _open_table(alice, seats=3)
    return Target(alice, f"/api/tables/{code}/bots", {"level": "easy", "seat": 2}, 200)


async def _quickplay(api: Api) -> Target:
    body = {"deck": 36, "seats": 3, "transfer": True, "stake": 10, "timer": 30}
    return Target(await api.signed_up("alice"), "/api/quickplay", body, 200)


async def _quickplay_bot(api: Api) -> Target:
    body = {"level": "easy", "deck": 24, "transfer": False, "timer": 30}
    return Target(await api.signed_up("alice"), "/api/quickplay/bot", body, 200)


async def _rename_guest(api: Api) -> Target:
    return Target(await api.guest("visitor"), "/api/auth/guest/name", {"name": "Vasya"}, 200)


async def _fill_with_bots(api: Api) -> Target:
    alone = await api.guest("alone")
    found = (await alone.post("/api/quickplay", json={"seats": 3})).json()
    return Target(alone, f"/api/quickplay/{found['code']}/bots", {"level": "easy"}, 200)


async def _report(api: Api) -> Target:
    alice = await api.signed_up("alice")
    code = await _open_table(alice)
    await alice.post(f"/api/tables/{code}/join", json={"seat": 0})
    bob = await api.signed_up("bob")
    await bob.post(f"/api/tables/{code}/join", json={"seat": 1})
    bob_key = (await alice.get(f"/api/tables/{code}")).json()["seats"][1]["player"]
    return Target(alice, f"/api/tables/{code}/report", {"player": bob_key, "reason": "rude words"}, 201)


async def _flag_id(api: Api) -> int:
    a, b = await _account_id(await api.signed_up("alice")), await _account_id(await api.signed_up("bob"))

    async def file(session: AsyncSession) -> int:
        await integrity.file_flag(session, kind="quick_wins", dedupe="t", a=a, b=b, summary="t", match_ids=[])
        return int(await session.scalar(select(IntegrityFlag.id)) or 0)

    return await api.db.write(file)


async def _dismiss(api: Api) -> Target:
    path = f"/api/admin/integrity/flags/{await _flag_id(api)}/dismiss"
    return Target(await api.admin(), path, {"note": "fine"}, 200)


async def _warn(api: Api) -> Target:
    path = f"/api/admin/integrity/flags/{await _flag_id(api)}/warn"
    return Target(await api.admin(), path, {"note": "stop"}, 200)


async def _freeze(api: Api) -> Target:
    alice = await api.signed_up("alice")
    path = f"/api/admin/accounts/{await _account_id(alice)}/freeze"
    return Target(await api.admin(), path, {"reason": "farming"}, 200)


async def _reverse(api: Api) -> Target:
    alice, bob = await api.signed_up("alice"), await api.signed_up("bob")
    code = await _open_table(alice, stake=10)
    for client in (alice, bob):  # both at the table: a staked match starts once both are ready
        await at_table(api, client, code)
    await alice.post(f"/api/tables/{code}/join", json={})
    await bob.post(f"/api/tables/{code}/join", json={})
    await alice.post(f"/api/tables/{code}/ready")
    match_id = (await alice.get(f"/api/tables/{code}")).json()["match_id"]
    await bob.post(f"/api/tables/{code}/leave")

    async def settled() -> bool:
        async with api.db.session() as session:
            return await session.get(Match, match_id) is not None

    await eventually(settled, 10, "the match is settled")
    return Target(await api.admin(), f"/api/admin/matches/{match_id}/reverse", {"note": "farmed"}, 200)


async def _change_password(api: Api) -> Target:
    body = {"current_password": PASSWORD, "new_password": "another good one"}
    return Target(await api.signed_up("alice"), "/api/auth/password", body, 204)


async def _reset_password(api: Api) -> Target:
    alice = await api.signed_up("alice")
    path = f"/api/admin/accounts/{await _account_id(alice)}/password-reset"
    return Target(await api.admin(), path, {"reason": "lost it"}, 200)


def _push_subscription() -> dict[str, Any]:
    point = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    )
    return {
        "endpoint": "https://fcm.googleapis.com/fcm/send/abc123",
        "keys": {
            "p256dh": base64.urlsafe_b64encode(point).decode(),
            "auth": base64.urlsafe_b64encode(b"0" * 16).decode(),
        },
        "lang": "ru",
        "expirationTime": None,
    }


async def _subscribe(api: Api) -> Target:
    return Target(await api.signed_up("alice"), "/api/push/subscriptions", _push_subscription(), 201)


async def _unsubscribe(api: Api) -> Target:
    alice = await api.signed_up("alice")
    body = _push_subscription()
    assert (await alice.post("/api/push/subscriptions", json=body)).status_code == 201
    return Target(alice, "/api/push/subscriptions", {"endpoint": body["endpoint"]}, 204, method="DELETE")


async def _challenge(api: Api) -> Target:
    alice, bob = await api.signed_up("alice"), await api.signed_up("bob")
    assert (await alice.post("/api/friends/bob")).json()["status"] == "requested"
    assert (await bob.post("/api/friends/alice")).json()["status"] == "friends"
    body = {"preset": "durak_peak", "deck": 36, "seats": 2, "stake": 0, "timer": 30, "name": "a duel"}
    return Target(alice, "/api/friends/bob/challenge", body, 201)


def _tournament_body() -> dict[str, Any]:
    start = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    return {"name": "Cup", "seats": 2, "deck": 36, "timer": 30, "starts_at": start, "duration_min": 30}


async def _tournament(api: Api) -> Target:
    return Target(await api.signed_up("alice"), "/api/tournaments", _tournament_body(), 201)


async def _cancel_tournament(api: Api) -> Target:
    alice = await api.signed_up("alice")
    made = await alice.post("/api/tournaments", json=_tournament_body())
    assert made.status_code == 201, made.text
    return Target(alice, f"/api/tournaments/{made.json()['id']}/cancel", {"reason": "rain"}, 200)


SETUPS: dict[str, Setup] = {
    "POST /api/tournaments": _tournament,
    "POST /api/tournaments/{tournament_id}/cancel": _cancel_tournament,
    "POST /api/push/subscriptions": _subscribe,
    "DELETE /api/push/subscriptions": _unsubscribe,
    "POST /api/friends/{name}/challenge": _challenge,
    "POST /api/auth/password": _change_password,
    "POST /api/admin/accounts/{account_id}/password-reset": _reset_password,
    "POST /api/auth/signup": _signup,
    "POST /api/auth/login": _login,
    "POST /api/auth/guest": _guest,
    "POST /api/admin/accounts/{account_id}/adjust": _adjust,
    "POST /api/tables": _create_table,
    "POST /api/tables/{code}/join": _join,
    "POST /api/tables/{code}/bots": _add_bot,
    "POST /api/quickplay": _quickplay,
    "POST /api/quickplay/bot": _quickplay_bot,
    "POST /api/quickplay/{code}/bots": _fill_with_bots,
    "POST /api/auth/guest/name": _rename_guest,
    "POST /api/tables/{code}/report": _report,
    "POST /api/admin/integrity/flags/{flag_id}/dismiss": _dismiss,
    "POST /api/admin/integrity/flags/{flag_id}/warn": _warn,
    "POST /api/admin/accounts/{account_id}/freeze": _freeze,
    "POST /api/admin/matches/{match_id}/reverse": _reverse,
}


def test_every_route_with_a_body_is_covered_and_strict() -> None:
    assert set(BODY_ROUTES) == set(SETUPS), "add a setup for the new route to SETUPS"
    models = _request_models()
    for label, name in BODY_ROUTES.items():
        assert name in models, f"{label}: its body {name} must derive from RequestBody"
        config = models[name].model_config
        assert config.get("strict") is True and config.get("extra") == "forbid", label


def _json_types(model: type[BaseModel], field: str) -> set[str]:
    prop = model.model_json_schema()["properties"][field]
    branches = prop.get("anyOf", [prop])
    return {branch["type"] for branch in branches if "type" in branch} - {"null"}


def _bad_values(model: type[BaseModel], field: str) -> list[str]:
    """JSON texts that are never a valid value of ``field``."""
    values = ["NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"', '"ok\\udfffok"', "[1, 2]", '{"a": 1}']
    values += ['["\\u0000"]', '{"\\u0000": "x"}']  # NUL inside a list or an object, whatever the field
    types = _json_types(model, field)
    if "string" in types:
        values += ["2", "true", json.dumps("y" * 5000)]  # too long for every text field, under the size limit
        values += ['"a\\u0000b"', '"\\u0000"']  # NUL, which PostgreSQL text refuses (a 500 before)
    if "integer" in types:
        values += ['"2"', "10.0", "true", "1" + "0" * 400]
    if "boolean" in types:
        values += ['"yes"', "1", '"true"']
    return values


def _with(body: dict[str, Any], field: str, raw: str) -> bytes:
    """``body`` as JSON text with the raw JSON text ``raw`` as the value of ``field``."""
    marker = "\x00bad\x00"
    return json.dumps({**body, field: marker}).replace(json.dumps(marker), raw).encode()


async def _ledger_and_tables(api: Api) -> tuple[Any, ...]:
    async with api.db.session() as session:
        wallets = (await session.execute(select(LedgerAccount.code, LedgerAccount.balance).order_by("code"))).all()
        accounts = await session.scalar(select(func.count()).select_from(Account))
        transfers = await session.scalar(select(func.count()).select_from(LedgerTransfer))
    tables = {
        code: (actor.status, actor.version, actor.spec.name, [(s.kind, s.name, s.level) for s in actor.seats])
        for code, actor in api.app.state.tables.tables.items()
    }
    return tuple(wallets), accounts, transfers, tables


@pytest.mark.parametrize("label", sorted(SETUPS))
async def test_bad_bodies_are_refused_naming_the_field_and_change_nothing(api: Api, label: str) -> None:
    target = await SETUPS[label](api)
    model = _request_models()[BODY_ROUTES[label]]
    headers = {"content-type": "application/json", **(target.headers or {})}
    before = await _ledger_and_tables(api)

    async def send(content: bytes | AsyncIterator[bytes]) -> httpx.Response:
        return await target.client.request(target.method, target.path, content=content, headers=headers)

    for field in model.model_fields:
        for raw in _bad_values(model, field):
            response = await send(_with(target.body, field, raw))
            what = f"{label} {field}={raw[:40]}"
            assert response.status_code == 422, (what, response.text)
            locs = [error["loc"] for error in response.json()["detail"]]
            assert any(loc[:2] == ["body", field] for loc in locs), (what, locs)  # or a field inside it
            assert PASSWORD not in response.text and "y" * 200 not in response.text, what
            assert len(response.content) < 2000, what

    # Not an object at all, or an unknown field: no echo of the body (it carries the password).
    for raw in [json.dumps([target.body]), json.dumps([target.body] * 100), json.dumps(PASSWORD)]:
        response = await send(raw.encode())
        assert response.status_code == 422 and PASSWORD not in response.text, (label, response.text)
    response = await send(_with(target.body, "extra", "NaN"))
    assert response.status_code == 422 and ["body", "extra"] in [error["loc"] for error in response.json()["detail"]]
    response = await send(_with(target.body, "\ud800", "1"))  # a field name that is not valid Unicode
    assert response.status_code == 422 and PASSWORD not in response.text, response.text

    # Larger than the limit: refused before it is read (Content-Length), or while it is read.
    oversized = _with(target.body, "pad", json.dumps("z" * MAX_BODY_BYTES))
    response = await send(oversized)
    assert response.status_code == 413 and str(MAX_BODY_BYTES) in response.json()["detail"], response.text

    async def chunks() -> AsyncIterator[bytes]:
        yield oversized

    response = await send(chunks())
    assert response.status_code == 413 and str(MAX_BODY_BYTES) in response.json()["detail"], response.text

    assert await _ledger_and_tables(api) == before
    # The same body, valid, is accepted: each refusal above was for the bad value alone.
    response = await target.client.request(target.method, target.path, json=target.body, headers=target.headers)
    assert response.status_code == target.ok, response.text


async def test_a_50_mb_body_is_not_read(api: Api) -> None:
    chunk = b"x" * (1 << 20)
    pulled = 0

    async def body() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(50):
            pulled += 1
            yield chunk

    client = api.client()
    headers = {"content-type": "application/json"}
    response = await client.post("/api/auth/signup", content=body(), headers=headers)  # chunked: no length
    assert response.status_code == 413 and response.json()["detail"].startswith("request body too large")
    assert pulled == 1  # the first MiB is over the limit: nothing more is read
    pulled = 0
    response = await client.post(
        "/api/auth/signup", content=body(), headers={**headers, "content-length": str(50 * len(chunk))}
    )
    assert response.status_code == 413 and pulled == 0
    async with api.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(Account)) == 0


async def test_422_echoes_short_inputs_only(api: Api) -> None:
    client = await api.signed_up("alice")
    response = await client.post("/api/tables", json={"seats": "2", "circle": "sideways"})
    assert response.status_code == 422
    errors = {tuple(error["loc"]): error for error in response.json()["detail"]}
    assert errors[("body", "seats")]["input"] == "2" and errors[("body", "seats")]["type"] == "int_type"
    assert errors[("body", "circle")]["input"] == "sideways"
    response = await api.client().post("/api/auth/signup", json={"name": "ab", "password": "short"})
    assert response.status_code == 422 and "short" not in json.dumps(
        [e.get("input") for e in response.json()["detail"]]
    )
    assert {tuple(error["loc"]) for error in response.json()["detail"]} == {("body", "password")}


def test_the_websocket_path_is_not_affected(client: TestClient) -> None:
    """The body limit is for HTTP requests only: a handshake that claims a huge body still connects,
    and frames up to the websocket's own limit still get through."""
    code, alice, _ = started_table(client)
    with client.websocket_connect(f"/ws/tables/{code}", headers={**alice, "content-length": str(10**9)}) as ws:
        player = Player(ws, "a")
        assert player.hello()["type"] == "welcome"
        ws.send_text(json.dumps({"type": "ping", "id": "p", "padding": "x" * (MAX_BODY_BYTES - 1000)}))
        assert player.until(lambda m: m["type"] == "error")["code"] == "bad_message"
        player.send({"type": "ping", "id": "p2"})
        assert player.until(lambda m: m["type"] == "pong")["id"] == "p2"
