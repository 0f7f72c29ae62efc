"""Changing one's password, an admin's password reset, and guest log-outs that hold on the server
(issue 35, item 16; docs/security.md, "Sessions and passwords")."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from starlette.websockets import WebSocketDisconnect

from app.api import signouts
from app.api.deps import COOKIE_NAME
from app.api.routes import auth
from app.cli import reset_password
from app.db.models import AdminAction
from tests.api.support import PASSWORD, Api
from tests.tables.harness import Player, login, started_table

NEW_PASSWORD = "a brand new one"


async def _log_in(api: Api, name: str, password: str) -> httpx.Response:
    return await api.client().post("/api/auth/login", json={"name": name, "password": password})


async def _copy(api: Api, client: httpx.AsyncClient) -> httpx.AsyncClient:
    """Another browser holding a copy of ``client``'s session cookie."""
    thief = api.client()
    thief.cookies.set(COOKIE_NAME, client.cookies[COOKIE_NAME])
    assert (await thief.get("/api/me")).status_code == 200
    return thief


async def test_a_password_change_needs_the_current_password_and_signs_out_every_other_session(api: Api) -> None:
    laptop = await api.signed_up("alice")
    phone = api.client()
    assert (await phone.post("/api/auth/login", json={"name": "alice", "password": PASSWORD})).status_code == 200
    thief = await _copy(api, laptop)

    wrong = await laptop.post(
        "/api/auth/password", json={"current_password": "not it at all", "new_password": NEW_PASSWORD}
    )
    assert wrong.status_code == 403 and wrong.json()["detail"].startswith("wrong_password"), wrong.text
    short = await laptop.post("/api/auth/password", json={"current_password": PASSWORD, "new_password": "short"})
    assert short.status_code == 422 and PASSWORD not in short.text

    changed = await laptop.post("/api/auth/password", json={"current_password": PASSWORD, "new_password": NEW_PASSWORD})

    assert changed.status_code == 204, changed.text
    assert (await laptop.get("/api/me")).status_code == 200  # this browser stays signed in (a new cookie)
    assert (await phone.get("/api/me")).status_code == 401
    assert (await thief.get("/api/me")).status_code == 401  # ... but a copy of its old cookie does not
    assert (await _log_in(api, "alice", PASSWORD)).status_code == 401
    assert (await _log_in(api, "alice", NEW_PASSWORD)).status_code == 200


async def test_guests_and_strangers_cannot_change_a_password(api: Api) -> None:
    body = {"current_password": PASSWORD, "new_password": NEW_PASSWORD}
    assert (await (await api.guest("Gus")).post("/api/auth/password", json=body)).status_code == 403
    assert (await api.client().post("/api/auth/password", json=body)).status_code == 401


async def test_wrong_current_passwords_are_limited_like_wrong_log_ins(api: Api) -> None:
    """A stolen cookie does not let its holder guess the password at leisure."""
    alice = await api.signed_up("alice")
    body = {"current_password": "guess-guess", "new_password": NEW_PASSWORD}
    for _ in range(api.settings.throttle.login_failures):
        assert (await alice.post("/api/auth/password", json=body)).status_code == 403
    locked = await alice.post("/api/auth/password", json={**body, "current_password": PASSWORD})
    assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1
    assert (await _log_in(api, "alice", PASSWORD)).status_code in (200, 429)  # unchanged
    assert (await _log_in(api, "alice", NEW_PASSWORD)).status_code in (401, 429)


@pytest.mark.parametrize("route", ["change", "login"])
async def test_concurrent_wrong_passwords_are_limited(api: Api, monkeypatch: pytest.MonkeyPatch, route: str) -> None:
    """A burst of guesses sent at once gets no more tries than one after another: each attempt is
    counted before its password is checked (which takes a while), not after."""
    real_verify = auth.verify_password

    async def slow_verify(password_hash: str | None, password: str) -> bool:
        await asyncio.sleep(0.2)  # as argon2 on a busy server: every guess of the burst is in flight
        return await real_verify(password_hash, password)

    monkeypatch.setattr(auth, "verify_password", slow_verify)
    alice = await api.signed_up("alice")

    async def guess(number: int) -> int:
        if route == "change":
            body = {"current_password": f"guess number {number}", "new_password": NEW_PASSWORD}
            return (await alice.post("/api/auth/password", json=body)).status_code
        return (await _log_in(api, "alice", f"guess number {number}")).status_code

    answers = await asyncio.gather(*(guess(number) for number in range(12)))
    wrong = 403 if route == "change" else 401
    failures = api.settings.throttle.login_failures
    assert sorted(answers) == [wrong] * failures + [429] * (12 - failures)
    # The right password is locked out too until the window passes, as after guesses in a row.
    assert (await _log_in(api, "alice", PASSWORD)).status_code == 429


async def test_an_admin_resets_a_players_password_and_every_session_of_it_ends(api: Api) -> None:
    admin = await api.admin("root")
    alice = await api.signed_up("alice")
    alice_id = (await alice.get("/api/me")).json()["id"]
    path = f"/api/admin/accounts/{alice_id}/password-reset"

    assert (await alice.post(path, json={"reason": "lost it"})).status_code == 403  # admins only
    assert (await admin.post(path, json={"reason": "  "})).status_code == 422
    reset = await admin.post(path, json={"reason": "she asked by mail"})

    assert reset.status_code == 200, reset.text
    answer = reset.json()
    assert answer["account_id"] == alice_id and answer["name"] == "alice"
    temporary = answer["temporary_password"]
    assert len(temporary) >= 16 and reset.headers["cache-control"] == "no-store"
    assert (await alice.get("/api/me")).status_code == 401
    assert (await _log_in(api, "alice", PASSWORD)).status_code == 401
    assert (await _log_in(api, "alice", temporary)).status_code == 200
    async with api.db.session() as session:
        action = (await session.scalars(select(AdminAction).where(AdminAction.action == "password_reset"))).one()
    assert (action.target_id, action.reason) == (alice_id, "she asked by mail")
    assert temporary not in action.reason
    missing = await admin.post("/api/admin/accounts/2147483647/password-reset", json={"reason": "x"})
    assert missing.status_code == 404


async def test_another_admins_password_is_not_reset_by_an_admin(api: Api) -> None:
    root = await api.admin("root")
    other = await api.admin("other")
    other_id = (await other.get("/api/me")).json()["id"]
    refused = await root.post(f"/api/admin/accounts/{other_id}/password-reset", json={"reason": "take over"})
    assert refused.status_code == 403, refused.text
    assert (await other.get("/api/me")).status_code == 200
    assert (await _log_in(api, "other", PASSWORD)).status_code == 200


async def test_the_operator_resets_any_password_from_the_command_line(api: Api) -> None:
    admin = await api.admin("root")
    message = await reset_password(api.settings.storage.database_url, "memory://", "root", NEW_PASSWORD)
    assert "root" in message
    assert (await admin.get("/api/me")).status_code == 401
    assert (await _log_in(api, "root", NEW_PASSWORD)).status_code == 200


async def test_a_guest_log_out_holds_on_the_server(api: Api) -> None:
    """Before: a copied guest cookie kept working for 14 days after its owner logged out."""
    gus = await api.guest("Gus")
    thief = await _copy(api, gus)
    assert (await gus.post("/api/auth/logout")).status_code == 204
    assert (await thief.get("/api/me")).status_code == 401
    assert (await thief.post("/api/tables", json={"timer": 0})).status_code == 401
    again = await thief.post("/api/auth/logout")  # the copy cannot do anything, not even this
    assert again.status_code == 204
    assert (await api.guest("Gus")).cookies[COOKIE_NAME]  # a new guest session works


def _signed_out(ws: Any) -> None:
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            ws.receive_json()
    assert closed.value.code == signouts.CLOSE_CODE


def test_a_password_change_closes_every_socket_of_the_account(client: TestClient) -> None:
    """The browser that changed the password gets a new session; the sockets of the old ones close,
    its own included, and its new cookie opens a socket again."""
    code, alice, bob = started_table(client)
    alice_phone = login(client, "alice")
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as laptop,
        client.websocket_connect(f"/ws/tables/{code}", headers=alice_phone) as phone,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as other,
    ):
        players = [Player(laptop, "a"), Player(phone, "a"), Player(other, "b")]
        for player in players:
            player.hello()
        changed = client.post(
            "/api/auth/password",
            json={"current_password": "pass-word-123", "new_password": NEW_PASSWORD},
            headers=alice,
        )
        assert changed.status_code == 204, changed.text
        _signed_out(laptop)
        _signed_out(phone)
        players[2].send({"type": "ping", "id": "still-there"})
        assert players[2].until(lambda m: m["type"] == "pong")["id"] == "still-there"
    renewed = {**alice, "cookie": f"durak_session={changed.cookies['durak_session']}"}
    client.cookies.clear()
    with client.websocket_connect(f"/ws/tables/{code}", headers=renewed) as again:
        assert Player(again, "a").hello()["seat"] == 0
