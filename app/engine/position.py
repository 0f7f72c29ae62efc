"""Build a state from explicit hands, stock and trump: exact positions for tests and tools."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.engine.cards import Card
from app.engine.rules import Rules
from app.engine.seating import next_with_cards
from app.engine.state import BOUT, LEAD, State

Cards = str | Iterable[str | Card]


def cards(spec: Cards) -> tuple[Card, ...]:
    """``"6h 7h 10s"`` or ``["6h", Card.parse("7h")]`` → a tuple of cards."""
    items = spec.split() if isinstance(spec, str) else spec
    return tuple(item if isinstance(item, Card) else Card.parse(item) for item in items)


def position(
    rules: Rules,
    hands: Sequence[Cards],
    trump_card: str | Card,
    *,
    stock: Cards = "",
    attacker: int = 0,
    defender: int | None = None,
    table: Sequence[tuple[str, str | None]] = (),
    discard: Cards = "",
    defended_once: bool = False,
    out: Sequence[int] = (),
    taking: bool = False,
    bout_limit: int | None = None,
    seed: int = 0,
    dealer: int = 0,
) -> State:
    """A state with exactly these cards. ``stock`` lists the next card drawn first; under the
    standard rules its last card should be the turned ``trump_card`` (if still in the stock).

    With ``table`` empty the state waits for ``attacker`` to lead; otherwise the bout is under way
    (and ``bout_limit`` defaults to the defender's hand plus the cards he has already covered).
    The card set is not checked against the deck, so positions may use any subset.
    """
    if len(hands) != rules.seats:
        raise ValueError(f"{rules.seats} seats need {rules.seats} hands, got {len(hands)}")
    state = State(
        rules=rules,
        seed=seed,
        dealer=dealer,
        hands=tuple(cards(hand) for hand in hands),
        stock=cards(stock),
        trump_card=trump_card if isinstance(trump_card, Card) else Card.parse(trump_card),
        discard=cards(discard),
        defended_once=defended_once,
        out=tuple(out),
    )
    found = next_with_cards(state, attacker) if defender is None else defender
    if found is None:
        raise ValueError("nobody to defend")
    state.attacker = attacker
    state.defender = found
    state.table = tuple((Card.parse(a), None if c is None else Card.parse(c)) for a, c in table)
    covered = sum(1 for _, c in state.table if c is not None)
    state.bout_limit = bout_limit if bout_limit is not None else len(state.hands[found]) + covered
    state.phase = BOUT if state.table else LEAD
    state.taking = taking
    state.exchange_open = rules.durac and not state.table and bool(state.stock)
    return state
