"""Exact endgame search over the engine: two players hold cards, both hands known.

Alpha-beta over win (1) / draw (0.5) / loss (0) for ``me`` with a transposition table. At each node
the seat the game waits for moves (``decision``); throw-ins are considered when the attacker is
asked (once the defender has covered or taken), which loses nothing with open cards.
The search runs on positions this seat built from its own knowledge (see ``world``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.engine import Action, Cover, Lead, Pass, Take, ThrowIn, Transfer, apply, decision, legal_actions
from app.engine.cards import ALL_CARDS, Card

SimState = Any

WIN, DRAW, LOSS = 1.0, 0.5, 0.0
EXACT, LOWER, UPPER = 0, 1, 2
MAX_BOUTS = 40


class OutOfBudget(Exception):
    pass


def result_for(state: SimState, me: int) -> float:
    outcome = state.outcome
    if outcome.draw:
        return DRAW
    return LOSS if outcome.durak == me else WIN


BITS: dict[Card, int] = {c: 1 << i for i, c in enumerate(ALL_CARDS)}


class Solver:
    """One search: ``best(state)`` gives the value and the best action for ``me``."""

    def __init__(
        self,
        me: int,
        node_limit: int,
        order_key: Callable[[SimState, Action], float] | None = None,
        deadline: Callable[[], bool] | None = None,
    ) -> None:
        self.me = me
        self.node_limit = node_limit
        self.nodes = 0
        self.table: dict[tuple[Any, ...], tuple[float, int, Action | None]] = {}
        self.order_key = order_key
        self.path: set[tuple[Any, ...]] = set()
        self.deadline = deadline

    def key(self, state: SimState) -> tuple[Any, ...]:
        bits = BITS
        masks = tuple(sum(bits[c] for c in hand) for hand in state.hands)
        return (
            masks,
            state.table,
            state.attacker,
            state.defender,
            state.phase,
            state.taking,
            state.passed,
            state.bout_limit,
            state.defended_once,
            state.emptied,
            len(state.stock),
        )

    def moves(self, state: SimState, seat: int) -> list[Action]:
        playable = (Lead, ThrowIn, Cover, Transfer, Take, Pass)
        actions: list[Action] = [a for a in legal_actions(state, seat) if isinstance(a, playable)]
        trump = state.trump

        def default(action: Action) -> float:
            if isinstance(action, Take):
                return 50.0
            if isinstance(action, Pass):
                return 40.0
            if isinstance(action, Cover):
                c = action.card
            elif isinstance(action, Lead | ThrowIn | Transfer):
                c = action.cards[0]
                if isinstance(action, Transfer):
                    return -1.0
            else:
                return 60.0
            return c.rank + (20 if c.suit == trump else 0) - (len(getattr(action, "cards", ())) - 1) * 3

        actions.sort(key=(lambda a: self.order_key(state, a)) if self.order_key else default)  # type: ignore[misc]
        return actions

    def value(self, state: SimState, alpha: float = LOSS, beta: float = WIN) -> float:
        if state.outcome is not None:
            return result_for(state, self.me)
        return self._search(state, alpha, beta)[0]

    def best(self, state: SimState) -> tuple[float, Action | None]:
        value, action = self._search(state, LOSS, WIN)
        return value, action

    def _search(self, state: SimState, alpha: float, beta: float) -> tuple[float, Action | None]:
        if state.outcome is not None:
            return result_for(state, self.me), None
        self.nodes += 1
        if self.nodes > self.node_limit or (self.nodes & 63 == 0 and self.deadline and self.deadline()):
            raise OutOfBudget
        key = self.key(state)
        if state.phase == "lead":
            if key in self.path or len(self.path) >= MAX_BOUTS:
                return DRAW, None  # transfers and takes can go round in circles: call it a draw
            self.path.add(key)
            try:
                return self._node(state, key, alpha, beta)
            finally:
                self.path.discard(key)
        return self._node(state, key, alpha, beta)

    def _node(self, state: SimState, key: tuple[Any, ...], alpha: float, beta: float) -> tuple[float, Action | None]:
        entry = self.table.get(key)
        hint: Action | None = None
        if entry is not None:
            value, flag, hint = entry
            if flag == EXACT:
                return value, hint
            if flag == LOWER and value >= beta:
                return value, hint
            if flag == UPPER and value <= alpha:
                return value, hint
        seat = decision(state)["seats"][0]
        maximize = seat == self.me
        actions = self.moves(state, seat)
        if hint is not None and hint in actions:
            actions.remove(hint)
            actions.insert(0, hint)
        a0, b0 = alpha, beta
        best_action: Action | None = None
        if maximize:
            best = -1.0
            for action in actions:
                child, _ = apply(state, action)
                value, _ = self._search(child, alpha, beta)
                if value > best:
                    best, best_action = value, action
                    alpha = max(alpha, value)
                    if alpha >= beta:
                        break
        else:
            best = 2.0
            for action in actions:
                child, _ = apply(state, action)
                value, _ = self._search(child, alpha, beta)
                if value < best:
                    best, best_action = value, action
                    beta = min(beta, value)
                    if alpha >= beta:
                        break
        if best <= a0:
            flag = UPPER
        elif best >= b0:
            flag = LOWER
        else:
            flag = EXACT
        self.table[key] = (best, flag, best_action)
        return best, best_action
