"""Signing out closes the open table sockets of the revoked sessions (and only those)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.exc import OperationalError
from starlette.websockets import WebSocketDisconnect

from app.api import signouts
from app.broker import Gap, GapReason
from app.db import login_sessions
from tests.tables.harness import ORIGIN, Player, guest, login, started_table


def _signed_out(ws: Any) -> dict[str, Any]:
    """Read until the server's bye; then the close must be 4001."""
    bye = None
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            message = ws.receive_json()
            if message["type"] == "bye":
                bye = message
    assert closed.value.code == signouts.CLOSE_CODE and closed.value.reason == "signed out"
    assert bye is not None and bye["code"] == "signed_out"
    return bye


def _still_open(player: Player) -> None:
    player.send({"type": "ping", "id": "still-there"})
    assert player.until(lambda m: m["type"] == "pong")["id"] == "still-there"


@pytest.mark.parametrize("everywhere", [False, True])
def test_logout_closes_the_revoked_sessions_table_sockets_only(client: TestClient, everywhere: bool) -> None:
    """Alice on her laptop and her phone, bob: alice logs out on the laptop (with ``everywhere``,
    on every device). Bob's socket, and without ``everywhere`` the phone's, stay open."""
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
        assert len(client.app.state.open_sessions) == 3
        logout = client.post("/api/auth/logout", params={"everywhere": str(everywhere).lower()}, headers=alice)
        assert logout.status_code == 204
        _signed_out(laptop)
        if everywhere:
            _signed_out(phone)
        else:
            _still_open(players[1])  # alice's other session is not signed out
        _still_open(players[2])
    # The seat is kept (a disconnect, not a leave).
    assert client.app.state.tables.tables[code].status == "playing"


def test_missed_announcements_are_caught_up_from_the_database(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the announcement is lost (here: never sent), a gap in the subscription makes the process
    check its sockets' sessions in the database."""

    async def lost(*args: Any, **kwargs: Any) -> None:
        return None

    monkeypatch.setattr(signouts, "announce", lost)
    code, alice, bob = started_table(client)
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=alice) as laptop,
        client.websocket_connect(f"/ws/tables/{code}", headers=bob) as other,
    ):
        players = [Player(laptop, "a"), Player(other, "b")]
        for player in players:
            player.hello()
        assert client.post("/api/auth/logout", headers=alice).status_code == 204
        _still_open(players[0])  # nobody told this process
        open_sessions: signouts.OpenSessions = client.app.state.open_sessions
        assert client.portal is not None
        client.portal.call(open_sessions.on_message, Gap(signouts.CHANNEL, GapReason.RECONNECT))
        _signed_out(laptop)
        _still_open(players[1])


def test_a_guest_logout_closes_that_guests_sockets_only(client: TestClient) -> None:
    """Issue 35.16: a guest's log-out is a sign-out too. His sockets close (in every process: it is
    announced), a copy of his cookie no longer opens one, and other guests and anonymous
    spectators are not affected."""
    code, _, _ = started_table(client)
    visitor, other = guest(client, "visitor"), guest(client, "other")
    with (
        client.websocket_connect(f"/ws/tables/{code}", headers=visitor) as watching,
        client.websocket_connect(f"/ws/tables/{code}", headers=other) as also_watching,
        client.websocket_connect(f"/ws/tables/{code}", headers={"origin": ORIGIN}) as anonymous,
    ):
        players = [Player(watching, "v"), Player(also_watching, "o"), Player(anonymous, "x")]
        for player in players:
            player.hello()
        assert client.post("/api/auth/logout", headers=visitor).status_code == 204
        _signed_out(watching)
        _still_open(players[1])
        _still_open(players[2])
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(f"/ws/tables/{code}", headers=visitor),
    ):
        pass
    assert refused.value.code == 1008
    assert client.get("/api/me", headers=visitor).status_code == 401
    assert client.get("/api/me", headers=other).status_code == 200


def test_a_database_outage_does_not_lock_players_out_of_their_tables(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The handshake checks the login session in the database; while that fails, the cookie's
    signature decides (a forged cookie is still refused)."""
    code, alice, _ = started_table(client)

    async def down(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("SELECT", {}, ConnectionRefusedError("database down"))

    monkeypatch.setattr(login_sessions, "live_account", down)
    with client.websocket_connect(f"/ws/tables/{code}", headers=alice) as ws:
        welcome = Player(ws, "a").hello()
        assert welcome["seat"] == 0
    forged = {"cookie": "durak_session=forged.value.here", "origin": ORIGIN}
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(f"/ws/tables/{code}", headers=forged):
        pass
    assert refused.value.code == 1008


def test_a_sign_out_during_the_handshake_is_not_missed(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session check reads "live", but the sign-out is announced before the socket is
    accepted: the handshake is refused instead of leaving a revoked socket open."""
    code, alice, _ = started_table(client)
    real = login_sessions.live_account
    open_sessions: signouts.OpenSessions = client.app.state.open_sessions

    async def racing(session: Any, *, session_id: str, account_id: int) -> Any:
        account = await real(session, session_id=session_id, account_id=account_id)
        assert account is not None  # still live when read...
        assert open_sessions.close_signed_out(account_id=account_id, session_id=None) == 1  # ...then signed out
        return account

    monkeypatch.setattr(login_sessions, "live_account", racing)
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(f"/ws/tables/{code}", headers=alice):
        pass
    assert refused.value.code == 1008
    assert len(open_sessions) == 0  # nothing left registered


async def test_a_socket_registered_during_the_catch_up_is_not_taken_for_revoked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a broker outage every open socket's session is checked in the database. A player who
    reconnects while that query runs registers a session the query did not look up: it must not be
    refused as signed out (a Redis-outage cluster test was refused with HTTP 403 this way)."""

    class Handshaking:  # a socket still in its handshake
        application_state = signouts.WebSocketState.CONNECTING

    class FakeDb:
        def session(self) -> Any:
            return _NoSession()

    open_sessions = signouts.OpenSessions(FakeDb())  # type: ignore[arg-type]
    before, during = Handshaking(), Handshaking()
    open_sessions.add(before, account_id=1, session_id="s-live")  # type: ignore[arg-type]

    async def live_ids(session: Any, held: set[str]) -> set[str]:
        assert held == {"s-live"}
        open_sessions.add(during, account_id=2, session_id="s-new")  # type: ignore[arg-type]
        return {"s-live"}

    monkeypatch.setattr(login_sessions, "live_ids", live_ids)
    assert await open_sessions.close_revoked() == 0
    assert not open_sessions.signed_out(during) and not open_sessions.signed_out(before)  # type: ignore[arg-type]
    assert len(open_sessions) == 2


class _NoSession:
    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, *exc: Any) -> None:
        return None
