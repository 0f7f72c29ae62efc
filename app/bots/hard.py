"""Hard: remembers every card, infers what opponents hold, searches.

* Memory (``memory``): the discard pile, the cards each opponent picked up (``bout_end`` "taken"),
  the turned trump, the cards of a trump exchange, soft hints from takes. Unseen cards are in
  opponents' unknown slots or the stock.
* Its value model is normal's, with knowledge: the mean of the unseen cards prices refills, and
  throw-ins prefer cards the defender is known or likely to be unable to beat.
* Stock empty, one opponent left: every unseen card is in his hand, and an exact alpha-beta search
  (``fast`` for two players with single-card play, ``solver`` over the engine otherwise) plays the
  endgame, keeping its transposition table from one decision to the next.
* Stock phase, two players: Monte Carlo over deals consistent with what it knows (``world``), the
  value model's top candidates played out with a fast heuristic player (``rollout``).
* Three or more players in play, or Durac 1993, late in the match: the same with engine playouts
  (``enginemc``).
* Every decision keeps to the time budget: searches are sized by node and ply counts derived from
  it (reproducible), with a wall-clock guard as a safety net on a starved machine.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

from app.bots.enginemc import EnginePlayout
from app.bots.fast import (
    DRAW,
    LOSS,
    WIN,
    Game,
    OutOfBudget,
    Search,
    fast_move,
    from_state,
    to_action_json,
)
from app.bots.judge import Judge, Weights
from app.bots.normal import NormalBot
from app.bots.rollout import Playout
from app.bots.solver import OutOfBudget as EngineOutOfBudget
from app.bots.solver import Solver
from app.bots.table import Table
from app.bots.world import build, deal_hidden, determinize, exact_position
from app.engine import ActionJson, IllegalAction, ViewJson, action_from_json, action_to_json, apply
from app.engine.cards import Card

NODES_PER_MS = 25  # engine search speed on a slow core, with margin
PLIES_PER_MS = 45  # playout speed (plies of the fast model per millisecond), with margin
MC_CANDIDATES = 4
ENGINE_PLIES_PER_MS = 12  # engine playout speed, with margin
ENGINE_MC_STOCK = 2  # engine playouts once the stock holds at most this many cards per player
ENGINE_MC_MIN_WORLDS = 6
DEADLINE_SHARE = 0.8  # the wall-clock guard stops any search at this share of the budget
MC_MIN_WORLDS = 16
MC_MAX_WORLDS = 400
MC_MARGIN = 0.02  # another move must beat the preferred one by this much per deal
FAST_FACTOR = 3  # the bit-mask model searches about three times as many nodes in the same time
TABLE_LIMIT = 200_000  # transposition entries kept between decisions (memory bound)
HARD = Weights()


class HardBot(NormalBot):
    level = "hard"
    weights = HARD
    clock_guard = True

    def __init__(self, seat: int, seed: int, time_budget_ms: int = 200) -> None:
        super().__init__(seat, seed, time_budget_ms)
        self._search: Search | None = None
        self._search_key: tuple[Any, ...] | None = None
        self._solver: Solver | None = None
        self._solver_key: tuple[Any, ...] | None = None
        self._view: ViewJson | None = None  # the view of the decision being made (``choose``)
        self.stats: Counter[str] = Counter()  # how decisions were made (for tests and tuning)
        self._started = 0.0

    def judge(self, t: Table) -> Judge:
        unseen = self.memory.unseen(t)
        j = Judge(t, self.weights)
        if unseen:
            j.mean_unseen = j.mean(unseen)
        return j

    def choose(self, view: ViewJson, legal: list[ActionJson]) -> ActionJson | None:
        self._view = view
        self._started = time.perf_counter()
        return super().choose(view, legal)

    def deadline(self) -> bool:
        """The wall-clock guard: searches are sized by node counts (reproducible); this only stops
        them when the machine is so busy that the count would overrun the budget."""
        if not self.clock_guard:
            return False
        return (time.perf_counter() - self._started) * 1000.0 > self.time_budget_ms * DEADLINE_SHARE

    def unbeatable_bonus(self, t: Table, j: Judge, defender: int, c: Card) -> float:
        if defender < 0:
            return 0.0
        known = self.memory.known_cards(defender, t)
        beaters = [k for k in known if j.beats(k, c)]
        if self.memory.unknown_slots(defender, t) == 0 and not beaters:
            return 1.0
        return 0.3 if self.memory.lacks(defender, c) and not beaters else 0.0

    def decide(self, t: Table, honest: list[ActionJson]) -> ActionJson | None:
        ranked = self.ranked(t, honest)
        if len(honest) > 1:
            found = self.endgame(t, honest, ranked)
            how = "endgame"
            if found is None and t.stock > 0:
                found, how = self.monte_carlo(t, ranked), "playouts"
            if found is None and (t.durac or len(t.active) > 2) and t.stock <= ENGINE_MC_STOCK * t.n:
                found, how = self.engine_monte_carlo(t, ranked), "engine playouts"
            if found is not None:
                self.stats[how] += 1
                return found
        self.stats["heuristic"] += 1
        return ranked[0] if ranked else None

    # ------------------------------------------------------------------ stock phase

    def monte_carlo(self, t: Table, ranked: list[ActionJson]) -> ActionJson | None:
        """Deal the unseen cards at random (consistent with what it knows) a number of times and
        play each top candidate out with the fast heuristic player; keep the best on average."""
        candidates = ranked[:MC_CANDIDATES]
        view = self._view
        if len(candidates) < 2 or t.durac or len(t.active) != 2 or view is None:
            return None
        moves = [fast_move(a) for a in candidates]
        results: list[list[float]] = [[] for _ in candidates]
        budget_plies = self.time_budget_ms * PLIES_PER_MS
        spent = 0
        game: Game | None = None
        playout: Playout | None = None
        while spent < budget_plies and len(results[0]) < MC_MAX_WORLDS:
            worlds = len(results[0])
            if worlds and self.deadline():
                break
            if worlds >= MC_MIN_WORLDS and worlds % 8 == 0 and settled(results):
                break
            dealt = deal_hidden(t, self.memory, self.rng)
            if dealt is None:
                return None
            state = build(view, t, self.memory, *dealt)
            fast = from_state(state, self.seat)
            if fast is None:
                return None
            world, pos, _ = fast
            if game is None or playout is None:
                game = world
                playout = Playout(game, self.weights, t.ranks, max(1, t.deck - 6 * t.n))
            game.stock = world.stock
            for k, move in enumerate(moves):
                child = game.play(pos, move)
                value, plies = playout.run_counted(child)
                results[k].append(value)
                spent += plies + 1
        if len(results[0]) < MC_MIN_WORLDS:
            return None
        return candidates[leader(results)]

    def engine_monte_carlo(self, t: Table, ranked: list[ActionJson]) -> ActionJson | None:
        """The same over engine positions (three or more players in play, Durac 1993), late in the
        match where playouts are short."""
        candidates = ranked[:MC_CANDIDATES]
        view = self._view
        if len(candidates) < 2 or view is None:
            return None
        actions = [action_from_json(a) for a in candidates]
        results: list[list[float]] = [[] for _ in candidates]
        budget_plies = self.time_budget_ms * ENGINE_PLIES_PER_MS
        spent = 0
        playout = EnginePlayout(t.trump, t.ranks[0])
        while spent < budget_plies and len(results[0]) < MC_MAX_WORLDS:
            worlds = len(results[0])
            if worlds and self.deadline():
                break
            if worlds >= MC_MIN_WORLDS and worlds % 8 == 0 and settled(results):
                break
            state = determinize(view, t, self.memory, self.rng)
            if state is None:
                return None
            values: list[float] = []
            for action in actions:
                try:
                    child, _ = apply(state, action)
                except IllegalAction:
                    return None
                value, plies = playout.run(child, self.seat)
                values.append(value)
                spent += plies + 1
                if worlds and self.deadline():
                    break  # engine playouts are long: do not finish a deal past the deadline
            if len(values) < len(actions):
                break
            for k, value in enumerate(values):
                results[k].append(value)
        if len(results[0]) < ENGINE_MC_MIN_WORLDS:
            return None
        return candidates[leader(results)]

    # ------------------------------------------------------------------ exact endgame

    def node_budget(self) -> int:
        return max(100, self.time_budget_ms * NODES_PER_MS)

    def endgame(self, t: Table, honest: list[ActionJson], ranked: list[ActionJson]) -> ActionJson | None:
        """With the stock empty and one opponent left: alpha-beta to the end of the match."""
        state = exact_position(self._view, t, self.memory) if self._view is not None else None
        if state is None:
            return None
        preference = {action_key(a): i for i, a in enumerate(ranked)}
        by_key = {action_key(a): a for a in honest}
        fast = from_state(state, self.seat)
        children: list[tuple[ActionJson, Callable[[float], float]]] = []
        if fast is not None:
            game, pos, _ = fast
            search = self._fast_search(game)
            for move in game.moves(pos):
                after = game.play(pos, move)
                children.append((to_action_json(move, self.seat), partial(search.value, after, beta=WIN)))
        else:
            solver = self._engine_solver()
            for engine_action in solver.moves(state, self.seat):
                sim, _ = apply(state, engine_action)
                children.append((action_to_json(engine_action), partial(solver.value, sim, beta=WIN)))
        children.sort(key=lambda item: preference.get(action_key(item[0]), len(preference)))
        best_value, best = -1.0, None
        for action, evaluate in children:
            try:
                value = evaluate(max(LOSS, best_value))  # alpha
            except (OutOfBudget, EngineOutOfBudget):
                if best is None or best_value < DRAW:
                    best = action  # all searched so far lose: the next preferred, unproven
                break
            if value > best_value:
                best_value, best = value, action
                if value >= WIN:
                    break
        if best is None:
            return None
        return by_key.get(action_key(best))

    def _fast_search(self, game: Game) -> Search:
        key = ("fast", game.trump, game.transfer, game.draws, game.first_cap)
        if self._search is None or self._search_key != key:
            self._search = Search(game, self.node_budget())
            self._search_key = key
        search = self._search
        assert isinstance(search, Search)
        if len(search.tt) > TABLE_LIMIT:
            search.tt.clear()
        search.game = game
        search.nodes = 0
        search.node_limit = self.node_budget() * FAST_FACTOR
        search.deadline = self.deadline
        return search

    def _engine_solver(self) -> Solver:
        key = ("engine",)
        if self._solver is None or self._solver_key != key:
            self._solver = Solver(self.seat, self.node_budget())
            self._solver_key = key
        solver = self._solver
        if len(solver.table) > TABLE_LIMIT:
            solver.table.clear()
        solver.nodes = 0
        solver.node_limit = self.node_budget()
        solver.deadline = self.deadline
        return solver


def leader(results: list[list[float]]) -> int:
    """The candidate with the best mean; the preferred one (index 0) keeps its place unless beaten
    by more than the margin."""
    worlds = len(results[0])
    totals = [sum(r) for r in results]
    return max(range(len(results)), key=lambda k: (totals[k] - (MC_MARGIN * worlds if k else 0.0), -k))


def settled(results: list[list[float]]) -> bool:
    """Whether more deals would hardly change the choice: the leader beats every other candidate
    clearly (paired by deal), or no deal told any two candidates apart."""
    best = leader(results)
    worlds = len(results[0])
    if all(r == results[0] for r in results):
        return True
    for k, other in enumerate(results):
        if k == best:
            continue
        diffs = [a - b for a, b in zip(results[best], other, strict=True)]
        mean = sum(diffs) / worlds
        var = sum((d - mean) ** 2 for d in diffs) / max(1, worlds - 1)
        if mean - 2.0 * (var / worlds) ** 0.5 <= 0.0:
            return False
    return True


def action_key(action: ActionJson) -> tuple[Any, ...]:
    return (action.get("type"), tuple(action.get("cards") or ()), action.get("attack"), action.get("card"))
