"""The coach: after a match, the hard bot's estimate for every decision of one seat.

    timeline = seat_timeline(rules, seed, dealer, actions, seat, order)   # app.engine.replay
    report = analyse(timeline, seat, worlds=DEFAULT_WORLDS)

(``app.coaching`` does both for a stored match, in a worker process.)

For each action the seat played, the coach stands where the seat stood: it knows only what the
seat knew then (its view, the public events redacted for it, remembered by the hard bot's
``Memory``), never the hidden cards of the finished match. For each honest legal action it
estimates the chance of *not* ending as the durak (a draw counts as not being the durak):

* stock empty, one opponent left (two players, single-card play): every unseen card is in his hand;
  an exact alpha-beta search (``fast``) gives each action's result, 1 or 0 (or a playout when the
  search runs out of nodes);
* otherwise Monte Carlo over ``worlds`` random deals of the unseen cards consistent with what the
  seat knew (``world``), each action played out to the end with the fast heuristic player
  (``rollout``); the same deals serve every action. Three or more players in play, or Durac 1993:
  the same with engine playouts (``enginemc``), on a quarter of the deals.

The best action is the hard bot's own preference (its value model's first choice) unless another
action's estimate beats it clearly (``choose_best``: by more than ``TIE`` and beyond the noise of
the deals tried); then the highest estimate among those that do. A played action whose estimate
is at least ``BLUNDER`` below the best one is a blunder. Decisions with one honest action are
"forced" (not estimated); cheats (at a cheating table), forfeits and actions the seat took while the
game waited for someone else (a throw-in while the defender covers) are reported, not estimated.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from app.bots.enginemc import EnginePlayout
from app.bots.fast import DRAW, OutOfBudget, Search, fast_move, from_state
from app.bots.hard import HardBot, action_key
from app.bots.rollout import Playout
from app.bots.table import Json, Table, honest_actions
from app.bots.world import build, deal_hidden, determinize, exact_position
from app.engine import ActionJson, EventJson, IllegalAction, ViewJson, action_from_json, apply

DEFAULT_WORLDS = 128  # deals per decision in the stock phase
ENDGAME_NODES = 60_000  # alpha-beta nodes per action in the exact endgame
MAX_CANDIDATES = 8  # the value model's top actions estimated (plus the one played)
TIE = 0.03  # estimates this close count as equal: the hard bot's preference decides
BLUNDER = 0.15  # a played action this far below the best is a blunder (15 points)
ALGORITHM = "coach/v1"

Progress = Callable[[int, int], None]
Samples = list[list[float]]


def not_durak(value: float) -> float:
    """A search or playout result for the seat (1 win, 0.5 draw, 0 loss) as "not the durak"."""
    return 1.0 if value >= DRAW else 0.0


class Coach:
    def __init__(self, seat: int, *, worlds: int = DEFAULT_WORLDS, seed: int = 0) -> None:
        self.seat = seat
        self.worlds = max(1, worlds)
        self.seed = seed
        self.rng = random.Random(0)  # reseeded per decision: each decision's deals depend on it alone
        self.bot = HardBot(seat, seed, time_budget_ms=1_000_000)
        self.bot.clock_guard = False  # the budget is the number of deals, not the clock

    def observe(self, events: list[EventJson]) -> None:
        for event in events:
            self.bot.observe(event)

    def skip(self, view: ViewJson) -> None:
        """A decision not analysed: what the seat learnt from its view, as if it had been."""
        self.bot.memory.sync(Table.parse(view))

    def decision(self, view: ViewJson, played: ActionJson, ply: int) -> Json:
        """The estimates for one decision of the seat (its view just before it played ``played``)."""
        legal = view.get("legal") or []
        t, honest = honest_actions(view, legal)
        self.bot.memory.sync(t)
        self.bot._view = view
        self.rng.seed(f"coach:{self.seat}:{self.seed}:{ply}")
        out: Json = {"ply": ply, "kind": t.decision_kind, "played": played, "stock": t.stock}
        played_key = action_key(played)
        keys = [action_key(a) for a in honest]
        if played.get("type") == "forfeit" or played_key not in keys:
            out["status"] = "forfeit" if played.get("type") == "forfeit" else "not honest"
            return out
        if len(honest) == 1:
            out["status"] = "forced"
            return out
        if not t.must_act:
            out["status"] = "optional"
            return out
        ranked = self.bot.ranked(t, honest)
        candidates = ranked[:MAX_CANDIDATES]
        if played_key not in {action_key(a) for a in candidates}:
            candidates.append(honest[keys.index(played_key)])
        samples, method = self.estimate(view, t, candidates)
        if samples is None:
            out["status"] = "not estimated"
            return out
        worlds = len(samples[0])
        values = [sum(results) / worlds for results in samples]
        best_index = choose_best(samples)
        played_index = [action_key(a) for a in candidates].index(played_key)
        loss = values[best_index] - values[played_index]
        out.update(
            status="estimated",
            method=method,
            worlds=worlds,
            estimates=[{"action": a, "value": round(v, 4)} for a, v in zip(candidates, values, strict=True)],
            best=candidates[best_index],
            value_best=round(values[best_index], 4),
            value_played=round(values[played_index], 4),
            loss=round(max(0.0, loss), 4),
            blunder=loss >= BLUNDER - 1e-9,
        )
        return out

    # ------------------------------------------------------------------ estimates

    def estimate(self, view: ViewJson, t: Table, candidates: list[ActionJson]) -> tuple[Samples | None, str]:
        """Per candidate, its results (1 not the durak, 0 the durak) on each deal tried."""
        if t.durac or len(t.active) > 2:
            return self.engine_playouts(view, t, candidates), "engine playouts"
        exact = self.endgame(view, t, candidates)
        if exact is not None:
            return exact, "endgame"
        return self.playouts(view, t, candidates), "playouts"

    def endgame(self, view: ViewJson, t: Table, candidates: list[ActionJson]) -> Samples | None:
        state = exact_position(view, t, self.bot.memory)
        if state is None:
            return None
        fast = from_state(state, self.seat)
        if fast is None:
            return None
        game, pos, _ = fast
        search = Search(game, ENDGAME_NODES * len(candidates))
        playout = Playout(game, self.bot.weights, t.ranks, 1)
        values: Samples = []
        for action in candidates:
            child = game.play(pos, fast_move(action))
            try:
                value = search.value(child, DRAW - 0.25, DRAW + 0.25)  # loss, or not
            except OutOfBudget:
                value = playout.run(child)
            values.append([not_durak(value)])
        return values

    def playouts(self, view: ViewJson, t: Table, candidates: list[ActionJson]) -> Samples | None:
        moves = [fast_move(a) for a in candidates]
        samples: Samples = [[] for _ in candidates]
        playout: Playout | None = None
        for _ in range(self.worlds):
            dealt = deal_hidden(t, self.bot.memory, self.rng)
            if dealt is None:
                return None
            fast = from_state(build(view, t, self.bot.memory, *dealt), self.seat)
            if fast is None:
                return None
            game, pos, _ = fast
            if playout is None:
                playout = Playout(game, self.bot.weights, t.ranks, max(1, t.deck - 6 * t.n))
            playout.game = game
            for k, move in enumerate(moves):
                samples[k].append(not_durak(playout.run(game.play(pos, move))))
        return samples

    def engine_playouts(self, view: ViewJson, t: Table, candidates: list[ActionJson]) -> Samples | None:
        actions = [action_from_json(a) for a in candidates]
        samples: Samples = [[] for _ in candidates]
        playout = EnginePlayout(t.trump, t.ranks[0])
        for _ in range(max(1, self.worlds // 4)):
            state = determinize(view, t, self.bot.memory, self.rng)
            if state is None:
                return None
            for k, action in enumerate(actions):
                try:
                    child, _ = apply(state, action)
                except IllegalAction:
                    return None
                samples[k].append(not_durak(playout.run(child, self.seat)[0]))
        return samples


def choose_best(samples: Samples) -> int:
    """The best candidate (candidates come in the hard bot's order of preference): the preferred
    one, unless another beats it clearly — by more than ``TIE`` and by two standard errors of the
    difference paired by deal; then the best of those that do."""
    worlds = len(samples[0])
    means = [sum(results) / worlds for results in samples]
    best = 0
    for k in range(1, len(samples)):
        diffs = [a - b for a, b in zip(samples[k], samples[0], strict=True)]
        mean = sum(diffs) / worlds
        spread = (sum((d - mean) ** 2 for d in diffs) / max(1, worlds - 1) / worlds) ** 0.5 if worlds > 1 else 0.0
        if mean > TIE and mean > 2.0 * spread and means[k] > means[best]:
            best = k
    return best


def analyse(
    timeline: list[Json],
    seat: int,
    *,
    worlds: int = DEFAULT_WORLDS,
    seed: int = 0,
    progress: Progress | None = None,
) -> Json:
    """The coach's report on ``seat`` over a timeline of ``app.engine.replay.seat_timeline``."""
    coach = Coach(seat, worlds=worlds, seed=seed)
    total = decision_count(timeline)
    decisions: list[Json] = []
    for entry in timeline:
        view = entry.get("view")
        if view is not None:
            decisions.append(coach.decision(view, entry["action"], int(entry["ply"])))
            if progress is not None:
                progress(len(decisions), total)
        coach.observe(entry.get("events") or [])
    return report(seat, worlds, decisions)


def decision_count(timeline: list[Json]) -> int:
    return sum(1 for entry in timeline if "view" in entry)


def analyse_decision(
    timeline: list[Json], seat: int, number: int, *, worlds: int = DEFAULT_WORLDS, seed: int = 0
) -> Json:
    """Decision ``number`` (0-based, among the seat's own) alone, exactly as ``analyse`` finds it:
    for spreading one match over worker processes."""
    coach = Coach(seat, worlds=worlds, seed=seed)
    seen = 0
    for entry in timeline:
        view = entry.get("view")
        if view is not None:
            if seen == number:
                return coach.decision(view, entry["action"], int(entry["ply"]))
            coach.skip(view)
            seen += 1
        coach.observe(entry.get("events") or [])
    raise IndexError(f"seat {seat} made {seen} decisions, there is no decision {number}")


def report(seat: int, worlds: int, decisions: list[Json]) -> Json:
    estimated = [d for d in decisions if d.get("status") == "estimated"]
    return {
        "algorithm": ALGORITHM,
        "seat": seat,
        "worlds": worlds,
        "blunder_threshold": BLUNDER,
        "decisions": decisions,
        "estimated": len(estimated),
        "blunders": sum(1 for d in estimated if d["blunder"]),
    }
