"""``GET /api/matches/{id}/analysis?seat=N``: the coach on a finished match, computed off the event
loop with progress, cached per match and seat; refused for a match that is not finished."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from app.bots import make_bot
from app.db import analyses, stakes
from app.db import matches as history
from app.engine import Rules
from bench._common import play_match
from tests.api.support import Api
from tests.support.wait import eventually

RULES = Rules(deck=36, seats=2)


async def record(api: Api, match_id: str, seed: int) -> list[dict[str, Any]]:
    played = play_match(RULES, seed, [make_bot("random", 0, seed), make_bot("normal", 1, seed)], dealer=0)

    async def write(session: Any) -> None:
        await history.record_match(
            session,
            stakes.MatchRecord(
                match_id=match_id,
                table_id="t-0123456789abcdef0123456789abcdef",
                rules=RULES.to_json(),
                seed=seed,
                dealer=0,
                seats=[
                    {"seat": 0, "guest_name": "g", "display_name": "g"},
                    {"seat": 1, "bot_level": "normal", "display_name": "bot"},
                ],
                actions=played.actions,
                result=played.outcome,
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
            ),
        )

    await api.db.write(write)
    return played.actions


async def test_analysis_progress_then_report_then_cache(api: Api) -> None:
    actions = await record(api, "m-coach", 5)
    api.app.state.coach_worlds = 4
    api.app.state.coach_executor = ThreadPoolExecutor(max_workers=1)
    client = api.client()
    first = await client.get("/api/matches/m-coach/analysis", params={"seat": 0})
    assert first.status_code == 202
    body = first.json()
    total = sum(1 for a in actions if a["seat"] == 0)
    assert body["status"] == "computing" and body["total"] == total and body["analysis"] is None
    answers: list[Any] = []

    async def reported() -> bool:
        answer = await client.get("/api/matches/m-coach/analysis", params={"seat": 0})
        answers.append(answer)
        if answer.status_code == 200:
            return True
        assert answer.status_code == 202 and 0 <= answer.json()["done"] <= total
        return False

    await eventually(reported, timeout=30, what="the analysis is done", every=0.05)
    report = answers[-1].json()
    assert report["status"] == "done" and report["done"] == report["total"] == total
    decisions = report["analysis"]["decisions"]
    assert len(decisions) == total and report["analysis"]["seat"] == 0
    assert any(d["status"] == "estimated" for d in decisions)
    # Cached: the stored report is answered as is, nothing is computed again.
    async with api.db.session() as session:
        row = await analyses.get(session, "m-coach", 0)
        assert row is not None and row.status == analyses.DONE
    api.app.state.coach_executor = None  # a new computation would fail the test: none happens
    again = await client.get("/api/matches/m-coach/analysis", params={"seat": 0})
    assert again.status_code == 200 and again.json() == report


async def test_a_running_or_unknown_match_or_seat_is_refused(api: Api) -> None:
    await record(api, "m-done", 6)
    client = api.client()
    # A match still being played is not in the history: no live help.
    answer = await client.get("/api/matches/live-match-id/analysis", params={"seat": 0})
    assert answer.status_code == 404 and "only finished matches" in answer.json()["detail"]
    assert (await client.get("/api/matches/m-done/analysis", params={"seat": 2})).status_code == 404
    assert (await client.get("/api/matches/m-done/analysis", params={"seat": -1})).status_code == 422
    assert (await client.get("/api/matches/m-done/analysis")).status_code == 422


async def test_the_server_computes_in_its_worker_process_pool(api: Api) -> None:
    import os

    from app import coaching

    await record(api, "m-pool", 7)
    api.app.state.coach_worlds = 2
    client = api.client()
    assert (await client.get("/api/matches/m-pool/analysis", params={"seat": 1})).status_code == 202
    answers: list[Any] = []

    async def reported() -> bool:
        answers.append(await client.get("/api/matches/m-pool/analysis", params={"seat": 1}))
        return bool(answers[-1].status_code == 200)

    await eventually(reported, timeout=60, what="the worker processes finish the analysis", every=0.05)
    assert answers[-1].json()["analysis"]["seat"] == 1
    pool = coaching.pool()
    pids = set(pool._processes)  # the worker processes that did the work
    assert pids and os.getpid() not in pids
