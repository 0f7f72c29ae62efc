"""``GET /api/matches/{id}/analysis?seat=N``: the coach on a finished match, computed off the event
loop with progress, cached per match and seat; refused for a match that is not finished; started
only by the match's players and admins, within their limits and the server's; cancelled when nobody
asks for it any more."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import update

from app.api.routes import analysis
from app.bots import make_bot
from app.db import analyses, stakes
from app.db import matches as history
from app.db.models import MatchAnalysis
from app.engine import Rules
from bench._common import play_match
from tests.api.support import Api
from tests.support.wait import eventually

RULES = Rules(deck=36, seats=2)


async def record(api: Api, match_id: str, seed: int, player: int | None = None) -> list[dict[str, Any]]:
    """A finished match: seat 0 the account ``player`` (a guest when None), seat 1 a bot."""
    played = play_match(RULES, seed, [make_bot("random", 0, seed), make_bot("normal", 1, seed)], dealer=0)
    first: dict[str, Any] = {"seat": 0, "guest_name": "g", "display_name": "g"}
    if player is not None:
        first = {"seat": 0, "account_id": player, "display_name": f"p{player}"}

    async def write(session: Any) -> None:
        await history.record_match(
            session,
            stakes.MatchRecord(
                match_id=match_id,
                table_id="t-0123456789abcdef0123456789abcdef",
                rules=RULES.to_json(),
                seed=seed,
                dealer=0,
                seats=[first, {"seat": 1, "bot_level": "normal", "display_name": "bot"}],
                actions=played.actions,
                result=played.outcome,
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
            ),
        )

    await api.db.write(write)
    return played.actions


async def signed_up(api: Api, name: str) -> tuple[httpx.AsyncClient, int]:
    client = await api.signed_up(name)
    return client, int((await client.get("/api/me")).json()["id"])


async def test_analysis_progress_then_report_then_cache(api: Api) -> None:
    client, me = await signed_up(api, "ann")
    actions = await record(api, "m-coach", 5, player=me)
    api.app.state.coach_worlds = 4
    api.app.state.coach_executor = ThreadPoolExecutor(max_workers=1)
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
    # Done, it is anyone's to read who may see the match.
    anonymous = await api.client().get("/api/matches/m-coach/analysis", params={"seat": 0})
    assert anonymous.status_code == 200 and anonymous.json() == report


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

    client, me = await signed_up(api, "ann")
    await record(api, "m-pool", 7, player=me)
    api.app.state.coach_worlds = 2
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


class GatedExecutor(ThreadPoolExecutor):
    """A thread pool whose jobs wait for ``open`` (set it to let them run) and are counted."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.open = threading.Event()
        self.ran = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        def gated() -> Any:
            if not self.open.wait(timeout=60):
                raise TimeoutError("the test never opened the gate")
            self.ran += 1
            return fn(*args, **kwargs)

        return super().submit(gated)


@pytest.fixture
def gated(api: Api) -> Any:
    executor = GatedExecutor()
    api.app.state.coach_worlds = 2
    api.app.state.coach_executor = executor
    yield executor
    executor.open.set()
    executor.shutdown(wait=True, cancel_futures=True)


async def test_only_the_matchs_players_and_admins_start_an_analysis(api: Api, gated: GatedExecutor) -> None:
    ann, ann_id = await signed_up(api, "ann")
    await record(api, "m-public", 11, player=ann_id)
    others = [api.client(), (await signed_up(api, "bob"))[0], await api.guest("gus")]
    for other in others:
        answer = await other.get("/api/matches/m-public/analysis", params={"seat": 0})
        assert answer.status_code == 403 and answer.json()["detail"].startswith("coach_players_only")
    async with api.db.session() as session:
        assert await analyses.get(session, "m-public", 0) is None  # nothing was started
    started = await ann.get("/api/matches/m-public/analysis", params={"seat": 1})  # the bot's seat: she played
    assert started.status_code == 202
    for other in others:  # it is being computed: anyone who may see the match follows its progress
        assert (await other.get("/api/matches/m-public/analysis", params={"seat": 1})).status_code == 202
    admin = await api.admin()
    assert (await admin.get("/api/matches/m-public/analysis", params={"seat": 0})).status_code == 202


async def test_another_sites_page_cannot_start_an_analysis_for_a_player(api: Api, gated: GatedExecutor) -> None:
    """A link or an image on another site (or a sibling port, which gets the player's cookie) must not
    spend his coach quota: starting is refused to a request the browser marks cross-site or same-site
    or whose Origin is foreign; his own page starts it."""
    ann, ann_id = await signed_up(api, "ann")
    await record(api, "m-public", 11, player=ann_id)
    foreign = ({"sec-fetch-site": "cross-site"}, {"sec-fetch-site": "same-site"}, {"origin": "http://127.0.0.1:8000"})
    for headers in foreign:
        answer = await ann.get("/api/matches/m-public/analysis", params={"seat": 0}, headers=headers)
        assert answer.status_code == 403 and answer.json()["detail"].startswith("cross_site_request"), answer.text
    async with api.db.session() as session:
        assert await analyses.get(session, "m-public", 0) is None  # nothing was started
    own = {"sec-fetch-site": "same-origin"}
    assert (await ann.get("/api/matches/m-public/analysis", params={"seat": 0}, headers=own)).status_code == 202
    for headers in foreign:  # following one under way is a read like any other
        assert (await ann.get("/api/matches/m-public/analysis", params={"seat": 0}, headers=headers)).status_code == 202


async def test_an_account_computes_one_analysis_at_a_time_and_the_server_a_few(api: Api, gated: GatedExecutor) -> None:
    api.settings.coach = api.settings.coach.model_copy(update={"coach_max_running": 2})
    ann, ann_id = await signed_up(api, "ann")
    bob, bob_id = await signed_up(api, "bob")
    cat, cat_id = await signed_up(api, "cat")
    for number, player in enumerate((ann_id, ann_id, bob_id, cat_id)):
        await record(api, f"m-{number}", 20 + number, player=player)
    assert (await ann.get("/api/matches/m-0/analysis", params={"seat": 0})).status_code == 202
    busy = await ann.get("/api/matches/m-1/analysis", params={"seat": 0})
    assert busy.status_code == 429 and busy.json()["detail"].startswith("coach_busy")
    assert int(busy.headers["retry-after"]) >= 1
    assert (await bob.get("/api/matches/m-2/analysis", params={"seat": 0})).status_code == 202
    full = await cat.get("/api/matches/m-3/analysis", params={"seat": 0})
    assert full.status_code == 503 and full.json()["detail"].startswith("coach_full")
    assert int(full.headers["retry-after"]) >= 1
    async with api.db.session() as session:
        assert await analyses.running(session) == 2
    gated.open.set()  # the two finish; then the others may start
    await eventually(lambda: not analysis._jobs, timeout=60, what="both analyses are done")
    assert (await cat.get("/api/matches/m-3/analysis", params={"seat": 0})).status_code == 202
    assert (await ann.get("/api/matches/m-1/analysis", params={"seat": 0})).status_code == 202


async def test_an_account_starts_only_so_many_analyses_an_hour(api: Api, gated: GatedExecutor) -> None:
    api.settings.coach = api.settings.coach.model_copy(update={"coach_starts_per_account": 2})
    ann, ann_id = await signed_up(api, "ann")
    await record(api, "m-quota", 30, player=ann_id)
    gated.open.set()
    for seat in (0, 1):
        assert (await ann.get("/api/matches/m-quota/analysis", params={"seat": seat})).status_code == 202
        await eventually(lambda: not analysis._jobs, timeout=60, what="the analysis is done")
    await record(api, "m-quota-2", 31, player=ann_id)
    refused = await ann.get("/api/matches/m-quota-2/analysis", params={"seat": 0})
    assert refused.status_code == 429 and refused.json()["detail"].startswith("coach_quota")
    assert 3000 <= int(refused.headers["retry-after"]) <= 3600


async def test_an_analysis_nobody_asks_about_is_cancelled(
    api: Api, gated: GatedExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(analysis, "PROGRESS_EVERY_S", 0.0)  # every finished decision writes its progress
    ann, ann_id = await signed_up(api, "ann")
    actions = await record(api, "m-left", 12, player=ann_id)
    total = sum(1 for action in actions if action["seat"] == 0)
    assert total > 3
    assert (await ann.get("/api/matches/m-left/analysis", params={"seat": 0})).status_code == 202
    long_ago = datetime.now(UTC) - timedelta(seconds=api.settings.coach.coach_unpolled_s + 1)

    async def forgotten(session: Any) -> None:  # the page was closed: nobody has asked since long ago
        await session.execute(update(MatchAnalysis).values(polled_at=long_ago))

    await api.db.write(forgotten)
    gated.open.set()
    await eventually(lambda: not analysis._jobs, timeout=60, what="the computation stops")
    async with api.db.session() as session:
        assert await analyses.get(session, "m-left", 0) is None  # gone: the next request starts over
    assert gated.ran <= 3 < 1 + total  # the timeline and the decision under way, not the rest
