"""``GET /api/session``: who is signed in, 200 for everyone (the web client's question on every page
view, so an anonymous visitor's console shows no failed request); ``GET /api/me`` still says 401."""

from __future__ import annotations

from tests.api.support import Api


async def test_an_anonymous_visitor_is_answered_200_with_no_user(api: Api) -> None:
    client = api.client()
    response = await client.get("/api/session")
    assert response.status_code == 200
    assert response.json() == {"user": None}
    assert response.headers["cache-control"] == "no-store"
    assert (await client.get("/api/me")).status_code == 401


async def test_a_signed_in_account_or_guest_is_the_same_as_api_me(api: Api) -> None:
    for client in (await api.signed_up("sofia"), await api.guest("visitor")):
        me = (await client.get("/api/me")).json()
        assert (await client.get("/api/session")).json() == {"user": me}
    bob = await api.signed_up("bob")
    await bob.post("/api/auth/logout")
    assert (await bob.get("/api/session")).json() == {"user": None}
