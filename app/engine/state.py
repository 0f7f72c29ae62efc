"""The match state: a value that ``apply`` never mutates (it returns a new one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NotRequired, TypedDict

from app.engine.actions import Action, ForfeitReason
from app.engine.cards import Card
from app.engine.rules import Rules

Hand = tuple[Card, ...]
Pair = tuple[Card, Card | None]  # (attack, cover or None)

Phase = Literal["lead", "bout", "challenge", "over"]
LEAD: Literal["lead"] = "lead"  # waiting for the main attacker to open a bout
BOUT: Literal["bout"] = "bout"  # cards are on the table
# cheating tables: the bout is played out, its moves may still be challenged
CHALLENGE: Literal["challenge"] = "challenge"
OVER: Literal["over"] = "over"
PHASES: tuple[Phase, ...] = (LEAD, BOUT, CHALLENGE, OVER)


# The rules a cheat can break (§9), named in a challenge's ruling: a cover that does not beat its
# attack, a throw-in of a rank not on the table, an attack over the bout's limit, a transfer with a
# card of another rank, a transfer the next player cannot hold.
CHEAT_RULES = ("does_not_beat", "rank_not_on_table", "attack_limit", "transfer_rank", "transfer_limit")


@dataclass(frozen=True, slots=True)
class Move:
    """One card move of the current bout, kept until the bout ends so that it can be challenged."""

    seat: int
    action: Action
    cheat: str | None  # why the move broke the rules, or None for an honest move
    rule: str | None = None  # which rule it broke (one of CHEAT_RULES), or None for an honest move


OutcomeReason = ForfeitReason | Literal["challenge"]  # why a match ended early (a lost challenge: §9)


class OutcomeJson(TypedDict):
    draw: bool
    durak: int | None
    order: list[int]
    places: list[list[int]]
    forfeit: NotRequired[int | None]
    reason: NotRequired[OutcomeReason | None]
    detail: NotRequired[str]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a match ended. ``places`` groups seats by place (ties share one), the durak last."""

    draw: bool
    durak: int | None
    order: tuple[int, ...]  # seats in the order they went out
    places: tuple[tuple[int, ...], ...]
    forfeit: int | None = None
    reason: OutcomeReason | None = None  # None: played out
    detail: str = ""

    def to_json(self) -> OutcomeJson:
        return {
            "draw": self.draw,
            "durak": self.durak,
            "order": list(self.order),
            "places": [list(group) for group in self.places],
            "forfeit": self.forfeit,
            "reason": self.reason,
            "detail": self.detail,
        }

    @classmethod
    def from_json(cls, data: OutcomeJson) -> Outcome:
        return cls(
            draw=bool(data["draw"]),
            durak=data["durak"],
            order=tuple(data["order"]),
            places=tuple(tuple(group) for group in data["places"]),
            forfeit=data.get("forfeit"),
            reason=data.get("reason"),
            detail=data.get("detail", ""),
        )

    def place_of(self, seat: int) -> int:
        """1-based place of ``seat`` (tied seats share the better place)."""
        place = 1
        for group in self.places:
            if seat in group:
                return place
            place += len(group)
        raise KeyError(seat)


@dataclass(slots=True)
class State:
    """Everything about a match. Treat as immutable: ``apply`` copies before it changes anything.

    Seats are numbered clockwise; a seat's left neighbour is ``seat + 1`` (play passes left).
    ``stock[0]`` is the next card drawn; the turned trump is ``stock[-1]`` (``stock[0]`` under
    Durac 1993) while it is still in the stock.
    """

    rules: Rules
    seed: int
    dealer: int
    hands: tuple[Hand, ...]
    stock: tuple[Card, ...]
    trump_card: Card
    discard: tuple[Card, ...] = ()
    table: tuple[Pair, ...] = ()
    attacker: int = 0
    defender: int = 1
    bout_limit: int = 6
    defended_once: bool = False
    phase: Phase = LEAD
    taking: bool = False
    thrown_in: bool = False  # a throw-in happened in this bout (Durac: no transfer after it)
    passed: frozenset[int] = frozenset()
    moves: tuple[Move, ...] = ()
    emptied: tuple[int, ...] = ()  # seats whose last card hit the table in this bout, in order
    out: tuple[int, ...] = ()  # finishing order so far
    exchange_open: bool = False  # Durac 1993: the lowest trump may still be swapped
    outcome: Outcome | None = None
    ply: int = 0

    @property
    def trump(self) -> str:
        return self.trump_card.suit

    @property
    def n(self) -> int:
        return len(self.hands)

    def copy(self) -> State:
        # Field by field, spelled out: this runs once per applied action and a loop over the
        # field names with getattr/setattr was the engine's single most expensive line.
        # tests/engine/test_state.py checks that every field is copied.
        new: State = _new_state(State)
        new.rules = self.rules
        new.seed = self.seed
        new.dealer = self.dealer
        new.hands = self.hands
        new.stock = self.stock
        new.trump_card = self.trump_card
        new.discard = self.discard
        new.table = self.table
        new.attacker = self.attacker
        new.defender = self.defender
        new.bout_limit = self.bout_limit
        new.defended_once = self.defended_once
        new.phase = self.phase
        new.taking = self.taking
        new.thrown_in = self.thrown_in
        new.passed = self.passed
        new.moves = self.moves
        new.emptied = self.emptied
        new.out = self.out
        new.exchange_open = self.exchange_open
        new.outcome = self.outcome
        new.ply = self.ply
        return new


_new_state = object.__new__
