"""Shuffle, deal, trump and the first attacker (§3, §11)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator, Sequence

from app.engine.bout import start_bout
from app.engine.cards import Card, deck
from app.engine.rules import Rules
from app.engine.state import State

SEED_BITS = 128


def new_seed() -> int:
    """A fresh secret seed from the operating system's CSPRNG."""
    return secrets.randbits(SEED_BITS)


def _random_words(seed: int) -> Iterator[int]:
    """An unpredictable 64-bit word stream: BLAKE2b of the secret seed in counter mode."""
    key = seed.to_bytes(32, "big", signed=False)
    counter = 0
    while True:
        digest = hashlib.blake2b(counter.to_bytes(8, "big"), key=key, digest_size=64).digest()
        counter += 1
        for offset in range(0, 64, 8):
            yield int.from_bytes(digest[offset : offset + 8], "big")


def _below(words: Iterator[int], bound: int) -> int:
    limit = (1 << 64) - (1 << 64) % bound
    while True:
        word = next(words)
        if word < limit:
            return word % bound


def shuffled(cards: tuple[Card, ...], seed: int) -> tuple[Card, ...]:
    """A Fisher-Yates shuffle driven by the seed: the same seed always gives the same order."""
    if not 0 <= seed < 1 << 256:
        raise ValueError("seed must be a non-negative integer below 2**256")
    words = _random_words(seed)
    out = list(cards)
    for i in range(len(out) - 1, 0, -1):
        j = _below(words, i + 1)
        out[i], out[j] = out[j], out[i]
    return tuple(out)


def pick_dealer(seed: int, seats: int) -> int:
    """The first dealer of a table, chosen at random from the seed (a separate stream)."""
    return _below(_random_words(seed ^ (1 << 255)), seats)


def new_match(
    rules: Rules, seed: int | None = None, dealer: int | None = None, order: Sequence[Card] | None = None
) -> State:
    """Shuffle and deal a match. A rematch passes ``dealer`` = the previous durak (§3.4).

    ``order`` deals that deck instead of shuffling by the seed (a provably fair deal,
    ``app.engine.fairness``): ``order[0]`` is the first card dealt. It must be the table's whole
    deck, each card once. Dealing, the trump card and the first attacker follow the rules as with a
    shuffled deck."""
    if seed is None:
        seed = new_seed()
    n = rules.seats
    if dealer is None:
        dealer = pick_dealer(seed, n)
    if not 0 <= dealer < n:
        raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer}")
    if order is None:
        cards = shuffled(deck(rules.deck), seed)
    else:
        cards = tuple(order)
        if len(cards) != rules.deck or set(cards) != set(deck(rules.deck)):
            raise ValueError(f"order must be the {rules.deck}-card deck, each card once")
    dealt = 6 * n
    hands: list[list[Card]] = [[] for _ in range(n)]
    for index in range(dealt):  # one at a time, starting on the dealer's left
        hands[(dealer + 1 + index) % n].append(cards[index])
    rest = cards[dealt:]
    if not rest:
        trump_card = cards[dealt - 1]  # the last card dealt is shown and stays in its holder's hand
        stock: tuple[Card, ...] = ()
    elif rules.durac:
        trump_card = rest[0]  # Durac 1993: the top card is turned and is the first one drawn
        stock = rest
    else:
        trump_card = rest[0]  # turned and slid under the stock: it is the last card drawn
        stock = (*rest[1:], rest[0])
    state = State(
        rules=rules,
        seed=seed,
        dealer=dealer,
        hands=tuple(tuple(hand) for hand in hands),
        stock=stock,
        trump_card=trump_card,
        exchange_open=rules.durac and bool(stock),
    )
    if rules.durac:
        leader = (dealer + 1) % n
    else:
        leader = first_attacker(state)
    start_bout(state, leader, [])
    return state


def first_attacker(state: State) -> int:
    """The holder of the lowest trump; if nobody holds a trump, the player left of the dealer."""
    best: tuple[int, int] | None = None
    for seat, hand in enumerate(state.hands):
        for card in hand:
            if card.suit == state.trump and (best is None or card.rank < best[0]):
                best = (card.rank, seat)
    return best[1] if best is not None else (state.dealer + 1) % state.n
