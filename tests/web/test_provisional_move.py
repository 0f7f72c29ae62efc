"""One's own card move is drawn at the tap, before the server answers (web/js/table/provisional.js):
the card is on the table in the same frame, the server's update confirms it without moving it, and
a refusal puts it back in the hand."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.web.test_table_phone import HONEST, lead_view, phone, table_info

__all__ = ["phone"]  # the fixture, shared with the phone table's tests

# How many times each part of the table page has been drawn (web/js/table/store.js, data-draws).
DRAWS = """() => Object.fromEntries(
  [...document.querySelectorAll('[data-part]')].map((p) => [p.dataset.part, p.dataset.draws]))"""


def test_a_tapped_card_lies_on_the_table_before_the_server_answers_and_the_update_keeps_it(phone: Any) -> None:
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST))
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    page.locator("#hand .card[data-card='8h']").click()
    command = fake.wait_for_command(page, 1)
    assert command["type"] == "lead" and command["cards"] == ["8h"]
    # No answer yet: the card is already on the table and out of the hand; the version is unchanged.
    expect(page.locator("#table-zone .card[data-card='8h']")).to_be_visible()
    expect(page.locator("#hand .card")).to_have_count(2)
    expect(page.locator("#felt")).to_have_attribute("data-version", "7")
    after = lead_view(["6c", "Ks"], phase="bout", table=[{"attack": "8h", "cover": None}], legal=[])
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
    expect(page.locator("#felt")).to_have_attribute("data-version", "8")
    expect(page.locator("#table-zone .card")).to_have_count(1)
    expect(page.locator("#hand .card")).to_have_count(2)


def test_a_refused_card_goes_back_to_the_hand(phone: Any) -> None:
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST))
    page.locator("#hand .card[data-card='Ks']").click()
    command = fake.wait_for_command(page, 1)
    expect(page.locator("#table-zone .card[data-card='Ks']")).to_be_visible()
    fake.push(
        {"type": "error", "id": command["id"], "code": "illegal_move", "message": "lead Ks by seat 0 is not legal"}
    )
    expect(page.locator("#table-zone .card")).to_have_count(0)
    expect(page.locator("#hand .card")).to_have_count(3)
    expect(page.locator("#hand .card.playable")).to_have_count(3)  # and the hand is free again


def test_a_finger_tap_plays_the_card_when_the_finger_lifts_and_makes_no_click(phone: Any) -> None:
    """web/js/dom.js fingerTap: the card goes at the touchend; the browser's click that would follow
    is cancelled (it would land on whatever lies under the finger once the hand has closed up)."""
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST), has_touch=True)
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    page.evaluate("() => { window.clicks = 0; addEventListener('click', () => { window.clicks += 1; }, true); }")
    box = page.locator("#hand .card[data-card='8h']").bounding_box()
    assert box is not None
    page.touchscreen.tap(box["x"] + 8, box["y"] + box["height"] / 2)
    command = fake.wait_for_command(page, 1)
    assert command["type"] == "lead" and command["cards"] == ["8h"]
    expect(page.locator("#table-zone .card[data-card='8h']")).to_be_visible()
    page.wait_for_timeout(400)  # a click would have come by now
    assert page.evaluate("() => window.clicks") == 0
    assert len(fake.commands()) == 1
    expect(page.locator("#hand .card")).to_have_count(2)


def test_a_finger_that_slides_off_a_card_does_not_play_it(phone: Any) -> None:
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST), has_touch=True)
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    box = page.locator("#hand .card[data-card='8h']").bounding_box()
    assert box is not None
    x, y = box["x"] + 8, box["y"] + box["height"] / 2
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y - 40}]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_timeout(400)
    assert fake.commands() == []
    expect(page.locator("#hand .card")).to_have_count(3)


def test_the_page_rehearses_a_card_move_off_the_page_and_shows_nothing_of_it(phone: Any) -> None:
    """web/js/pages/table.js rehearseTap: once the player has a card to play, the code of a card move
    runs once off the page (the first tap of a page was its slowest). Nothing of it shows: no part is
    drawn again, nothing is sent, no card moves; the real tap then draws as always."""
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST))
    expect(page.locator("#table-page")).to_have_attribute("data-rehearsed", "tap")
    draws = page.evaluate(DRAWS)
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    expect(page.locator("#table-zone .card")).to_have_count(0)
    moves = [c for c in fake.commands() if c["type"] in ("lead", "throw_in", "cover", "transfer")]
    assert moves == [], "a rehearsal sends nothing"
    assert page.evaluate("() => document.querySelectorAll('.card-ghost').length") == 0
    page.locator("#hand .card[data-card='8h']").click()
    fake.wait_for_command(page, 1)
    expect(page.locator("#table-zone .card[data-card='8h']")).to_be_visible()
    expect(page.locator("#hand .card")).to_have_count(2)  # the hand closes up after the card's frame
    after = page.evaluate(DRAWS)
    changed = sorted(name for name in draws if draws[name] != after[name])
    assert changed == ["hand", "pairs"], changed  # the tap's one drawing, as without a rehearsal


# Each frame until the tapped card lies on the table: what the page shows of the hand then.
FRAMES = """(card) => { window.__frames = new Promise((resolve) => {
  const frames = [];
  const look = () => {
    const inHand = document.querySelector(`#hand .card[data-card="${card}"]`);
    frames.push({
      onTable: Boolean(document.querySelector(`#table-zone .card[data-card="${card}"]`)),
      handCards: document.querySelectorAll('#hand .card').length,
      handDraws: document.querySelector('[data-part=hand]').dataset.draws,
      tappedSeen: Boolean(inHand) && getComputedStyle(inHand).visibility === 'visible',
    });
    if (frames.at(-1).onTable || frames.length > 120) resolve(frames);
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}); }"""


def test_the_card_is_on_the_table_in_the_first_frame_and_the_hand_closes_up_in_a_later_one(phone: Any) -> None:
    """web/js/pages/table.js send: the hand is left for the drawing after the card's frame (store
    `later`): laying out a redrawn hand was most of a tap's work. In the card's frame the played card
    still holds its place in the hand, unseen; then the hand is drawn once, without it."""
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST))
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    draws = page.evaluate(DRAWS)
    page.evaluate(FRAMES, "8h")
    page.locator("#hand .card[data-card='8h']").click()
    seen = page.evaluate("() => window.__frames")
    first = seen[-1]
    assert first["onTable"], seen
    assert first["handDraws"] == draws["hand"] and first["handCards"] == 3, first  # not drawn again yet
    assert not first["tappedSeen"], "the played card shows twice"
    assert fake.wait_for_command(page, 1)["cards"] == ["8h"]
    expect(page.locator("#hand .card")).to_have_count(2)
    expect(page.locator("#hand .card[data-card='8h']")).to_have_count(0)
    assert page.evaluate(DRAWS)["hand"] == str(int(draws["hand"]) + 1)


def test_a_move_refused_before_the_hand_closed_up_shows_the_card_in_the_hand_again(phone: Any) -> None:
    """The refusal comes while the hand still waits to be drawn (here the frames are held): the
    hand's drawing stands as it was, and the played card shows in it again."""
    page, fake = phone(lead_view(["6c", "8h", "Ks"]), table_info(rules=HONEST))
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    draws = page.evaluate(DRAWS)
    # No frame callbacks from here on: the drawing left for after the next frame waits.
    page.evaluate("() => { window.__held = []; window.requestAnimationFrame = (fn) => window.__held.push(fn); }")
    page.locator("#hand .card[data-card='8h']").click()
    command = fake.wait_for_command(page, 1)
    expect(page.locator("#table-zone .card[data-card='8h']")).to_have_count(1)
    expect(page.locator("#hand .card[data-card='8h']")).to_have_count(1)  # the hand's drawing stands
    expect(page.locator("#hand .card[data-card='8h']")).to_be_hidden()
    fake.push(
        {"type": "error", "id": command["id"], "code": "illegal_move", "message": "lead 8h by seat 0 is not legal"}
    )
    expect(page.locator("#table-zone .card")).to_have_count(0)
    expect(page.locator("#hand .card[data-card='8h']")).to_be_visible()
    expect(page.locator("#hand .card.playable")).to_have_count(3)
    assert page.evaluate(DRAWS)["hand"] == draws["hand"]  # shown again, not drawn again
