"""Table chat in two browsers: lines and phrases (each shown in the reader's language), script
payloads shown as text with nothing run, and a mute that outlives a reload."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import api, create_table_api, sign_up_api

pytestmark = pytest.mark.browser

IMG = '<img src=x onerror="window.__xss=1">'
SCRIPT = "<script>window.__xss=2</script>"
TABLE_NAME = "<img src=x onerror=alert(1)>"


def _watch_for_scripts(page: Any, dialogs: list[str]) -> None:
    """Record every alert/confirm/prompt (a payload that ran would open one); let the leave guard's
    beforeunload through so that the page can reload."""

    def on_dialog(dialog: Any) -> None:
        if dialog.type == "beforeunload":
            dialog.accept()
        else:
            dialogs.append(dialog.message)
            dialog.dismiss()

    page.on("dialog", on_dialog)


def _say(page: Any, text: str) -> None:
    page.locator("#chat-input").fill(text)
    page.locator("#chat-input").press("Enter")


def test_two_browsers_chat_payloads_stay_text_phrases_translate_and_mute_sticks(new_context: Any) -> None:
    alice_ctx, boris_ctx = new_context(), new_context(locale="ru-RU")
    alice_me, boris_me = sign_up_api(alice_ctx), sign_up_api(boris_ctx)
    table = create_table_api(alice_ctx, deck=36, name=TABLE_NAME)
    api(alice_ctx, "POST", f"/api/tables/{table['code']}/join", {"seat": 0})
    api(boris_ctx, "POST", f"/api/tables/{table['code']}/join", {"seat": 1})
    dialogs: list[str] = []
    alice, boris = alice_ctx.new_page(), boris_ctx.new_page()
    for page in (alice, boris):
        _watch_for_scripts(page, dialogs)
        page.goto(table["invite_url"])
        expect(page.locator("#chat summary")).to_be_visible()
        page.locator("#chat summary").click()  # folded in a corner while the match runs
        expect(page.locator("#chat-input")).to_be_visible()

    lines = boris.locator("#chat-lines .chat-line .chat-text")
    _say(alice, IMG)
    expect(alice.locator("#chat-lines .chat-line .chat-text")).to_have_text([IMG])  # back on her own page
    _say(alice, SCRIPT)
    expect(lines).to_have_text([IMG, SCRIPT])
    expect(boris.locator("#chat-lines .chat-line .chat-name")).to_have_text([alice_me["name"]] * 2)
    assert boris.locator("#chat-lines img, #chat-lines script").count() == 0
    assert alice.locator("#chat-lines img, #chat-lines script").count() == 0
    assert alice.locator("img[src=x]").count() == 0  # nor from the table's name
    # A phrase goes by key: each page shows it in its own language.
    boris.locator("#chat .chat-phrases [data-phrase=gg]").click()
    expect(alice.locator("#chat-lines .chat-line.phrase .chat-text")).to_have_text(["Good game"])
    expect(boris.locator("#chat-lines .chat-line.phrase .chat-text")).to_have_text(["Хорошая игра"])

    # Alice mutes Boris: his lines go, new ones do not show, and it is remembered after a reload.
    alice.locator(f'#chat-lines .chat-line[data-player="{_player_of(boris, boris_me)}"] .chat-mute').first.click()
    expect(alice.locator("#chat-lines .chat-line.phrase")).to_have_count(0)
    _say(boris, "can you hear me?")
    expect(boris.locator("#chat-lines .chat-line .chat-text").last).to_have_text("can you hear me?")
    _say(alice, "quiet here")
    expect(alice.locator("#chat-lines .chat-line .chat-text").last).to_have_text("quiet here")
    assert "can you hear me?" not in alice.locator("#chat-lines").inner_text()
    alice.reload()
    alice.locator("#chat summary").click()
    expect(alice.locator("#chat-lines .chat-line .chat-text")).to_have_text([IMG, SCRIPT, "quiet here"])
    saved = json.loads(alice.evaluate("() => localStorage.getItem('durak.chat.muted')"))
    assert list(saved.values()) == [boris_me["name"]]
    alice.locator("#chat .chat-unmute").click()
    expect(alice.locator("#chat-lines .chat-line")).to_have_count(5)

    assert dialogs == []
    assert alice.evaluate("() => window.__xss") is None and boris.evaluate("() => window.__xss") is None


def _player_of(page: Any, me: dict[str, Any]) -> str:
    key = page.locator("#chat-lines .chat-line.phrase").first.get_attribute("data-player")
    assert key is not None and key.startswith("a:") and key == f"a:{me['id']}"
    return key
