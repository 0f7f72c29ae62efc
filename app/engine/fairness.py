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
from typing import Any

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


def record(
    server_seed: bytes | None,
    table: str,
    match_number: int,
    deck_size: int,
    client_seeds: Sequence[bytes],
    order: Sequence[Card] | None,
) -> dict[str, Any]:
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
