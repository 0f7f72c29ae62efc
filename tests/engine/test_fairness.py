"""Provably fair deals (docs/fairness.md): the reference implementation against an independent one
written from the document alone, the worked example, verification, dealing a given deck, and the
shuffle's uniformity."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import cli
from app.engine import Rules, new_match
from app.engine.cards import Card, deck
from app.engine.fairness import (
    FairnessError,
    byte_stream,
    commitment,
    deal_key,
    deck_order,
    fair_deal,
    parse_client_seed,
    record,
    shuffle,
    uniform_below,
    verify,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "fairness.md"

# ---------------------------------------------------------------------- independent implementation
# Written from docs/fairness.md only (byte strings, base order, shuffle), without app.engine.fairness.


def doc_base_order(size: int) -> list[str]:
    low = {24: 9, 36: 6, 52: 2}[size]
    names = {11: "J", 12: "Q", 13: "K", 14: "A"}
    return [names.get(rank, str(rank)) + suit for suit in "cdhs" for rank in range(low, 15)]


def doc_deal(server_seed: bytes, code: str, number: int, size: int, seeds: list[bytes]) -> tuple[str, list[str], int]:
    header = b"durak-peak/v1" + bytes([len(code.encode())]) + code.encode() + number.to_bytes(4, "big")
    commit = hashlib.sha256(header + server_seed).hexdigest()
    message = header + bytes([size, len(seeds)]) + b"".join(bytes([len(s)]) + s for s in seeds)
    key = hmac.new(server_seed, message, hashlib.sha256).digest()

    def stream() -> Iterator[int]:
        counter = 0
        while True:
            yield from hmac.new(key, counter.to_bytes(8, "big"), hashlib.sha256).digest()
            counter += 1

    source = stream()

    def uniform(bound: int) -> int:
        while (byte := next(source)) >= 256 - 256 % bound:
            pass
        return byte % bound

    cards = doc_base_order(size)
    for i in range(size - 1, 0, -1):
        j = uniform(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return commit, cards, uniform(len(seeds))


# ---------------------------------------------------------------------- the worked example

EXAMPLE_TABLE = "t-e3b0c44298fc1c149afbf4c8996fb924"
EXAMPLE_SEED = bytes.fromhex("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
EXAMPLE_SEEDS = [bytes.fromhex("00112233445566778899aabbccddeeff"), b""]


def example_deck_from_doc() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("The deck (first card dealt first) and the dealer draw:", 1)[1]
    line = block.split("```", 2)[1].strip().splitlines()[0]
    return line.split()


def test_worked_example_matches_the_document() -> None:
    text = DOC.read_text(encoding="utf-8")
    deal = fair_deal(EXAMPLE_SEED, EXAMPLE_TABLE, 1, 36, EXAMPLE_SEEDS, 2)
    assert commitment(EXAMPLE_SEED, EXAMPLE_TABLE, 1) in text
    key = deal_key(EXAMPLE_SEED, EXAMPLE_TABLE, 1, 36, EXAMPLE_SEEDS)
    assert f"K           = {key.hex()}" in text
    block0 = hmac.new(key, bytes(8), hashlib.sha256).hexdigest()
    assert f"block 0     = {block0}" in text
    assert [str(card) for card in deal.deck] == example_deck_from_doc()
    assert f"dealer_draw = {deal.dealer_draw}" in text
    # The table of the first shuffle steps: the bytes are the first ones of block 0.
    rows = re.findall(r"^\| (\d+) \| (\d+) \(`([0-9a-f]{2})`\) \| (\d+) \| (\w+) \|", text, re.M)
    assert [int(row[1]) for row in rows] == list(bytes.fromhex(block0)[: len(rows)])
    for i, byte, _, limit, j in rows:
        assert int(limit) == 256 - 256 % (int(i) + 1)
        assert j == "rejected" if int(byte) >= int(limit) else int(j) == int(byte) % (int(i) + 1)


def test_the_independent_implementation_gives_the_same_deals() -> None:
    rng = random.Random(18)
    for case in range(60):
        size = (24, 36, 52)[case % 3]
        seats = 2 + case % 5
        seeds = [rng.randbytes(16) if rng.random() < 0.6 else b"" for _ in range(seats)]
        server_seed = rng.randbytes(32)
        code = "".join(rng.choice("ABCxyz019-_") for _ in range(rng.randint(1, 30)))
        number = rng.randint(1, 2**32 - 1)
        commit, cards, dealer = doc_deal(server_seed, code, number, size, seeds)
        deal = fair_deal(server_seed, code, number, size, seeds, seats)
        assert commit == commitment(server_seed, code, number)
        assert [str(card) for card in deal.deck] == cards
        assert deal.dealer_draw == dealer
        assert sorted(cards) == sorted(str(card) for card in deck(size))


def test_every_input_changes_the_deck() -> None:
    base = deck_order(EXAMPLE_SEED, "T", 1, 36, EXAMPLE_SEEDS)
    assert deck_order(EXAMPLE_SEED, "T", 1, 36, EXAMPLE_SEEDS) == base  # deterministic
    assert deck_order(EXAMPLE_SEED, "U", 1, 36, EXAMPLE_SEEDS) != base
    assert deck_order(EXAMPLE_SEED, "T", 2, 36, EXAMPLE_SEEDS) != base
    assert deck_order(EXAMPLE_SEED, "T", 1, 36, [EXAMPLE_SEEDS[0], bytes(16)]) != base  # an empty seed is not zeros
    assert deck_order(EXAMPLE_SEED, "T", 1, 36, list(reversed(EXAMPLE_SEEDS))) != base  # seat order matters
    assert deck_order(bytes(32), "T", 1, 36, EXAMPLE_SEEDS) != base


# ---------------------------------------------------------------------- verification


def published() -> dict[str, object]:
    seeds = [bytes.fromhex("a" * 32), b"", bytes.fromhex("0123456789abcdef" * 2)]
    order = deck_order(EXAMPLE_SEED, "tableX", 3, 36, seeds)
    return record(EXAMPLE_SEED, "tableX", 3, 36, seeds, order)


def flip_hex(text: str, at: int) -> str:
    digit = "0" if text[at] != "0" else "1"
    return text[:at] + digit + text[at + 1 :]


def test_verification_accepts_the_published_record() -> None:
    problems, order = verify(published())
    assert problems == []
    assert order is not None and len(order) == 36


@pytest.mark.parametrize("byte", [0, 13, 31])
def test_one_byte_of_the_server_seed_changed_fails(byte: int) -> None:
    data = published()
    data["server_seed"] = flip_hex(str(data["server_seed"]), 2 * byte)
    problems, _ = verify(data)
    assert any("commitment differs" in p for p in problems)
    assert any("deck differs" in p for p in problems)


@pytest.mark.parametrize("seat", [0, 2])
def test_one_byte_of_a_client_seed_changed_fails(seat: int) -> None:
    data = published()
    seeds = list(data["client_seeds"])  # type: ignore[call-overload]
    seeds[seat] = flip_hex(seeds[seat], 7)
    data["client_seeds"] = seeds
    problems, _ = verify(data)
    assert problems and all("commitment" not in p for p in problems)  # the commitment does not cover them
    assert any("deck differs" in p for p in problems)


def test_a_bot_seed_that_is_not_empty_fails() -> None:
    data = published()
    seeds = list(data["client_seeds"])  # type: ignore[call-overload]
    seeds[1] = "00" * 16
    data["client_seeds"] = seeds
    assert any("deck differs" in p for p in verify(data)[0])


def test_a_changed_deck_or_commitment_fails() -> None:
    data = published()
    cards = list(data["deck"])  # type: ignore[call-overload]
    cards[4], cards[5] = cards[5], cards[4]
    data["deck"] = cards
    assert verify(data)[0] == [f"deck differs from position 4: published {cards[4]}, recomputed {cards[5]}"]
    data = published()
    data["commitment"] = flip_hex(str(data["commitment"]), 10)
    assert [p for p in verify(data)[0] if "commitment differs" in p]
    data = published()
    data["match_number"] = 4
    assert len(verify(data)[0]) == 2


def test_unreadable_records_are_reported() -> None:
    assert verify({"algorithm": "other"})[0][0].startswith("unknown algorithm")
    data = published()
    data["server_seed"] = "zz"
    assert verify(data)[0][0].startswith("cannot verify")
    data = published()
    data["client_seeds"] = ["abc"]
    assert verify(data)[0][0].startswith("cannot verify")


def test_client_seeds_are_32_hex_digits_or_empty() -> None:
    assert parse_client_seed("") == b""
    assert parse_client_seed("00112233445566778899AABBCCDDEEFF") == bytes.fromhex("00112233445566778899aabbccddeeff")
    for bad in ("0", "0011", "g" * 32, "0" * 34, " " + "0" * 31):
        with pytest.raises(FairnessError):
            parse_client_seed(bad)
    with pytest.raises(FairnessError):
        deal_key(EXAMPLE_SEED, "T", 1, 36, [b"short", b""])
    with pytest.raises(FairnessError):
        deal_key(EXAMPLE_SEED, "T", 1, 40, [b"", b""])
    with pytest.raises(FairnessError):
        commitment(EXAMPLE_SEED[:31], "T", 1)


def test_cli_verify_deal_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "match.json"
    good.write_text(json.dumps({"id": "m1", "fairness": published()}), encoding="utf-8")
    assert cli.main(["verify-deal", "--file", str(good)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "ok" and out[0].startswith("deck: ")
    assert out[0].split()[1:] == published()["deck"]
    data = published()
    data["server_seed"] = flip_hex(str(data["server_seed"]), 0)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")  # the fairness object alone
    assert cli.main(["verify-deal", "--file", str(bad)]) == 1
    assert "commitment differs" in capsys.readouterr().out
    hidden = published()
    hidden["server_seed"] = None
    bad.write_text(json.dumps({"fairness": hidden}), encoding="utf-8")
    assert cli.main(["verify-deal", "--file", str(bad)]) == 1
    assert "not revealed yet" in capsys.readouterr().out


# ---------------------------------------------------------------------- the engine deals the given deck


@pytest.mark.parametrize("preset", ["durak_peak", "classic36", "durac1993"])
def test_new_match_deals_the_given_order(preset: str) -> None:
    rules = Rules.for_preset(preset, seats=3)  # type: ignore[arg-type]
    order = deck_order(EXAMPLE_SEED, "T", 1, rules.deck, [b"", b"", b""])
    state = new_match(rules, seed=5, dealer=1, order=order)
    # One card at a time from the dealer's left: seat 2 gets order[0], seat 0 order[1], seat 1 order[2].
    assert state.hands[2][:2] == (order[0], order[3])
    assert state.hands[0][0] == order[1] and state.hands[1][0] == order[2]
    assert sorted(state.hands[1]) == sorted(order[2:18:3])
    assert state.trump_card == order[18]
    rest = order[18:]
    assert set(state.stock) == set(rest)
    if rules.durac:
        assert state.stock == rest
    else:
        assert state.stock == (*rest[1:], rest[0])  # the turned trump is drawn last
    # The seed no longer decides the cards.
    assert new_match(rules, seed=6, dealer=1, order=order).hands == state.hands


def test_new_match_refuses_an_order_that_is_not_the_deck() -> None:
    rules = Rules(deck=36, seats=2)
    order = list(deck(36))
    with pytest.raises(ValueError, match="36-card deck"):
        new_match(rules, 1, 0, order[:-1])
    with pytest.raises(ValueError, match="36-card deck"):
        new_match(rules, 1, 0, [*order[:-1], order[0]])
    with pytest.raises(ValueError, match="36-card deck"):
        new_match(rules, 1, 0, [*order[:-1], Card(2, "c")])


# ---------------------------------------------------------------------- unbiased


def test_uniform_below_accepts_the_same_number_of_bytes_for_every_value() -> None:
    for bound in range(1, 257):
        counts = [0] * bound
        for byte in range(256):
            stream = iter([byte, 0])
            value = uniform_below(stream, bound)
            if next(stream, None) is None:  # the byte was rejected and the 0 after it used
                continue
            counts[value] += 1
        assert len(set(counts)) == 1, bound
        assert counts[0] * bound == 256 - 256 % bound


def chi_square_upper_z(statistic: float, df: int) -> float:
    """Wilson-Hilferty: the chi-square statistic as a standard normal deviate."""
    k = 2.0 / (9.0 * df)
    return ((statistic / df) ** (1.0 / 3.0) - (1.0 - k)) / math.sqrt(k)


def position_chi_squares(decks: list[tuple[Card, ...]], size: int) -> list[float]:
    expected = len(decks) / size
    place = {card: i for i, card in enumerate(deck(size))}
    counts = [[0] * size for _ in range(size)]
    for order in decks:
        for position, card in enumerate(order):
            counts[position][place[card]] += 1
    return [sum((c - expected) ** 2 / expected for c in row) for row in counts]


def naive_shuffle(cards: tuple[Card, ...], stream: Iterator[int]) -> tuple[Card, ...]:
    """The classic mistake: j over the whole deck at every step (biased)."""
    out = list(cards)
    for i in range(len(out) - 1, 0, -1):
        j = uniform_below(stream, len(out))
        out[i], out[j] = out[j], out[i]
    return tuple(out)


@pytest.mark.parametrize("size, decks", [(24, 3000), (36, 3000)])
def test_the_shuffle_is_uniform_per_position(size: int, decks: int) -> None:
    """Each card lands in each position equally often: a chi-square test per position (df = size-1)
    and over all positions, on decks from distinct server seeds. The same test rejects the naive
    shuffle, so it can fail."""
    rng = random.Random(size)
    keys = [deal_key(rng.randbytes(32), "chi", 1, size, [rng.randbytes(16), b""]) for _ in range(decks)]
    fair = [shuffle(deck(size), byte_stream(key)) for key in keys]
    statistics = position_chi_squares(fair, size)
    worst = max(chi_square_upper_z(s, size - 1) for s in statistics)
    total = chi_square_upper_z(sum(statistics), size * (size - 1))
    assert worst < 4.0, worst  # per position: p ≈ 3e-5 one-sided, over `size` positions
    assert total < 3.5, total
    naive = [naive_shuffle(deck(size), byte_stream(key)) for key in keys]
    naive_total = chi_square_upper_z(sum(position_chi_squares(naive, size)), size * (size - 1))
    assert naive_total > 6.0, naive_total
