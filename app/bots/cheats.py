"""Cheating tables: which moves of the current bout this seat can *prove* broke a card rule.

Only the public moves (``view["moves"]``), the trump, the cap and the limits announced in public
events are used; a move is reported only when the rule book makes it illegal beyond doubt.
"""

from __future__ import annotations

from app.bots.memory import Memory
from app.bots.table import Table, card, cards
from app.engine import ViewJson
from app.engine.cards import Card


def provable_cheats(view: ViewJson, t: Table, memory: Memory) -> list[int]:
    """Indices of moves of the current bout, by other seats, that are certainly illegal."""
    moves = view["moves"]
    transfers = sum(1 for m in moves if m.get("type") == "transfer")
    aligned = len(memory.transfer_limits) == transfers
    limits: list[int | None] = [memory.first_limit]
    limits.extend(memory.transfer_limits if aligned else [None] * transfers)
    # The current defender's limit is public: his hand now plus the covers he has played since the
    # attack reached him (a defender draws nothing and picks nothing up during a bout).
    if t.defender is not None and 0 <= t.defender < t.n:
        since = 0
        for move in reversed(moves):
            if move.get("type") == "transfer":
                break
            if move.get("type") == "cover" and move.get("seat") == t.defender:
                since += 1
        limits[-1] = t.counts[t.defender] + since
    cap = t.cap
    found: list[int] = []
    table: list[tuple[Card, Card | None]] = []
    segment = 0
    for index, move in enumerate(moves):
        kind = move.get("type")
        seat = move.get("seat")
        cheat = False
        if kind == "lead":
            table = [(c, None) for c in cards(move["cards"])]
        elif kind == "throw_in":
            played = cards(move["cards"])
            ranks = {a.rank for a, _ in table} | {c.rank for _, c in table if c is not None}
            limit = limits[segment]
            over = limit is not None and len(table) + len(played) > min(cap, limit)
            cheat = over or any(c.rank not in ranks for c in played)
            table.extend((c, None) for c in played)
        elif kind == "cover":
            index_attack = int(move["attack"])
            cover = card(move["card"])
            if 0 <= index_attack < len(table):
                attack = table[index_attack][0]
                if not t.beats(cover, attack):
                    cheat = True
                table[index_attack] = (attack, cover)
        elif kind == "transfer":
            played = cards(move["cards"])
            attack_ranks = sorted({a.rank for a, _ in table})
            total = len(table) + len(played)
            segment = min(segment + 1, len(limits) - 1)
            new_limit = limits[segment]
            short = new_limit is not None and new_limit < total
            cheat = short or total > cap or sorted(c.rank for c in played) != attack_ranks
            table.extend((c, None) for c in played)
        if cheat and seat != t.seat:
            found.append(index)
    return found
