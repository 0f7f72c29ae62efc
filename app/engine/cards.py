"""Cards and decks: small immutable values that parse and print (``Card.parse("10h")``)."""

from __future__ import annotations

from typing import NamedTuple

SUITS = ("c", "d", "h", "s")
SUIT_SYMBOLS = {"c": "\u2663", "d": "\u2666", "h": "\u2665", "s": "\u2660"}
RANK_NAMES = {11: "J", 12: "Q", 13: "K", 14: "A"}
_RANK_BY_NAME = {**{str(r): r for r in range(2, 11)}, "J": 11, "Q": 12, "K": 13, "A": 14}
DECK_RANKS = {24: tuple(range(9, 15)), 36: tuple(range(6, 15)), 52: tuple(range(2, 15))}


class CardParseError(ValueError):
    """A card string that is not ``<rank><suit>`` such as ``10h``, ``Qs`` or ``6d``."""


class Card(NamedTuple):
    """A playing card. ``rank`` is 2..14 (ace high), ``suit`` one of ``c d h s``.

    Cards are interned: ``Card.parse`` and the decks return the same objects, so they are cheap to
    compare and hash. Ordering is by rank, then suit letter.
    """

    rank: int
    suit: str

    @classmethod
    def parse(cls, text: str) -> Card:
        card = _BY_TEXT.get(text.strip().upper())
        if card is None:
            raise CardParseError(f"not a card: {text!r} (expected rank 2-10/J/Q/K/A then suit c/d/h/s)")
        return card

    def __str__(self) -> str:
        return CARD_TEXT[self]

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @property
    def label(self) -> str:
        """Human text with the suit symbol, e.g. ``10♥``."""
        return RANK_NAMES.get(self.rank, str(self.rank)) + SUIT_SYMBOLS[self.suit]


ALL_CARDS: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUITS for rank in range(2, 15))


class _CardTexts(dict[Card, str]):
    """``str(card)`` looked up instead of built: printing cards is most of the work of a view."""

    def __missing__(self, card: Card) -> str:
        if not isinstance(card, Card):  # not a card at all: print it as ``str`` would
            return str(card)
        return RANK_NAMES.get(card.rank, str(card.rank)) + card.suit  # outside the deck, e.g. Card(1, "x")


CARD_TEXT = _CardTexts()
CARD_TEXT.update((card, CARD_TEXT[card]) for card in ALL_CARDS)  # each text made once, by __missing__
_BY_TEXT: dict[str, Card] = {text.upper(): card for card, text in CARD_TEXT.items()}


def hand_key(card: Card, trump: str) -> tuple[bool, int, str]:
    """How a hand is sorted: non-trumps by rank then suit, trumps last by rank."""
    return (card.suit == trump, card.rank, card.suit)


# HAND_ORDER[trump][card]: the card's place in that order among all 52, a cheaper sort key.
HAND_ORDER: dict[str, dict[Card, int]] = {
    trump: {card: place for place, card in enumerate(sorted(ALL_CARDS, key=lambda card: hand_key(card, trump)))}
    for trump in SUITS
}


def deck(size: int) -> tuple[Card, ...]:
    """The unshuffled deck of ``size`` cards (24, 36 or 52), suit by suit, low to high."""
    ranks = DECK_RANKS.get(size)
    if ranks is None:
        raise ValueError(f"no {size}-card deck: choose 24, 36 or 52")
    return tuple(card for card in ALL_CARDS if card.rank in ranks)


def beats(cover: Card, attack: Card, trump: str) -> bool:
    """Whether ``cover`` beats ``attack``: higher of the same suit, or any trump on a non-trump."""
    if cover.suit == attack.suit:
        return cover.rank > attack.rank
    return cover.suit == trump


def cards_text(cards: tuple[Card, ...] | list[Card]) -> str:
    return " ".join([CARD_TEXT[card] for card in cards]) if cards else "-"
