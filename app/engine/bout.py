"""The end of a bout (§6), refilling, going out and the end of the match (§7), forfeits (§8)."""

from __future__ import annotations

from app.engine.cards import Card
from app.engine.events import DrawEvent, Event
from app.engine.seating import next_with_cards, refill_order
from app.engine.state import BOUT, LEAD, OVER, Outcome, OutcomeReason, State


def draw_up(state: State, seat: int, events: list[Event]) -> None:
    """``seat`` draws from the stock up to six cards (mutates ``state``, a private copy)."""
    hand = state.hands[seat]
    need = 6 - len(hand)
    if need <= 0 or not state.stock:
        return
    drawn = state.stock[:need]
    state.stock = state.stock[need:]
    hands = list(state.hands)
    hands[seat] = hand + drawn
    state.hands = tuple(hands)
    event: DrawEvent = {"type": "draw", "seat": seat, "count": len(drawn), "cards": drawn}
    if state.trump_card in drawn:
        event["trump_card"] = state.trump_card
    events.append(event)


def end_bout(state: State, taken: bool, events: list[Event]) -> None:
    """Resolve the bout: discard or pick up, refill, send empty hands out, start the next bout."""
    played: list[Card] = []
    for attack, cover in state.table:
        played.append(attack)
        if cover is not None:
            played.append(cover)
    cards = tuple(played)
    defender = state.defender
    if taken:
        hands = list(state.hands)
        hands[defender] = hands[defender] + cards
        state.hands = tuple(hands)
    else:
        state.discard = state.discard + cards
        state.defended_once = True
    events.append({"type": "bout_end", "result": "taken" if taken else "beaten", "defender": defender, "cards": cards})
    state.table = ()
    state.moves = ()
    state.passed = frozenset()
    state.taking = False
    state.thrown_in = False
    state.phase = LEAD
    if state.stock:
        for seat in refill_order(state):
            draw_up(state, seat, events)
    newly_out: list[int] = []
    if not state.stock:
        newly_out = [s for s in state.emptied if not state.hands[s] and s not in state.out]
    state.emptied = ()
    holders = [s for s, hand in enumerate(state.hands) if hand and s not in state.out]
    durak: int | None = None
    if len(holders) == 1:
        durak = holders[0]
    elif not holders and not state.rules.draws:
        # Nobody holds cards and there are no draws: the last card to hit the table (the last
        # defender's) decides, that player is the durak and does not go out.
        if newly_out:
            durak = newly_out.pop()
        else:  # cannot happen in play (the bout's players emptied in it); kept for odd positions
            durak = state.out[-1]
            state.out = state.out[:-1]
    for seat in newly_out:
        state.out = (*state.out, seat)
        events.append({"type": "out", "seat": seat, "place": len(state.out)})
    if len(holders) <= 1:
        finish(state, events, durak=durak)
        return
    if taken:
        leader = next_with_cards(state, defender)
    else:
        leader = defender if state.hands[defender] else next_with_cards(state, defender)
    assert leader is not None
    start_bout(state, leader, events)


def start_bout(state: State, leader: int, events: list[Event]) -> None:
    defender = next_with_cards(state, leader)
    assert defender is not None
    state.attacker = leader
    state.defender = defender
    state.bout_limit = len(state.hands[defender])
    state.phase = LEAD
    events.append({"type": "bout_start", "attacker": leader, "defender": defender, "limit": state.bout_limit})


def finish(
    state: State,
    events: list[Event],
    *,
    durak: int | None,
    forfeit: int | None = None,
    reason: OutcomeReason | None = None,
    detail: str = "",
) -> None:
    """End the match. Without a durak it is a draw. Remaining players are ranked by fewest cards."""
    order = state.out
    rest = [s for s in range(state.n) if s not in order and s != durak]
    rest.sort(key=lambda s: len(state.hands[s]))
    places: list[tuple[int, ...]] = [(s,) for s in order]
    index = 0
    while index < len(rest):
        size = len(state.hands[rest[index]])
        group = tuple(s for s in rest[index:] if len(state.hands[s]) == size)
        places.append(group)
        index += len(group)
    if durak is not None:
        places.append((durak,))
    state.outcome = Outcome(
        draw=durak is None,
        durak=durak,
        order=order,
        places=tuple(places),
        forfeit=forfeit,
        reason=reason,
        detail=detail,
    )
    state.phase = OVER
    state.exchange_open = False
    events.append({"type": "match_end", "outcome": state.outcome.to_json()})


def after_card_move(state: State, seat: int) -> None:
    """Record that ``seat`` just put cards on the table; note the moment its hand ran out."""
    if not state.hands[seat] and seat not in state.emptied:
        state.emptied = (*state.emptied, seat)
    elif state.hands[seat] and seat in state.emptied:
        state.emptied = tuple(s for s in state.emptied if s != seat)


def is_bout(state: State) -> bool:
    return state.phase == BOUT
