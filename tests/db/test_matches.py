"""record_match and the listing queries behind GET /api/matches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.db import matches
from app.db.errors import MatchConflict
from app.db.session import Database
from app.db.stakes import MatchRecord
from tests.db.helpers import make_player

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
ANYONE: dict[str, object] = {"viewer_id": None, "viewer_is_admin": False}


def seats(a: int, b: int) -> list[dict[str, object]]:
    return [
        {"seat": 0, "account_id": a, "display_name": "Ann"},
        {"seat": 1, "account_id": b, "display_name": "Ben"},
        {"seat": 2, "bot_level": "hard", "display_name": "Bot (hard)"},
        {"seat": 3, "guest_name": "visitor", "display_name": "visitor (guest)"},
    ]


async def record(db: Database, match_id: str, a: int, b: int, *, minutes: int, **extra: object) -> None:
    kwargs: dict[str, object] = {
        "match_id": match_id,
        "table_id": "table-1",
        "rules": {"deck": 36, "seats": 4, "stake": 10},
        "seed": 2**100 + 7,
        "dealer": 2,
        "seats": seats(a, b),
        "actions": [{"type": "lead", "seat": 0, "cards": ["6h"]}],
        "result": {"draw": False, "durak": 1, "order": [0, 2, 3], "places": [[0], [2, 3], [1]], "forfeit": None},
        "coin_changes": {0: 10, 1: -10},
        "created_at": T0 + timedelta(minutes=minutes),
        "finished_at": T0 + timedelta(minutes=minutes + 5),
        **extra,
    }
    await db.write(lambda s: matches.record_match(s, MatchRecord(**kwargs)))  # type: ignore[arg-type]


async def test_record_match_stores_everything_and_a_row_per_seat(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await record(db, "r1", a, b, minutes=0)
    async with db.session() as session:
        match = await matches.get_match(session, "r1", viewer_id=None, viewer_is_admin=False)
    assert match is not None
    assert match.seed == str(2**100 + 7) and match.dealer == 2 and match.stake == 10 and not match.cheating
    assert match.finished_at == T0 + timedelta(minutes=5)
    assert match.seats[2] == {
        "seat": 2,
        "account_id": None,
        "guest_name": None,
        "bot_level": "hard",
        "display_name": "Bot (hard)",
    }
    assert match.actions == [{"type": "lead", "seat": 0, "cards": ["6h"]}]
    assert match.coin_changes == {"0": 10, "1": -10, "2": 0, "3": 0}
    # Places: tied seats share the better place, as the engine ranks them.
    assert [(p.seat, p.account_id, p.place, p.coin_change) for p in match.players] == [
        (0, a, 1, 10),
        (1, b, 4, -10),
        (2, None, 2, 0),
        (3, None, 2, 0),
    ]


async def test_record_match_is_idempotent_and_refuses_different_data(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await record(db, "r2", a, b, minutes=0)
    await record(db, "r2", a, b, minutes=0)
    with pytest.raises(MatchConflict):
        await record(db, "r2", a, b, minutes=0, coin_changes={0: -10, 1: 10})


@pytest.mark.parametrize(
    "bad",
    [
        {"coin_changes": {0: 10, 1: -5}},  # does not add up to zero
        {"coin_changes": {0: 10, 2: -10}},  # a bot cannot lose coins
        {"result": {"draw": True, "durak": 1}},
        {"result": {"draw": False, "durak": 9}},
        {"seats": [{"seat": 0, "account_id": 1, "bot_level": "easy", "display_name": "x"}]},
    ],
)
async def test_record_match_validates(db: Database, bad: dict[str, object]) -> None:
    a, b = await make_player(db), await make_player(db)
    with pytest.raises(ValueError):
        await record(db, "bad", a, b, minutes=0, **bad)


async def test_listing_is_newest_first_paginated_and_per_account(db: Database) -> None:
    a, b, c = await make_player(db), await make_player(db), await make_player(db)
    for i in range(5):
        await record(db, f"l{i}", a, b if i % 2 else c, minutes=10 * i)
    async with db.session() as session:
        page, total = await matches.list_matches(session, account_id=None, **ANYONE, offset=0, limit=3)
        assert total == 5 and [m.id for m in page] == ["l4", "l3", "l2"]
        page, total = await matches.list_matches(session, account_id=b, **ANYONE, offset=0, limit=10)
        assert total == 2 and [m.id for m in page] == ["l3", "l1"]
        page, total = await matches.list_matches(session, account_id=c, **ANYONE, offset=2, limit=2)
        assert total == 3 and [m.id for m in page] == ["l0"]


async def test_a_private_tables_matches_are_seen_only_by_their_players_and_admins(db: Database) -> None:
    a, b, c = await make_player(db), await make_player(db), await make_player(db)
    admin = await make_player(db, role="admin")
    await record(db, "open", a, b, minutes=0)
    await record(db, "secret", a, b, minutes=10, private=True)
    await record(db, "other", b, c, minutes=20, private=True)

    async def seen(viewer_id: int | None, *, is_admin: bool = False, account_id: int | None = None) -> list[str]:
        async with db.session() as session:
            page, total = await matches.list_matches(
                session, account_id=account_id, viewer_id=viewer_id, viewer_is_admin=is_admin, offset=0, limit=10
            )
        assert total == len(page)
        return [m.id for m in page]

    assert await seen(None) == ["open"]  # anonymous visitors and guests
    assert await seen(c) == ["other", "open"]
    assert await seen(a) == ["secret", "open"]
    assert await seen(a, account_id=b) == ["secret", "open"]  # b's matches that a played too
    assert await seen(c, account_id=a) == ["open"]
    assert await seen(admin, is_admin=True) == ["other", "secret", "open"]
    async with db.session() as session:
        viewers = [(None, False, False), (c, False, False), (b, False, True), (admin, True, True)]
        for viewer_id, is_admin, visible in viewers:
            match = await matches.get_match(session, "secret", viewer_id=viewer_id, viewer_is_admin=is_admin)
            assert (match is not None) == visible, (viewer_id, is_admin)


async def test_recording_the_same_match_as_private_and_public_conflicts(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    await record(db, "p1", a, b, minutes=0, private=True)
    with pytest.raises(MatchConflict):
        await record(db, "p1", a, b, minutes=0)


def test_the_table_ref_is_opaque_stable_and_the_migrations_copy_agrees() -> None:
    import importlib.util

    from app.db.migrate import ROOT

    code = "Zk3_invite-code-0123456"
    ref = matches.table_ref(code)
    assert ref == matches.table_ref(code) and ref != matches.table_ref(code + "x")
    assert code not in ref and len(ref) <= 64
    path = ROOT / "migrations" / "versions" / "0003_private_history_throttles.py"
    spec = importlib.util.spec_from_file_location("migration_0003", path)
    assert spec is not None and spec.loader is not None
    migration = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(migration)
    assert migration.table_ref(code) == ref
