"""What a seat remembers from the public history of a match (events redacted for it).

A bot feeds every event it receives to :meth:`Memory.observe`. From the stream it learns the
discard pile, which cards each opponent is known to hold (cards it picked up after a take, the turned
trump when it drew it, the swapped card of a Durac 1993 trump exchange), the attack limit of the
current bout, and soft hints (a defender who took instead of covering a lone card of a suit probably
holds nothing higher in it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.bots.table import Table, card, cards
from app.engine import EventJson
from app.engine.cards import Card, deck

Json = dict[str, Any]


@dataclass(slots=True)
class Hint:
    """``seat`` probably holds no card of ``suit`` above ``rank`` (it took rather than cover)."""

    seat: int
    suit: str
    rank: int


@dataclass(slots=True)
class Memory:
    seat: int
    discard: set[Card] = field(default_factory=set)
    known: dict[int, set[Card]] = field(default_factory=dict)  # cards a seat surely holds
    played: set[Card] = field(default_factory=set)  # every card seen on the table
    hints: list[Hint] = field(default_factory=list)
    first_limit: int | None = None  # the defender's hand when this bout began (bout_start)
    transfer_limits: list[int] = field(default_factory=list)  # the new defender's hand, per transfer
    table: list[list[Card | None]] = field(default_factory=list)  # replay of the current bout
    events: int = 0
    deck_size: int | None = None

    def known_of(self, seat: int) -> set[Card]:
        return self.known.setdefault(seat, set())

    # ------------------------------------------------------------------ events

    def observe(self, event: EventJson) -> None:
        self.events += 1
        if event["type"] == "move":
            self._move(int(event["seat"]), event["action"])
        elif event["type"] == "draw":
            seat = int(event["seat"])
            if event.get("trump_card") is not None and seat != self.seat:
                self.known_of(seat).add(card(event["trump_card"]))
            if seat != self.seat:
                # New unknown cards: soft hints about that hand are stale now.
                self.hints = [h for h in self.hints if h.seat != seat]
        elif event["type"] == "bout_end":
            taken = cards(event.get("cards") or [])
            defender = int(event["defender"])
            if event["result"] == "taken":
                if defender != self.seat:
                    self.known_of(defender).update(taken)
            else:
                self.discard.update(taken)
            self.table = []
            self.first_limit = None
            self.transfer_limits = []
        elif event["type"] == "bout_start":
            self.first_limit = int(event["limit"])
            self.transfer_limits = []
        elif event["type"] == "transferred":
            self.transfer_limits.append(int(event["limit"]))
        elif event["type"] == "take":
            seat = int(event["seat"])
            uncovered = [a for a, c in self.table if a is not None and c is None]
            if seat != self.seat and len(uncovered) == 1:
                attack = uncovered[0]
                self.hints.append(Hint(seat, attack.suit, attack.rank))
        elif event["type"] == "exchange_trump":
            seat = int(event["seat"])
            if seat != self.seat:
                known = self.known_of(seat)
                known.discard(card(event["gave"]))
                known.add(card(event["got"]))

    def _move(self, seat: int, action: Json) -> None:
        kind = action.get("type")
        if kind in ("lead", "throw_in", "transfer"):
            played = cards(action["cards"])
            if kind == "lead":
                self.table = []
            self.table.extend([c, None] for c in played)
        elif kind == "cover":
            played = (card(action["card"]),)
            index = int(action["attack"])
            if 0 <= index < len(self.table):
                self.table[index][1] = played[0]
        else:
            return
        self.played.update(played)
        known = self.known.get(seat)
        if known:
            known.difference_update(played)

    # ------------------------------------------------------------------ derived knowledge

    def sync(self, t: Table) -> None:
        """Reconcile with the view (a bot may join late, or miss the deal's public trump)."""
        if self.deck_size is None:
            self.deck_size = t.deck
            # The whole deck was dealt: the turned card stayed in the dealer's hand (public).
            whole_deck = t.stock == 0 and t.deck == 6 * t.n
            if whole_deck and t.dealer != self.seat and t.trump_card not in self.played:
                self.known_of(t.dealer).add(t.trump_card)
        mine = set(t.hand)
        for seat, known in self.known.items():
            if seat == self.seat:
                continue
            known.difference_update(mine)
            known.difference_update(self.discard)
            known.difference_update(t.table_cards)
            if t.out[seat] or t.counts[seat] == 0:
                known.clear()
        self.known.pop(self.seat, None)

    def unseen(self, t: Table) -> set[Card]:
        """Cards whose place this seat does not know: in opponents' unknown slots or the stock
        (the turned trump is excluded while it lies in the stock)."""
        pool = set(deck(t.deck))
        pool.difference_update(t.hand, self.discard, t.table_cards)
        for seat, known in self.known.items():
            if seat != self.seat:
                pool.difference_update(known)
        if t.trump_in_stock:
            pool.discard(t.trump_card)
        return pool

    def known_cards(self, seat: int, t: Table) -> set[Card]:
        return set(self.known.get(seat, ())) if not t.out[seat] else set()

    def unknown_slots(self, seat: int, t: Table) -> int:
        return max(0, t.counts[seat] - len(self.known.get(seat, ())))

    def lacks(self, seat: int, c: Card) -> bool:
        """Soft: ``seat`` probably does not hold ``c`` (a hint from a take)."""
        return any(h.seat == seat and h.suit == c.suit and c.rank > h.rank for h in self.hints)
