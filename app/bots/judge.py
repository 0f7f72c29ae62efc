"""Card values and the small combinatorics the heuristic bots share.

A card's *value* says how useful it is to keep: a low plain card is close to 0, a plain ace 1,
trumps above every plain card. Holding a card also has a *burden*: in the end every card in hand has
to be got rid of, and that weighs more as the stock runs out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.bots.table import Table
from app.engine.cards import DECK_RANKS, Card, beats


@dataclass(frozen=True, slots=True)
class Weights:
    """Knobs of the heuristic player (normal and hard share the model, with different knobs)."""

    trump_base: float = 1.1  # value of the lowest trump (a plain ace is 1.0)
    trump_span: float = 0.9  # the highest trump is worth base + span
    trump_premium: float = 1.0  # extra value of a trump while the stock is full
    burden_early: float = 0.3  # cost of one more card in hand with a full stock
    burden_late: float = 1.0  # ... with the stock nearly gone
    burden_empty: float = 3.0  # ... with the stock empty
    tempo: float = 0.6  # worth of attacking next (after a defence) rather than defending again
    trump_spend: float = 0.5  # extra cost, with a full stock, of beating a plain card with a trump
    pressure: float = 0.4  # worth of making the defender cover one more card
    pair_bonus: float = 0.15  # leading a rank we hold twice lets us throw in the twin later
    transfer_gain: float = 0.35  # per card on the table that a transfer hands on


NORMAL = Weights()


class Judge:
    """Values for one decision (one stage of the match, one trump)."""

    def __init__(self, t: Table, weights: Weights = NORMAL, mean_unseen: float | None = None) -> None:
        self.t = t
        self.w = weights
        self.trump = t.trump
        ranks = DECK_RANKS[t.deck]
        self.ranks = ranks
        self.span = max(1, len(ranks) - 1)
        initial = t.deck - 6 * t.n
        self.fullness = t.stock / initial if initial > 0 else 0.0  # 1 at the deal, 0 when empty
        if t.stock == 0:
            self.burden = weights.burden_empty
        else:
            self.burden = weights.burden_late + (weights.burden_early - weights.burden_late) * self.fullness
        self.mean_unseen = mean_unseen if mean_unseen is not None else self._deck_mean()

    def _deck_mean(self) -> float:
        total = 0.0
        for rank in self.ranks:
            for suit in "cdhs":
                total += self.value(Card(rank, suit))
        return total / (4 * len(self.ranks))

    def value(self, c: Card) -> float:
        p = (c.rank - self.ranks[0]) / self.span
        if c.suit == self.trump:
            return self.w.trump_base + self.w.trump_span * p + self.w.trump_premium * self.fullness
        return p

    def mean(self, cards: Iterable[Card]) -> float:
        values = [self.value(c) for c in cards]
        return sum(values) / len(values) if values else self.mean_unseen

    def refill_gain(self, shed: int, hand_after: int) -> float:
        """What shedding ``shed`` cards is worth: drawn back from the stock (a card of average
        value each), or, without a stock, a burden less."""
        t = self.t
        if t.stock <= 0:
            return shed * self.burden
        draws = min(shed, max(0, 6 - hand_after), t.stock)
        return draws * self.mean_unseen + (shed - draws) * self.burden

    def beats(self, cover: Card, attack: Card) -> bool:
        return beats(cover, attack, self.trump)


def best_covers(
    attacks: Sequence[Card], hand: Sequence[Card], cost: dict[Card, float], trump: str
) -> tuple[float, list[Card]] | None:
    """The cheapest way to beat every card of ``attacks`` with distinct cards of ``hand``: total cost
    and the cover for each attack (in order), or None if they cannot all be beaten."""
    options = [sorted((c for c in hand if beats(c, a, trump)), key=lambda c: cost[c]) for a in attacks]
    if any(not o for o in options):
        return None
    order = sorted(range(len(attacks)), key=lambda i: len(options[i]))
    best: list[float] = [float("inf")]
    best_pick: list[list[Card]] = [[]]
    pick: list[Card | None] = [None] * len(attacks)
    used: set[Card] = set()

    def search(k: int, total: float) -> None:
        if total >= best[0]:
            return
        if k == len(order):
            best[0] = total
            best_pick[0] = [c for c in pick if c is not None]
            return
        i = order[k]
        for c in options[i]:
            if c in used:
                continue
            used.add(c)
            pick[i] = c
            search(k + 1, total + cost[c])
            used.discard(c)
            pick[i] = None

    search(0, 0.0)
    if best[0] == float("inf"):
        return None
    return best[0], best_pick[0]
