"""Admin search, ledger view and audited, idempotent balance adjustments."""

from __future__ import annotations

from sqlalchemy import select

from app.db.models import AdminAction
from tests.api.support import Api
from tests.db.helpers import assert_ledger_sound


async def test_search_ledger_and_adjust(api: Api) -> None:
    admin = await api.admin("root")
    player = await api.signed_up("Zed_1")
    await (await api.signed_up("zelda")).aclose()
    player_id = (await player.get("/api/me")).json()["id"]
    admin_id = (await admin.get("/api/me")).json()["id"]

    found = (await admin.get("/api/admin/accounts", params={"q": "ZE"})).json()
    assert found["total"] == 2 and [a["name"] for a in found["items"]] == ["Zed_1", "zelda"]
    assert found["items"][0] == {
        "id": player_id,
        "name": "Zed_1",
        "role": "player",
        "frozen": None,
        "balance": 1000,
        "created_at": found["items"][0]["created_at"],
    }
    # '_' is a literal in the search, not a LIKE wildcard.
    assert [a["name"] for a in (await admin.get("/api/admin/accounts?q=d_")).json()["items"]] == ["Zed_1"]

    credit = await admin.post(
        f"/api/admin/accounts/{player_id}/adjust",
        json={"amount": 250, "reason": "  tournament prize  "},
        headers={"Idempotency-Key": "prize-2025-01"},
    )
    assert credit.status_code == 200
    body = credit.json()
    assert body["balance"] == 1250 and body["reason"] == "tournament prize" and body["admin_id"] == admin_id
    assert body["replayed"] is False
    # Retrying with the same key is applied once; the same key for another amount is refused.
    retry = await admin.post(
        f"/api/admin/accounts/{player_id}/adjust",
        json={"amount": 250, "reason": "tournament prize"},
        headers={"Idempotency-Key": "prize-2025-01"},
    )
    assert retry.json()["replayed"] is True and retry.json()["transfer_id"] == body["transfer_id"]
    assert retry.json()["balance"] == 1250
    reused = await admin.post(
        f"/api/admin/accounts/{player_id}/adjust",
        json={"amount": 999, "reason": "tournament prize"},
        headers={"Idempotency-Key": "prize-2025-01"},
    )
    assert reused.status_code == 409

    overdraw = await admin.post(f"/api/admin/accounts/{player_id}/adjust", json={"amount": -1251, "reason": "clawback"})
    assert overdraw.status_code == 409 and "has 1250 coins and needs 1251" in overdraw.json()["detail"]
    debit = await admin.post(f"/api/admin/accounts/{player_id}/adjust", json={"amount": -50, "reason": "clawback"})
    assert debit.json()["balance"] == 1200
    assert (await player.get("/api/me")).json()["balance"] == 1200

    ledger = (await admin.get(f"/api/admin/accounts/{player_id}/ledger")).json()
    assert ledger["balance"] == 1200 and ledger["total"] == 3
    assert [(e["reason"], e["amount"], e["balance_after"]) for e in ledger["items"]] == [
        ("admin_adjustment", -50, 1200),
        ("admin_adjustment", 250, 1250),
        ("signup_grant", 1000, 1000),
    ]
    assert ledger["items"][0]["actor_id"] == admin_id and ledger["items"][0]["memo"] == "clawback"

    async with api.db.session() as session:
        audit = (await session.scalars(select(AdminAction).order_by(AdminAction.id))).all()
    adjustments = [(a.admin_id, a.target_id, a.amount, a.reason) for a in audit if a.action == "adjust"]
    assert adjustments == [
        (admin_id, player_id, 250, "tournament prize"),
        (admin_id, player_id, -50, "clawback"),
    ]
    await assert_ledger_sound(api.db)
    for client in (admin, player):
        await client.aclose()


async def test_adjust_validation_and_unknown_accounts(api: Api) -> None:
    admin = await api.admin("root")
    me = (await admin.get("/api/me")).json()["id"]
    for body in ({"amount": 0, "reason": "x"}, {"amount": 5, "reason": "   "}, {"amount": 5}, {"reason": "x"}):
        assert (await admin.post(f"/api/admin/accounts/{me}/adjust", json=body)).status_code == 422
    missing = await admin.post("/api/admin/accounts/424242/adjust", json={"amount": 5, "reason": "x"})
    assert missing.status_code == 404 and missing.json() == {"detail": "no account 424242"}
    assert (await admin.get("/api/admin/accounts/424242/ledger")).status_code == 404
    await admin.aclose()
