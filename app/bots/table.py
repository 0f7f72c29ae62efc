"""Reading a seat's ``view`` dict: cards, the table, who sits where, and which actions are honest.

Everything here works on the JSON a player in the seat receives; nothing reaches the engine state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.engine import ActionJson, RulesJson, ViewJson
from app.engine.cards import DECK_RANKS, Card, beats

Json = dict[str, Any]


def card(text: str) -> Card:
    return Card.parse(text)


def cards(texts: list[str]) -> tuple[Card, ...]:
    return tuple(Card.parse(text) for text in texts)


@dataclass(frozen=True, slots=True)
class Table:
    """The seat's picture of the current moment, parsed once per decision."""

    seat: int
    n: int
    dealer: int
    deck: int
    trump: str
    trump_card: Card
    hand: tuple[Card, ...]
    attacks: tuple[Card, ...]
    covers: tuple[Card | None, ...]
    attacker: int | None
    defender: int | None
    taking: bool
    allowance: int
    cap: int
    stock: int
    trump_in_stock: bool  # the turned trump still lies in the stock (Durac 1993 draws it first)
    counts: tuple[int, ...]  # cards in each seat's hand
    out: tuple[bool, ...]
    passed: tuple[bool, ...]
    phase: str
    rules: RulesJson
    decision_seats: tuple[int, ...]
    decision_kind: str

    @classmethod
    def parse(cls, view: ViewJson) -> Table:
        players = view["players"]
        rules = view["rules"]
        table = view.get("table") or []
        decision = view.get("decision") or {}
        seat = view["seat"]
        if seat is None:
            raise ValueError("a spectator's view: no seat to play for")
        return cls(
            seat=seat,
            n=len(players),
            dealer=int(view.get("dealer") or 0),
            deck=int(rules["deck"]),
            trump=str(view["trump"]),
            trump_card=card(view["trump_card"]),
            hand=cards(view.get("hand") or []),
            attacks=tuple(card(pair["attack"]) for pair in table),
            covers=tuple(None if pair["cover"] is None else card(pair["cover"]) for pair in table),
            attacker=view.get("attacker"),
            defender=view.get("defender"),
            taking=bool(view.get("taking")),
            allowance=int(view.get("allowance") or 0),
            cap=int(view.get("cap") or 6),
            stock=int(view.get("stock") or 0),
            trump_in_stock=bool(view.get("trump_card_in_stock")) and int(view.get("stock") or 0) > 0,
            counts=tuple(int(p["cards"]) for p in players),
            out=tuple(bool(p["out"]) for p in players),
            passed=tuple(bool(p.get("passed")) for p in players),
            phase=str(view.get("phase")),
            rules=rules,
            decision_seats=tuple(decision.get("seats") or ()),
            decision_kind=str(decision.get("kind") or "none"),
        )

    # ------------------------------------------------------------------ derived facts

    @property
    def ranks(self) -> tuple[int, ...]:
        return DECK_RANKS[self.deck]

    @property
    def table_ranks(self) -> set[int]:
        found = {c.rank for c in self.attacks}
        found.update(c.rank for c in self.covers if c is not None)
        return found

    @property
    def table_cards(self) -> tuple[Card, ...]:
        return self.attacks + tuple(c for c in self.covers if c is not None)

    @property
    def uncovered(self) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.covers) if c is None)

    @property
    def must_act(self) -> bool:
        return self.seat in self.decision_seats

    @property
    def transfer(self) -> bool:
        return bool(self.rules.get("transfer"))

    @property
    def durac(self) -> bool:
        return self.rules.get("preset") == "durac1993"

    @property
    def active(self) -> tuple[int, ...]:
        """Seats still in the match (not out)."""
        return tuple(s for s in range(self.n) if not self.out[s])

    @property
    def holders(self) -> tuple[int, ...]:
        return tuple(s for s in range(self.n) if not self.out[s] and self.counts[s] > 0)

    def next_with_cards(self, seat: int) -> int | None:
        for step in range(1, self.n):
            other = (seat + step) % self.n
            if self.counts[other] and not self.out[other]:
                return other
        return None

    def beats(self, cover: Card, attack: Card) -> bool:
        return beats(cover, attack, self.trump)


# ---------------------------------------------------------------------- honesty


def is_honest(action: ActionJson, t: Table) -> bool:
    """Whether a legal action keeps to the card rules (cheating tables list cheats too)."""
    kind = action["type"]
    if kind == "challenge":
        return False
    if kind == "cover":
        index = action["attack"]
        if not 0 <= index < len(t.attacks) or t.covers[index] is not None:
            return False
        return t.beats(card(action["card"]), t.attacks[index])
    if kind == "throw_in":
        played = cards(action["cards"])
        ranks = t.table_ranks
        return all(c.rank in ranks for c in played) and len(played) <= t.allowance
    if kind == "transfer":
        played = cards(action["cards"])
        attack_ranks = sorted({c.rank for c in t.attacks})
        if sorted(c.rank for c in played) != attack_ranks:
            return False
        if any(c is not None for c in t.covers):
            return False
        target = t.next_with_cards(t.seat)
        if target is None:
            return False
        total = len(t.attacks) + len(played)
        return t.counts[target] >= total and total <= t.cap
    return True


def honest_actions(view: ViewJson, legal: list[ActionJson]) -> tuple[Table, list[ActionJson]]:
    t = Table.parse(view)
    return t, [a for a in legal if is_honest(a, t)]
