"""The browser's half of provably fair deals (web/js/fairness.js): WebCrypto recomputes the same
commitment and deck as the server's reference implementation, rejects a changed record, and checks
the replay against the deck as the server's ``check_replay`` does."""

from __future__ import annotations

from typing import Any

from app.engine.fairness import deck_order, record

SERVER_SEED = bytes.fromhex("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")


def published(size: int, seeds: list[bytes]) -> dict[str, Any]:
    return record(
        SERVER_SEED, "tbl_Example-Code", 7, size, seeds, deck_order(SERVER_SEED, "tbl_Example-Code", 7, size, seeds)
    )


def test_webcrypto_recomputes_the_deal(new_context: Any) -> None:
    page = new_context().new_page()
    page.goto("/")
    cases = [
        published(36, [bytes.fromhex("00112233445566778899aabbccddeeff"), b""]),
        published(24, [b"", b"", b"\x01" * 16, b""]),
        published(52, [b"\xff" * 16, b"\x10" * 16]),
    ]
    from tests.engine.test_fairness import played, swapped

    verify = "async ([f, v]) => (await import('/js/fairness.js')).verifyDeal(f, v)"
    for fairness in cases:
        result = page.evaluate(verify, [fairness, played(fairness, dealer=1)])
        assert result["ok"] is True and result["replayOk"] is True, result
        assert result["deck"] == fairness["deck"] and result["commitment"] == fairness["commitment"]
    changed = dict(cases[0], client_seeds=["00112233445566778899aabbccddeefe", ""])
    result = page.evaluate("async (f) => (await import('/js/fairness.js')).verifyDeal(f)", changed)
    assert result["ok"] is False and result["commitmentOk"] is True and result["deckOk"] is False
    changed = dict(cases[0], server_seed="00" + cases[0]["server_seed"][2:])
    result = page.evaluate("async (f) => (await import('/js/fairness.js')).verifyDeal(f)", changed)
    assert result["commitmentOk"] is False and result["deckOk"] is False
    # The replay against the deck: a game played from the published deck checks out; one dealt or
    # drawn from other cards does not, whatever the record says.
    fairness = cases[0]
    result = page.evaluate(verify, [fairness, played(fairness, dealer=0)])
    assert result["ok"] is True and result["replayOk"] is True, result
    for order, words in ((swapped(fairness["deck"], 14, 30), "drew"), (swapped(fairness["deck"], 12, 35), "trump")):
        result = page.evaluate(verify, [fairness, played(fairness, dealer=0, order=order)])
        assert result["deckOk"] is True and result["replayOk"] is False and result["ok"] is False, result
        assert words in result["replayProblem"], result
    result = page.evaluate("async (f) => (await import('/js/fairness.js')).verifyDeal(f)", fairness)
    assert result["ok"] is False and result["deckOk"] is True and result["replayOk"] is False  # no replay, no "ok"
    seed = page.evaluate("async () => (await import('/js/fairness.js')).newClientSeed()")
    assert len(seed) == 32 and int(seed, 16) >= 0


def test_seed_deal_verify_every_hand_and_the_coach(new_context: Any) -> None:
    """The browser sends its own seed after the commitment (sitting down), the deal is verified in the
    browser after the match, the replay shows every hand or one seat's view, and the coach draws its
    chart. While the match runs, none of it exists."""
    import re

    from playwright.sync_api import expect

    from tests.support.wait import wait_until
    from tests.web.support import Driver, api, create_table_api, sign_up_api

    context = new_context()
    sign_up_api(context)
    table = create_table_api(context, deck=24, seats=2, timer=0)
    code = table["code"]
    page = context.new_page()
    sent: list[str] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda payload: sent.append(str(payload))))
    page.on("request", lambda request: sent.append(request.post_data or "") if "/join" in request.url else None)
    page.goto(table["invite_url"])
    commitment = table["table"]["fairness"]["commitment"]
    expect(page.locator("#fair-commitment")).to_have_attribute("title", commitment)
    page.locator("#join-button").click()
    page.locator("#fair-details summary").click()  # the deal's facts are folded under "Fair deal" (issue 33)
    expect(page.locator("#client-seed")).to_be_visible()
    my_seed = page.locator("#client-seed").input_value()
    assert re.fullmatch(r"[0-9a-f]{32}", my_seed)
    assert any(my_seed in text and commitment in text for text in sent)  # sent with the commitment it answers
    api(context, "POST", f"/api/tables/{code}/bots", {"level": "easy"})
    expect(page.locator("#hand .card")).to_have_count(6)

    match_id = api(context, "GET", f"/api/tables/{code}")["match_id"]
    during = context.new_page()
    during.goto(f"/#/replay/{match_id}")
    expect(during.locator("#replay .form-error")).to_be_visible()  # not in the history while it runs
    expect(during.locator("#verify")).to_have_count(0)
    expect(during.locator("#coach")).to_have_count(0)
    during.close()

    Driver([page]).play()
    expect(page.locator("#results")).to_be_visible()
    # The match is recorded as it is settled, in the background, a moment after its end is pushed.
    wait_until(
        lambda: context.request.get(f"/api/matches/{match_id}").status == 200,
        timeout=10,
        what="the finished match is in the history",
        every=0.1,
    )
    detail = api(context, "GET", f"/api/matches/{match_id}")
    assert detail["fairness"]["client_seeds"] == [my_seed, ""]
    assert detail["fairness"]["commitment"] == commitment

    page.goto(f"/#/replay/{match_id}")
    expect(page.locator("#replay")).to_be_visible()
    # Every hand face up from the first step on; "what seat 1 saw": only its own hand.
    seats = page.locator("#replay .replay-felt .seat")
    expect(seats).to_have_count(2)
    expect(seats.nth(0).locator(".revealed .card")).to_have_count(6)
    expect(seats.nth(1).locator(".revealed .card")).to_have_count(6)
    page.locator("#replay-perspective").select_option("0")
    expect(seats.nth(0).locator(".revealed .card")).to_have_count(6)
    expect(seats.nth(1).locator(".revealed")).to_have_count(0)
    page.locator("#replay-perspective").select_option("all")
    expect(seats.nth(1).locator(".revealed .card")).to_have_count(6)

    page.locator("#verify-button").click()
    expect(page.locator("#verify-result")).to_have_attribute("data-ok", "true")
    assert page.locator("#verify-deck").inner_text().split() == detail["fairness"]["deck"]

    page.locator("#coach-seat").select_option("0")
    page.locator("#coach-button").click()
    expect(page.locator("#coach-chart svg")).to_be_visible(timeout=90_000)
    report = api(context, "GET", f"/api/matches/{match_id}/analysis?seat=0")
    estimated = [d for d in report["analysis"]["decisions"] if d["status"] == "estimated"]
    expect(page.locator("#coach-chart svg circle")).to_have_count(len(estimated))
    expect(page.locator("#coach-chart svg circle.blunder")).to_have_count(sum(1 for d in estimated if d["blunder"]))


def test_the_browser_sees_cards_moved_between_hands_or_lost(new_context: Any) -> None:
    """The browser's replay check holds honest games of every preset, seat count and cheating rule,
    and refuses the same tampered replays as the server's check, with the same problem."""
    import random

    from tests.engine.test_fairness import fair_record, moved_or_lost, played

    page = new_context().new_page()
    page.goto("/")
    verify = "async ([f, v]) => (await import('/js/fairness.js')).verifyDeal(f, v)"
    rng = random.Random(35)
    games = (("durak_peak", 36, 2), ("durak_peak", 52, 5), ("classic36", 36, 4), ("durac1993", 52, 3))
    for preset, size, seats in games:
        for cheating in (False, True):
            fairness = fair_record(size, seats, seats)
            views = played(fairness, preset=preset, dealer=rng.randrange(seats), rng=rng, cheating=cheating)
            result = page.evaluate(verify, [fairness, views])
            assert result["ok"] is True, (preset, size, seats, cheating, result)
    fairness = fair_record(36, 3, 3)
    for tampered, problem in moved_or_lost(played(fairness)):
        result = page.evaluate(verify, [fairness, tampered])
        assert result["deckOk"] is True and result["replayOk"] is False, result
        assert result["replayProblem"].startswith(problem), (result["replayProblem"], problem)
