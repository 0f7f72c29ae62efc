"""Issue 13 in the browser: a rematch is a proposal ("alice wants a rematch -- Play again / Leave the
table",
"waiting for bob..."), stakes are taken only when both clicked; the idle limit and the disconnect
grace are shown as countdowns."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import api, create_table_api, sign_up_api
from tests.web.test_controls import scripted, table_info, view  # noqa: F401 (scripted is a fixture)

pytestmark = pytest.mark.browser

STAKE = 10


def expect_balances(alice: Any, bob: Any, expected: tuple[int, int]) -> None:
    """Both balances, once the ledger has settled (it settles a moment after the result)."""
    for _ in range(100):
        found = tuple(int(api(context, "GET", "/api/me")["balance"]) for context in (alice, bob))
        if found == expected:
            return
        time.sleep(0.05)
    assert found == expected


def test_a_rematch_is_a_proposal_each_player_accepts_or_leaves(new_context: Any) -> None:
    alice_ctx, bob_ctx = new_context(), new_context()
    alice_me, bob_me = sign_up_api(alice_ctx), sign_up_api(bob_ctx)
    table = create_table_api(alice_ctx, seats=2, stake=STAKE, timer=0)
    code = table["code"]
    api(alice_ctx, "POST", f"/api/tables/{code}/join", {"seat": 0})
    api(bob_ctx, "POST", f"/api/tables/{code}/join", {"seat": 1})
    alice, bob = alice_ctx.new_page(), bob_ctx.new_page()
    for page in (alice, bob):  # seated by REST: each confirms he is ready on his page (rules §8)
        page.goto(table["invite_url"])
        page.locator("#ready-button").click()
    for page in (alice, bob):
        expect(page.locator("#hand .card")).to_have_count(6)

    # A table without a move timer: whoever must lead sees the idle limit counting down.
    leader = next(page for page in (alice, bob) if page.locator(".me-area.my-turn").count())
    expect(leader.locator("#deadline-note")).to_have_text(re.compile(r"^Your move: [45]:\d\d left, then you forfeit$"))
    expect(leader.locator(".me-area .seat .countdown")).to_have_attribute("data-kind", "idle")
    expect(leader.locator(".me-area .seat .countdown")).to_have_text(re.compile(r"^[45]:\d\d$"))

    # Bob forfeits by leaving: both see the result; his seat is still his.
    api(bob_ctx, "POST", f"/api/tables/{code}/leave")
    for page in (alice, bob):
        expect(page.locator("#results")).to_be_visible()
    expect_balances(alice_ctx, bob_ctx, (1000 + STAKE, 1000 - STAKE))

    # Alice asks for a rematch: nothing starts, nobody's coins move; she waits for bob.
    alice.locator("#rematch-button").click()
    expect(alice.locator("#rematch-status")).to_contain_text(f"Waiting for {bob_me['name']}…")
    expect(alice.locator("#rematch-countdown")).to_have_text(re.compile(r"^(1:00|0:[0-5]\d) left$"))
    expect(alice.locator("#rematch-button")).to_have_count(0)
    expect(bob.locator("#rematch-status")).to_contain_text(f"{alice_me['name']} wants a rematch")
    expect(bob.locator("#rematch-button")).to_have_text("Play again")
    # One way out, which says what it does (not a "Leave" beside a "Lobby"): leaving the table.
    expect(bob.locator("#results-leave")).to_have_text("Leave the table")
    expect(bob.locator("#results-leave")).to_have_attribute("title", re.compile("seat.*lobby"))
    expect(bob.locator("#results-lobby")).to_have_count(0)
    expect(bob.locator("#results")).to_be_visible()
    expect_balances(alice_ctx, bob_ctx, (1000 + STAKE, 1000 - STAKE))

    # Bob agrees: the rematch starts and only now are both stakes taken.
    bob.locator("#rematch-button").click()
    for page in (alice, bob):
        expect(page.locator("#results")).to_have_count(0)
        expect(page.locator("#hand .card")).to_have_count(6)
    expect_balances(alice_ctx, bob_ctx, (1000, 1000 - 2 * STAKE))

    # Next time alice declines: "Leave the table" gives up her seat and takes her to the lobby; bob
    # waits for a new player.
    api(alice_ctx, "POST", f"/api/tables/{code}/leave")
    expect(bob.locator("#results")).to_be_visible()
    bob.locator("#rematch-button").click()
    expect(alice.locator("#rematch-button")).to_have_text("Play again")
    expect(alice.locator("#results-lobby")).to_have_count(0)
    alice.locator("#results-leave").click()
    expect(alice.locator("#table-page")).to_have_count(0)
    expect(alice).to_have_url(re.compile(r"/#/$"))
    expect(bob.locator("#rematch-status")).to_contain_text("Waiting for a new player…")
    expect_balances(alice_ctx, bob_ctx, (1000, 1000))  # alice forfeited the second match

    # Back at the table she only watches (a spectator's results have the lobby link, no leave); the
    # freed seat is open while the proposal runs: whoever sits down agrees, and it starts.
    alice.goto(table["invite_url"])
    expect(alice.locator("#spectating-badge")).to_be_visible()
    expect(alice.locator("#rematch-button")).to_have_count(0)
    expect(alice.locator("#results-leave")).to_have_count(0)
    expect(alice.locator("#results-lobby")).to_have_text("Lobby")
    alice.locator("#rematch-join").click()
    for page in (alice, bob):
        expect(page.locator("#hand .card")).to_have_count(6)
    expect_balances(alice_ctx, bob_ctx, (1000 - STAKE, 1000 - STAKE))


def test_a_player_who_is_not_connected_is_shown_his_time_to_come_back(scripted: Any) -> None:  # noqa: F811
    seats = table_info()["seats"]
    seats[0] |= {"deadline_ms": None, "deadline_kind": None}
    seats[1] |= {"deadline_ms": 42_000, "deadline_kind": "grace"}
    info = table_info(seats=seats, deadline_ms=42_000, rules={**table_info()["rules"], "timer": 0})
    seat_view = view(
        phase="lead",
        players=[
            {"seat": 0, "cards": 6, "out": False, "place": None, "role": "defender", "passed": False},
            {"seat": 1, "cards": 6, "out": False, "place": None, "role": "attacker", "passed": False},
        ],
        decision={"kind": "lead", "seats": [1], "forfeits": True},
        hand=["6c", "7s", "9h", "Qd", "Kd", "As"],
    )
    page, _ = scripted(seat_view, info)
    note = page.locator("#deadline-note")
    expect(note).to_have_attribute("data-kind", "grace")
    expect(note).to_have_text(re.compile(r"^Rival is not connected: 0:4[12] to come back$"))
    expect(note).to_have_text(re.compile(r"^Rival is not connected: 0:(39|40) to come back$"), timeout=4000)
    countdown = page.locator("#opponents .seat[data-seat='1'] .countdown")
    expect(countdown).to_have_attribute("data-kind", "grace")
    expect(countdown).to_have_text(re.compile(r"^(3\d|4[0-2])$"))
