"""The integrity policy of app/integrity_policy.py, without a database: matches that count, staked
refusals and their thresholds, which wins are quick, coin flows, takes from new accounts, the
soft-play test and the quick-wins warning. The rows and the watch are tested in tests/db/test_integrity.py
and tests/db/test_new_accounts.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.integrity_policy import (
    REASON_PAIR_CAP,
    IntegrityRules,
    MatchFacts,
    Standing,
    accounts_of_seats,
    coin_flows,
    coins_by_account,
    forfeited_by_new_account,
    inflow_tripped,
    left_by,
    new_account_refusal,
    pair_cap_refusal,
    quick_wins_warning,
    related_refusal,
    soft_play_score,
    takes_from_new_accounts,
    utc_day,
    valid_device,
    wins_of,
)

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
RULES = IntegrityRules()


def veteran() -> Standing:
    return Standing(counted=RULES.new_account_matches, created_at=NOW - timedelta(days=30))


def newcomer() -> Standing:
    return Standing(counted=0, created_at=NOW - timedelta(days=30))


def young() -> Standing:
    """Played enough matches, but signed up a day ago."""
    return Standing(counted=RULES.new_account_matches, created_at=NOW - timedelta(days=1))


@pytest.mark.parametrize(
    ("bouts", "seconds", "forfeit", "long_enough", "may_rate"),
    [
        (3, 60.0, False, True, True),
        (2, 600.0, False, False, False),  # too few bouts
        (10, 59.0, False, False, False),  # too short
        (1, 5.0, True, False, True),  # a timer forfeit of a player who had moved
        (3, None, False, True, True),  # duration unknown (taken over): the bouts decide
    ],
)
def test_matches_that_count(
    bouts: int, seconds: float | None, forfeit: bool, long_enough: bool, may_rate: bool
) -> None:
    facts = MatchFacts(bouts=bouts, seconds=seconds, forfeit_after_acting=forfeit)
    assert (facts.long_enough, facts.may_rate) == (long_enough, may_rate)
    lenient = MatchFacts(bouts=bouts, seconds=seconds, rules=IntegrityRules(rated_min_bouts=0, rated_min_seconds=0))
    assert lenient.long_enough


def test_coin_flows_share_each_loss_among_the_gainers() -> None:
    assert coin_flows({1: 100, 2: -100}) == {(1, 2): 100}
    assert coin_flows({1: 0, 2: 0}) == {}
    flows = coin_flows({1: 60, 2: 30, 3: -50, 4: -40})
    assert sum(v for (w, lo), v in flows.items() if lo == 3) == 50
    assert sum(v for (w, lo), v in flows.items() if lo == 4) == 40
    assert flows[(1, 3)] > flows[(2, 3)]


def test_the_soft_play_test() -> None:
    rules = IntegrityRules(soft_play_min_chances=20, soft_play_margin=0.25)
    assert soft_play_score((20, 10), (40, 4), rules) is not None  # 50% against him, 10% against others
    assert soft_play_score((19, 19), (40, 0), rules) is None  # too few chances against him
    assert soft_play_score((20, 10), (19, 0), rules) is None  # too few against the others
    assert soft_play_score((20, 6), (40, 4), rules) is None  # 30% vs 10%: below the margin
    assert soft_play_score((20, 20), (20, 20), rules) is None  # passes everything against everyone
    assert soft_play_score((20, 7), (200, 30), rules) is None  # 35% vs 15%: margin short
    z = soft_play_score((40, 30), (80, 10), rules)
    assert z is not None and z > 5


def test_an_account_is_new_in_its_first_matches_or_while_young() -> None:
    assert newcomer().in_first_matches(RULES) and newcomer().is_new(RULES, NOW)
    assert not young().in_first_matches(RULES) and young().is_new(RULES, NOW)
    assert not veteran().in_first_matches(RULES) and not veteran().is_new(RULES, NOW)
    assert not young().is_new(RULES, NOW + timedelta(days=RULES.new_account_days))


def test_the_pair_cap_refuses_only_past_the_daily_cap() -> None:
    names = {1: "ann", 2: "bob"}
    cap = RULES.pair_daily_coin_cap
    assert pair_cap_refusal((1, 2), names, moved=cap - 100, stake=100, rules=RULES) is None  # exactly the cap
    refusal = pair_cap_refusal((1, 2), names, moved=cap - 100, stake=101, rules=RULES)
    assert refusal is not None
    assert (refusal.code, refusal.pair, refusal.moved) == (REASON_PAIR_CAP, (1, 2), cap - 100)
    assert "ann and bob have moved 1900 coins between them today" in refusal.message


def test_the_refusals_say_why() -> None:
    device = related_refusal("ann", "bob", "device")
    address = related_refusal("ann", "bob", "address")
    assert device.code == address.code == "related_accounts"
    assert "same device" in device.message and "same network address" in address.message
    mine = new_account_refusal("", Standing(2, NOW), RULES, yours=True)
    theirs = new_account_refusal("bob", Standing(2, NOW), RULES, yours=False)
    assert mine.code == theirs.code == "new_account"
    assert mine.message.startswith("your account may play for coins once it has played 5 matches")
    assert theirs.message.startswith("bob's account") and "(2 so far;" in theirs.message


def test_a_new_accounts_forfeit_is_never_rated() -> None:
    accounts = {0: 10, 1: 11}
    standing = {10: veteran(), 11: newcomer()}
    assert forfeited_by_new_account(accounts, 1, standing, RULES)
    assert not forfeited_by_new_account(accounts, 0, standing, RULES)  # the veteran forfeited
    assert not forfeited_by_new_account(accounts, None, standing, RULES)  # no forfeit
    assert not forfeited_by_new_account(accounts, 2, standing, RULES)  # a seat without an account


def test_wins_and_quick_wins() -> None:
    seats = [{"seat": 0, "account_id": 10}, {"seat": 1, "account_id": 11}, {"seat": 2, "account_id": None}]
    account_of = accounts_of_seats(seats)
    assert account_of == {0: 10, 1: 11}
    played = {"durak": 1, "places": [[0, 2]], "reason": "played", "forfeit": None}
    assert wins_of(played, account_of, long_enough=True) == ([(10, 11)], [])
    assert wins_of(played, account_of, long_enough=False) == ([(10, 11)], [(10, 11)])  # a short match
    left = {"durak": 1, "places": [[0]], "reason": "left", "forfeit": 1}
    assert wins_of(left, account_of, long_enough=True) == ([(10, 11)], [(10, 11)])  # the durak left
    assert left_by(left, seats, 11) and not left_by(left, seats, 10) and not left_by(played, seats, 11)
    assert wins_of({"draw": True, "durak": None, "places": []}, account_of, long_enough=False) == ([], [])
    bot_durak = {"durak": 2, "places": [[0]], "reason": "played"}
    assert wins_of(bot_durak, account_of, long_enough=False) == ([], [])  # no account lost


def test_takes_from_new_accounts() -> None:
    changes = coins_by_account({"0": 150, "1": -100, "2": -50}, {0: 10, 1: 11, 2: 12})
    assert changes == {10: 150, 11: -100, 12: -50}
    flows = coin_flows(changes)
    standing = {10: veteran(), 11: newcomer(), 12: veteran()}
    taken = takes_from_new_accounts([(10, 11), (10, 12)], flows, standing, RULES, NOW)
    assert set(taken) == {10}
    assert (taken[10].coins, taken[10].wins, taken[10].losers) == (100, 1, (11,))  # 12 is no new account
    assert takes_from_new_accounts([(10, 12)], {}, standing, RULES, NOW) == {}


def test_the_inflow_signal_trips_on_accounts_or_coins() -> None:
    assert not inflow_tripped(RULES.new_inflow_accounts - 1, RULES.new_inflow_coins - 1, RULES)
    assert inflow_tripped(RULES.new_inflow_accounts, 0, RULES)
    assert inflow_tripped(1, RULES.new_inflow_coins, RULES)


def test_the_quick_wins_warning_comes_once_at_its_count() -> None:
    assert quick_wins_warning("ann", "bob", RULES.quick_wins_warning - 1, "2026-05-01", RULES) is None
    assert quick_wins_warning("ann", "bob", RULES.quick_wins_warning + 1, "2026-05-01", RULES) is None
    warning = quick_wins_warning("ann", "bob", RULES.quick_wins_warning, "2026-05-01", RULES)
    assert warning is not None and warning.kind == "quick_wins"
    assert warning.text.startswith("ann has won 3 matches quickly against bob today (2026-05-01)")
    assert warning.params["report_at"] == RULES.quick_wins_report and warning.params["winner"] == "ann"


def test_devices_and_days() -> None:
    assert valid_device("AbCdEfGhIjKlMnOpQrSt-_")
    assert not valid_device(None) and not valid_device("short") and not valid_device("x" * 65)
    assert not valid_device("AbCdEfGhIjKlMnOpQrSt/=")
    assert utc_day(datetime(2026, 5, 1, 23, 30, tzinfo=UTC) + timedelta(hours=1)) == "2026-05-02"
