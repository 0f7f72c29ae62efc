"""Who sits where in the current bout: left neighbours, the throw-in circle, the allowance."""

from __future__ import annotations

from app.engine.state import State


def in_match(state: State, seat: int) -> bool:
    return seat not in state.out


def next_with_cards(state: State, seat: int) -> int | None:
    """The first seat to the left of ``seat`` (not ``seat`` itself) that holds cards."""
    n = state.n
    for step in range(1, n):
        other = (seat + step) % n
        if state.hands[other] and other not in state.out:
            return other
    return None


def neighbours(state: State, defender: int) -> tuple[int, ...]:
    """The players directly right and left of the defender among those still in the match."""
    n = state.n
    right = left = None
    for step in range(1, n):
        seat = (defender - step) % n
        if seat not in state.out:
            right = seat
            break
    for step in range(1, n):
        seat = (defender + step) % n
        if seat not in state.out:
            left = seat
            break
    found = tuple(s for s in (right, left) if s is not None)
    return tuple(dict.fromkeys(found))


def throwers(state: State) -> tuple[int, ...]:
    """Seats that may add cards to this bout: the circle around the defender, holding cards."""
    defender = state.defender
    if state.rules.circle == "neighbours":
        circle = neighbours(state, defender)
    else:
        circle = tuple(s for s in range(state.n) if s != defender and s not in state.out)
    return tuple(s for s in circle if state.hands[s])


def cap(state: State) -> int:
    """At most 5 attacks until the first successful defence at a Durak Peak table, then 6."""
    return 6 if state.defended_once else state.rules.first_bout_cap


def allowance(state: State) -> int:
    """How many more attacking cards may still be added to this bout (§4.4), never below 0."""
    return max(0, min(cap(state), state.bout_limit) - len(state.table))


def all_covered(state: State) -> bool:
    return all(cover is not None for _, cover in state.table)


def pending(state: State) -> tuple[int, ...]:
    """Attackers the bout is waiting for (to throw in or pass) once nothing is left to cover."""
    if allowance(state) == 0:
        return ()
    return tuple(s for s in throwers(state) if s not in state.passed)


def table_ranks(state: State) -> set[int]:
    ranks = set()
    for attack, cover in state.table:
        ranks.add(attack.rank)
        if cover is not None:
            ranks.add(cover.rank)
    return ranks


def refill_order(state: State) -> tuple[int, ...]:
    """Main attacker first, then clockwise from the defender's left, the defender last (§6)."""
    n = state.n
    order = [state.attacker]
    for step in range(1, n):
        seat = (state.defender + step) % n
        if seat not in (state.attacker, state.defender):
            order.append(seat)
    order.append(state.defender)
    return tuple(s for s in order if s not in state.out)
