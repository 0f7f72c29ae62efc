"""§1 Table parameters: every parameter validated; undealable tables refused naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from app.engine import PRESET_LABELS, PRESETS, Rules, RulesError, new_match


def test_defaults_are_the_rule_book_defaults() -> None:
    rules = Rules()
    assert (rules.deck, rules.seats, rules.circle) == (36, 2, "all")
    assert (rules.transfer, rules.draws, rules.timer, rules.stake, rules.cheating) == (False, True, 30, 0, False)
    assert rules.preset == "durak_peak"


@pytest.mark.parametrize(
    ("deck", "max_seats"),
    [(24, 4), (36, 6), (52, 6)],
)
def test_every_dealable_table_is_accepted_and_deals_six_each(deck: int, max_seats: int) -> None:
    for seats in range(2, max_seats + 1):
        rules = Rules(deck=deck, seats=seats)
        state = new_match(rules, seed=seats)
        assert [len(hand) for hand in state.hands] == [6] * seats
        assert len(state.stock) == deck - 6 * seats


@pytest.mark.parametrize(("deck", "seats"), [(24, 5), (24, 6), (36, 7), (52, 7), (52, 8), (36, 12)])
def test_undealable_tables_are_refused_with_a_clear_error(deck: int, seats: int) -> None:
    with pytest.raises(RulesError) as info:
        Rules(deck=deck, seats=seats)
    assert info.value.field == "seats"
    limit = 4 if deck == 24 else 6
    assert f"at most {limit}" in str(info.value)
    assert f"{deck}-card deck" in str(info.value)
    assert str(info.value).startswith("seats: ")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"deck": 20}, "deck"),
        ({"deck": 53}, "deck"),
        ({"deck": "36"}, "deck"),
        ({"deck": 36.0}, "deck"),
        ({"seats": 1}, "seats"),
        ({"seats": 0}, "seats"),
        ({"seats": -2}, "seats"),
        ({"seats": "2"}, "seats"),
        ({"seats": True}, "seats"),
        ({"circle": "left"}, "circle"),
        ({"circle": ""}, "circle"),
        ({"transfer": "yes"}, "transfer"),
        ({"transfer": 1}, "transfer"),
        ({"draws": None}, "draws"),
        ({"cheating": "on"}, "cheating"),
        ({"timer": -1}, "timer"),
        ({"timer": 601}, "timer"),
        ({"timer": 2.5}, "timer"),
        ({"stake": -5}, "stake"),
        ({"stake": 1.5}, "stake"),
        ({"stake": False}, "stake"),
        ({"preset": "house"}, "preset"),
    ],
)
def test_every_parameter_is_validated(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(RulesError) as info:
        Rules(**changes)
    assert info.value.field == field
    assert isinstance(info.value, ValueError)
    assert info.value.reason and str(info.value).startswith(f"{field}: ")


@pytest.mark.parametrize("circle", ["neighbours", "all"])
@pytest.mark.parametrize("timer", [0, 10, 20, 30, 60, 600])
def test_accepted_values(circle: str, timer: int) -> None:
    for switch in (True, False):
        rules = Rules(circle=circle, timer=timer, transfer=switch, draws=switch, cheating=switch)  # type: ignore[arg-type]
        assert (rules.circle, rules.timer, rules.transfer, rules.draws, rules.cheating) == (
            circle,
            timer,
            switch,
            switch,
            switch,
        )


def test_free_tables_are_always_possible() -> None:
    for preset in PRESETS:
        for deck in (24, 36, 52):
            if preset == "classic36" and deck != 36:
                continue
            for seats in range(2, (4 if deck == 24 else 6) + 1):
                rules = Rules.for_preset(preset, deck=deck, seats=seats, stake=0)
                assert rules.stake == 0
                new_match(rules, seed=1)
    assert Rules(stake=0).stake == 0
    assert Rules(stake=250).stake == 250


def test_classic36_fixes_its_switches() -> None:
    with pytest.raises(RulesError) as info:
        Rules.for_preset("classic36", deck=52)
    assert info.value.field == "deck"
    with pytest.raises(RulesError) as info:
        Rules.for_preset("classic36", transfer=True)
    assert info.value.field == "transfer"
    with pytest.raises(RulesError) as info:
        Rules.for_preset("classic36", draws=False)
    assert info.value.field == "draws"
    rules = Rules.for_preset("classic36", seats=5)
    assert (rules.deck, rules.transfer, rules.draws, rules.seats) == (36, False, True, 5)


def test_durac1993_defaults_and_unknown_preset() -> None:
    rules = Rules.for_preset("durac1993")
    assert (rules.deck, rules.transfer) == (52, True)
    assert Rules.for_preset("durac1993", deck=24, seats=4, transfer=False).deck == 24
    with pytest.raises(RulesError) as info:
        Rules.for_preset("house")  # type: ignore[arg-type]
    assert info.value.field == "preset"


def test_rules_json_round_trip_and_unknown_field() -> None:
    rules = Rules(deck=52, seats=5, circle="neighbours", transfer=True, draws=False, timer=0, stake=7, cheating=True)
    assert Rules.from_json(rules.to_json()) == rules
    with pytest.raises(RulesError) as info:
        Rules.from_json({**rules.to_json(), "jokers": 2})
    assert info.value.field == "jokers"
    with pytest.raises(RulesError) as info:
        Rules.from_json({**rules.to_json(), "seats": 9})
    assert info.value.field == "seats"


def test_every_preset_has_a_label() -> None:
    assert set(PRESET_LABELS) == set(PRESETS)
    assert "36 cards" in PRESET_LABELS["classic36"]
    assert "lowest trump" in PRESET_LABELS["durac1993"]


def test_rules_are_immutable_values() -> None:
    rules = Rules()
    with pytest.raises(AttributeError):
        rules.deck = 52  # type: ignore[misc]
    assert rules.with_changes(deck=52).deck == 52
    with pytest.raises(RulesError):
        rules.with_changes(seats=9)
