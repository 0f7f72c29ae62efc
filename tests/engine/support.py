"""Helpers for the engine tests: exact positions, applying actions, and a random-play driver."""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from app.engine import (
    Action,
    Card,
    Challenge,
    Cover,
    ExchangeTrump,
    Forfeit,
    IllegalAction,
    Lead,
    Pass,
    Rules,
    State,
    Take,
    ThrowIn,
    Transfer,
    apply,
    deck,
    legal_actions,
    new_match,
    position,
    timeout_actions,
)
from app.engine.rules import MAX_SEATS, PRESETS

Event = dict[str, Any]


def env_int(name: str, default: int) -> int:
    """An integer knob from the environment (bigger runs: ``DURAK_PROPERTY_EXAMPLES=2000``...)."""
    return int(os.environ.get(name, default))


def C(text: str) -> Card:
    return Card.parse(text)


def cs(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in text.split())


def hand_text(state: State, seat: int) -> set[str]:
    return {str(card) for card in state.hands[seat]}


def pos(
    hands: Sequence[str],
    trump: str,
    rules: Rules | None = None,
    **kw: Any,
) -> State:
    """``position`` with a 36-card Durak Peak table sized to the hands unless ``rules`` is given."""
    if rules is None:
        rules = Rules(deck=36, seats=len(hands))
    return position(rules, hands, trump, **kw)


def run(state: State, *actions: Action) -> tuple[State, list[Event]]:
    """Apply ``actions`` in order; return the final state and every event."""
    events: list[Event] = []
    for action in actions:
        state, new = apply(state, action)
        events.extend(new)
    return state, events


def refused(state: State, action: Action) -> IllegalAction:
    """The error ``apply`` raises for ``action`` (fails the test if it is accepted)."""
    try:
        apply(state, action)
    except IllegalAction as exc:
        return exc
    raise AssertionError(f"{action!r} was accepted")


def of_type(events: Iterable[Event], kind: str) -> list[Event]:
    return [event for event in events if event["type"] == kind]


def card_multiset(state: State) -> Counter[Card]:
    cards: Counter[Card] = Counter()
    for hand in state.hands:
        cards.update(hand)
    cards.update(state.stock)
    cards.update(card for pair in state.table for card in pair if card is not None)
    cards.update(state.discard)
    return cards


def assert_cards_conserved(state: State) -> None:
    """Hands + stock + table + discard are exactly the deck: nothing lost, nothing duplicated."""
    cards = card_multiset(state)
    duplicates = [card for card, count in cards.items() if count > 1]
    assert not duplicates, f"duplicated cards {duplicates}"
    assert set(cards) == set(deck(state.rules.deck)), "cards lost or invented"


# --------------------------------------------------------------------------- configurations


def make_rules(
    preset: str = "durak_peak",
    deck_size: int = 36,
    seats: int = 2,
    circle: str = "all",
    transfer: bool = False,
    draws: bool = True,
    cheating: bool = False,
) -> Rules:
    """A valid table close to the requested one (Classic 36 fixes deck, transfer and draws)."""
    if preset == "classic36":
        deck_size, transfer, draws = 36, False, True
    seats = max(2, min(seats, MAX_SEATS[deck_size]))
    return Rules.for_preset(
        preset,  # type: ignore[arg-type]
        deck=deck_size,
        seats=seats,
        circle=circle,
        transfer=transfer,
        draws=draws,
        cheating=cheating,
    )


def random_rules(rng: random.Random) -> Rules:
    return make_rules(
        preset=rng.choice(PRESETS),
        deck_size=rng.choice((24, 36, 52)),
        seats=rng.randint(2, 6),
        circle=rng.choice(("neighbours", "all")),
        transfer=rng.random() < 0.5,
        draws=rng.random() < 0.5,
        cheating=rng.random() < 0.3,
    )


# --------------------------------------------------------------------------- random play


def all_legal(state: State) -> dict[int, list[Action]]:
    """Every seat's legal actions (seats without any are left out)."""
    found: dict[int, list[Action]] = {}
    for seat in range(state.n):
        actions = legal_actions(state, seat)
        if actions:
            found[seat] = actions
    return found


def choose(
    rng: random.Random,
    legal: dict[int, list[Action]],
    state: State,
    *,
    challenge_rate: float = 0.02,
    forfeit_rate: float = 0.0,
) -> Action:
    """A random legal action: a seat, then a kind of action, then one of that kind.

    Challenges (which end the match) are kept rare; with ``forfeit_rate`` the decision timer
    sometimes runs out (``timeout_actions``)."""
    if forfeit_rate and rng.random() < forfeit_rate:
        timeouts = timeout_actions(state)
        if timeouts:
            return rng.choice(timeouts)
    seats = list(legal)
    while True:
        seat = rng.choice(seats)
        by_kind: dict[str, list[Action]] = {}
        for action in legal[seat]:
            by_kind.setdefault(action.kind, []).append(action)
        kinds = list(by_kind)
        if "challenge" in by_kind and len(by_kind) > 1 and rng.random() >= challenge_rate:
            kinds.remove("challenge")
        if kinds == ["challenge"] and len(seats) > 1 and rng.random() >= challenge_rate:
            continue
        return rng.choice(by_kind[rng.choice(kinds)])


StepHook = Callable[[State, Action, State, list[Event], dict[int, list[Action]]], None]


def play_random(
    rules: Rules,
    seed: int,
    rng: random.Random,
    *,
    dealer: int | None = None,
    on_step: StepHook | None = None,
    challenge_rate: float = 0.02,
    forfeit_rate: float = 0.0,
    max_steps: int = 20_000,
) -> tuple[State, list[Action]]:
    """Play one complete match with random legal actions; return the final state and the log.

    ``on_step(before, action, after, events, legal_before)`` runs after every action."""
    state = new_match(rules, seed, dealer)
    log: list[Action] = []
    while state.outcome is None:
        legal = all_legal(state)
        assert legal, f"nobody can act: {state}"
        action = choose(rng, legal, state, challenge_rate=challenge_rate, forfeit_rate=forfeit_rate)
        after, events = apply(state, action)
        log.append(action)
        if on_step is not None:
            on_step(state, action, after, events, legal)
        state = after
        assert len(log) <= max_steps, f"no end after {max_steps} actions"
    return state, log


# --------------------------------------------------------------------------- unlisted actions


def normalised(action: Action) -> Action:
    """Card groups compare regardless of order (``7h 7s`` is the same play as ``7s 7h``)."""
    if isinstance(action, Lead | ThrowIn | Transfer):
        return type(action)(action.seat, tuple(sorted(action.cards)))
    return action


def plausible_actions(state: State, rng: random.Random, count: int) -> list[Action]:
    """Random actions that look like something a client could send: random seats (a few out of
    range), random kinds, cards from the seat's hand or anywhere in the deck, random indices."""
    cards = deck(state.rules.deck)
    found: list[Action] = []
    for _ in range(count):
        seat = rng.randint(-1, state.n)
        in_hand = list(state.hands[seat]) if 0 <= seat < state.n else []

        kind = rng.randrange(8)
        k = rng.choice((1, 1, 1, 2, 3))
        source = in_hand if in_hand and rng.random() < 0.7 else list(cards)
        some = tuple(rng.choice(source) for _ in range(k))
        if kind == 0:
            found.append(Lead(seat, some))
        elif kind == 1:
            found.append(ThrowIn(seat, some))
        elif kind == 2:
            found.append(Cover(seat, rng.randint(-1, len(state.table)), some[0]))
        elif kind == 3:
            found.append(Transfer(seat, some))
        elif kind == 4:
            found.append(Take(seat))
        elif kind == 5:
            found.append(Pass(seat))
        elif kind == 6:
            found.append(Challenge(seat, rng.randint(-1, len(state.moves))))
        else:
            found.append(ExchangeTrump(seat))
    return found


def check_listed_and_unlisted(
    state: State, legal: dict[int, list[Action]], rng: random.Random, *, listed: int, unlisted: int
) -> None:
    """``apply`` accepts listed actions (all, or a sample of ``listed`` per seat) and accepts a
    random plausible action exactly when it is listed; anything else raises ``IllegalAction``."""
    everything = {normalised(action) for actions in legal.values() for action in actions}
    for actions in legal.values():
        sample = actions if len(actions) <= listed else rng.sample(actions, listed)
        for action in sample:
            apply(state, action)  # raises if refused
    for action in plausible_actions(state, rng, unlisted):
        if isinstance(action, Forfeit):
            continue
        try:
            apply(state, action)
        except IllegalAction:
            assert normalised(action) not in everything, f"listed {action!r} refused"
        else:
            assert normalised(action) in everything, f"unlisted {action!r} accepted"
