"""Playouts on engine positions, for tables the bit-mask model does not cover (three or more players
in play, Durac 1993 group plays). Slower than ``rollout`` but exact about every rule.

The playout player is simple and deterministic: lead the cheapest card, cover each attack with the
cheapest card that beats it when all can be beaten (else take), throw in cheap cards, and pass.
"""

from __future__ import annotations

from typing import Any

from app.engine import Action, Cover, Lead, Pass, Take, ThrowIn, apply, decision, legal_actions

SimState = Any


def result_for(state: SimState, me: int) -> float:
    outcome = state.outcome
    if outcome.draw:
        return 0.5
    return 0.0 if outcome.durak == me else 1.0


class EnginePlayout:
    def __init__(self, trump: str, low_rank: int) -> None:
        self.trump = trump
        self.low = low_rank

    def cost(self, rank: int, suit: str, stock: int) -> float:
        value = float(rank - self.low)
        if suit == self.trump:
            value += 12.0 + (6.0 if stock else 0.0)
        return value

    def choose(self, state: SimState, seat: int) -> Action:
        actions = legal_actions(state, seat)
        stock = len(state.stock)
        leads = [a for a in actions if isinstance(a, Lead) and len(a.cards) == 1]
        if leads:
            return min(leads, key=lambda a: self.cost(a.cards[0].rank, a.cards[0].suit, stock))
        covers = [a for a in actions if isinstance(a, Cover)]
        if seat == state.defender and any(isinstance(a, Take) for a in actions):
            uncovered = {i for i, (_, cover) in enumerate(state.table) if cover is None}
            coverable = {a.attack for a in covers}
            if covers and uncovered <= coverable:
                return min(covers, key=lambda a: self.cost(a.card.rank, a.card.suit, stock))
            return next(a for a in actions if isinstance(a, Take))
        throws = [a for a in actions if isinstance(a, ThrowIn) and len(a.cards) == 1]
        limit = 20.0 if not stock else 4.0
        cheap = [a for a in throws if self.cost(a.cards[0].rank, a.cards[0].suit, stock) <= limit]
        if cheap:
            return min(cheap, key=lambda a: self.cost(a.cards[0].rank, a.cards[0].suit, stock))
        for action in actions:
            if isinstance(action, Pass):
                return action
        playable = [a for a in actions if isinstance(a, Lead | ThrowIn | Cover | Take | Pass)]
        return playable[0] if playable else actions[0]

    def run(self, state: SimState, me: int, max_plies: int = 600) -> tuple[float, int]:
        """Play to the end: (result for ``me``, plies played); a line that never ends is a draw."""
        for ply in range(max_plies):
            if state.outcome is not None:
                return result_for(state, me), ply
            seat = decision(state)["seats"][0]
            state, _ = apply(state, self.choose(state, seat))
        return (result_for(state, me) if state.outcome is not None else 0.5), max_plies
