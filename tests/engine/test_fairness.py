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
from typing import Any

import pytest

from app import cli
from app.engine import Rules, new_match
from app.engine.cards import Card, deck
from app.engine.fairness import (
    FairnessError,
    byte_stream,
    check_replay,
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
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps(played(published())), encoding="utf-8")
    assert cli.main(["verify-deal", "--file", str(good), "--replay", str(replay)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "ok" and out[0].startswith("deck: ") and out[1].startswith("replay: ")
    assert out[0].split()[1:] == published()["deck"]
    # Without the replay the deck is checked but the game is not, and it says so.
    assert cli.main(["verify-deal", "--file", str(good)]) == 2
    out = capsys.readouterr().out
    assert "NOT CHECKED" in out and "\nok" not in out
    data = published()
    data["server_seed"] = flip_hex(str(data["server_seed"]), 0)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")  # the fairness object alone
    assert cli.main(["verify-deal", "--file", str(bad), "--replay", str(replay)]) == 1
    assert "commitment differs" in capsys.readouterr().out
    hidden = published()
    hidden["server_seed"] = None
    bad.write_text(json.dumps({"fairness": hidden}), encoding="utf-8")
    assert cli.main(["verify-deal", "--file", str(bad)]) == 1
    assert "not revealed yet" in capsys.readouterr().out
    # A game dealt from other cards than the published deck: the record checks out, the game does not.
    other = tmp_path / "other.json"
    other.write_text(json.dumps(played(published(), order=swapped(published()["deck"], 25, 30))), encoding="utf-8")
    assert cli.main(["verify-deal", "--file", str(good), "--replay", str(other)]) == 1
    assert "replay: position" in capsys.readouterr().out
    other.write_text(json.dumps({"not": "a replay"}), encoding="utf-8")
    assert cli.main(["verify-deal", "--file", str(good), "--replay", str(other)]) == 1


# ---------------------------------------------------------------------- the replay against the deck


def played(
    fairness: dict[str, object],
    *,
    preset: str = "durak_peak",
    dealer: int = 1,
    order: list[str] | None = None,
    rng: random.Random | None = None,
    cheating: bool = False,
) -> list[dict[str, object]]:
    """A whole match played by the engine from ``order`` (the published deck by default): its replay
    as ``GET /api/matches/{id}/replay`` gives it."""
    from app.engine import action_to_json, apply, decision, legal_actions
    from app.engine.replay import replay_views

    cards = [Card.parse(text) for text in (order or fairness["deck"])]  # type: ignore[attr-defined]
    seats = len(fairness["client_seeds"])  # type: ignore[arg-type]
    rules = Rules.from_json({"preset": preset, "deck": len(cards), "seats": seats, "cheating": cheating})
    state, actions = new_match(rules, 0, dealer, cards), []
    pick = rng or random.Random(7)
    while state.outcome is None:
        seat = pick.choice(decision(state)["seats"])
        action = pick.choice(legal_actions(state, seat))
        actions.append(action_to_json(action))
        state, _ = apply(state, action)
    return replay_views(rules.to_json(), 0, dealer, actions, cards, hands=True)


def swapped(cards: object, first: int, second: int) -> list[str]:
    out = [str(card) for card in cards]  # type: ignore[attr-defined]
    out[first], out[second] = out[second], out[first]
    return out


def fair_record(size: int, seats: int, salt: int) -> dict[str, object]:
    seeds = [bytes([salt, seat]) * 8 for seat in range(seats)]
    return record(EXAMPLE_SEED, f"t-{salt}", 1, size, seeds, deck_order(EXAMPLE_SEED, f"t-{salt}", 1, size, seeds))


def _equal_draws(fairness: dict[str, object]) -> tuple[int, list[dict[str, object]]]:
    """A played match with a position where the attacker and the defender, and nobody else, draw
    as many cards each from the stock after a bout beaten off; and that position."""
    for salt in range(100):
        views: list[dict[str, Any]] = played(fairness, rng=random.Random(salt))
        for step in range(1, len(views)):
            before, after = views[step - 1], views[step]
            attacker, defender = before["attacker"], before["defender"]
            if attacker is None or defender is None or after["stock"] == before["stock"]:
                continue
            seen = {card for hand in before["hands"] for card in hand}
            seen |= {card for pair in before["table"] for card in pair.values() if card}
            drew = [len(set(b) - set(a) - seen) for a, b in zip(before["hands"], after["hands"], strict=True)]
            took = [len(set(b) - set(a)) for a, b in zip(before["hands"], after["hands"], strict=True)] != drew
            others = [count for seat, count in enumerate(drew) if seat not in (attacker, defender)]
            if not took and drew[attacker] == drew[defender] > 0 and not any(others):
                return step, views
    raise AssertionError("no match with equal draws")


@pytest.mark.parametrize("preset", ["durak_peak", "classic36", "durac1993"])
def test_a_replay_played_from_the_deck_checks_out(preset: str) -> None:
    rng = random.Random(preset)
    sizes = [36] if preset == "classic36" else [24, 36, 52]
    for size in sizes:
        for seats in range(2, 7):
            if 6 * seats > size:
                continue
            fairness = fair_record(size, seats, seats)
            for cheating in (False, True):
                views = played(fairness, preset=preset, dealer=rng.randrange(seats), rng=rng, cheating=cheating)
                assert check_replay(fairness["deck"], views) == [], (size, seats, cheating)  # type: ignore[arg-type]


def test_a_replay_dealt_or_drawn_from_other_cards_does_not() -> None:
    fairness = published()
    deck_cards: list[str] = fairness["deck"]  # type: ignore[assignment]
    views = played(fairness)
    assert check_replay(deck_cards, views) == []
    # Another deck altogether (another server seed): the deal itself differs.
    other = deck_order(bytes(32), "tableX", 3, 36, [b"", b"", b""])
    problems = check_replay(deck_cards, played(fairness, order=[str(card) for card in other]))
    assert problems and "was dealt" in problems[0]
    # The same hands dealt, but two cards of the stock exchanged: caught where the first is drawn.
    tampered = played(fairness, order=swapped(deck_cards, 20, 33))
    problems = check_replay(deck_cards, tampered)
    assert len(problems) == 1 and problems[0].startswith("replay: position ") and "drew" in problems[0]
    first_draw = next(i for i, view in enumerate(views) if view["stock"] != views[0]["stock"])
    assert problems[0].startswith(f"replay: position {first_draw}:")
    # A different trump card turned.
    problems = check_replay(deck_cards, played(fairness, order=swapped(deck_cards, 18, 35)))
    assert any("turned trump" in problem for problem in problems)
    # Two seats' hands exchanged at the deal.
    exchanged = [dict(view) for view in views]
    hands = list(exchanged[0]["hands"])  # type: ignore[call-overload]
    hands[0], hands[1] = hands[1], hands[0]
    exchanged[0]["hands"] = hands
    assert "seat 0 was dealt" in check_replay(deck_cards, exchanged)[0]
    # The right cards drawn by the wrong seats: the defender's run of the stock before the attacker's.
    step, views = _equal_draws(fairness)
    before, after = views[step - 1], dict(views[step])
    attacker, defender = before["attacker"], before["defender"]
    got = {seat: set(after["hands"][seat]) - set(before["hands"][seat]) for seat in (attacker, defender)}  # type: ignore[index]
    hands = [list(hand) for hand in after["hands"]]  # type: ignore[attr-defined]
    hands[attacker] = sorted((set(hands[attacker]) - got[attacker]) | got[defender])  # type: ignore[index]
    hands[defender] = sorted((set(hands[defender]) - got[defender]) | got[attacker])  # type: ignore[index]
    after["hands"] = hands
    assert check_replay(deck_cards, [*views[:step], after]) == [
        f"replay: position {step}: the seats drew in the order {[defender, attacker]}, the rules say "
        f"{[attacker, defender]}"
    ]
    assert check_replay(deck_cards, [])[0] == "replay: it is empty"
    assert check_replay(deck_cards, [{"rules": {}}])[0].startswith("replay: cannot read it")


def _from(views: list[dict[str, Any]], step: int, change: Any) -> list[dict[str, Any]]:
    """The replay up to ``step``, with ``change`` applied to every position from ``step`` on."""
    out = [dict(view) for view in views[: step + 1]]
    for view in out[step:]:
        change(view)
    return out


def moved_or_lost(views: list[dict[str, Any]]) -> list[tuple[list[dict[str, Any]], str]]:
    """Replays of a match with cards moved between hands or lost, each with the problem the check
    must report (the web client's check is held to the same: tests/web/test_fairness_web.py)."""
    # A position in the middle of a bout whose defender is not seat 1, and a card seat 0 holds.
    step = next(
        i
        for i in range(len(views) // 3, len(views))
        if views[i - 1]["table"]
        and views[i]["table"]
        and views[i - 1]["defender"] != 1
        and set(views[i - 1]["hands"][0]) & set(views[i]["hands"][0])
    )
    card = sorted(set(views[step - 1]["hands"][0]) & set(views[step]["hands"][0]))[0]

    def handed_over(view: dict[str, Any]) -> None:  # seat 0's card in seat 1's hand
        hands = [list(hand) for hand in view["hands"]]
        if card in hands[0]:
            hands[0].remove(card)
            hands[1].append(card)
        view["hands"] = hands

    def lost(view: dict[str, Any]) -> None:
        view["hands"] = [[other for other in hand if other != card] for hand in view["hands"]]

    def discarded(view: dict[str, Any]) -> None:  # ... and counted in the discard pile
        lost(view)
        view["discard"] = int(view["discard"]) + 1

    # A lead of a card from no hand: the turned trump, still at the bottom of the stock.
    led = next(
        i for i in range(2, len(views)) if views[i]["table"] and not views[i - 1]["table"] and int(views[i]["stock"])
    )
    trump = views[0]["trump_card"]
    forged = dict(views[led], table=[{"attack": trump, "cover": None}], hands=views[led - 1]["hands"])
    return [
        (_from(views, step, handed_over), f"position {step}: seat 1 got {card} from the table or another hand"),
        (_from(views, step, lost), f"position {step}: {card} left play, but the discard pile grew by 0"),
        (_from(views, step, discarded), f"position {step}: {card} went from a hand to the discard pile"),
        ([*views[:led], forged], f"position {led}: {trump} came onto the table from no hand"),
    ]


def test_a_replay_that_moves_or_loses_cards_does_not_check_out() -> None:
    """Cards change hands only through the table, to the defender who picks them up; no card leaves
    play but into the discard pile (docs/fairness.md, "The replay against the deck")."""
    fairness = published()
    deck_cards: list[str] = fairness["deck"]  # type: ignore[assignment]
    views: list[dict[str, Any]] = played(fairness)
    assert check_replay(deck_cards, views) == []
    for tampered, problem in moved_or_lost(views):
        found = check_replay(deck_cards, tampered)
        assert len(found) == 1 and found[0].startswith(f"replay: {problem}"), (found, problem)


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
