"""The arena tournaments' rules as pure functions (docs/tournaments.md): the points a place is worth, the
standings and their tie-breaks, the prize split, and the pairing of waiting players.

Nothing here reads a clock, a database or the network: the runner (``app.tournaments.runner``)
passes everything in, and the property tests (tests/tournaments) call these directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

# ---------------------------------------------------------------------- points by place (RULES §10)


def place_points(outcome: Mapping[str, Any], seats: int) -> dict[int, int]:
    """Points per seat for one match at a table of ``seats`` seats, as §10 weighs places: place k
    (1 = first out) is worth ``seats - k``; seats that share a place take the better place's points;
    the durak gets 0. A draw gives every seat ``(seats - 1) // 2`` (the places' average, rounded
    down). An aborted match gives nothing (an empty dict)."""
    if outcome.get("aborted"):
        return {}
    if outcome.get("draw"):
        return dict.fromkeys(range(seats), (seats - 1) // 2)
    durak = outcome.get("durak")
    points: dict[int, int] = {}
    place = 1
    for group in outcome.get("places") or []:
        for seat in group:
            points[int(seat)] = 0 if seat == durak else seats - place
        place += len(group)
    for seat in range(seats):
        points.setdefault(seat, 0)
    return points


def first_places(outcome: Mapping[str, Any]) -> set[int]:
    """Seats that went out first (the first place group) in a match that was not a draw."""
    if outcome.get("draw") or outcome.get("aborted"):
        return set()
    places = outcome.get("places") or []
    if not places:
        return set()
    return {int(seat) for seat in places[0] if seat != outcome.get("durak")}


# ---------------------------------------------------------------------- standings and tie-breaks


@dataclass(frozen=True, slots=True)
class Result:
    """One entrant's result in one finished tournament match."""

    entrant: int  # account id
    points: int
    first: bool  # went out first
    finished_at: float  # when the match ended (epoch seconds)


@dataclass(slots=True)
class Standing:
    entrant: int
    points: int = 0
    matches: int = 0
    firsts: int = 0
    last_points_at: float = 0.0  # when he reached his present score (0: never scored)
    rank: int = 0


def standings(entrants: Iterable[tuple[int, float]], results: Iterable[Result]) -> list[Standing]:
    """Rank the entrants (``(account id, entered at)``) by their results. Order: more points; then
    more first places; then fewer matches (the same points in fewer matches); then who reached his
    score earlier; then who entered earlier; then the lower account id. Every rank is distinct."""
    entered: dict[int, float] = {}
    table: dict[int, Standing] = {}
    for account, at in entrants:
        entered[account] = at
        table[account] = Standing(account)
    for result in sorted(results, key=lambda r: r.finished_at):
        row = table.get(result.entrant)
        if row is None:
            continue
        row.matches += 1
        row.firsts += int(result.first)
        if result.points:
            row.points += result.points
            row.last_points_at = result.finished_at
    ranked = sorted(
        table.values(),
        key=lambda s: (-s.points, -s.firsts, s.matches, s.last_points_at, entered[s.entrant], s.entrant),
    )
    for i, row in enumerate(ranked, 1):
        row.rank = i
    return ranked


# ---------------------------------------------------------------------- the prize split

PRIZE_WEIGHTS = (50, 30, 20)  # per cent of the pool for the first, second and third place


def prize_split(pool: int, ranked: Sequence[int], weights: Sequence[int] = PRIZE_WEIGHTS) -> dict[int, int]:
    """The pool (whole coins) paid by final standing: place i of the first ``min(len(weights),
    len(ranked))`` places gets ``pool * w_i // W`` where W is the sum of the weights of the places
    paid (so two players split 50:30 as 5/8 and 3/8); what rounding down leaves (fewer than the places
    paid) goes to the first place. Exactly ``pool`` is paid; nobody ranked: nothing."""
    if pool < 0:
        raise ValueError("the pool cannot be negative")
    paid = list(weights[: len(ranked)])
    if not paid or pool == 0:
        return {}
    total = sum(paid)
    shares = {ranked[i]: pool * w // total for i, w in enumerate(paid)}
    shares[ranked[0]] += pool - sum(shares.values())
    return {account: coins for account, coins in shares.items() if coins}


# ---------------------------------------------------------------------- pairing


@dataclass(frozen=True, slots=True)
class Waiting:
    """An entrant waiting for a table: his score, since when he waits, and the human opponents of
    his last matches in this tournament, latest last."""

    entrant: int
    points: int
    since: float
    recent: tuple[frozenset[int], ...] = ()


@dataclass(frozen=True, slots=True)
class Table:
    players: tuple[int, ...]
    bots: int = 0


@dataclass(frozen=True, slots=True)
class PairingRules:
    seats: int  # the table size, 2-6
    bot_after_s: float  # a table that would wait longer is filled with bots
    forbidden: frozenset[frozenset[int]] = field(default_factory=frozenset)  # pairs never seated together


def repeats_too_often(entrant: Waiting, opponents: frozenset[int]) -> bool:
    """Whether meeting exactly ``opponents`` (people; bots do not count) would be the third time in
    a row for ``entrant``."""
    if not opponents or len(entrant.recent) < 2:
        return False
    return entrant.recent[-1] == opponents and entrant.recent[-2] == opponents


def _fits(group: Sequence[Waiting], candidate: Waiting, forbidden: frozenset[frozenset[int]]) -> bool:
    return all(frozenset((candidate.entrant, other.entrant)) not in forbidden for other in group)


def _no_repeats(group: Sequence[Waiting]) -> bool:
    everyone = frozenset(w.entrant for w in group)
    return not any(repeats_too_often(w, everyone - {w.entrant}) for w in group)


def _complete(
    start: Waiting,
    pool: Sequence[Waiting],
    size: int,
    forbidden: frozenset[frozenset[int]],
    budget: list[int],
) -> list[Waiting] | None:
    """``start`` and ``size - 1`` of ``pool`` (sorted by closeness to his score) that may sit
    together: the closest choice first, then the next (a bounded search: ``budget`` steps)."""
    chosen = [start]

    def extend(index: int) -> bool:
        if len(chosen) == size:
            return _no_repeats(chosen)
        for i in range(index, len(pool)):
            if budget[0] <= 0:
                return False
            budget[0] -= 1
            candidate = pool[i]
            if _fits(chosen, candidate, forbidden):
                chosen.append(candidate)
                if extend(i + 1):
                    return True
                chosen.pop()
        return False

    return chosen if extend(0) else None


def pair(waiting: Sequence[Waiting], rules: PairingRules, now: float) -> list[Table]:
    """Tables for players waiting now. The best-placed waiting player first: he sits with the
    waiting players whose scores are closest to his (a tie: who waits longer), never with a pair in
    ``rules.forbidden`` and never with exactly the same opponents a third time in a row. A group that
    cannot fill a table waits, unless one of them has waited ``bot_after_s``: then bots take the empty
    seats (a player alone included). Every player is at one table at most."""
    size = rules.seats
    order = sorted(waiting, key=lambda w: (-w.points, w.since, w.entrant))
    taken: set[int] = set()
    tables: list[Table] = []
    for start in order:
        if start.entrant in taken:
            continue
        free = [w for w in order if w.entrant not in taken and w.entrant != start.entrant]
        others = sorted(free, key=lambda w: (abs(w.points - start.points), w.since, w.entrant))
        group = None
        if len(others) >= size - 1:
            group = _complete(start, others, size, rules.forbidden, [2000])
        if group is None and now - start.since >= rules.bot_after_s:
            group = _partial(start, others, size, rules.forbidden)
        if group is None:
            continue  # he waits (and may still be the one a later player sits with)
        taken.update(w.entrant for w in group)
        tables.append(Table(tuple(w.entrant for w in group), size - len(group)))
    return tables


def _partial(
    start: Waiting, others: Sequence[Waiting], size: int, forbidden: frozenset[frozenset[int]]
) -> list[Waiting]:
    """The table of someone who has waited long enough: as many of ``others`` as may join him
    (closest first, at most ``size - 1``, no repeats), the rest of the seats for bots."""
    group = [start]
    for candidate in others:
        if len(group) == size - 1:  # at least one bot: a full table of people was not to be had
            break
        if _fits(group, candidate, forbidden) and _no_repeats([*group, candidate]):
            group.append(candidate)
    return group


def table_opponents(players: Sequence[int]) -> Callable[[int], frozenset[int]]:
    """The people each player of a table meets there."""
    everyone = frozenset(players)
    return lambda entrant: everyone - {entrant}
