"""The table page on a phone (issue 33, items 4-8, 10 and 12): one store whose parts redraw only what
changed, 44 px controls and a long hand's 32 px strips, the chat as a bottom sheet with an unread
count, 3-6 seats at 360 px, cheating tables, the results, and the overlaps and wording.

Exact situations run against a scripted socket (tests/web/test_controls.py's FakeTable); the seats
and the leave dialog against the real server with bots. Screenshots go to tests/artifacts/phone/."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import ARTIFACTS, WEB_ROOT, api, create_table_api, sign_up_api
from tests.web.test_controls import RULES, FakeTable, table_info, view

pytestmark = pytest.mark.browser

PHONES = [(360, 640), (390, 844), (412, 915), (844, 390)]
SHOTS = ARTIFACTS / "phone"

# Visible controls of the table page and the header that are under 44x44 CSS px (hand cards are
# measured by their visible strip instead). [what, width, height] each.
SMALL_CONTROLS = """() => {
  const out = [];
  const seen = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const sel = ['#site-header a', '#site-header button', '#table-page button', '#table-page summary',
    '#table-page a', '#table-page input', '#table-page select'].join(', ');
  for (const el of document.querySelectorAll(sel)) {
    if (!seen(el) || el.closest('#hand') || el.closest('#site-menu:not(.open)')) continue;
    if (el.closest('details:not([open]) > :not(summary)')) continue;
    const r = el.getBoundingClientRect();
    const what = el.id || el.className || el.tagName;
    if (r.width < 43.5 || r.height < 43.5) out.push([what, Math.round(r.width), Math.round(r.height)]);
  }
  return out;
}"""

# Each hand card's visible strip: the widest run of points along a few lines across the card that
# hit the card itself (not a neighbour over it), and the tallest such run down it.
HAND_STRIPS = """() => [...document.querySelectorAll('#hand .card')].map((card) => {
  const r = card.getBoundingClientRect();
  let wide = 0;
  for (const fy of [0.15, 0.3, 0.5, 0.7, 0.85]) {
    let run = 0;
    for (let x = Math.max(0, r.left); x <= Math.min(innerWidth - 1, r.right); x += 1) {
      const hit = document.elementFromPoint(x, r.top + r.height * fy);
      if (hit && hit.closest('.card') === card) { run += 1; wide = Math.max(wide, run); } else run = 0;
    }
  }
  let tall = 0;
  const x = r.left + Math.min(16, r.width / 2);
  let run = 0;
  for (let y = Math.max(0, r.top); y <= Math.min(innerHeight - 1, r.bottom); y += 1) {
    const hit = document.elementFromPoint(x, y);
    if (hit && hit.closest('.card') === card) { run += 1; tall = Math.max(tall, run); } else run = 0;
  }
  return [card.dataset.card, wide, tall];
})"""

# Rendered elements of the page that cross the viewport's edge (the outermost of each).
OFF_SCREEN = """() => {
  const out = [];
  for (const el of document.querySelectorAll('#table-page *, #site-header *, dialog *')) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || getComputedStyle(el).visibility === 'hidden') continue;
    let clip = el.parentElement; let clipped = false;
    while (clip) {
      const s = getComputedStyle(clip);
      if (/(auto|scroll|hidden|clip)/.test(s.overflowX + s.overflowY)) { clipped = true; break; }
      clip = clip.parentElement;
    }
    if (clipped) {
      const c = clip.getBoundingClientRect();
      if (c.right <= innerWidth + 1 && c.left >= -1 && c.bottom <= innerHeight + 1 && c.top >= -1) continue;
    }
    if (r.left < -1 || r.top < -1 || r.right > innerWidth + 1 || r.bottom > innerHeight + 1) {
      if (!out.some((o) => o.contains(el))) out.push(el);
    }
  }
  return out.map((el) => el.id || el.className || el.tagName);
}"""

# Pills (badges, chips, the prompt) drawn with nothing in them.
EMPTY_PILLS = """() => [...document.querySelectorAll('.badge, .chip, .prompt')].filter((el) =>
  el.getBoundingClientRect().width > 0 && !el.textContent.trim() && !el.querySelector('svg')).length"""

# What of the player's own row (and the opponents) a panel (`cover`: "#chat", "#log-panel") covers:
# the seat (its role and countdown), each button of the action bar (Take, Challenge), each hand card's
# visible middle, each opponent. [what, x, y] each.
COVERED_CONTROLS = """(cover = '#chat') => {
  const out = [];
  const targets = [...document.querySelectorAll(
    '#me-area .seat, #me-area .countdown, #actions button, #actions summary, #hand .card, #opponents .seat')];
  for (const el of targets) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || el.closest('details:not([open]) > :not(summary)')) continue;
    const x = el.matches('#hand .card') ? r.left + Math.min(12, r.width / 2) : r.left + r.width / 2;
    const y = r.top + r.height / 2;
    const hit = document.elementFromPoint(x, y);
    const what = el.dataset.action || el.dataset.card || el.className;
    if (!hit || hit.closest(cover)) out.push([what, Math.round(x), Math.round(y)]);
  }
  return out;
}"""

# Emoji and symbol icons (the card suits U+2660-2667 are text in every font the game ships with).
EMOJI = re.compile("[\U0001f300-\U0001faff\u2630\u266a\u2600-\u265f\u2668-\u26ff\u2700-\u27bf]")


def snap(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


@pytest.fixture
def phone(new_context: Any) -> Callable[..., tuple[Any, FakeTable]]:
    """A phone-sized page of a signed-up player on a scripted table (the socket is the test's)."""

    def open_page(
        seat_view: dict[str, Any],
        info: dict[str, Any],
        size: tuple[int, int] = (360, 640),
        locale: str = "en-US",
        **options: Any,
    ) -> tuple[Any, FakeTable]:
        context = new_context(width=size[0], height=size[1], locale=locale, **options)
        sign_up_api(context)
        table = create_table_api(context)
        page = context.new_page()
        fake = FakeTable(page, {"version": 7, "seat": seat_view["seat"], "view": seat_view, "table": info})
        page.goto(table["invite_url"])
        expect(page.locator("#felt")).to_have_attribute("data-version", "7")
        return page, fake

    return open_page


def lead_view(hand: list[str], **changes: Any) -> dict[str, Any]:
    """Seat 0 leads: every card of the hand is a legal lead."""
    data = view(
        phase="lead", hand=hand, decision={"kind": "lead", "seats": [0], "forfeits": True}, attacker=0, defender=1,
        players=[
            {"seat": 0, "cards": len(hand), "out": False, "place": None, "role": "attacker", "passed": False},
            {"seat": 1, "cards": 6, "out": False, "place": None, "role": "defender", "passed": False},
        ],
        legal=[{"type": "lead", "seat": 0, "cards": [card]} for card in hand],
    )  # fmt: skip
    data.update(changes)
    return data


HONEST = {**RULES, "cheating": False}


def draws(page: Any, part: str) -> int:
    return int(page.locator(f'[data-part="{part}"]').get_attribute("data-draws") or 0)


# ------------------------------------------------------------------------------------------- item 12


def test_one_store_own_move_is_drawn_once_and_parts_redraw_only_what_changed(phone: Any) -> None:
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST))
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    opponents, top = draws(page, "opponents"), draws(page, "top")
    untouched = {part: draws(page, part) for part in ("piles", "info", "me-row", "me", "center", "opponents")}
    hand, pairs = draws(page, "hand"), draws(page, "pairs")
    # The state is read-only: a part that wrote it while drawing would throw (the page reports it).
    page.locator("#hand .card[data-card='8h']").click()
    command = fake.wait_for_command(page, 1)
    assert command["type"] == "lead" and command["cards"] == ["8h"]
    expect(page.locator("#hand .card.playable")).to_have_count(0)  # inert while the move is on its way
    # The tap drew the hand and the pairs, once each, and nothing else (table/provisional.js).
    assert (draws(page, "hand"), draws(page, "pairs")) == (hand + 1, pairs + 1)
    assert {part: draws(page, part) for part in untouched} == untouched
    before_update = draws(page, "hand")
    after = lead_view(
        ["6c", "Ks"], phase="bout", table=[{"attack": "8h", "cover": None}], legal=[],
        decision={"kind": "defend", "seats": [1], "forfeits": True},
        players=[
            {"seat": 0, "cards": 2, "out": False, "place": None, "role": "attacker", "passed": False},
            {"seat": 1, "cards": 6, "out": False, "place": None, "role": "defender", "passed": False},
        ],
    )  # fmt: skip
    move = {"type": "move", "seat": 0, "action": {"type": "lead", "seat": 0, "cards": ["8h"]}, "index": 0, "version": 8}
    fake.push(
        {
            "type": "update",
            "version": 8,
            "seat": 0,
            "events": [move],
            "view": after,
            "table": table_info(rules=HONEST, version=8),
        }
    )
    expect(page.locator("#table-zone .card[data-card='8h']")).to_be_visible()
    expect(page.locator("#hand .card")).to_have_count(2)
    assert draws(page, "hand") == before_update + 1
    # The ack that follows the update changes nothing: the hand is not drawn a second time.
    fake.push({"type": "ack", "id": command["id"], "version": 8})
    page.wait_for_timeout(300)
    assert draws(page, "hand") == before_update + 1
    # A selection, a mute: only their parts redraw; the opponents were drawn for the move alone.
    assert draws(page, "opponents") == opponents + 1
    page.locator("#mute-toggle").click()
    expect(page.locator("#mute-toggle")).to_have_attribute("aria-pressed", "true")
    assert draws(page, "top") == top + 1
    assert draws(page, "opponents") == opponents + 1
    # Writing the state from outside the store throws.
    error = page.evaluate(
        """async () => { const { createStore } = await import('/js/table/store.js');
           const store = createStore({a: 1});
           try { store.state.a = 2; return 'written'; } catch (e) { return e.message; } }"""
    )
    assert "set through the store" in error


# -------------------------------------------------------------------------------------------- item 7


@pytest.mark.parametrize("size", PHONES)
def test_every_control_is_44_px_and_a_long_hand_leaves_each_card_a_32_px_strip(
    phone: Any, size: tuple[int, int]
) -> None:
    hand = [
        "6c",
        "7c",
        "8c",
        "9c",
        "10c",
        "Jc",
        "Qc",
        "Kc",
        "Ac",
        "6h",
        "7h",
        "8h",
        "9h",
        "10h",
        "Jh",
        "Qh",
        "Kh",
        "Ah",
    ]
    seat_view = view(
        hand=hand, table=[{"attack": "6s", "cover": None}],
        players=[
            {"seat": 0, "cards": len(hand), "out": False, "place": None, "role": "defender", "passed": False},
            {"seat": 1, "cards": 5, "out": False, "place": None, "role": "attacker", "passed": False},
        ],
        legal=[{"type": "cover", "seat": 0, "attack": 0, "card": "Ah"}, {"type": "take", "seat": 0}],
    )  # fmt: skip
    page, _ = phone(seat_view, table_info(rules=HONEST), size)
    expect(page.locator("#hand .card")).to_have_count(18)
    page.wait_for_timeout(200)
    snap(page, f"long-hand-{size[0]}x{size[1]}")
    small = page.evaluate(SMALL_CONTROLS)
    assert not small, f"controls under 44x44 at {size}: {small}"
    strips = page.evaluate(HAND_STRIPS)
    narrow = [s for s in strips if s[1] < 32 or s[2] < 44]
    assert not narrow, f"hand cards with a strip under 32 px wide or 44 px high at {size}: {narrow}"
    assert not page.evaluate(OFF_SCREEN), f"off-screen at {size}"
    if size == (360, 640):
        expect(page.locator("#hand")).to_have_attribute("data-rows", "2")  # 18 cards: two rows at 360 px


# -------------------------------------------------------------------------------------------- item 4


@pytest.mark.parametrize(("size", "locale"), [((360, 640), "en-US"), ((844, 390), "ru-RU"), ((412, 915), "en-US")])
def test_chat_is_a_sheet_inside_the_screen_with_an_unread_count_and_svg_icons(
    phone: Any, size: tuple[int, int], locale: str
) -> None:
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST), size, locale)
    toggle = page.locator("#chat summary")
    expect(toggle.locator("svg")).to_have_count(1)
    expect(page.locator("#chat-unread")).to_be_hidden()
    line = {"type": "chat", "id": "c1", "from": {"player": "a:2", "name": "Rival", "guest": False}, "text": "good game",
            "channel": "players"}  # fmt: skip
    fake.push(line)
    fake.push({**line, "id": "c2", "text": "again?"})
    expect(page.locator("#chat-unread")).to_have_text("2")
    toggle.click()
    expect(page.locator("#chat-unread")).to_be_hidden()
    sheet = page.locator("#chat .chat-sheet")
    expect(sheet).to_be_visible()
    expect(page.locator("#chat-lines .chat-line .chat-text").first).to_have_text("good game")
    box = sheet.bounding_box()
    assert box is not None
    width, height = size
    assert (
        box["x"] >= 0
        and box["y"] >= 0
        and box["x"] + box["width"] <= width + 0.5
        and box["y"] + box["height"] <= height + 0.5
    )
    if width <= 600:
        # A sheet as wide as the phone, standing on the player's own row (his seat and the hand).
        mine = page.locator("#me-area").bounding_box()
        assert mine is not None
        assert box["width"] >= width - 1 and mine["y"] - 12 <= box["y"] + box["height"] <= mine["y"] + 0.5
    # The open chat never hides whose turn it is: the opponents stay uncovered and the sheet's head
    # says it is the player's turn (his own seat lies under the sheet).
    for seat in page.locator("#opponents .seat").all():
        seat_box = seat.bounding_box()
        assert seat_box is not None
        for fx, fy in ((0.1, 0.1), (0.9, 0.1), (0.5, 0.5), (0.1, 0.9), (0.9, 0.9)):
            covered = page.evaluate(
                "([x, y]) => !!document.elementFromPoint(x, y).closest('#chat')",
                [seat_box["x"] + seat_box["width"] * fx, seat_box["y"] + seat_box["height"] * fy],
            )
            assert not covered, f"the chat covers an opponent at {size}"
    # Whose turn it is stays in view: the player's own seat (its role and countdown) is uncovered,
    # and where the sheet has room for its head, the head says so too.
    assert not page.evaluate(COVERED_CONTROLS), f"the open chat covers the player's row at {size}"
    if not page.locator("#chat .chat-sheet.cramped").count():
        expect(page.locator("#chat-turn")).to_be_visible()
        expect(page.locator("#chat-turn")).to_have_text(re.compile(r"(Your turn|Ваш ход) · \d+ (s|с)"))
    assert not page.evaluate(OFF_SCREEN), "the open chat crosses the screen's edge"
    # No emoji or symbol icons anywhere on the table page: SVG only.
    text = page.locator("#table-page").inner_text()
    assert not EMOJI.search(text), f"an emoji icon on the page: {EMOJI.findall(text)}"
    icons = page.evaluate(
        "() => [...document.querySelectorAll('#table-page *')].map((el) => getComputedStyle(el, '::before').content"
        " + getComputedStyle(el, '::after').content).filter((c) => /[\\u2630\\u266A\\u{1F300}-\\u{1FAFF}]/u.test(c))"
    )
    assert not icons
    snap(page, f"chat-open-{width}x{height}-{locale[:2]}")
    page.locator("#chat-close").click()
    expect(sheet).to_be_hidden()


def defending_at_a_cheating_table(decision_seat: int = 0) -> dict[str, Any]:
    """Seat 0 defends 7h (the rival led it) at a cheating table: Take, and Challenge of the lead."""
    return view(
        table=[{"attack": "7h", "cover": None}], hand=["6c", "9h", "Qd", "Ks", "8d", "10c"],
        moves=[{"type": "lead", "seat": 1, "cards": ["7h"]}],
        decision={"kind": "defend", "seats": [decision_seat], "forfeits": True},
        legal=[
            {"type": "cover", "seat": 0, "attack": 0, "card": "9h"},
            {"type": "take", "seat": 0},
            {"type": "challenge", "seat": 0, "move": 0},
        ] if decision_seat == 0 else [{"type": "challenge", "seat": 0, "move": 0}],
    )  # fmt: skip


@pytest.mark.parametrize(("size", "locale"), [((360, 640), "en-US"), ((412, 915), "en-US"), ((844, 390), "ru-RU")])
def test_the_open_chat_leaves_the_players_seat_challenge_take_and_hand_uncovered(
    phone: Any, size: tuple[int, int], locale: str
) -> None:
    page, fake = phone(defending_at_a_cheating_table(), table_info(), size, locale)
    expect(page.locator("#actions summary[data-action=challenge]")).to_be_visible()
    fake.push({"type": "chat", "id": "c1", "from": {"player": "a:2", "name": "Rival", "guest": False},
               "text": "take them, take them all", "channel": "players"})  # fmt: skip
    page.locator("#chat summary").click()
    sheet = page.locator("#chat .chat-sheet")
    expect(sheet).to_be_visible()
    page.wait_for_timeout(400)  # the sheet takes its place on the next tick at the latest
    snap(page, f"chat-over-challenge-{size[0]}x{size[1]}-{locale[:2]}")
    assert not page.evaluate(COVERED_CONTROLS), f"the open chat covers the player's row at {size}"
    assert not page.evaluate(OFF_SCREEN), f"the open chat crosses the screen's edge at {size}"
    # The chat is still usable there: the newest line and the input are in view.
    expect(page.locator("#chat-lines .chat-line").last).to_be_visible()
    expect(page.locator("#chat-input")).to_be_visible()
    page.locator("#chat-input").fill("no")
    page.locator("#chat-input").press("Enter")
    chat_line = fake.wait_for_command(page, 1)
    assert chat_line["type"] == "chat" and chat_line["text"] == "no"
    # Challenge and Take answer a tap with the chat open.
    page.locator("#actions summary[data-action=challenge]").click()
    expect(page.locator(".challenge-list")).to_be_visible()
    page.locator("#actions summary[data-action=challenge]").click()
    page.locator("#actions [data-action=take]").click()
    assert fake.wait_for_command(page, 2)["type"] == "take"


def test_the_chat_sheet_says_a_long_turn_as_minutes_and_seconds(phone: Any) -> None:
    page, _ = phone(lead_view(["6c", "8h"]), table_info(rules=HONEST, deadline_ms=300_000), (360, 640))
    page.locator("#chat summary").click()
    # As the seat's ring says it ("4:59"), not "299 s".
    expect(page.locator("#chat-turn")).to_have_text(re.compile(r"^Your turn · (5:00|4:5\d)$"))
    expect(page.locator("#me-area .countdown")).to_have_text(re.compile(r"^(5:00|4:5\d)$"))


@pytest.mark.parametrize("size", [(360, 640), (844, 390)])
def test_the_chat_folds_away_when_the_player_must_answer_unless_he_is_typing(phone: Any, size: tuple[int, int]) -> None:
    # The rival decides; the player reads the chat.
    waiting = defending_at_a_cheating_table(decision_seat=1)
    waiting["players"] = [
        {"seat": 0, "cards": 6, "out": False, "place": None, "role": "attacker", "passed": False},
        {"seat": 1, "cards": 5, "out": False, "place": None, "role": "defender", "passed": False},
    ]
    page, fake = phone(waiting, table_info(), size)
    page.locator("#chat summary").click()
    expect(page.locator("#chat .chat-sheet")).to_be_visible()
    page.wait_for_timeout(300)
    # Now the player must defend: the sheet folds, the cards to beat are in view.
    fake.push({"type": "update", "version": 8, "seat": 0, "events": [], "view": defending_at_a_cheating_table(),
               "table": table_info(version=8)})  # fmt: skip
    expect(page.locator("#chat")).not_to_have_attribute("open", "")
    expect(page.locator("#table-zone .card[data-card='7h']")).to_be_visible()
    assert page.evaluate("() => !document.elementFromPoint(...(() => { const r = document.querySelector("
                         "'#table-zone .card').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2];"
                         " })()).closest('#chat')")  # fmt: skip
    # Opened again during the turn, it stays; and while the player types, a new turn does not fold it.
    page.locator("#chat summary").click()
    page.wait_for_timeout(600)
    expect(page.locator("#chat .chat-sheet")).to_be_visible()
    fake.push(
        {"type": "update", "version": 9, "seat": 0, "events": [], "view": waiting, "table": table_info(version=9)}
    )
    page.locator("#chat-input").click()
    page.locator("#chat-input").fill("wai")
    fake.push({"type": "update", "version": 10, "seat": 0, "events": [], "view": defending_at_a_cheating_table(),
               "table": table_info(version=10)})  # fmt: skip
    expect(page.locator("#felt")).to_have_attribute("data-version", "10")
    page.wait_for_timeout(600)
    expect(page.locator("#chat .chat-sheet")).to_be_visible()
    expect(page.locator("#chat-input")).to_have_value("wai")
    assert not page.evaluate(COVERED_CONTROLS)


@pytest.mark.parametrize("size", [(360, 640), (412, 915), (844, 390), (1366, 768)])
def test_the_top_bar_toggles_are_on_screen_and_the_piles_words_are_not_cut(phone: Any, size: tuple[int, int]) -> None:
    page, _ = phone(defending_at_a_cheating_table(), table_info(), size)
    expect(page.locator("#stock .stock-count")).to_be_visible()
    page.wait_for_timeout(300)
    width, height = size
    snap(page, f"table-{width}x{height}")
    # The chat button answers a tap where it is drawn: not under the site header (at 1366 px it sat
    # behind it, over the coins), and in the top bar's row.
    toggle = page.locator("#chat-toggle").bounding_box()
    header = page.locator("#site-header").bounding_box()
    assert toggle is not None and header is not None
    assert toggle["y"] >= header["y"] + header["height"] - 0.5, (toggle, header)
    assert toggle["x"] + toggle["width"] <= width
    assert page.evaluate(
        "([x, y]) => !!document.elementFromPoint(x, y).closest('#chat-toggle')",
        [toggle["x"] + toggle["width"] / 2, toggle["y"] + toggle["height"] / 2],
    )
    # The stock's and the discard pile's words lie inside the felt (they were cut at its edge).
    cut = page.evaluate(
        """() => { const felt = document.querySelector('#felt').getBoundingClientRect();
             return [...document.querySelectorAll('#stock .stock-info > span, #discard .discard-count')]
               .map((el) => [el.textContent, el.getBoundingClientRect()])
               .filter(([, r]) => r.left < felt.left + 4 || r.right > felt.right - 4 || r.width === 0)
               .map(([text]) => text); }"""
    )
    assert not cut, f"the piles' words are cut at {size}: {cut}"
    if width < 1200:
        # The log opened from its button keeps between the opponents and the player's own row.
        page.locator("#log-panel summary").click()
        expect(page.locator("#log")).to_be_visible()
        assert not page.evaluate(COVERED_CONTROLS, "#log-panel"), f"the open log covers a seat or a control at {size}"
    else:
        # Beside the felt the log is open and its head names it.
        expect(page.locator("#log-panel summary .log-label")).to_be_visible()
        expect(page.locator("#log-panel summary .log-label")).to_have_text("What happened")
        page.locator("#chat-toggle").click()
        sheet = page.locator("#chat .chat-sheet").bounding_box()
        felt = page.locator("#felt").bounding_box()
        assert sheet is not None and felt is not None
        assert sheet["x"] >= felt["x"] + felt["width"] - 1, "the open chat covers the felt on a wide screen"


def test_in_landscape_a_long_taking_note_and_a_minutes_countdown_are_not_cut(phone: Any) -> None:
    # The rival (a long name) takes; the player may add cards, with minutes on his clock.
    seats = [
        {"seat": 0, "kind": "human", "name": "Me", "level": None, "player": "a:1", "connected": True},
        {"seat": 1, "kind": "human", "name": "Konstantin Petrov", "level": None, "player": "a:2",
         "connected": True},
    ]  # fmt: skip
    seat_view = view(
        table=[{"attack": "7h", "cover": None}], hand=["7c", "9s"], taking=True, attacker=0, defender=1,
        decision={"kind": "throw_in_after_take", "seats": [0], "forfeits": False},
        players=[
            {"seat": 0, "cards": 2, "out": False, "place": None, "role": "attacker", "passed": False},
            {"seat": 1, "cards": 5, "out": False, "place": None, "role": "defender", "passed": False},
        ],
        legal=[{"type": "throw_in", "seat": 0, "cards": ["7c"]}, {"type": "pass", "seat": 0}],
    )  # fmt: skip
    page, _ = phone(seat_view, table_info(rules=HONEST, seats=seats, deadline_ms=119_000), (844, 390))
    # The prompt beside the pairs says who takes and what the player may do (the "is taking the cards"
    # pill took its room, cut, and pushed it off the felt).
    prompt = page.locator("#prompt")
    expect(prompt).to_have_text("Konstantin Petrov takes: add cards of a rank on the table, or pass.")
    expect(page.locator("#me-area .countdown")).to_have_text(re.compile(r"^1:5\d$"))
    page.wait_for_timeout(300)
    snap(page, "taking-844x390")
    cut = page.evaluate(
        """() => ['#prompt', '#me-area .countdown'].filter((sel) => {
             const el = document.querySelector(sel);
             const felt = document.querySelector('#felt').getBoundingClientRect();
             const box = el.closest('.table-info, .seat').getBoundingClientRect();
             const r = el.getBoundingClientRect();
             return el.scrollWidth > el.clientWidth + 1 || r.right > felt.right || r.left < felt.left
               || r.right > box.right + 1 || r.bottom > box.bottom + 1 || r.top < box.top - 1; })"""
    )
    assert not cut, f"cut at 844x390: {cut}"
    ring = page.locator("#me-area .countdown").bounding_box()
    assert ring is not None and ring["width"] >= 40, "the minutes countdown is a pill as wide as its digits"
    # One opponent in landscape: room for his whole name.
    name = page.locator("#opponents .seat .name-main")
    assert name.evaluate("(el) => el.scrollWidth <= el.clientWidth"), "the opponent's name is cut"


# -------------------------------------------------------------------------------------------- item 6


@pytest.mark.parametrize(("size", "locale"), [((360, 640), "en-US"), ((360, 640), "ru-RU"), ((844, 390), "ru-RU")])
def test_six_seats_at_360_px_show_every_opponents_role_cards_and_name(
    new_context: Any, size: tuple[int, int], locale: str
) -> None:
    context = new_context(width=size[0], height=size[1], locale=locale, reduced_motion="reduce")
    sign_up_api(context)
    table = create_table_api(context, deck=52, seats=6, name="Вечерний стол", timer=120)
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    for _ in range(5):
        api(context, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    page = context.new_page()
    page.goto(table["invite_url"])
    expect(page.locator("#opponents .seat")).to_have_count(5)
    expect(page.locator("#hand .card").first).to_be_visible()
    page.wait_for_timeout(300)
    found = page.evaluate(
        """() => [...document.querySelectorAll('#opponents .seat')].map((seat) => {
          const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect();
            return r.width && r.height ? [r.left, r.top, r.right, r.bottom] : null; };
          return {
            seat: box(seat), avatar: seat.querySelector('.avatar').textContent,
            count: box(seat.querySelector('.card-count')),
            countText: (seat.querySelector('.card-count') || {}).textContent,
            name: box(seat.querySelector('.name-text')), role: box(seat.querySelector('.seat-badges .badge')),
            roleText: (seat.querySelector('.seat-badges .badge') || {}).textContent,
            hasRole: !!seat.querySelector('[class*="role-"]'),
          };
        })"""
    )
    width, height = size
    inside = lambda b: b is not None and b[0] >= -0.5 and b[1] >= -0.5 and b[2] <= width + 0.5 and b[3] <= height + 0.5  # noqa: E731
    for seat in found:
        assert inside(seat["seat"]), seat
        assert re.fullmatch(r"[A-ZА-ЯЁ]\d", seat["avatar"]), seat  # a bot's initials: level and number
        assert inside(seat["count"]) and re.match(r"\d+ ", seat["countText"]), seat
        assert seat["name"] is not None and seat["name"][2] - seat["name"][0] >= 30, seat
        within = lambda inner, outer: inner[0] >= outer[0] - 1 and inner[2] <= outer[2] + 1  # noqa: E731
        assert within(seat["count"], seat["seat"]), seat
        if seat["hasRole"]:
            assert seat["role"] is not None and inside(seat["role"]) and within(seat["role"], seat["seat"]), seat
    assert any(seat["hasRole"] for seat in found)
    # The title stays (in Russian too); the trump card overlaps no opponent.
    title = page.locator(".table-title h1").bounding_box()
    assert title is not None and title["width"] >= 60
    trump = page.locator("#stock .trump-card").bounding_box()
    if trump:
        for seat in found:
            s = seat["seat"]
            overlap = (
                trump["x"] < s[2]
                and trump["x"] + trump["width"] > s[0]
                and trump["y"] < s[3]
                and trump["y"] + trump["height"] > s[1]
            )
            assert not overlap, f"the trump card overlaps an opponent: {trump} {s}"
    if width > height:  # landscape uses its width: the opponents spread over most of it
        left = min(seat["seat"][0] for seat in found)
        right = max(seat["seat"][2] for seat in found)
        assert right - left >= width * 0.8
    snap(page, f"six-seats-{width}x{height}-{locale[:2]}")


# -------------------------------------------------------------------------------------------- item 5


def test_a_cheating_table_is_marked_cheats_look_different_and_the_first_cheat_asks(phone: Any) -> None:
    # Defending 7h with trump d: 9h and Qd beat it (honest); 6c only as a cheat.
    seat_view = view(
        table=[{"attack": "7h", "cover": None}], hand=["6c", "9h", "Qd"],
        moves=[{"type": "lead", "seat": 1, "cards": ["7h"]}],
        legal=[
            {"type": "cover", "seat": 0, "attack": 0, "card": "6c"},
            {"type": "cover", "seat": 0, "attack": 0, "card": "9h"},
            {"type": "cover", "seat": 0, "attack": 0, "card": "Qd"},
            {"type": "take", "seat": 0},
            {"type": "challenge", "seat": 0, "move": 0},
        ],
    )  # fmt: skip
    page, fake = phone(seat_view, table_info(), (360, 640), "ru-RU")
    expect(page.locator("#cheating-badge")).to_have_text("Шулерский стол")
    expect(page.locator("#cheating-badge")).to_be_visible()
    expect(page.locator("#felt")).to_have_class(re.compile(r"\bcheating\b"))
    expect(page.locator("#hand .card.playable")).to_have_count(2)
    expect(page.locator("#hand .card.cheat")).to_have_count(1)
    expect(page.locator("#hand .card.cheat")).to_have_attribute("data-card", "6c")
    # The challenge menu stays on the screen at 360 px.
    page.locator(".challenge-menu summary").click()
    expect(page.locator(".challenge-list")).to_be_visible()
    assert not page.evaluate(OFF_SCREEN), "the open challenge menu crosses the screen's edge"
    snap(page, "challenge-menu-360x640-ru")
    page.locator(".challenge-menu summary").click()
    # The first cheat asks, naming the rule; Cancel sends nothing.
    page.locator("#hand .card[data-card='6c']").click()
    expect(page.locator("#cheat-dialog")).to_be_visible()
    expect(page.locator("#cheat-dialog-text")).to_contain_text("6♣ не бьёт 7♥")
    assert not page.evaluate(OFF_SCREEN)
    snap(page, "cheat-question-360x640-ru")
    page.locator("#cheat-dialog-cancel").click()
    page.wait_for_timeout(200)
    assert fake.commands() == []
    # Asked again; "don't ask again" is remembered, and the cheat is sent.
    page.locator("#hand .card[data-card='6c']").click()
    page.locator("#cheat-dialog-opt-out").check()
    page.locator("#cheat-dialog-ok").click()
    command = fake.wait_for_command(page, 1)
    assert command["type"] == "cover" and command["card"] == "6c"
    assert page.evaluate("() => localStorage.getItem('durak.cheat.noask')") == "1"
    # An honest card never asks.
    fake.push({"type": "ack", "id": command["id"], "version": 7})

    # The rival challenges and is right: the result names the broken rule.
    over = view(
        phase="over", table=[], hand=[], legal=[], decision={"kind": "none", "seats": [], "forfeits": False},
        outcome={"draw": False, "durak": 0, "order": [1], "places": [[1], [0]], "forfeit": 0, "reason": "challenge"},
    )  # fmt: skip
    events = [
        {
            "type": "challenge",
            "seat": 1,
            "move": 1,
            "ruling": "upheld",
            "loser": 0,
            "rule": "does_not_beat",
            "version": 8,
        },
        {"type": "match_end", "outcome": over["outcome"], "version": 8},
    ]
    info = table_info(
        status="finished", deadline_ms=None, results={"outcome": over["outcome"], "coin_changes": {}, "match_id": "m1"}
    )
    fake.push({"type": "update", "version": 8, "seat": 0, "events": events, "view": over, "table": info})
    expect(page.locator("#results-rule")).to_have_text(
        "Вы пойманы на шулерстве: покрывать можно только старшей картой той же масти или козырем."
    )
    expect(page.locator("#log li").first).to_contain_text("покрывать можно только старшей картой")


def test_the_invite_page_of_a_cheating_table_says_so_and_a_visitor_is_not_a_spectator(new_context: Any) -> None:
    host = new_context()
    sign_up_api(host)
    table = create_table_api(host, cheating=True, name="Жулики")
    api(host, "POST", f"/api/tables/{table['code']}/join", {})
    guest = new_context(width=360, height=640, locale="ru-RU").new_page()
    guest.goto(table["invite_url"])
    expect(guest.locator("#waiting")).to_be_visible()
    expect(guest.locator("#cheating-badge")).to_have_text("Шулерский стол")
    expect(guest.locator("#waiting .cheating-note")).to_be_visible()
    # Invited, not seated yet: no "Spectating" badge.
    expect(guest.locator("#spectating-badge")).to_have_count(0)
    # The chat does not open by itself for a visitor, nor cover the header's Sign in.
    expect(guest.locator("#chat")).not_to_have_attribute("open", "")
    login = guest.locator("#login-link")
    box = login.bounding_box()
    assert box is not None
    assert guest.evaluate(
        "([x, y]) => !!document.elementFromPoint(x, y).closest('#site-header')",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2],
    )
    snap(guest, "invite-cheating-360x640-ru")


# -------------------------------------------------------------------------------------------- item 8


@pytest.mark.parametrize("size", [(360, 640), (844, 390)])
def test_results_show_places_coins_rating_rematch_and_lobby_first_and_the_proof_as_a_link(
    phone: Any, size: tuple[int, int]
) -> None:
    staked = {**HONEST, "stake": 10}
    page, fake = phone(lead_view(["6c"]), table_info(rules=staked), size)
    over = view(
        phase="over", table=[], hand=[], legal=[], decision={"kind": "none", "seats": [], "forfeits": False},
        outcome={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]], "forfeit": None, "reason": None},
    )  # fmt: skip
    ratings = {"0": {"rating": 1516, "change": 16, "provisional": False, "season_change": 16},
               "1": {"rating": 1484, "change": -16, "provisional": False, "season_change": -16}}  # fmt: skip
    results = {"outcome": over["outcome"], "coin_changes": {"0": 10, "1": -10}, "match_id": "m1", "ratings": ratings}
    fairness = {"commitment": "ab" * 32, "match_number": 2}
    info = table_info(status="finished", results=results, deadline_ms=None, rules=staked, fairness=fairness)
    fake.push({"type": "update", "version": 8, "seat": 0, "events": [], "view": over, "table": info})
    expect(page.locator("#results .results-title")).to_have_text("You won!")
    me = page.locator("#results .result-row.me")
    expect(me.locator(".coins")).to_have_text("+10 coins")
    expect(me.locator(".rating-change")).to_contain_text("rating 1516 (+16)")
    expect(page.locator("#rematch-button")).to_be_visible()
    width, height = size
    snap(page, f"results-{width}x{height}")
    for target in ("#rematch-button", "#results-leave", "#results .result-row.me"):
        box = page.locator(target).bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, f"{target} below the fold at {size}"
    # No seed or commitment in the main flow: a small "fair deal" link to the replay's verify panel.
    expect(page.locator("#results #fair-line")).to_have_count(0)
    assert "committed" not in page.locator("#results").inner_text()
    link = page.locator("#fair-deal-link")
    expect(link).to_have_attribute("href", "/#/replay/m1/verify")
    expect(link.locator("svg")).to_have_count(1)


@pytest.mark.parametrize(("size", "locale"), [((360, 640), "en-US"), ((844, 390), "ru-RU"), ((412, 915), "en-US")])
def test_a_forfeit_with_a_rematch_offer_keeps_play_again_and_lobby_in_view_and_says_you(
    phone: Any, size: tuple[int, int], locale: str
) -> None:
    # The player ran out of time and is the durak; the rival offers a rematch. Everything a results
    # screen can hold at once: two rows with coins and rating, the offer, the forfeit, the series.
    staked = {**HONEST, "stake": 10}
    page, fake = phone(lead_view(["6c"]), table_info(rules=staked), size, locale)
    over = view(
        phase="over", table=[], hand=[], legal=[], decision={"kind": "none", "seats": [], "forfeits": False},
        outcome={"draw": False, "durak": 0, "order": [1], "places": [[1], [0]], "forfeit": 0, "reason": "timeout"},
    )  # fmt: skip
    ratings = {"0": {"rating": 1484, "change": -16, "provisional": False, "season_change": -16},
               "1": {"rating": 1516, "change": 16, "provisional": False, "season_change": 16}}  # fmt: skip
    results = {"outcome": over["outcome"], "coin_changes": {"0": -10, "1": 10}, "match_id": "m1", "ratings": ratings}
    info = table_info(
        status="finished", results=results, deadline_ms=None, rules=staked, series={"0": [0, 1], "1": [1, 0]},
        rematch={"agreed": [1], "deadline_ms": 30000},
    )  # fmt: skip
    fake.push({"type": "update", "version": 8, "seat": 0, "events": [], "view": over, "table": info})
    english = locale == "en-US"
    expect(page.locator("#results .results-title")).to_have_text("You are the durak!" if english else "Вы — дурак!")
    me = page.locator("#results .result-row.me")
    expect(me.locator(".who")).to_have_text("Me (you)" if english else "Me (вы)")
    expect(me.locator(".coins")).to_have_text("\u221210 coins" if english else "\u221210 мон.")
    expect(page.locator("#results-forfeit")).to_have_text(
        "You forfeited: your time ran out." if english else "Вы сдались: у вас вышло время."
    )
    page.wait_for_timeout(400)  # the panel has risen into place
    width, height = size
    snap(page, f"results-forfeit-{width}x{height}-{locale[:2]}")
    # Rematch (here "Play again") and Lobby come before the forfeit note and are on the screen.
    for target in ("#rematch-button", "#results-leave", "#results .result-row.me", "#rematch-status"):
        box = page.locator(target).bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, f"{target} off at {size}"
    order = page.evaluate(
        """() => ['#rematch-button', '#results-leave', '#results-forfeit', '#fair-deal-link'].map(
             (sel) => document.querySelector(sel).getBoundingClientRect().top)"""
    )
    assert order[0] <= order[2] and order[1] <= order[2] <= order[3], order
    # The title is clear of the close button; no row's name is squeezed to a column of letters.
    title = page.evaluate(
        """() => { const range = document.createRange();
             range.selectNodeContents(document.querySelector('#results .results-title'));
             const text = range.getBoundingClientRect();
             const close = document.querySelector('#results-close').getBoundingClientRect();
             return [text.right, close.left, text.top, close.bottom]; }"""
    )
    assert title[0] <= title[1] or title[2] >= title[3], f"the title runs under the close button: {title}"
    for row in page.locator("#results .result-row").all():
        who = row.locator(".who").bounding_box()
        assert who is not None and who["height"] <= 30 and who["width"] >= 40, who
    assert not page.evaluate(SMALL_CONTROLS)


def test_waiting_panels_show_no_seed_or_commitment(new_context: Any) -> None:
    context = new_context(width=360, height=640)
    sign_up_api(context)
    table = create_table_api(context)
    api(context, "POST", f"/api/tables/{table['code']}/join", {})
    page = context.new_page()
    page.goto(table["invite_url"])
    expect(page.locator("#waiting")).to_be_visible()
    expect(page.locator("#fair-details")).to_be_visible()
    expect(page.locator("#fair-commitment")).to_be_hidden()  # folded under "Fair deal"
    expect(page.locator("#client-seed")).to_be_hidden()


# ------------------------------------------------------------------------------------------- item 10


def test_prompts_say_you_in_english_and_russian_and_bot_tables_are_named_in_the_pages_language(phone: Any) -> None:
    # I defend and take; the rival may still add cards.
    seat_view = view(
        table=[{"attack": "7h", "cover": None}], hand=["6c"], taking=True,
        decision={"kind": "throw_in_after_take", "seats": [1], "forfeits": False},
    )  # fmt: skip
    info = table_info(rules=HONEST, name="Vasya vs bot (easy)")
    page, _ = phone(seat_view, info, (360, 640), "ru-RU")
    expect(page.locator(".table-title h1")).to_have_text("Vasya — Лёгкий бот")
    expect(page.locator("#prompt")).to_have_text("Вы забираете; ждём, подкинут ли Rival.")
    expect(page.locator(".me-area .badge.role-defender")).to_have_text("Вы отбиваетесь")
    expect(page.locator(".badge.taking")).to_have_text("Вы забираете карты")
    # No stray empty pill anywhere.
    assert not page.evaluate(EMPTY_PILLS)
    page.evaluate("() => localStorage.setItem('durak.lang', 'en')")
    page.reload()
    expect(page.locator("#prompt")).to_have_text("You take; waiting for Rival to add cards.")
    expect(page.locator(".me-area .badge.role-defender")).to_have_text("You defend")
    expect(page.locator(".table-title h1")).to_have_text("Vasya vs Easy bot")


# The match so far, from the player's seat 0 ("Me"): the rival deals and attacks him, he takes, picks
# up, and leaves (a forfeit); he is the durak.
OWN_SEAT_EVENTS = [
    {"type": "match_start", "dealer": 1, "attacker": 1, "defender": 0, "version": 1},
    {"type": "move", "seat": 1, "action": {"type": "lead", "seat": 1, "cards": ["7h"]}, "index": 0, "version": 2},
    {"type": "take", "seat": 0, "version": 3},
    {"type": "bout_end", "result": "taken", "defender": 0, "cards": ["7h"], "version": 4},
    {"type": "forfeit", "seat": 0, "reason": "left", "version": 5},
    {"type": "match_end", "outcome": {"draw": False, "durak": 0}, "version": 6},
]


def translations(lang: str) -> dict[str, Any]:
    return json.loads((WEB_ROOT / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["en", "ru", "az", "et", "fi"])
def test_the_log_and_the_results_tell_the_players_own_seat_as_you(phone: Any, lang: str) -> None:
    over = view(
        phase="over", table=[], hand=[], legal=[], decision={"kind": "none", "seats": [], "forfeits": False},
        outcome={"draw": False, "durak": 0, "order": [1], "places": [[1], [0]], "forfeit": 0, "reason": "left"},
    )  # fmt: skip
    results = {"outcome": over["outcome"], "coin_changes": {}, "match_id": "m1"}
    page, fake = phone(over, table_info(rules=HONEST, status="finished", deadline_ms=None, results=results))
    fake.welcome["recent"] = OWN_SEAT_EVENTS
    page.evaluate("(lang) => localStorage.setItem('durak.lang', lang)", lang)
    page.reload()
    expect(page.locator("html")).to_have_attribute("lang", lang)
    lines = page.locator("#log li")
    expect(lines).to_have_count(6)
    texts = lines.all_text_contents()  # the log is folded on a phone: its text, not its rendering
    words = translations(lang)
    fill = lambda key, **values: re.sub(r"\{(\w+)\}", lambda m: str(values[m.group(1)]), words[key])  # noqa: E731
    own = {
        0: fill("log.match_start_you_defend", dealer="Rival", attacker="Rival"),
        2: fill("log.take_you"),
        3: words["log.picked_up_you"]["one"].replace("{count}", "1"),
        4: fill("log.forfeit_you", reason=words["reason.left_you"]),
        5: fill("log.match_end_you"),
    }
    for index, text in own.items():
        assert texts[index] == text, (lang, index, texts)
        assert "Me" not in texts[index]
    assert texts[1] == fill("log.lead", name="Rival", cards="7\u2665")  # the rival in the third person
    forfeit = page.locator("#results-forfeit")
    expect(forfeit).to_have_text(fill("results.forfeit_you", reason=words["reason.left_you"]))
    if lang == "en":
        assert texts == [
            "A new match: Rival deals, Rival attacks you.",
            "Rival leads 7\u2665.",
            "You take.",
            "You pick up 1 card.",
            "You forfeit: you left the table.",
            "You are the durak.",
        ]
        expect(forfeit).to_have_text("You forfeited: you left the table.")
    if lang == "ru":
        assert texts[2:] == ["Вы берёте.", "Вы забираете 1 карту.", "Вы сдаётесь: вы ушли из-за стола.", "Дурак — вы."]
        expect(forfeit).to_have_text("Вы сдались: вы ушли из-за стола.")


def test_the_leave_dialog_names_the_stake_it_loses(phone: Any) -> None:
    staked = {**HONEST, "stake": 50}
    page, _ = phone(lead_view(["6c", "8h"]), table_info(rules=staked), (360, 640), "ru-RU")
    page.on("dialog", lambda dialog: pytest.fail(f"a browser dialog: {dialog.message}"))
    page.locator("#leave-button").click()
    expect(page.locator("#leave-dialog")).to_be_visible()
    expect(page.locator("#leave-dialog-text")).to_have_text(
        "Вы сдаёте партию, становитесь дураком и теряете ставку: 50 мон."
    )
    assert not page.evaluate(OFF_SCREEN)
    snap(page, "leave-dialog-360x640-ru")
    page.locator("#leave-dialog-cancel").click()
    expect(page.locator("#leave-dialog")).to_have_count(0)
    expect(page.locator("#hand .card")).to_have_count(2)


def test_a_spectators_chat_does_not_open_by_itself(new_context: Any) -> None:
    host = new_context()
    sign_up_api(host)
    table = create_table_api(host)
    api(host, "POST", f"/api/tables/{table['code']}/join", {})
    api(host, "POST", f"/api/tables/{table['code']}/bots", {"level": "easy"})
    watcher = new_context(width=1280, height=800)
    sign_up_api(watcher)
    page = watcher.new_page()
    page.goto(table["watch_url"])
    expect(page.locator("#spectating-badge")).to_be_visible()
    page.wait_for_timeout(300)
    expect(page.locator("#chat")).not_to_have_attribute("open", "")
