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
        match = await matches.get_match(session, "r1")
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
        page, total = await matches.list_matches(session, account_id=None, offset=0, limit=3)
        assert total == 5 and [m.id for m in page] == ["l4", "l3", "l2"]
        page, total = await matches.list_matches(session, account_id=b, offset=0, limit=10)
        assert total == 2 and [m.id for m in page] == ["l3", "l1"]
        page, total = await matches.list_matches(session, account_id=c, offset=2, limit=2)
        assert total == 3 and [m.id for m in page] == ["l0"]
