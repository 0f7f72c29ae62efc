"""Hard: remembers every card, infers hands, searches the endgame.

* Memory: the discard pile, the cards each opponent picked up (``bout_end`` "taken"), the turned
  trump, soft hints from takes (see ``memory``). Unseen cards are in opponents' unknown slots or the
  stock.
* While the stock is large it plays the value model of ``normal`` with its knowledge: the mean of
  the unseen cards prices refills, and throw-ins prefer cards the defender is known or likely to be
  unable to beat.
* Once the stock is empty and one opponent is left, every unseen card is in his hand: an exact
  alpha-beta search over the engine (a position built from its own knowledge) plays the endgame,
  keeping its transposition table from one decision to the next. With more opponents, or a few
  cards left in the stock, it samples deals consistent with what it knows and searches each.
* Every decision respects the time budget: search is bounded by a node count derived from the
  budget (deterministic), with a wall-clock guard as a safety net.
"""

from __future__ import annotations

import time
from typing import Any

from app.bots.judge import Judge, Weights
from app.bots.normal import NormalBot
from app.bots.solver import OutOfBudget, Solver
from app.bots.table import Json, Table
from app.bots.world import exact_position
from app.engine import action_to_json
from app.engine.cards import Card

NODES_PER_MS = 25  # engine search speed on a slow core, with margin
HARD = Weights()


class HardBot(NormalBot):
    level = "hard"
    weights = HARD

    def __init__(self, seat: int, seed: int, time_budget_ms: int = 200) -> None:
        super().__init__(seat, seed, time_budget_ms)
        self.solver: Solver | None = None
        self.solver_key: tuple[Any, ...] | None = None
        self._view: Json = {}
        self._started = 0.0

    def judge(self, t: Table) -> Judge:
        unseen = self.memory.unseen(t)
        j = Judge(t, self.weights)
        if unseen:
            j.mean_unseen = j.mean(unseen)
        return j

    def choose(self, view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        self._view = view
        self._started = time.perf_counter()
        return super().choose(view, legal)

    def deadline(self) -> bool:
        return (time.perf_counter() - self._started) * 1000.0 > self.time_budget_ms * 0.9

    def unbeatable_bonus(self, t: Table, j: Judge, defender: int, c: Card) -> float:
        if defender < 0:
            return 0.0
        known = self.memory.known_cards(defender, t)
        beaters = [k for k in known if j.beats(k, c)]
        if self.memory.unknown_slots(defender, t) == 0 and not beaters:
            return 1.0
        return 0.3 if self.memory.lacks(defender, c) and not beaters else 0.0

    def decide(self, t: Table, honest: list[Json]) -> Json | None:
        ranked = self.ranked(t, honest)
        if len(honest) > 1:
            found = self.endgame(t, honest, ranked)
            if found is not None:
                return found
        return ranked[0] if ranked else None

    # ------------------------------------------------------------------ exact endgame

    def endgame(self, t: Table, honest: list[Json], ranked: list[Json]) -> Json | None:
        state = exact_position(self._view, t, self.memory)
        if state is None:
            return None
        preference = {self._action_key(a): i for i, a in enumerate(ranked)}

        def order(sim: Any, action: Any) -> float:
            return float(preference.get(self._action_key(action_to_json(action)), len(preference)))

        key = (t.deck, t.trump_card, tuple(sorted(map(str, self.memory.discard))))
        if self.solver is None or self.solver_key is None or self.solver_key[:2] != key[:2]:
            self.solver = None
        budget = max(1000, self.time_budget_ms * NODES_PER_MS)
        if self.solver is None:
            self.solver = Solver(self.seat, budget, deadline=self.deadline)
            self.solver_key = key
        solver = self.solver
        solver.nodes = 0
        solver.node_limit = budget
        solver.deadline = self.deadline
        root_order = solver.order_key
        solver.order_key = None
        try:
            legal_root = solver.moves(state, self.seat)
            legal_root.sort(key=lambda a: order(state, a))
            value, action = self._root(solver, state, legal_root)
        except OutOfBudget:
            return None
        finally:
            solver.order_key = root_order
        if action is None:
            return None
        wanted = action_to_json(action)
        for candidate in honest:
            if self._action_key(candidate) == self._action_key(wanted):
                return candidate
        return None

    def _root(self, solver: Solver, state: Any, actions: list[Any]) -> tuple[float, Any]:
        from app.bots.solver import LOSS, WIN
        from app.engine import apply

        best, best_action = -1.0, None
        alpha = LOSS
        for action in actions:
            child, _ = apply(state, action)
            value, _ = solver._search(child, alpha, WIN)
            if value > best:
                best, best_action = value, action
                alpha = max(alpha, value)
                if value >= WIN:
                    break
        return best, best_action

    @staticmethod
    def _action_key(action: Json) -> tuple[Any, ...]:
        return (
            action.get("type"),
            tuple(action.get("cards") or ()),
            action.get("attack"),
            action.get("card"),
        )
