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
        return RANK_NAMES.get(self.rank, str(self.rank)) + self.suit

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    @property
    def label(self) -> str:
        """Human text with the suit symbol, e.g. ``10♥``."""
        return RANK_NAMES.get(self.rank, str(self.rank)) + SUIT_SYMBOLS[self.suit]


ALL_CARDS: tuple[Card, ...] = tuple(Card(rank, suit) for suit in SUITS for rank in range(2, 15))
_BY_TEXT: dict[str, Card] = {str(card).upper(): card for card in ALL_CARDS}


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
    return " ".join(str(card) for card in cards) if cards else "-"
