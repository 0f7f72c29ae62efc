"""Who sits where in the current bout: left neighbours, the throw-in circle, the allowance."""

from __future__ import annotations

from app.engine.state import State


def in_match(state: State, seat: int) -> bool:
    return seat not in state.out


def next_with_cards(state: State, seat: int) -> int | None:
    """The first seat to the left of ``seat`` (not ``seat`` itself) that holds cards."""
    hands = state.hands
    out = state.out
    n = len(hands)
    for step in range(1, n):
        other = (seat + step) % n
        if hands[other] and other not in out:
            return other
    return None


def neighbours(state: State, defender: int) -> tuple[int, ...]:
    """The players directly right and left of the defender among those who still take part: a
    player who is out, or whose hand ran out in this bout, is skipped (§4.3, rules-decisions)."""
    hands = state.hands
    out = state.out
    n = len(hands)
    right = left = None
    for step in range(1, n):
        seat = (defender - step) % n
        if hands[seat] and seat not in out:
            right = seat
            break
    for step in range(1, n):
        seat = (defender + step) % n
        if hands[seat] and seat not in out:
            left = seat
            break
    found = tuple(s for s in (right, left) if s is not None)
    return tuple(dict.fromkeys(found))


def throwers(state: State) -> tuple[int, ...]:
    """Seats that may add cards to this bout: the circle around the defender, holding cards."""
    defender = state.defender
    hands = state.hands
    if state.rules.circle == "neighbours":
        return neighbours(state, defender)
    out = state.out
    return tuple([s for s in range(len(hands)) if s != defender and hands[s] and s not in out])


def is_thrower(state: State, seat: int) -> bool:
    """``seat in throwers(state)``, without building the tuple."""
    if seat == state.defender or not state.hands[seat] or seat in state.out:
        return False
    return state.rules.circle != "neighbours" or seat in neighbours(state, state.defender)


def cap(state: State) -> int:
    """At most 5 attacks until the first successful defence at a Durak Peak table, then 6."""
    return 6 if state.defended_once else state.rules.first_bout_cap


def allowance(state: State) -> int:
    """How many more attacking cards may still be added to this bout (§4.4), never below 0."""
    limit = 6 if state.defended_once else state.rules.first_bout_cap  # cap(state), inlined
    if state.bout_limit < limit:
        limit = state.bout_limit
    room = limit - len(state.table)
    return room if room > 0 else 0


def all_covered(state: State) -> bool:
    # A plain loop: twice as fast as all(<generator>) and called several times per action.
    for _, cover in state.table:  # noqa: SIM110
        if cover is None:
            return False
    return True


def pending(state: State) -> tuple[int, ...]:
    """Attackers the bout is waiting for (to throw in or pass) once nothing is left to cover."""
    if allowance(state) == 0:
        return ()
    passed = state.passed
    return tuple([s for s in throwers(state) if s not in passed])


def challengers(state: State) -> tuple[int, ...]:
    """Cheating tables: the seats that could challenge a move of this bout (still in the match,
    and some move of the bout is another seat's)."""
    movers = {move.seat for move in state.moves}
    if not movers:
        return ()
    out = state.out
    return tuple([s for s in range(len(state.hands)) if s not in out and movers - {s}])


def window_pending(state: State) -> tuple[int, ...]:
    """The seats the challenge window still waits for: challengers who have not passed on it."""
    passed = state.passed
    return tuple([s for s in challengers(state) if s not in passed])


def table_ranks(state: State) -> set[int]:
    ranks = set()
    for attack, cover in state.table:
        ranks.add(attack.rank)
        if cover is not None:
            ranks.add(cover.rank)
    return ranks


def refill_order(state: State) -> tuple[int, ...]:
    """Main attacker first, then clockwise from the defender's left, the defender last (§6)."""
    n = len(state.hands)
    order = [state.attacker]
    for step in range(1, n):
        seat = (state.defender + step) % n
        if seat not in (state.attacker, state.defender):
            order.append(seat)
    order.append(state.defender)
    return tuple(s for s in order if s not in state.out)
