"""Provably fair deals at one table (docs/fairness.md): the secret server seed of the next match,
the commitment to it that everyone sees before any client seed is accepted, the players' client
seeds, and, from a match's start, its deal, kept secret until the match ends.

A plain value the table actor holds; the engine's ``fairness`` module does the cryptography.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from app.engine import Rules, State, fairness, new_match
from app.engine.cards import Card
from app.engine.fairness import FairnessRecord
from app.tables.commands import Refused
from app.tables.spec import Seat


class DealJson(TypedDict):
    """A match's deal as the table keeps it (secret until the match ends)."""

    number: int
    server_seed: str  # hex
    deck_size: int
    client_seeds: list[str]  # hex, one a seat
    deck: list[str]


class FairDealsJson(TypedDict):
    """``FairDeals.to_json()``, in the table record."""

    number: int
    server_seed: str  # hex
    client_seeds: dict[str, str]  # person key -> his seed (hex)
    deal: DealJson | None


class FairnessInfo(TypedDict):
    """``table.fairness``."""

    algorithm: str
    match_number: int
    commitment: str
    client_seeds: list[int]  # the seats that sent a client seed for the commitment


@dataclass
class FairDeals:
    table: str  # the table as the deal names it (``table_ref``): never the invite code
    number: int = 1  # the match the current seed and commitment are for
    server_seed: bytes = field(default_factory=fairness.new_server_seed)
    client_seeds: dict[str, bytes] = field(default_factory=dict)  # person key -> his seed for ``number``
    deal: DealJson | None = None  # the running (or last) match's deal; secret until it ends

    _committed: tuple[bytes, int, str] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def commitment(self) -> str:
        """The hash of the current seed (computed once per seed: every table fact carries it)."""
        committed = self._committed
        if committed is None or committed[0] is not self.server_seed or committed[1] != self.number:
            committed = (self.server_seed, self.number, fairness.commitment(self.server_seed, self.table, self.number))
            self._committed = committed
        return committed[2]

    def checked_client_seed(self, seed: Any, commitment: Any) -> bytes:
        """A client seed as bytes, if it answers the current commitment (else ``Refused``)."""
        if commitment != self.commitment:
            raise Refused(
                "stale_commitment",
                f"the client seed must answer the table's current commitment {self.commitment} "
                f"(match {self.number}); it was sent for {commitment!r}",
            )
        try:
            value = fairness.parse_client_seed(seed if isinstance(seed, str) else "")
        except fairness.FairnessError as exc:
            raise Refused("bad_message", str(exc)) from exc
        if not value:
            raise Refused("bad_message", "a client seed is 32 hex digits")
        return value

    def seeded(self, seats: Sequence[Seat]) -> bool:
        """Whether every seated player has sent a client seed for the current commitment."""
        humans = [s.principal.key for s in seats if s.kind == "human" and s.principal is not None]
        return all(key in self.client_seeds for key in humans)

    def forget(self, person: str) -> None:
        """A player left his seat: his seed does not count for the next deal."""
        self.client_seeds.pop(person, None)

    def start(self, rules: Rules, seats: Sequence[Seat]) -> fairness.FairDeal:
        """Deal the match from the committed seed and the seated players' client seeds (bots and
        players who sent none contribute an empty seed)."""
        seeds = [
            self.client_seeds.get(s.principal.key, b"") if s.kind == "human" and s.principal is not None else b""
            for s in seats
        ]
        deal = fairness.fair_deal(self.server_seed, self.table, self.number, rules.deck, seeds, len(seats))
        self.deal = {
            "number": self.number,
            "server_seed": self.server_seed.hex(),
            "deck_size": rules.deck,
            "client_seeds": [seed.hex() for seed in seeds],
            "deck": [str(card) for card in deal.deck],
        }
        return deal

    def new_match(self, rules: Rules, seats: Sequence[Seat], next_dealer: int | None) -> State:
        """The match dealt by :meth:`start`. Its dealer is ``next_dealer`` (the last match's durak)
        while that seat exists, else left to chance: drawn from the same committed stream."""
        deal = self.start(rules, seats)
        dealer = next_dealer if next_dealer is not None and next_dealer < len(seats) else deal.dealer_draw
        return new_match(rules, 0, dealer, deal.deck)

    def deck(self) -> list[Card] | None:
        """The running match's deck (a takeover replays the match from it)."""
        return [Card.parse(text) for text in self.deal["deck"]] if self.deal is not None else None

    def revealed(self) -> FairnessRecord | None:
        """The finished match's fairness record, server seed included (only once it is over)."""
        if self.deal is None:
            return None
        deal = self.deal
        return fairness.record(
            bytes.fromhex(deal["server_seed"]),
            self.table,
            deal["number"],
            deal["deck_size"],
            [bytes.fromhex(seed) for seed in deal["client_seeds"]],
            [Card.parse(text) for text in deal["deck"]],
        )

    def next_commitment(self) -> bool:
        """As a match ends: a fresh secret seed for the next one. False when it was drawn already (a
        finished match settled again after a takeover)."""
        if self.deal is None or self.deal["number"] != self.number:
            return False
        self.number += 1
        self.server_seed = fairness.new_server_seed()
        self.client_seeds = {}
        return True

    def info(self, seats: Sequence[Seat]) -> FairnessInfo:
        """``table.fairness``: the commitment and who has sent a client seed for it."""
        seeded = [s.seat for s in seats if s.principal is not None and s.principal.key in self.client_seeds]
        return {
            "algorithm": fairness.ALGORITHM,
            "match_number": self.number,
            "commitment": self.commitment,
            "client_seeds": seeded,
        }

    def to_json(self) -> FairDealsJson:
        """For the table record (the secret seed included: the store is the server's own)."""
        return {
            "number": self.number,
            "server_seed": self.server_seed.hex(),
            "client_seeds": {key: seed.hex() for key, seed in self.client_seeds.items()},
            "deal": self.deal,
        }

    @classmethod
    def from_json(cls, table: str, data: FairDealsJson) -> FairDeals:
        return cls(
            table,
            number=data["number"],
            server_seed=bytes.fromhex(data["server_seed"]),
            client_seeds={key: bytes.fromhex(seed) for key, seed in data["client_seeds"].items()},
            deal=data["deal"],
        )
