"""The play controls against a scripted table: the page talks to a fake websocket server (Playwright
routes the socket), so every situation is exact: cover with a choice of targets, transfer, take,
multi-card leads (Durac 1993), challenges, the trump exchange, the countdown and server errors."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser

RULES = {"deck": 36, "seats": 2, "circle": "all", "transfer": True, "draws": True, "timer": 30, "stake": 0,
         "cheating": True, "preset": "durak_peak"}  # fmt: skip


def table_info(**changes: Any) -> dict[str, Any]:
    info = {
        "code": "x", "name": "Scripted", "private": False, "status": "playing", "rules": RULES, "creator": "a:1",
        "seats": [
            {"seat": 0, "kind": "human", "name": "Me", "level": None, "player": "a:1", "connected": True},
            {"seat": 1, "kind": "human", "name": "Rival", "level": None, "player": "a:2", "connected": False},
        ],
        "spectators": 2, "series": {"0": [0, 0], "1": [0, 0]}, "deadline_ms": 30000, "match_id": "m1",
        "results": None, "version": 7, "you": "a:1",
    }  # fmt: skip
    info.update(changes)
    return info


def view(**changes: Any) -> dict[str, Any]:
    data = {
        "seat": 0, "phase": "bout", "ply": 3, "rules": RULES, "dealer": 1, "trump": "d", "trump_card": "Ad",
        "trump_card_in_stock": True, "stock": 20, "discard": 0,
        "players": [
            {"seat": 0, "cards": 4, "out": False, "place": None, "role": "defender", "passed": False},
            {"seat": 1, "cards": 5, "out": False, "place": None, "role": "attacker", "passed": False},
        ],
        "table": [], "attacker": 1, "defender": 0, "taking": False, "cap": 5, "allowance": 3,
        "decision": {"kind": "defend", "seats": [0], "forfeits": True}, "moves": [], "order": [],
        "exchange_open": False, "outcome": None, "hand": [], "legal": [],
    }  # fmt: skip
    data.update(changes)
    return data


class FakeTable:
    """Answers hello with a scripted welcome and records every command the page sends."""

    def __init__(self, page: Any, welcome: dict[str, Any]) -> None:
        self.sent: list[dict[str, Any]] = []
        self.welcome = welcome
        self.route: Any = None
        page.route_web_socket(re.compile(r"/ws/tables/"), self.accept)

    def accept(self, route: Any) -> None:
        self.route = route
        route.on_message(self.on_message)

    def on_message(self, message: str | bytes) -> None:
        data = json.loads(message)
        self.sent.append(data)
        if data["type"] == "hello":
            self.push({"type": "welcome", **self.welcome})

    def push(self, message: dict[str, Any]) -> None:
        self.route.send(json.dumps(message))

    def commands(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] not in ("hello", "ping")]

    def wait_for_command(self, page: Any, count: int) -> dict[str, Any]:
        page.wait_for_function("() => true")  # let the page run
        for _ in range(100):
            if len(self.commands()) >= count:
                return self.commands()[count - 1]
            page.wait_for_timeout(30)
        raise AssertionError(f"the page sent {self.commands()}")


@pytest.fixture
def scripted(new_context: Any) -> Callable[[dict[str, Any], dict[str, Any]], tuple[Any, FakeTable]]:
    context = new_context()
    sign_up_api(context)
    table = create_table_api(context)

    def open_page(seat_view: dict[str, Any], info: dict[str, Any]) -> tuple[Any, FakeTable]:
        page = context.new_page()
        fake = FakeTable(page, {"version": 7, "seat": seat_view["seat"], "view": seat_view, "table": info})
        page.goto(table["invite_url"])
        expect(page.locator("#felt")).to_have_attribute("data-version", "7")
        return page, fake

    yield open_page
    api(context, "POST", f"/api/tables/{table['code']}/leave", ok=(200, 409))


def test_defender_covers_picks_a_target_transfers_and_takes(scripted: Any) -> None:
    seat_view = view(
        table=[{"attack": "7h", "cover": None}, {"attack": "7c", "cover": None}],
        hand=["7s", "9h", "6c", "Qd"],
        moves=[{"type": "lead", "seat": 1, "cards": ["7h"]}, {"type": "throw_in", "seat": 1, "cards": ["7c"]}],
        legal=[
            {"type": "cover", "seat": 0, "attack": 0, "card": "9h"},
            {"type": "cover", "seat": 0, "attack": 0, "card": "Qd"},
            {"type": "cover", "seat": 0, "attack": 1, "card": "Qd"},
            {"type": "transfer", "seat": 0, "cards": ["7s"]},
            {"type": "take", "seat": 0},
            {"type": "challenge", "seat": 0, "move": 1},
        ],
    )
    page, fake = scripted(seat_view, table_info())
    hand = page.locator("#hand .card")
    # Trumps last: the hand is sorted 6c 7s 9h | Qd.
    assert hand.evaluate_all("cards => cards.map(c => c.dataset.card)") == ["6c", "7s", "9h", "Qd"]
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    expect(page.locator("#hand .card[data-card='6c']")).to_have_attribute("aria-disabled", "true")
    expect(page.locator("#actions [data-action=take]")).to_be_visible()
    expect(page.locator("#actions [data-action=transfer]")).to_be_visible()
    expect(page.locator("#actions [data-action=pass]")).to_have_count(0)
    expect(page.locator("#allowance")).to_have_text("3 more cards may be added (limit 5)")
    expect(page.locator("#prompt")).to_have_text("Defend: cover every card, or take them.")
    # The countdown runs on my seat; the rival is shown offline; two spectators watch.
    countdown = page.locator(".me-area .seat .countdown")
    expect(countdown).to_have_text(re.compile(r"^(30|29)$"))
    expect(countdown).to_have_text(re.compile(r"^2[0-8]$"), timeout=4000)
    expect(page.locator("#opponents .conn.offline")).to_have_count(1)
    expect(page.locator("#spectator-count")).to_have_attribute("data-count", "2")

    # The trump queen covers either attack: it is selected and both attacks light up as targets.
    page.locator("#hand .card[data-card='Qd']").click()
    expect(page.locator("#hand .card[data-card='Qd']")).to_have_attribute("aria-pressed", "true")
    targets = page.locator(".pair .target")
    expect(targets).to_have_count(2)
    expect(targets.nth(1)).to_have_attribute("aria-label", "Cover the 7 of clubs")
    page.keyboard.press("Escape")
    expect(targets).to_have_count(0)
    page.locator("#hand .card[data-card='Qd']").click()
    targets.nth(1).click()
    assert fake.wait_for_command(page, 1) == {"type": "cover", "id": fake.commands()[0]["id"], "version": 7,
                                              "attack": 1, "card": "Qd"}  # fmt: skip
    # While a command is on its way the hand is not playable; an error frees it and is shown.
    expect(page.locator("#hand .card.playable")).to_have_count(0)
    fake.push({"type": "error", "id": fake.commands()[0]["id"], "code": "does_not_beat", "message": "nope"})
    expect(page.locator(".toast.error")).to_have_text("That card does not beat the attack.")
    expect(page.locator("#hand .card.playable")).to_have_count(3)

    # A card with a single use plays at once: the nine of hearts covers the seven.
    page.locator("#hand .card[data-card='9h']").click()
    assert fake.wait_for_command(page, 2)["card"] == "9h"
    fake.push({"type": "ack", "id": fake.commands()[1]["id"], "version": 8})
    # Transfer by its button; take by its button.
    page.locator("#actions [data-action=transfer]").click()
    assert fake.wait_for_command(page, 3)["cards"] == ["7s"]
    fake.push({"type": "ack", "id": fake.commands()[2]["id"], "version": 8})
    page.locator("#actions [data-action=take]").click()
    assert fake.wait_for_command(page, 4)["type"] == "take"
    fake.push({"type": "ack", "id": fake.commands()[3]["id"], "version": 8})

    # At a cheating table the challenge menu names the moves of the bout.
    page.locator("#actions summary[data-action=challenge]").click()
    option = page.locator(".challenge-list button")
    expect(option).to_have_text("Rival throws in 7♣.")
    option.click()
    assert fake.wait_for_command(page, 5) == {"type": "challenge", "id": fake.commands()[4]["id"], "version": 7,
                                              "move": 1}  # fmt: skip


def test_groups_of_a_rank_and_the_trump_exchange(scripted: Any) -> None:
    rules = {**RULES, "preset": "durac1993", "deck": 52, "cheating": False}
    leads = [["7h"], ["7s"], ["9c"], ["9d"], ["7h", "7s"], ["9c", "9d"], ["7h", "7s", "9c", "9d"]]
    seat_view = view(
        phase="lead", rules=rules, trump="d", trump_card="Ad", exchange_open=True, table=[],
        hand=["7h", "7s", "9c", "9d", "2d"],
        decision={"kind": "lead", "seats": [0], "forfeits": True},
        players=[
            {"seat": 0, "cards": 5, "out": False, "place": None, "role": "attacker", "passed": False},
            {"seat": 1, "cards": 6, "out": False, "place": None, "role": "defender", "passed": False},
        ],
        legal=[{"type": "lead", "seat": 0, "cards": c} for c in leads] + [{"type": "exchange_trump", "seat": 0}],
    )  # fmt: skip
    page, fake = scripted(seat_view, table_info(rules=rules, deadline_ms=None))
    expect(page.locator("#prompt")).to_have_text("Your lead: play a card.")
    expect(page.locator(".me-area .countdown")).to_be_hidden()  # no deadline: no countdown
    # The seven of hearts leads alone or in a group: a click selects it, a second seven joins it.
    page.locator("#hand .card[data-card='7h']").click()
    play = page.locator("#actions [data-action=play]")
    expect(play).to_have_text("Play 1 card")  # alone, or ...
    page.locator("#hand .card[data-card='7s']").click()
    expect(play).to_have_text("Play 2 cards")
    page.locator("#hand .card[data-card='9c']").click()
    expect(play).to_have_count(0)  # 7 7 9 is not a play
    page.locator("#hand .card[data-card='9d']").click()
    expect(play).to_have_text("Play 4 cards")
    play.click()
    command = fake.wait_for_command(page, 1)
    assert command["type"] == "lead" and sorted(command["cards"]) == ["7h", "7s", "9c", "9d"]
    fake.push({"type": "ack", "id": command["id"], "version": 8})
    page.locator("#actions [data-action=exchange_trump]").click()
    assert fake.wait_for_command(page, 2)["type"] == "exchange_trump"


def test_pass_is_bito_when_everything_is_covered_and_results_with_coins(scripted: Any) -> None:
    seat_view = view(
        table=[{"attack": "7h", "cover": "9h"}],
        hand=["7s", "Kc"],
        decision={"kind": "throw_in", "seats": [0], "forfeits": False},
        players=[
            {"seat": 0, "cards": 2, "out": False, "place": None, "role": "attacker", "passed": False},
            {"seat": 1, "cards": 3, "out": False, "place": None, "role": "defender", "passed": False},
        ],
        legal=[{"type": "throw_in", "seat": 0, "cards": ["7s"]}, {"type": "pass", "seat": 0}],
    )
    staked = {**RULES, "stake": 10}
    page, fake = scripted(seat_view, table_info(rules=staked))
    expect(page.locator("#actions [data-action=pass]")).to_have_text("Bito (beaten)")
    expect(page.locator("#actions [data-action=take]")).to_have_count(0)
    expect(page.locator("#actions [data-action=transfer]")).to_have_count(0)
    expect(page.locator(".pair.covered")).to_have_attribute("aria-label", "7 of hearts covered by 9 of hearts")
    page.locator("#actions [data-action=pass]").click()
    assert fake.wait_for_command(page, 1)["type"] == "pass"

    # The match ends: the result names places and coins; the log tells the story in words.
    over = view(
        phase="over", table=[], hand=[], legal=[], decision={"kind": "none", "seats": [], "forfeits": False},
        outcome={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]], "forfeit": None, "reason": None},
    )  # fmt: skip
    results = {"outcome": over["outcome"], "coin_changes": {"0": 10, "1": -10}, "match_id": "m1"}
    events = [
        {"type": "pass", "seat": 0, "version": 8},
        {"type": "bout_end", "result": "beaten", "defender": 1, "cards": ["7h", "9h"], "version": 8},
        {"type": "out", "seat": 0, "place": 1, "version": 8},
        {"type": "match_end", "outcome": over["outcome"], "version": 8},
    ]
    info = table_info(
        status="finished", results=results, deadline_ms=None, series={"0": [1, 0], "1": [0, 1]}, rules=staked
    )
    fake.push({"type": "update", "version": 8, "seat": 0, "events": events, "view": over, "table": info})
    expect(page.locator("#results .results-title")).to_have_text("You won!")
    expect(page.locator("#results .result-row.me .coins")).to_have_text("+10 coins")
    expect(page.locator("#results .result-row.durak .coins")).to_have_text("\u221210 coins")
    expect(page.locator("#series")).to_have_text("Series: Me 1–0 · Rival 0–1")
    log = page.locator("#log li")
    expect(log).to_have_text(["You pass.", "Beaten off: 2 cards to the discard pile.", "You are out, place 1.",
                              "Rival is the durak."])  # fmt: skip


def test_the_challenge_window_shows_its_countdown_and_a_no_challenge_button(scripted: Any) -> None:
    # Cheating table: the rival covered with his last card; the bout waits for challenges (§9).
    seat_view = view(
        phase="challenge",
        table=[{"attack": "7h", "cover": "6h"}],
        hand=["Kc", "9s"],
        allowance=0,
        decision={"kind": "challenge", "seats": [0, 1], "forfeits": False},
        players=[
            {"seat": 0, "cards": 2, "out": False, "place": None, "role": "attacker", "passed": False},
            {"seat": 1, "cards": 0, "out": False, "place": None, "role": "defender", "passed": False},
        ],
        attacker=0,
        defender=1,
        moves=[{"type": "lead", "seat": 0, "cards": ["7h"]}, {"type": "cover", "seat": 1, "attack": 0, "card": "6h"}],
        legal=[{"type": "pass", "seat": 0}, {"type": "challenge", "seat": 0, "move": 1}],
    )
    page, fake = scripted(seat_view, table_info(deadline_ms=5000))
    expect(page.locator("#prompt")).to_have_text(
        "The attack is played out. Challenge a move that broke the rules, or let it stand."
    )
    expect(page.locator("#allowance")).to_have_count(0)
    countdown = page.locator(".me-area .seat .countdown")
    expect(countdown).to_have_text(re.compile(r"^[45]$"))
    expect(countdown).to_have_class(re.compile(r"urgent"))
    expect(page.locator("#opponents .seat.deciding .countdown")).to_have_text(re.compile(r"^[1-5]$"))
    expect(page.locator("#actions summary[data-action=challenge]")).to_be_visible()
    expect(page.locator("#actions [data-action=pass]")).to_have_text("No challenge")
    page.locator("#actions [data-action=pass]").click()
    assert fake.wait_for_command(page, 1) == {"type": "pass", "id": fake.commands()[0]["id"], "version": 7}
    # I passed; the rival has not: the prompt says whom the window waits for.
    waiting = view(**{**seat_view, "legal": [], "decision": {"kind": "challenge", "seats": [1], "forfeits": False}})
    fake.push({"type": "update", "version": 8, "seat": 0, "events": [{"type": "pass", "seat": 0, "version": 8}],
               "view": waiting, "table": table_info(deadline_ms=2000, version=8)})  # fmt: skip
    expect(page.locator("#prompt")).to_have_text("Attack played out; waiting for Rival to challenge or pass.")
    expect(page.locator("#actions [data-action=pass]")).to_have_count(0)


def test_drag_a_card_onto_an_attack_or_the_table(scripted: Any) -> None:
    seat_view = view(
        table=[{"attack": "7h", "cover": None}, {"attack": "7c", "cover": None}],
        hand=["7s", "Qd"],
        legal=[
            {"type": "cover", "seat": 0, "attack": 0, "card": "Qd"},
            {"type": "cover", "seat": 0, "attack": 1, "card": "Qd"},
            {"type": "transfer", "seat": 0, "cards": ["7s"]},
            {"type": "take", "seat": 0},
        ],
    )
    page, fake = scripted(seat_view, table_info())
    expect(page.locator("#hand .card[data-card='Qd']")).to_have_attribute("draggable", "true")
    page.locator("#hand .card[data-card='Qd']").drag_to(page.locator(".pair[data-index='1']"))
    command = fake.wait_for_command(page, 1)
    assert (command["type"], command["attack"], command["card"]) == ("cover", 1, "Qd")
    fake.push({"type": "ack", "id": command["id"], "version": 8})
    page.locator("#hand .card[data-card='7s']").drag_to(page.locator("#table-zone"), target_position={"x": 8, "y": 8})
    command = fake.wait_for_command(page, 2)
    assert (command["type"], command["cards"]) == ("transfer", ["7s"])
