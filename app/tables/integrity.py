"""What the integrity rules (docs/integrity.md) need from a finished match's action log: how many
bouts it lasted, whether it ended by a timer or disconnect forfeit of a seat that had acted, and, for
the soft-play signal, every legal throw-in a seat passed up, per defender."""

from __future__ import annotations

from collections.abc import Sequence

from app.engine import (
    ActionJson,
    Card,
    ForfeitReason,
    OutcomeJson,
    Rules,
    RulesJson,
    action_from_json,
    apply,
    legal_actions,
    new_match,
)
from app.engine.fairness import FairnessRecord
from app.engine.state import BOUT
from app.tables.hooks import AbortedOutcome

TIMED_OUT: tuple[ForfeitReason, ...] = ("timeout", "disconnected")  # a forfeit by the clock


def bouts_of(actions: Sequence[ActionJson]) -> int:
    """Bouts opened: every bout starts with a lead."""
    return sum(1 for action in actions if action["type"] == "lead")


def forfeit_after_acting(actions: Sequence[ActionJson], outcome: OutcomeJson | AbortedOutcome) -> bool:
    """The match ended by a timer or disconnect forfeit of a seat that had made a move before."""
    seat = outcome.get("forfeit")
    if seat is None or outcome.get("reason") not in TIMED_OUT:
        return False
    return any(action["seat"] == seat and action["type"] != "forfeit" for action in actions)


def throw_in_chances(
    rules_json: RulesJson,
    seed: int | str,
    dealer: int,
    actions: Sequence[ActionJson],
    order: Sequence[Card] | None = None,
) -> dict[tuple[int, int], tuple[int, int]]:
    """(seat, defender's seat) -> (chances, passes): each time a seat that could legally throw in
    decided (threw in or passed), and how often it passed. Cheating tables are left out (any card
    may be thrown there)."""
    rules = Rules.from_json(rules_json)
    if rules.cheating:
        return {}
    state = new_match(rules, int(seed), dealer, order)
    counts: dict[tuple[int, int], list[int]] = {}
    for data in actions:
        action = action_from_json(data)
        deciding = action.kind in ("throw_in", "pass") and state.phase == BOUT and action.seat != state.defender
        # a throw-in is a chance taken; a pass is a chance passed up only when a card could be thrown in
        if deciding and (
            action.kind == "throw_in" or any(o.kind == "throw_in" for o in legal_actions(state, action.seat))
        ):
            tally = counts.setdefault((action.seat, state.defender), [0, 0])
            tally[0] += 1
            tally[1] += action.kind == "pass"
        state, _ = apply(state, action)
    return {key: (chances, passes) for key, (chances, passes) in counts.items()}


def dealt_deck(fairness: FairnessRecord | None) -> list[Card] | None:
    """The dealt deck of a provably fair match (docs/fairness.md), to replay it; None before those."""
    deck = fairness["deck"] if fairness else None
    return [Card.parse(text) for text in deck] if deck else None
