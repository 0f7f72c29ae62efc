"""Provably fair deals (docs/fairness.md): a commitment to a secret server seed, mixed with the
players' own seeds, into a deck anyone can recompute.

    server_seed = new_server_seed()                          # 32 secret bytes
    commitment(server_seed, table, match_number)             # sent before any client seed
    deck_order(server_seed, table, match_number, 36, seeds)  # the deck, first card dealt first
    verify(record)                                           # [] when everything matches

Standard library only. Every byte string below is spelled out in docs/fairness.md; change nothing
here without changing the algorithm name (``ALGORITHM``) and the document.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from app.engine.cards import Card, deck

ALGORITHM = "durak-peak/v1"
DOMAIN = b"durak-peak/v1"
SERVER_SEED_BYTES = 32
CLIENT_SEED_BYTES = 16
MAX_MATCH_NUMBER = 2**32 - 1


class FairnessError(ValueError):
    """An input the algorithm does not accept (a seed of the wrong size, an unknown deck...)."""


def new_server_seed() -> bytes:
    """256 fresh secret bits from the operating system's CSPRNG."""
    return secrets.token_bytes(SERVER_SEED_BYTES)


def parse_client_seed(text: str) -> bytes:
    """A client seed as the protocol carries it: 32 hex digits (128 bits), or "" for none (bots)."""
    if not isinstance(text, str):
        raise FairnessError("a client seed is a string of hex digits")
    if text == "":
        return b""
    if len(text) != 2 * CLIENT_SEED_BYTES:
        raise FairnessError(f"a client seed is {2 * CLIENT_SEED_BYTES} hex digits, got {len(text)} characters")
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise FairnessError("a client seed is hex digits 0-9 a-f only") from None


def parse_server_seed(text: str) -> bytes:
    try:
        seed = bytes.fromhex(text)
    except ValueError:
        raise FairnessError("the server seed is 64 hex digits") from None
    if len(seed) != SERVER_SEED_BYTES:
        raise FairnessError("the server seed is 64 hex digits")
    return seed


def _header(table: str, match_number: int) -> bytes:
    code = table.encode("utf-8")
    if not 0 < len(code) < 256:
        raise FairnessError("a table code is 1 to 255 bytes of UTF-8")
    if not 0 <= match_number <= MAX_MATCH_NUMBER:
        raise FairnessError("a match number is 0 .. 2**32-1")
    return DOMAIN + bytes([len(code)]) + code + match_number.to_bytes(4, "big")


def commitment(server_seed: bytes, table: str, match_number: int) -> str:
    """SHA-256(domain ‖ len(table) ‖ table ‖ match number ‖ server seed), hex."""
    if len(server_seed) != SERVER_SEED_BYTES:
        raise FairnessError(f"the server seed is {SERVER_SEED_BYTES} bytes")
    return hashlib.sha256(_header(table, match_number) + server_seed).hexdigest()


def deal_key(server_seed: bytes, table: str, match_number: int, deck_size: int, client_seeds: Sequence[bytes]) -> bytes:
    """K = HMAC-SHA256(server seed, domain ‖ len(table) ‖ table ‖ match number ‖ deck size ‖
    seats ‖ for each seat: len(seed) ‖ seed)."""
    if len(server_seed) != SERVER_SEED_BYTES:
        raise FairnessError(f"the server seed is {SERVER_SEED_BYTES} bytes")
    if deck_size not in (24, 36, 52):
        raise FairnessError(f"no {deck_size}-card deck: 24, 36 or 52")
    if not 2 <= len(client_seeds) <= 255:
        raise FairnessError("one client seed per seat, 2 seats or more")
    message = _header(table, match_number) + bytes([deck_size, len(client_seeds)])
    for seed in client_seeds:
        if len(seed) not in (0, CLIENT_SEED_BYTES):
            raise FairnessError(f"a client seed is {CLIENT_SEED_BYTES} bytes or empty")
        message += bytes([len(seed)]) + seed
    return hmac.new(server_seed, message, hashlib.sha256).digest()


def byte_stream(key: bytes) -> Iterator[int]:
    """HMAC-SHA256(K, counter) for counter = 0, 1, 2... (8 bytes big-endian), byte by byte."""
    counter = 0
    while True:
        yield from hmac.new(key, counter.to_bytes(8, "big"), hashlib.sha256).digest()
        counter += 1


def uniform_below(stream: Iterator[int], bound: int) -> int:
    """A uniform integer in [0, bound) from single bytes, rejecting those at or above the largest
    multiple of ``bound`` not over 256 (no modulo bias)."""
    if not 1 <= bound <= 256:
        raise FairnessError("bound must be 1..256")
    limit = 256 - 256 % bound
    while True:
        byte = next(stream)
        if byte < limit:
            return byte % bound


def shuffle(cards: Sequence[Card], stream: Iterator[int]) -> tuple[Card, ...]:
    """Fisher-Yates, from the last position down: swap position i with a uniform j in [0, i]."""
    out = list(cards)
    for i in range(len(out) - 1, 0, -1):
        j = uniform_below(stream, i + 1)
        out[i], out[j] = out[j], out[i]
    return tuple(out)


@dataclass(frozen=True, slots=True)
class FairDeal:
    deck: tuple[Card, ...]  # deck[0] is dealt first
    dealer_draw: int  # the dealer when the rules leave it to chance (the table's first match)


def fair_deal(
    server_seed: bytes, table: str, match_number: int, deck_size: int, client_seeds: Sequence[bytes], seats: int
) -> FairDeal:
    """The deck, then one more draw from the same stream below ``seats``: the dealer for a match
    whose dealer the rules leave to chance."""
    stream = byte_stream(deal_key(server_seed, table, match_number, deck_size, client_seeds))
    order = shuffle(deck(deck_size), stream)
    return FairDeal(order, uniform_below(stream, seats))


def deck_order(
    server_seed: bytes, table: str, match_number: int, deck_size: int, client_seeds: Sequence[bytes]
) -> tuple[Card, ...]:
    return fair_deal(server_seed, table, match_number, deck_size, client_seeds, len(client_seeds)).deck


# ---------------------------------------------------------------------- records and verification


class FairnessRecord(TypedDict):
    """A match's published deal (docs/fairness.md); seed, commitment and deck are None while secret."""

    algorithm: str
    table: str
    match_number: int
    deck_size: int
    commitment: str | None
    server_seed: str | None
    client_seeds: list[str]
    deck: list[str] | None


def record(
    server_seed: bytes | None,
    table: str,
    match_number: int,
    deck_size: int,
    client_seeds: Sequence[bytes],
    order: Sequence[Card] | None,
) -> FairnessRecord:
    """The JSON a finished match publishes (``server_seed`` None hides it, while a match runs)."""
    seed = server_seed if server_seed is not None else b""
    return {
        "algorithm": ALGORITHM,
        "table": table,
        "match_number": match_number,
        "deck_size": deck_size,
        "commitment": commitment(server_seed, table, match_number) if server_seed is not None else None,
        "server_seed": seed.hex() if server_seed is not None else None,
        "client_seeds": [s.hex() for s in client_seeds],
        "deck": [str(card) for card in order] if order is not None else None,
    }


def verify(data: dict[str, Any]) -> tuple[list[str], tuple[Card, ...] | None]:
    """Recompute the commitment and the deck of a published record. Returns the differences found
    (empty: verified) and the recomputed deck (None when the record cannot be read at all)."""
    problems: list[str] = []
    try:
        if data.get("algorithm") != ALGORITHM:
            return [f"unknown algorithm {data.get('algorithm')!r} (this verifies {ALGORITHM})"], None
        server_seed = parse_server_seed(str(data.get("server_seed") or ""))
        table = str(data["table"])
        match_number = int(data["match_number"])
        deck_size = int(data["deck_size"])
        seeds = [parse_client_seed(str(s)) for s in data["client_seeds"]]
        expected_commitment = commitment(server_seed, table, match_number)
        order = deck_order(server_seed, table, match_number, deck_size, seeds)
    except (FairnessError, KeyError, TypeError, ValueError) as exc:
        return [f"cannot verify: {exc}"], None
    if str(data.get("commitment") or "").lower() != expected_commitment:
        problems.append(f"commitment differs: published {data.get('commitment')}, recomputed {expected_commitment}")
    published = data.get("deck")
    recomputed = [str(card) for card in order]
    if not isinstance(published, list) or [str(c) for c in published] != recomputed:
        if isinstance(published, list) and len(published) == len(recomputed):
            first = next(i for i, (a, b) in enumerate(zip(published, recomputed, strict=True)) if str(a) != b)
            problems.append(
                f"deck differs from position {first}: published {published[first]}, recomputed {recomputed[first]}"
            )
        else:
            problems.append("deck differs: the published deck is not the recomputed one")
    return problems, order


def check_replay(deck_cards: Sequence[str], views: Sequence[dict[str, Any]]) -> list[str]:
    """Check that the cards a match's replay shows in the players' hands came from ``deck_cards`` (the
    recomputed deck, first card dealt first) as docs/fairness.md, "The replay against the deck",
    says: the hands as dealt, the turned trump, and every card drawn from the stock, in the deck's
    order. ``views`` is the replay (``GET /api/matches/{id}/replay``): a position after the deal and
    after every action, each with ``hands`` (every seat's cards), ``trump_card``, ``stock`` (how
    many cards it holds), ``table``, ``dealer`` and ``rules``. Returns the differences (empty: the
    replay came from that deck).

    Written from the document alone, on the replay's own fields: it shares no code with the engine
    that dealt the match, so a server that dealt other cards than it published cannot pass it."""
    try:
        return _check_replay([str(card) for card in deck_cards], list(views))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        return [f"replay: cannot read it ({type(exc).__name__}: {exc})"]


def _check_replay(cards: list[str], views: list[dict[str, Any]]) -> list[str]:
    if not views:
        return ["replay: it is empty"]
    first = views[0]
    seats, dealer = int(first["rules"]["seats"]), int(first["dealer"])
    top_turned = first["rules"].get("preset") == "durac1993"  # the top card is turned, and drawn first
    dealt = 6 * seats
    if int(first["rules"]["deck"]) != len(cards) or len(first["hands"]) != seats or dealt > len(cards):
        return [f"replay: a {first['rules']['deck']}-card deal for {seats} seats does not fit a {len(cards)}-card deck"]
    hands = [set[str]() for _ in range(seats)]
    for index in range(dealt):  # one card at a time, starting on the dealer's left
        hands[(dealer + 1 + index) % seats].add(cards[index])
    if dealt == len(cards):
        trump, stock = cards[dealt - 1], []
    else:
        trump = cards[dealt]
        stock = cards[dealt:] if top_turned else [*cards[dealt + 1 :], cards[dealt]]
    problems: list[str] = []
    for seat in range(seats):
        shown = set(first["hands"][seat])
        if shown != hands[seat]:
            problems.append(
                f"replay: seat {seat} was dealt {' '.join(sorted(shown - hands[seat]))} instead of "
                f"{' '.join(sorted(hands[seat] - shown))}"
            )
    if first["trump_card"] != trump:
        problems.append(f"replay: the turned trump is {first['trump_card']}, the deck turns {trump}")
    if int(first["stock"]) != len(stock):
        problems.append(f"replay: the stock holds {first['stock']} cards after the deal, the deck leaves {len(stock)}")
    if problems:
        return problems
    for step in range(1, len(views)):
        before, after = views[step - 1], views[step]
        problem = _check_step(before, after, stock)
        if problem is not None:
            return [f"replay: position {step}: {problem}"]
    return []


def _check_step(before: dict[str, Any], after: dict[str, Any], stock: list[str]) -> str | None:
    """One action's change of the hands: what a hand gains comes from the table or another hand (a
    card played in this very action and picked up with the table), and only the defender picks
    cards up; or else from the stock, which gives its cards in order (``stock`` is updated). No card
    leaves play but into the discard pile, which grows by exactly the cards that left."""
    table_before, table_after = _table_cards(before), _table_cards(after)
    held_before = [set(hand) for hand in before["hands"]]
    held_after = [set(hand) for hand in after["hands"]]
    in_hands_before: set[str] = set().union(*held_before)
    on_table = table_before | in_hands_before
    gained = [now - then for then, now in zip(held_before, held_after, strict=True)]
    back_to_stock: set[str] = set()
    if before["trump_card"] != after["trump_card"]:  # Durac 1993: the lowest trump swapped for the turned one
        turned, low = before["trump_card"], after["trump_card"]
        takers = [seat for seat, cards in enumerate(gained) if turned in cards]
        if turned not in stock or len(takers) != 1 or low not in before["hands"][takers[0]]:
            return f"the turned trump changed from {turned} to {low} without an exchange"
        stock[stock.index(turned)] = low
        gained[takers[0]].discard(turned)
        back_to_stock.add(low)
    defender = before.get("defender")
    for seat, cards in enumerate(gained):  # the bout's cards go to its defender, and to nobody else
        picked = cards & on_table
        if picked and seat != defender:
            return f"seat {seat} got {' '.join(sorted(picked))} from the table or another hand, not as the defender"
    new_on_table = table_after - table_before - in_hands_before
    if new_on_table:
        return f"{' '.join(sorted(new_on_table))} came onto the table from no hand"
    drawn_count = len(stock) - int(after["stock"])
    if drawn_count < 0:
        return f"the stock grew from {len(stock)} to {after['stock']} cards"
    drawn, rest = stock[:drawn_count], stock[drawn_count:]
    from_stock = [cards - on_table for cards in gained]
    if sorted(card for cards in from_stock for card in cards) != sorted(drawn):
        shown = " ".join(sorted(card for cards in from_stock for card in cards)) or "nothing"
        return f"the hands drew {shown}, the deck's next cards are {' '.join(drawn) or 'none'}"
    # Every card in play before is still in play, back in the stock, or discarded: the discard pile
    # grows by exactly those; and a card goes from a hand straight to it only as the defender's
    # last cover (a bout beaten off in the action that covers it).
    in_play_after: set[str] = table_after.union(*held_after)
    left = on_table - in_play_after - back_to_stock
    discarded = int(after["discard"]) - int(before["discard"])
    if discarded != len(left):
        return f"{' '.join(sorted(left)) or 'no card'} left play, but the discard pile grew by {discarded}"
    from_hand = left - table_before
    last_cover = len(from_hand) == 1 and defender is not None and from_hand <= held_before[defender]
    if from_hand and not (last_cover and table_before and not table_after):
        return f"{' '.join(sorted(from_hand))} went from a hand to the discard pile without being played"
    runs: list[tuple[int, int]] = []  # (where its run starts in ``drawn``, seat)
    for seat, cards in enumerate(from_stock):  # each seat draws a run of the deck's next cards
        if cards:
            places = sorted(drawn.index(card) for card in cards)
            if places[-1] - places[0] + 1 != len(places):
                return f"seat {seat} drew {' '.join(sorted(cards))}, not consecutive cards of the deck"
            runs.append((places[0], seat))
    order = [seat for _, seat in sorted(runs)]
    expected = _refill_order(before, len(before["hands"]))
    if len(order) > 1 and expected is not None and order != [seat for seat in expected if seat in order]:
        return f"the seats drew in the order {order}, the rules say {[s for s in expected if s in order]}"
    stock[:] = rest
    return None


def _table_cards(view: dict[str, Any]) -> set[str]:
    return {card for pair in view["table"] for card in (pair["attack"], pair["cover"]) if card is not None}


def _refill_order(before: dict[str, Any], seats: int) -> list[int] | None:
    """Who draws first after a bout (rule book §6): the main attacker, then clockwise from the
    defender's left, the defender last. None when the position names no bout."""
    attacker, defender = before.get("attacker"), before.get("defender")
    if attacker is None or defender is None:
        return None
    others = [(defender + step) % seats for step in range(1, seats)]
    return [attacker, *(seat for seat in others if seat not in (attacker, defender)), defender]
