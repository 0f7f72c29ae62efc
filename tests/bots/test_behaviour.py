"""What each level does in small positions built with ``position``."""

from __future__ import annotations

from typing import Any

from app.bots import make_bot
from app.engine import Rules, action_from_json, apply, deck, event_to_json, position, public_cards, view
from bench._common import play_match

RULES = Rules(deck=36, seats=2)


def at(rules: Rules, hands: list[str], table: list[tuple[str, str | None]] = (), stock: int = 20, **kw: Any) -> Any:
    """A position with spades trumps: the given hands and table, ``stock`` other cards in the stock
    (the ace of spades turned, last), the rest of the deck already discarded."""
    used = {c for hand in hands for c in hand.split()} | {c for pair in table for c in pair if c}
    rest = [str(c) for c in deck(rules.deck) if str(c) not in used and str(c) != "As"]
    pile = [*rest[: stock - 1], "As"] if stock else []
    return position(rules, hands, "As", stock=pile, table=list(table), discard=rest[max(0, stock - 1) :], **kw)


def ask(bot: Any, state: Any, seat: int) -> dict[str, Any]:
    seen = view(state, seat)
    choice = bot.choose(seen, seen["legal"])
    assert choice is not None and choice in seen["legal"]
    return choice


def play(state: Any, bots: list[Any], action: dict[str, Any]) -> Any:
    state, events = apply(state, action_from_json(action))
    for seat, bot in enumerate(bots):
        if bot is not None:
            for event in events:
                bot.observe(event_to_json(public_cards(event, seat)))
    return state


def test_easy_covers_with_the_smallest_card_that_beats() -> None:
    state = at(RULES, ["6c 7c 8c 9c Kc", "Ah 10h Qh 6s Jd Qd"], [("9h", None)])
    choice = ask(make_bot("easy", 1, seed=1), state, 1)
    assert choice == {"type": "cover", "seat": 1, "attack": 0, "card": "10h"}


def test_easy_covers_with_its_lowest_trump_when_it_must_and_takes_when_it_cannot() -> None:
    state = at(RULES, ["6c 7c 8c 9c Kc", "Ks 7s 7d 8d Jd Qd"], [("9h", None)])
    assert ask(make_bot("easy", 1, seed=1), state, 1)["card"] == "7s"
    state = at(RULES, ["10c 8c 9c Kc", "7d 8d Jd Qd 6c 7c"], [("9h", None)])
    assert ask(make_bot("easy", 1, seed=1), state, 1)["type"] == "take"


def test_easy_leads_its_lowest_card() -> None:
    state = at(RULES, ["Qh 6s 8c 7d Ac Kd", "Ah 10h Jh 9s Jd Qd"])
    assert ask(make_bot("easy", 0, seed=1), state, 0) == {"type": "lead", "seat": 0, "cards": ["7d"]}


def test_normal_does_not_waste_a_high_trump_on_a_low_card_early() -> None:
    state = at(RULES, ["7c 8c 9c 10c Jc Kc", "Ks 7d 8d 9h 10h Jd"], [("6c", None)])
    assert ask(make_bot("normal", 1, seed=1), state, 1)["type"] == "take"
    assert ask(make_bot("easy", 1, seed=1), state, 1)["card"] == "Ks"  # easy just covers


def test_normal_leads_plain_cards_and_keeps_trumps_early() -> None:
    state = at(RULES, ["6s 7s 9d Qh Kc Jd", "Ah 10h Jh 8s 10d Qd"])
    choice = ask(make_bot("normal", 0, seed=1), state, 0)
    assert choice["type"] == "lead" and not choice["cards"][0].endswith("s")


def test_normal_throws_in_cheap_cards_and_keeps_trumps() -> None:
    state = at(RULES, ["9c 9s 7d Qh Kc", "Ah Jh 8s Jd Qd"], [("9h", "10h")])
    choice = ask(make_bot("normal", 0, seed=1), state, 0)
    assert choice == {"type": "throw_in", "seat": 0, "cards": ["9c"]}


def test_normal_transfers_with_a_cheap_card() -> None:
    rules = Rules(deck=36, seats=2, transfer=True)
    state = at(rules, ["6c 7c 8c 10c Kc", "9d Ah Qs Js Jd Qd"], [("9h", None)])
    assert ask(make_bot("normal", 1, seed=1), state, 1) == {"type": "transfer", "seat": 1, "cards": ["9d"]}


def test_hard_finds_a_forced_win_in_a_small_endgame() -> None:
    # The stock is empty and the hard bot saw every other card go to the discard pile, so the
    # opponent's two cards (Qc 10s) are known. Hearts are trumps. Only leading the king of diamonds
    # wins: the opponent cannot beat it and must take. The obvious low lead loses.
    hands = ["Jc 9s Qh Kd", "Qc 10s"]
    rules = Rules(deck=36, seats=2)
    from app.engine import deck

    held = {c for hand in hands for c in hand.split()}
    discard = [str(c) for c in deck(36) if str(c) not in held]
    state = position(rules, hands, "8h", discard=discard, defended_once=True)
    bots = {level: make_bot(level, 0, seed=3) for level in ("easy", "normal", "hard")}
    for bot in bots.values():
        bot.observe({"type": "bout_end", "result": "beaten", "defender": 1, "cards": discard})
    win = {"type": "lead", "seat": 0, "cards": ["Kd"]}
    assert ask(bots["hard"], state, 0) == win
    assert ask(bots["normal"], state, 0) != win
    assert ask(bots["easy"], state, 0) != win
    # ... and it plays the whole endgame out to a win against either of them.
    for level in ("easy", "normal"):
        hard = make_bot("hard", 0, seed=3)
        hard.observe({"type": "bout_end", "result": "beaten", "defender": 1, "cards": discard})
        result = play_match(rules, 0, [hard, make_bot(level, 1, seed=4)], state=state)
        assert result.durak == 1


def test_hard_plays_the_exact_endgame_with_transfer_and_without_draws() -> None:
    rules = Rules(deck=36, seats=2, transfer=True, draws=False)
    hands = ["Jc 9s Qh Kd", "Qc 10s"]
    from app.engine import deck

    held = {c for hand in hands for c in hand.split()}
    discard = [str(c) for c in deck(36) if str(c) not in held]
    state = position(rules, hands, "8h", discard=discard, defended_once=True)
    hard = make_bot("hard", 0, seed=3)
    hard.observe({"type": "bout_end", "result": "beaten", "defender": 1, "cards": discard})
    result = play_match(rules, 0, [hard, make_bot("normal", 1, seed=4)], state=state)
    assert result.durak == 1


# ---------------------------------------------------------------------- cheating tables

CHEAT_RULES = Rules(deck=36, seats=2, cheating=True, transfer=True)


def cheat_case(hands: list[str], moves: list[dict[str, Any]], watcher: int, **kw: Any) -> dict[str, Any] | None:
    state = at(CHEAT_RULES, hands, **kw)
    bots: list[Any] = [None, None]
    bots[watcher] = make_bot("normal", watcher, seed=1)
    for move in moves:
        state = play(state, bots, move)
    seen = view(state, watcher)
    return bots[watcher].choose(seen, seen["legal"])


def test_challenges_a_cover_that_does_not_beat() -> None:
    choice = cheat_case(
        ["9h 6c 7c 8c 9c Kc", "7d 8d Jd Qd 10c Jc"],
        [{"type": "lead", "seat": 0, "cards": ["9h"]}, {"type": "cover", "seat": 1, "attack": 0, "card": "Jd"}],
        watcher=0,
    )
    assert choice == {"type": "challenge", "seat": 0, "move": 1}


def test_challenges_a_throw_in_of_a_rank_not_on_the_table() -> None:
    choice = cheat_case(
        ["9h 6c 7c 8c 9c Kc", "7d 8d Jd Qd 10c Jc"],
        [{"type": "lead", "seat": 0, "cards": ["9h"]}, {"type": "throw_in", "seat": 0, "cards": ["6c"]}],
        watcher=1,
    )
    assert choice == {"type": "challenge", "seat": 1, "move": 1}


def test_challenges_a_throw_in_over_the_limit() -> None:
    # The defender holds two cards: a third attack is one too many.
    choice = cheat_case(
        ["9h 9c 9d 8c 7c Kc", "7d 8d"],
        [
            {"type": "lead", "seat": 0, "cards": ["9h"]},
            {"type": "throw_in", "seat": 0, "cards": ["9c"]},
            {"type": "throw_in", "seat": 0, "cards": ["9d"]},
        ],
        watcher=1,
    )
    assert choice == {"type": "challenge", "seat": 1, "move": 2}


def test_challenges_a_transfer_of_another_rank() -> None:
    choice = cheat_case(
        ["9h 6c 7c 8c 9c Kc", "7d 8d Jd Qd 10c Jc"],
        [{"type": "lead", "seat": 0, "cards": ["9h"]}, {"type": "transfer", "seat": 1, "cards": ["10c"]}],
        watcher=0,
    )
    assert choice == {"type": "challenge", "seat": 0, "move": 1}


def test_challenges_a_transfer_to_a_player_with_too_few_cards() -> None:
    choice = cheat_case(
        ["9h 7c", "9d 8d Jd Qd 10c Jc"],
        [{"type": "lead", "seat": 0, "cards": ["9h"]}, {"type": "transfer", "seat": 1, "cards": ["9d"]}],
        watcher=0,
        defended_once=True,
    )
    assert choice is not None and choice["type"] == "challenge" and choice["move"] == 1


def test_never_challenges_honest_moves() -> None:
    choice = cheat_case(
        ["9h 9c 10d 7c 8c Kc", "10h 8d Jd Qd 10c Jc"],
        [
            {"type": "lead", "seat": 0, "cards": ["9h"]},
            {"type": "cover", "seat": 1, "attack": 0, "card": "10h"},
            {"type": "throw_in", "seat": 0, "cards": ["10d"]},
        ],
        watcher=1,
    )
    assert choice is None or choice["type"] != "challenge"
    choice = cheat_case(
        ["9h 9c 10d 7c 8c Kc", "10h 8d Jd Qd 10c Jc"],
        [
            {"type": "lead", "seat": 0, "cards": ["9h"]},
            {"type": "cover", "seat": 1, "attack": 0, "card": "10h"},
            {"type": "throw_in", "seat": 0, "cards": ["10d"]},
        ],
        watcher=0,
    )
    assert choice is None or choice["type"] != "challenge"


def test_every_level_challenges_a_cheat_on_the_bouts_last_move_in_the_window() -> None:
    # The defender covers with his last card and it does not beat: the bout waits for the window.
    for level in ("easy", "normal", "hard"):
        state = at(CHEAT_RULES, ["9h 6c 7c", "Jd"], stock=0)
        for move in (
            {"type": "lead", "seat": 0, "cards": ["9h"]},
            {"type": "cover", "seat": 1, "attack": 0, "card": "Jd"},
        ):
            state = play(state, [None, None], move)
        assert state.phase == "challenge"
        assert ask(make_bot(level, 0, seed=1), state, 0) == {"type": "challenge", "seat": 0, "move": 1}


def test_every_level_passes_on_the_window_of_an_honest_bout() -> None:
    for level in ("easy", "normal", "hard"):
        state = at(CHEAT_RULES, ["9h 6c 7c", "10h 8d"])
        for move in (
            {"type": "lead", "seat": 0, "cards": ["9h"]},
            {"type": "cover", "seat": 1, "attack": 0, "card": "10h"},
            {"type": "pass", "seat": 0},
        ):
            state = play(state, [None, None], move)
        assert state.phase == "challenge"
        for seat in (0, 1):
            assert ask(make_bot(level, seat, seed=1), state, seat) == {"type": "pass", "seat": seat}


class Cheater:
    """Plays any legal action the engine offers, cheats included (never challenges)."""

    def __init__(self, seed: int) -> None:
        import random

        self.rng = random.Random(seed)

    def observe(self, event_json: dict[str, Any]) -> None:
        pass

    def choose(self, seen: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any] | None:
        options = [a for a in legal if a["type"] != "challenge"]
        if not options or seen["seat"] not in seen["decision"]["seats"]:
            return None
        return self.rng.choice(options)


def test_bots_catch_cheaters_and_only_them() -> None:
    caught = 0
    for seed in range(12):
        rules = Rules(deck=36, seats=3, cheating=True, transfer=seed % 2 == 0)
        players = [Cheater(seed), make_bot("hard", 1, seed, 10), make_bot("normal", 2, seed)]
        result = play_match(rules, seed, players)
        for challenge in result.challenges:
            assert challenge["ruling"] == "upheld" and challenge["loser"] == 0, challenge
        if result.cheats:
            # A cheat by seat 0 is caught before the bout ends.
            assert result.challenges, result.cheats
            caught += 1
    assert caught >= 6
