"""§2 Cards and deck: parsing and printing, the three decks, what beats what."""

from __future__ import annotations

import pytest

from app.engine import Card, CardParseError, beats, deck
from app.engine.cards import ALL_CARDS

from .support import C


def test_parse_and_print() -> None:
    ten = Card.parse("10h")
    assert ten == Card(10, "h")
    assert str(ten) == "10h"
    assert ten.label == "10♥"
    assert str(Card.parse("Qs")) == "Qs"
    assert Card.parse("qs") == Card(12, "s")
    assert Card.parse(" 6d ") == Card(6, "d")
    assert Card.parse("Ac").rank == 14
    assert Card.parse("2c").rank == 2
    assert [str(Card.parse(t)) for t in ("Jd", "Kc", "9s")] == ["Jd", "Kc", "9s"]


def test_every_card_round_trips() -> None:
    assert len(ALL_CARDS) == 52 and len(set(ALL_CARDS)) == 52
    for card in ALL_CARDS:
        assert Card.parse(str(card)) is card  # interned
        assert eval(repr(card), {"Card": Card}) == card


@pytest.mark.parametrize("text", ["", "1h", "11h", "10x", "Ah10", "h", "10", "Zs", "♥A", "1 0h"])
def test_bad_cards_are_refused(text: str) -> None:
    with pytest.raises(CardParseError):
        Card.parse(text)
    assert issubclass(CardParseError, ValueError)


@pytest.mark.parametrize(
    ("size", "ranks"),
    [
        (24, ["9", "10", "J", "Q", "K", "A"]),
        (36, ["6", "7", "8", "9", "10", "J", "Q", "K", "A"]),
        (52, ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]),
    ],
)
def test_decks_have_the_right_ranks(size: int, ranks: list[str]) -> None:
    cards = deck(size)
    assert len(cards) == size and len(set(cards)) == size
    for suit in "cdhs":
        suited = [card for card in cards if card.suit == suit]
        assert [str(card)[:-1] for card in suited] == ranks  # low to high, suit by suit
    assert {card.suit for card in cards} == set("cdhs")


def test_no_other_deck() -> None:
    with pytest.raises(ValueError):
        deck(40)


def test_52_card_low_ranks_compare_correctly() -> None:
    order = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    for suit in "cdhs":
        cards = [C(rank + suit) for rank in order]
        for trump in "cdhs":  # plain suit, and trump on trump
            for low_index, low in enumerate(cards):
                for high in cards[low_index + 1 :]:
                    assert beats(high, low, trump)
                    assert not beats(low, high, trump)
                    assert low.rank < high.rank
    assert beats(C("10h"), C("9h"), "s") and not beats(C("9h"), C("10h"), "s")  # not by text
    assert beats(C("3d"), C("2d"), "s") and beats(C("Jd"), C("10d"), "s")
    assert sorted([C("10c"), C("2c"), C("Ac"), C("9c"), C("Jc")]) == [C(t) for t in ("2c", "9c", "10c", "Jc", "Ac")]


def test_beats() -> None:
    trump = "s"
    assert beats(C("Kh"), C("Qh"), trump)  # higher, same suit
    assert not beats(C("Qh"), C("Kh"), trump)  # lower, same suit
    assert not beats(C("Qh"), C("Qh"), trump)
    assert beats(C("6s"), C("Ah"), trump)  # any trump on a non-trump
    assert not beats(C("Ad"), C("6h"), trump)  # another plain suit never beats
    assert not beats(C("Ah"), C("6s"), trump)  # a plain card never beats a trump
    assert beats(C("7s"), C("6s"), trump)  # trump on trump: only higher
    assert not beats(C("6s"), C("7s"), trump)
    assert not beats(C("Kd"), C("Ad"), trump)  # the ace is the highest
    for card in deck(36):
        if card.suit != trump:
            assert not beats(card, C("As"), trump)
