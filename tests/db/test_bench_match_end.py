"""The match-end benchmark plays whole matches through a table into a real database and prints its
headline (a smoke test; the figures are not checked)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.db.models import Match, MatchPlayer
from app.db.session import Database
from bench import match_end as bench


def test_every_match_it_plays_is_settled_into_the_history(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'bench.sqlite3'}"
    costs = asyncio.run(bench.play(url, 3, seed=7))
    assert len(costs.end_ms) == len(costs.settle_ms) == len(costs.rematch_ms) == 3 - bench.WARM
    assert len(costs.move_ms) == sum(costs.moves) - len(costs.moves)  # every move but each match's last
    assert all(settle > 0 for settle in costs.settle_ms)

    async def counts() -> tuple[int, int]:
        db = Database(url)
        try:
            async with db.session() as session:
                matches = await session.scalar(select(func.count()).select_from(Match))
                seats = await session.scalar(select(func.count()).select_from(MatchPlayer))
                return int(matches or 0), int(seats or 0)
        finally:
            await db.dispose()

    assert asyncio.run(counts()) == (3, 12)


def test_the_benchmark_ends_with_its_headline(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--quick", "--matches", "3"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("sqlite ")
    assert re.fullmatch(
        r"match_end: \d+\.\d ms of CPU per finished match \(settlement \d+\.\d ms\) "
        r"against \d+\.\d{3} ms per move \(sqlite\)",
        lines[-1],
    )
