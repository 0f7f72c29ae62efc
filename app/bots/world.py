"""Determinization: a full engine position built from what this seat knows, nothing more.

The hidden cards (opponents' unknown cards and the stock) are dealt at random from the cards this
seat has not seen, keeping every card it knows the whereabouts of (its own hand, the table, the
discard, cards an opponent picked up, the turned trump) where it is. Soft hints (an opponent who took
rather than cover probably lacks higher cards of that suit) are respected when a deal allows it.
"""

from __future__ import annotations

import random
from typing import Any

from app.bots.memory import Memory
from app.bots.table import Table
from app.engine import Rules, ViewJson, position
from app.engine.cards import Card

SimState = Any  # an engine position this seat built itself (never the server's state)


def sim_rules(view: ViewJson) -> Rules:
    rules = Rules.from_json(dict(view["rules"]))
    return rules.with_changes(cheating=False, timer=0, stake=0)


def effective_limit(t: Table) -> int | None:
    """A bout limit giving the same allowance as the view: min(cap, limit) = allowance + table."""
    if not t.attacks:
        return None
    return t.allowance + len(t.attacks)


def hidden_layout(t: Table, memory: Memory) -> tuple[dict[int, int], int, list[Card]] | None:
    """Unknown slots per opponent, unknown stock cards, and the pool of unseen cards."""
    pool = sorted(memory.unseen(t))
    slots = {s: memory.unknown_slots(s, t) for s in range(t.n) if s != t.seat and not t.out[s]}
    stock_unknown = t.stock - (1 if t.trump_in_stock else 0)
    need = sum(slots.values()) + stock_unknown
    if need > len(pool):
        return None
    return slots, stock_unknown, pool


def deal_hidden(
    t: Table, memory: Memory, rng: random.Random, tries: int = 8
) -> tuple[dict[int, list[Card]], list[Card]] | None:
    """One random placement of the unseen cards: opponents' unknown cards and the stock order."""
    layout = hidden_layout(t, memory)
    if layout is None:
        return None
    slots, stock_unknown, pool = layout
    for attempt in range(tries):
        cards = pool[:]
        rng.shuffle(cards)
        hands: dict[int, list[Card]] = {}
        ok = True
        rest = cards
        for seat, count in slots.items():
            if attempt < tries - 1 and memory.hints:
                fits = [c for c in rest if not memory.lacks(seat, c)]
                if len(fits) < count:
                    ok = False
                    break
                chosen = fits[:count]
            else:
                chosen = rest[:count]
            chosen_set = set(chosen)
            rest = [c for c in rest if c not in chosen_set]
            hands[seat] = chosen
        if not ok:
            continue
        return hands, rest[:stock_unknown]
    return None


def build(view: ViewJson, t: Table, memory: Memory, hands: dict[int, list[Card]], stock: list[Card]) -> SimState:
    """The engine position with the given hidden cards (own hand, table and public facts from
    the view)."""
    rules = sim_rules(view)
    full_hands: list[list[Card]] = []
    for seat in range(t.n):
        if seat == t.seat:
            full_hands.append(list(t.hand))
        elif t.out[seat]:
            full_hands.append([])
        else:
            full_hands.append(sorted(memory.known_cards(seat, t)) + hands.get(seat, []))
    full_stock = list(stock)
    if t.trump_in_stock:
        if rules.durac:
            full_stock.insert(0, t.trump_card)
        else:
            full_stock.append(t.trump_card)
    table = [(str(a), None if c is None else str(c)) for a, c in zip(t.attacks, t.covers, strict=True)]
    attacker = t.attacker if t.attacker is not None else t.seat
    state = position(
        rules,
        full_hands,
        t.trump_card,
        stock=full_stock,
        attacker=attacker,
        defender=t.defender,
        table=table,
        discard=sorted(memory.discard),
        defended_once=t.cap >= 6 and rules.first_bout_cap < 6,
        out=list(view.get("order") or []),
        taking=t.taking,
        bout_limit=effective_limit(t),
    )
    state.passed = frozenset(s for s in range(t.n) if t.passed[s])
    moves = view.get("moves") or []
    state.thrown_in = any(m.get("type") == "throw_in" for m in moves)
    state.exchange_open = bool(view.get("exchange_open"))
    state.ply = int(view.get("ply") or 0)
    if t.attacks:
        emptied = [s for s in range(t.n) if not t.out[s] and t.counts[s] == 0]
        last_move = {int(m["seat"]): i for i, m in enumerate(moves)}
        emptied.sort(key=lambda s: last_move.get(s, -1))
        state.emptied = tuple(emptied)
    return state


def determinize(view: ViewJson, t: Table, memory: Memory, rng: random.Random) -> SimState | None:
    dealt = deal_hidden(t, memory, rng)
    if dealt is None:
        return None
    hands, stock = dealt
    return build(view, t, memory, hands, stock)


def exact_position(view: ViewJson, t: Table, memory: Memory) -> SimState | None:
    """With the stock empty and one opponent holding cards, every unseen card is in his hand:
    the position is known exactly."""
    if t.stock > 0:
        return None
    others = [s for s in t.holders if s != t.seat]
    if len(others) != 1:
        return None
    layout = hidden_layout(t, memory)
    if layout is None:
        return None
    slots, _, pool = layout
    if slots.get(others[0], 0) != len(pool):
        return None
    return build(view, t, memory, {others[0]: pool}, [])
