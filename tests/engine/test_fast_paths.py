"""The engine's quick paths (card texts, hand order, event JSON, shared actions) give exactly what
the plain rules they stand for give."""

from __future__ import annotations

import random
from typing import Any

from app.engine import (
    Card,
    Challenge,
    Cover,
    Forfeit,
    Lead,
    Pass,
    Rules,
    Take,
    ThrowIn,
    Transfer,
    action_to_json,
    new_match,
)
from app.engine.cards import ALL_CARDS, CARD_TEXT, RANK_NAMES, SUITS, cards_text, hand_key
from app.engine.codec import event_to_json, jsonable
from app.engine.play import legal_actions
from app.engine.views import sort_hand

from .support import play_random


def _plain_text(card: Card) -> str:
    return RANK_NAMES.get(card.rank, str(card.rank)) + card.suit


def test_card_texts_are_the_printed_cards() -> None:
    for card in ALL_CARDS:
        assert CARD_TEXT[card] == str(card) == _plain_text(card)
        assert Card.parse(str(card)) is card
    odd = Card(1, "x")  # not a card of any deck: still printed, never stored
    assert str(odd) == CARD_TEXT[odd] == "1x"
    assert odd not in CARD_TEXT
    assert cards_text((Card.parse("10h"), Card.parse("As"))) == "10h As"
    assert cards_text(()) == "-"


def test_sort_hand_is_trumps_last_by_rank() -> None:
    rng = random.Random(4)
    for _ in range(200):
        hand = tuple(rng.sample(ALL_CARDS, rng.randint(0, 12)))
        for trump in SUITS:
            assert sort_hand(hand, trump) == sorted(hand, key=lambda card: hand_key(card, trump))
    odd = (Card(1, "x"), Card.parse("6h"), Card(15, "h"))
    assert sort_hand(odd, "h") == sorted(odd, key=lambda card: hand_key(card, "h"))
    assert sort_hand(odd, "?") == sorted(odd, key=lambda card: hand_key(card, "?"))


def _plain_jsonable(value: Any) -> Any:
    """The general rules, without the quick paths."""
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, dict):
        return {key: _plain_jsonable(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [_plain_jsonable(item) for item in value]
    if hasattr(value, "kind") and hasattr(value, "seat"):
        return action_to_json(value)
    return value


def test_event_json_follows_the_general_rules() -> None:
    rng = random.Random(7)
    events: list[dict[str, Any]] = []
    for seed, rules in enumerate(
        [Rules(deck=36, seats=4, transfer=True, cheating=True), Rules.for_preset("durac1993", seats=3)]
    ):
        play_random(rules, seed, rng, on_step=lambda before, action, after, new, legal: events.extend(new))
    assert {event["type"] for event in events} >= {"move", "draw", "bout_end", "bout_start", "match_end"}
    for event in events:
        assert event_to_json(event) == jsonable(event) == _plain_jsonable(event)
    card = Card.parse("Qd")
    odd = {"list": [card, (card, 1.5)], "nested": {"a": Pass(2)}, "text": "x", "none": None, "flag": True}
    assert (
        jsonable(odd)
        == _plain_jsonable(odd)
        == {
            "list": ["Qd", ["Qd", 1.5]],
            "nested": {"a": {"type": "pass", "seat": 2}},
            "text": "x",
            "none": None,
            "flag": True,
        }
    )


def test_action_json_of_every_kind() -> None:
    c6, c7 = Card.parse("6h"), Card.parse("7h")
    assert action_to_json(Lead(0, (c6, c7))) == {"type": "lead", "seat": 0, "cards": ["6h", "7h"]}
    assert action_to_json(ThrowIn(1, (c6,))) == {"type": "throw_in", "seat": 1, "cards": ["6h"]}
    assert action_to_json(Transfer(1, (c6,))) == {"type": "transfer", "seat": 1, "cards": ["6h"]}
    assert action_to_json(Cover(2, 0, c7)) == {"type": "cover", "seat": 2, "attack": 0, "card": "7h"}
    assert action_to_json(Challenge(3, 1)) == {"type": "challenge", "seat": 3, "move": 1}
    assert action_to_json(Forfeit(3, "timeout")) == {"type": "forfeit", "seat": 3, "reason": "timeout"}
    assert action_to_json(Take(1)) == {"type": "take", "seat": 1}
    assert list(action_to_json(Cover(2, 0, c7))) == ["type", "seat", "attack", "card"]


def test_shared_legal_actions_are_equal_to_new_ones() -> None:
    """legal_actions hands out cached action instances: they must be the very actions asked for."""
    rng = random.Random(3)
    seen = 0

    def check(before, action, after, events, legal):  # type: ignore[no-untyped-def]
        nonlocal seen
        for actions in legal.values():
            for found in actions:
                fresh = type(found)(*[getattr(found, name) for name in found.__slots__])
                assert found == fresh and type(found.seat) is int
                seen += 1

    play_random(Rules(deck=36, seats=3, transfer=True, cheating=True), 5, rng, on_step=check)
    assert seen > 100
    # A bool is not a seat number, but True == 1 as a cache key: the cache keeps the types apart.
    state = next(s for s in (new_match(Rules(deck=36, seats=2), seed) for seed in range(50)) if s.attacker == 1)
    assert [a.seat for a in legal_actions(state, 1)] == [1] * 6
    assert [a.seat for a in legal_actions(state, True)] == [True] * 6
    assert all(type(a.seat) is bool for a in legal_actions(state, True))
