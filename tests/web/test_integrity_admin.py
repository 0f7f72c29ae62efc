"""The fair-play review (issue 20) end to end in the browser: one account farms coins from another by
quick wins at staked tables until the server files a flag; the admin finds the flag with its matches
and the pair's coin flow, reverses one match (both balances move as the ledger transfers say),
freezes the farmer's staked play; the farmer sees why on the lobby and is refused at a staked table
with that reason, and the other player's warning is shown once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.web.support import (
    PASSWORD,
    Server,
    api,
    create_table_api,
    open_menu,
    sign_up_api,
    unique_name,
    wait_for,
)

pytestmark = pytest.mark.browser

STAKE = 50
QUICK_WINS = 4  # the default report threshold (DURAK_QUICK_WINS_REPORT)


def balance(context: Any) -> int:
    me = api(context, "GET", "/api/session")["user"]
    return int(me["balance"])


def quick_win(winner: Any, loser: Any, index: int) -> None:
    """A 2-seat staked match that the loser leaves at once (a forfeit: a quick win). Both have the
    table open (a staked match starts once both are there and ready, rules §8)."""
    table = create_table_api(winner, deck=24, seats=2, stake=STAKE, name=f"Farm {index}")
    code = table["code"]
    pages = [context.pages[0] if context.pages else context.new_page() for context in (winner, loser)]
    for page in pages:
        page.goto(table["invite_url"])
        expect(page.locator("#waiting")).to_be_visible()
    api(winner, "POST", f"/api/tables/{code}/join", {})
    api(loser, "POST", f"/api/tables/{code}/join", {})  # he confirms by filling the table
    pages[0].locator("#ready-button").click()
    wait_for("the match to start", lambda: api(winner, "GET", f"/api/tables/{code}")["status"] == "playing")
    api(loser, "POST", f"/api/tables/{code}/leave", {})
    wait_for(
        "the match in the history",
        lambda: api(winner, "GET", "/api/matches?account=me")["total"] >= index + 1,
    )
    api(winner, "POST", f"/api/tables/{code}/leave", {}, ok=(200, 201, 404, 409))


def sign_in_page(context: Any, name: str) -> Any:
    page = context.new_page()
    page.goto("/#/login")
    page.locator(".auth-form input[name=name]").fill(name)
    page.locator(".auth-form input[name=password]").fill(PASSWORD)
    page.locator(".auth-form button[type=submit]").click()
    expect(page.locator("#user-name")).to_have_text(name)
    return page


def test_admin_reviews_a_farming_flag_reverses_a_match_and_freezes_the_farmer(new_context: Any, server: Server) -> None:
    admin_name = unique_name("judge")
    server.cli("create-admin", admin_name, "--password", PASSWORD)
    # Two browsers (two device cookies): the accounts are not related, so they may share a staked table.
    farmer_ctx = new_context(width=390, height=844)
    feeder_ctx = new_context(width=390, height=844)
    farmer = sign_up_api(farmer_ctx, unique_name("farmer"))
    feeder = sign_up_api(feeder_ctx, unique_name("feeder"))
    for index in range(QUICK_WINS):
        quick_win(farmer_ctx, feeder_ctx, index)

    admin_ctx = new_context(width=360, height=740)
    admin_api = admin_ctx  # the page's cookie jar answers the API calls too
    admin = sign_in_page(admin_ctx, admin_name)
    flag = wait_for(
        "the quick-wins flag",
        lambda: next(
            (
                item
                for item in api(admin_api, "GET", "/api/admin/integrity/flags?status=open&offset=0&limit=50")["flags"]
                if item["kind"] == "quick_wins" and {a["id"] for a in item["accounts"]} == {farmer["id"], feeder["id"]}
            ),
            None,
        ),
    )
    assert len(flag["matches"]) == QUICK_WINS

    # The admin page: the Fair play tab, the flag with both accounts, its matches and the coin flow.
    open_menu(admin)
    admin.locator(".site-nav a[href='/#/admin']").click()
    expect(admin.locator("#accounts button").first).to_be_visible()  # the accounts page has loaded
    admin.locator(".admin-tabs a[data-tab=integrity]").click()
    expect(admin.locator(".filter-tabs button[data-status=open]")).to_have_attribute("aria-pressed", "true")
    card = admin.locator(f"article.flag[data-flag='{flag['id']}']")
    expect(card).to_be_visible()
    expect(card.locator(".flag-head h2")).to_have_text("Quick wins")
    expect(card.locator(".flag-status")).to_have_text("Open")
    expect(card.locator(".flag-summary")).to_have_text(flag["summary"])
    for person in (farmer, feeder):
        expect(card.locator(f".flag-account[data-name='{person['name']}'] .account-name")).to_have_text(person["name"])
        expect(card.locator(f".flag-account[data-name='{person['name']}'] .badge.frozen")).to_have_count(0)
    matches = card.locator(".flag-match")
    expect(matches).to_have_count(QUICK_WINS)
    for match in flag["matches"]:
        row = card.locator(f".flag-match[data-match='{match['id']}']")
        expect(row.locator("a", has_text="Replay")).to_have_attribute("href", f"/#/replay/{match['id']}")
        expect(row.locator(".match-winner")).to_have_text(f"won by {farmer['name']}")
        expect(row.locator(".match-coins")).to_have_text(f"{match['coins']} coins")
    # The coin flow: the totals and one row per day, as the server counted them.
    flow = flag["coin_flow"]
    a_name = flag["accounts"][0]["name"]
    b_name = flag["accounts"][1]["name"]
    expect(card.locator(".flow-total[data-way=a_to_b]")).to_have_text(f"{a_name} → {b_name}: {flow['a_to_b']:,}")
    expect(card.locator(".flow-total[data-way=b_to_a]")).to_have_text(f"{b_name} → {a_name}: {flow['b_to_a']:,}")
    farmer_is_a = flag["accounts"][0]["id"] == farmer["id"]
    moved_to_farmer = flow["b_to_a"] if farmer_is_a else flow["a_to_b"]
    assert moved_to_farmer == sum(match["coins"] for match in flag["matches"]) > 0
    days = card.locator(".flow-table tbody tr")
    expect(days).to_have_count(len(flow["days"]))
    today = flow["days"][-1]
    row = card.locator(f".flow-table tbody tr[data-day='{today['day']}']")
    for column in ("a_to_b", "b_to_a", "quick_wins_a", "quick_wins_b"):
        expect(row.locator(f"td[data-col={column}]")).to_have_text(f"{today[column]:,}")
    assert (today["quick_wins_a"] if farmer_is_a else today["quick_wins_b"]) == QUICK_WINS
    # Phone-first: nothing scrolls sideways at 360 px.
    assert admin.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")

    # Reverse the newest match: a confirmation first (Cancel does nothing), then the ledger's transfers.
    target = flag["matches"][0]
    match_row = card.locator(f".flag-match[data-match='{target['id']}']")
    farmer_before, feeder_before = balance(farmer_ctx), balance(feeder_ctx)
    match_row.locator("[data-action=reverse]").click()
    dialog = admin.locator("#reverse-dialog")
    expect(dialog).to_be_visible()
    admin.locator("#reverse-cancel").click()
    expect(dialog).to_have_count(0)
    assert (balance(farmer_ctx), balance(feeder_ctx)) == (farmer_before, feeder_before)
    match_row.locator("[data-action=reverse]").click()
    admin.locator("#reverse-confirm").click()
    expect(admin.locator("#reverse-error")).to_have_text("Write a note first.")
    admin.locator("#reverse-dialog input[name=note]").fill("farmed from a second account")
    with admin.expect_response(re.compile(r"/api/admin/matches/.+/reverse$")) as answer:
        admin.locator("#reverse-confirm").click()
    reversal = answer.value.json()
    expect(dialog).to_have_count(0)
    amounts = {item["account"]: item["amount"] for item in reversal["transfers"]}
    assert amounts == {farmer["name"]: -target["coins"], feeder["name"]: target["coins"]}
    transfers = match_row.locator(".transfers .transfer")
    expect(transfers).to_have_count(2)
    expect(match_row.locator(f".transfer[data-account='{farmer['name']}']")).to_contain_text(f"−{target['coins']}")
    expect(match_row.locator(f".transfer[data-account='{feeder['name']}']")).to_contain_text(f"+{target['coins']}")
    expect(match_row.locator(".badge.reversed")).to_have_text("coins reversed")
    expect(match_row.locator("[data-action=reverse]")).to_have_count(0)
    assert balance(farmer_ctx) == farmer_before + amounts[farmer["name"]]
    assert balance(feeder_ctx) == feeder_before + amounts[feeder["name"]]
    # The reversal is in the ledger and stays marked after a reload; a second one is refused.
    admin.reload()
    expect(card.locator(f".flag-match[data-match='{target['id']}'] .badge.reversed")).to_be_visible()
    again = api(admin_ctx, "POST", f"/api/admin/matches/{target['id']}/reverse", {"note": "twice"}, ok=(409,))
    assert again["detail"].startswith("already_reversed")

    # Freeze the farmer's staked play: a reason is required; the badge shows on the flag.
    account = card.locator(f".flag-account[data-name='{farmer['name']}']")
    account.locator("[data-action=freeze]").click()
    account.locator("[data-action=freeze-confirm]").click()
    expect(account.locator(".form-error")).to_have_text("Give a reason; the player sees it.")
    reason = "Coins farmed from a second account"
    account.locator("input[name=reason]").fill(reason)
    account.locator("[data-action=freeze-confirm]").click()
    expect(account.locator(".badge.frozen")).to_have_text("staked play frozen")
    expect(account.locator("[data-action=unfreeze]")).to_be_visible()
    expect(admin.locator(".toast").last).to_contain_text("staked play is frozen")
    # The accounts tab shows it too, with the reason.
    accounts_page = admin_ctx.new_page()
    accounts_page.goto("/#/admin")
    accounts_page.locator("input[name=q]").first.fill(farmer["name"])
    accounts_page.locator("input[name=q]").first.press("Enter")
    listed = accounts_page.locator(f"#accounts [data-account='{farmer['name']}']")
    expect(listed.locator(".badge.frozen")).to_have_text("staked play frozen")
    listed.click()
    expect(accounts_page.locator("#account-frozen")).to_have_text(f"Staked play frozen: {reason}")
    accounts_page.close()

    # Warn the pair with a note: the flag leaves "open".
    card.locator("textarea[name=note]").fill("Second account; coins given back")
    card.locator("[data-action=warn]").click()
    expect(card.locator(".flag-status")).to_have_text("Warned")
    expect(card.locator(".flag-note")).to_contain_text("Second account; coins given back")

    # The farmer: a banner with the reason on the lobby and on his profile ...
    farmer_page = farmer_ctx.new_page()
    farmer_page.goto("/")
    banner = farmer_page.locator("#frozen-banner")
    expect(banner).to_contain_text("Your staked play is frozen")
    expect(banner.locator(".frozen-reason")).to_have_text(f"Reason: {reason}")
    farmer_page.goto(f"/#/u/{farmer['name']}")
    expect(farmer_page.locator("#frozen-banner .frozen-reason")).to_have_text(f"Reason: {reason}")
    # ... and a staked table refuses him with that reason (a third player's table, by its invite link).
    host_ctx = new_context(width=390, height=844)
    sign_up_api(host_ctx, unique_name("host"))
    table = create_table_api(host_ctx, deck=36, seats=2, stake=STAKE, name="Honest game")
    api(host_ctx, "POST", f"/api/tables/{table['code']}/join", {})
    host_page = host_ctx.new_page()  # the host waits at his table
    host_page.goto(table["invite_url"])
    farmer_page.goto(table["invite_url"])
    farmer_page.locator("#join-button").click()
    expect(farmer_page.locator("#join-error")).to_have_text(
        f"An admin has frozen your play at staked tables. Reason: {reason}"
    )
    expect(farmer_page.locator("#waiting .seat-line[data-seat='1']")).to_contain_text("Free seat")

    # The other player was warned (3 quick wins in a day): shown once, gone for good once understood.
    feeder_page = feeder_ctx.new_page()
    feeder_page.goto("/")
    warnings = feeder_page.locator(".integrity-banner.warning")
    expect(warnings.first).to_be_visible()
    count = warnings.count()
    # Worded from the warning's kind and facts, in the page's language: the admin's (newest first)
    # with his note, then the automatic one.
    admin_warning = warnings.first.locator(".warning-text")
    quick_warning = warnings.last.locator(".warning-text")
    pair = f"{farmer['name']} and {feeder['name']}"
    expect(admin_warning).to_contain_text(f"An admin reviewed the matches between {pair}")
    expect(admin_warning).to_contain_text("The admin's note: Second account; coins given back")
    expect(quick_warning).to_contain_text(f"Quick wins of {farmer['name']} over {feeder['name']} on ")
    expect(quick_warning).to_contain_text(": 3 (matches won in fewer than 3 bouts or 60 seconds")
    open_menu(feeder_page)
    feeder_page.locator("#lang-select").select_option("ru")
    expect(quick_warning).to_contain_text(f"Быстрые победы {farmer['name']} над {feeder['name']} за ")
    expect(admin_warning).to_contain_text("Примечание администратора: Second account; coins given back")
    open_menu(feeder_page)
    feeder_page.locator("#lang-select").select_option("en")
    expect(feeder_page.locator("#frozen-banner")).to_have_count(0)
    warnings.first.locator("[data-action=dismiss-warning]").click()
    expect(warnings).to_have_count(count - 1)
    feeder_page.reload()
    expect(feeder_page.locator("#lobby-tables")).to_be_visible()
    feeder_page.wait_for_load_state("networkidle")
    expect(warnings).to_have_count(count - 1)

    # Unfreezing lifts it: the banner goes, the seat can be taken.
    account.locator("[data-action=unfreeze]").click()
    expect(account.locator(".badge.frozen")).to_have_count(0)
    farmer_page.goto(table["invite_url"])
    farmer_page.locator("#join-button").click()
    expect(farmer_page.locator("#join-error")).to_have_count(0)
    host_page.locator("#ready-button").click()  # a staked match starts once both are ready (rules §8)
    expect(farmer_page.locator("#hand .card").first).to_be_visible()


def test_related_accounts_and_a_frozen_rematch_are_refused_with_clear_words(
    new_context: Any, server: Server, artifacts: Path
) -> None:
    admin_name = unique_name("judge")
    server.cli("create-admin", admin_name, "--password", PASSWORD)
    admin_ctx = new_context()
    api(admin_ctx, "POST", "/api/auth/login", {"name": admin_name, "password": PASSWORD})

    # Two accounts signed up in one browser (one device cookie) are related: the second may not sit
    # at the first one's staked table, and says why (the first plays from another browser meanwhile).
    shared_ctx = new_context(width=360, height=740)
    first = sign_up_api(shared_ctx, unique_name("twin"))
    api(shared_ctx, "POST", "/api/auth/logout", {}, ok=(200, 204))
    sign_up_api(shared_ctx, unique_name("twin"))
    first_ctx = new_context()
    api(first_ctx, "POST", "/api/auth/login", {"name": first["name"], "password": PASSWORD})
    table = create_table_api(first_ctx, deck=24, seats=2, stake=STAKE, name="Twins")
    api(first_ctx, "POST", f"/api/tables/{table['code']}/join", {})
    page = shared_ctx.new_page()
    page.goto(table["invite_url"])
    page.locator("#join-button").click()
    expect(page.locator("#join-error")).to_have_text(
        "You cannot sit at a staked table with an account that is related to yours (the same device or "
        "network). Free tables are open to you both."
    )
    expect(page.locator("#waiting .seat-line[data-seat='1']")).to_contain_text("Free seat")
    # A free table is fine for them.
    free = create_table_api(first_ctx, deck=24, seats=2, name="Twins, free")
    api(first_ctx, "POST", f"/api/tables/{free['code']}/join", {})
    page.goto(free["invite_url"])
    page.locator("#join-button").click()
    expect(page.locator("#hand .card")).to_have_count(6)

    # A rematch needs every stake again: a player frozen since the last match is refused, on the
    # results, with the admin's reason (the match does not start; nobody's coins move).
    alice_ctx, bob_ctx = new_context(width=360, height=740), new_context(width=360, height=740)
    sign_up_api(alice_ctx)
    bob = sign_up_api(bob_ctx)
    table = create_table_api(alice_ctx, deck=24, seats=2, stake=STAKE, name="Once more")
    alice_page, bob_page = alice_ctx.new_page(), bob_ctx.new_page()
    for page in (alice_page, bob_page):  # both at the table: the match starts once both are ready
        page.goto(table["invite_url"])
        expect(page.locator("#waiting")).to_be_visible()
    api(alice_ctx, "POST", f"/api/tables/{table['code']}/join", {"seat": 0})
    api(bob_ctx, "POST", f"/api/tables/{table['code']}/join", {"seat": 1})
    alice_page.locator("#ready-button").click()
    expect(bob_page.locator("#hand .card")).to_have_count(6)
    api(alice_ctx, "POST", f"/api/tables/{table['code']}/leave")  # alice forfeits, keeps her seat
    expect(bob_page.locator("#results")).to_be_visible()
    reason = "Under review for farming"
    api(admin_ctx, "POST", f"/api/admin/accounts/{bob['id']}/freeze", {"reason": reason})
    api(alice_ctx, "POST", f"/api/tables/{table['code']}/rematch", {})
    before = balance(bob_ctx)
    bob_page.locator("#rematch-button").click()
    error = bob_page.locator("#rematch-error")
    expect(error).to_have_text(f"An admin has frozen your play at staked tables. Reason: {reason}")
    expect(bob_page.locator("#waiting")).to_be_visible()  # the table waits, both still seated
    assert balance(bob_ctx) == before
    # (in one step: the waiting panel is drawn again on each update, e.g. the seeds for the next deal)
    bob_page.evaluate("document.querySelector('#rematch-error').scrollIntoView({block: 'nearest'})")
    bob_page.screenshot(path=str(artifacts / "integrity-rematch-refused.png"))


def test_bots_are_named_as_bots_on_a_profile(new_context: Any) -> None:
    context = new_context(width=360, height=740)
    me = sign_up_api(context)
    table = create_table_api(context, deck=24, seats=2, name="Against a bot")
    api(context, "POST", f"/api/tables/{table['code']}/join", {"seat": 0})
    api(context, "POST", f"/api/tables/{table['code']}/bots", {"seat": 1, "level": "hard"})
    wait_for("the match to start", lambda: api(context, "GET", f"/api/tables/{table['code']}")["status"] == "playing")
    api(context, "POST", f"/api/tables/{table['code']}/leave")
    wait_for("the match in the history", lambda: api(context, "GET", "/api/matches?account=me")["total"] == 1)
    page = context.new_page()
    page.goto(f"/#/u/{me['name']}")
    players = page.locator("#recent-matches li .players")
    expect(players).to_have_count(1)
    expect(players.locator(".bot-name")).to_have_text("Hard bot")
    expect(players).to_contain_text(f"{me['name']}, Hard bot")
    open_menu(page)
    page.locator("#lang-select").select_option("ru")
    expect(players.locator(".bot-name")).to_have_text("Сильный бот")
