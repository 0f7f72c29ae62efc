"""Integrity end to end over the REST API (docs/integrity.md): related accounts at staked tables,
quick-win warnings and reports, the pair's daily coin cap, the admins' review (dismiss, warn,
freeze) and a ledger-correct reversal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from app.config import Settings
from app.db import ledger
from app.db.models import AdminAction, LedgerTransfer, RatingChange
from app.main import create_app
from tests.api.support import SECRET, Api
from tests.limits import RELAXED_LIMITS
from tests.support.wait import eventually

DEVICE = "durak_device"


async def me(client: httpx.AsyncClient) -> dict[str, Any]:
    response = await client.get("/api/me")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def open_table(client: httpx.AsyncClient, **params: Any) -> str:
    params = {"timer": 0, "bot_delay_ms": 0, **params}
    response = await client.post("/api/tables", json=params)
    assert response.status_code == 201, response.text
    return str(response.json()["code"])


async def join(client: httpx.AsyncClient, code: str) -> httpx.Response:
    return await client.post(f"/api/tables/{code}/join", json={})


async def recorded(api: Api, match_id: str) -> None:
    async def found() -> bool:
        async with api.db.session() as session:
            from app.db.models import Match

            return await session.get(Match, match_id) is not None

    await eventually(found, 10, f"match {match_id} is recorded")


async def quick_win(api: Api, winner: httpx.AsyncClient, loser: httpx.AsyncClient, *, stake: int = 0) -> str:
    """A match the loser leaves at once: a quick win (by leaving, and short). Its match id, recorded."""
    code = await open_table(winner, stake=stake)
    assert (await join(winner, code)).status_code == 200
    assert (await join(loser, code)).status_code == 200
    info = (await winner.get(f"/api/tables/{code}")).json()
    assert info["status"] == "playing", info
    assert (await loser.post(f"/api/tables/{code}/leave")).status_code == 200
    match_id = str(info["match_id"])
    await recorded(api, match_id)
    return match_id


async def test_same_device_accounts_are_refused_at_staked_tables_and_allowed_free(api: Api) -> None:
    alice = await api.signed_up("alice")
    device = alice.cookies[DEVICE]
    twin = api.client()
    twin.cookies.set(DEVICE, device)  # the same browser, another account
    response = await twin.post("/api/auth/signup", json={"name": "alice2", "password": "correct horse battery"})
    assert response.status_code == 201
    assert twin.cookies.get(DEVICE) is None or twin.cookies[DEVICE] == device
    code = await open_table(alice, stake=100)
    assert (await join(alice, code)).status_code == 200
    refused = await join(twin, code)
    assert refused.status_code == 409
    assert refused.json()["detail"].startswith("related_accounts: ")
    assert "alice2" in refused.json()["detail"] and "alice" in refused.json()["detail"]
    # free tables: allowed, and the match is not rated
    match_id = await quick_win(api, alice, twin)
    async with api.db.session() as session:
        assert await session.scalar(select(func.count()).select_from(RatingChange)) == 0
    assert match_id


async def test_admin_routes_smoke(api: Api) -> None:
    root = await api.admin()
    winner, loser = await api.signed_up("winner"), await api.signed_up("loser")
    for _ in range(4):
        await quick_win(api, winner, loser, stake=10)
    page = (await root.get("/api/admin/integrity/flags")).json()
    assert page["total"] == 1, page
    flag = page["flags"][0]
    assert flag["kind"] == "quick_wins" and len(flag["matches"]) == 4
    frozen = await root.post(f"/api/admin/accounts/{flag['accounts'][0]['id']}/freeze", json={"reason": "farming"})
    assert frozen.json() == {"id": flag["accounts"][0]["id"], "frozen": True, "reason": "farming"}
    reverse = await root.post(f"/api/admin/matches/{flag['matches'][0]['id']}/reverse", json={"note": "farm"})
    assert reverse.status_code == 200, reverse.text
    again = await root.post(f"/api/admin/matches/{flag['matches'][0]['id']}/reverse", json={"note": "farm"})
    assert again.status_code == 409 and again.json()["detail"].startswith("already_reversed")
    mine = (await winner.get("/api/me/integrity")).json()
    assert mine["frozen"]["reason"] == "farming" and len(mine["warnings"]) == 1
    async with api.db.session() as session:
        assert (await ledger.audit(session)).ok
        assert (
            await session.scalar(
                select(func.count()).select_from(LedgerTransfer).where(LedgerTransfer.reason == "match_reversal")
            )
            == 1
        )
        assert await session.scalar(select(func.count()).select_from(AdminAction)) >= 3


@pytest.fixture
async def same_ip_api(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    """An app with the same-address rule on (the default; the other tests turn it off)."""
    limits = {**RELAXED_LIMITS, "related_same_ip": True}
    settings = Settings(database_url=database_url, secret_key=SECRET, starting_balance=1000, **limits)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)
