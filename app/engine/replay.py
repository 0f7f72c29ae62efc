"""Any match replays exactly from (rules, seed or dealt deck, dealer, action log)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NotRequired, TypedDict, cast

from app.engine.actions import Action, action_from_json
from app.engine.cards import CARD_TEXT, Card
from app.engine.deal import new_match
from app.engine.play import apply
from app.engine.rules import Rules
from app.engine.state import State
from app.engine.views import ViewJson, sort_hand, view


def replay(
    rules: Rules, seed: int, dealer: int, actions: Iterable[Action], order: Sequence[Card] | None = None
) -> State:
    state = new_match(rules, seed, dealer, order)
    for action in actions:
        state, _ = apply(state, action)
    return state


def replay_views(
    rules_json: dict[str, Any],
    seed: int | str,
    dealer: int,
    actions_json: list[dict[str, Any]],
    order: Sequence[Card] | None = None,
    *,
    hands: bool = False,
) -> list[ReplayViewJson]:
    """The spectator view after the deal and after every action of a stored match (``order``: the
    dealt deck of a provably fair deal, see ``new_match``). ``hands``: each view also shows every
    seat's hand (``"hands"``, sorted as the seat sees it) — for finished matches only."""
    state = new_match(Rules.from_json(rules_json), int(seed), dealer, order)
    views = [_replay_view(state, hands)]
    for data in actions_json:
        state, _ = apply(state, action_from_json(data))
        views.append(_replay_view(state, hands))
    return views


class RevealedHandsJson(TypedDict):
    dealt: list[list[str]]  # every seat's hand as dealt
    final: list[list[str]]  # ... and as left at the end


class ReplayViewJson(ViewJson):
    """A spectator's view of a stored match; with ``hands``, every seat's hand too (the last view of
    a finished match's replay may also reveal the hands as dealt and as left: ``revealed_hands``)."""

    hands: NotRequired[list[list[str]]]
    revealed_hands: NotRequired[RevealedHandsJson]


def _replay_view(state: State, hands: bool) -> ReplayViewJson:
    data = cast(ReplayViewJson, view(state, None))  # a fresh view, its hands added below
    if hands:
        data["hands"] = [[CARD_TEXT[card] for card in sort_hand(hand, state.trump)] for hand in state.hands]
    return data


def seat_timeline(
    rules_json: dict[str, Any],
    seed: int | str,
    dealer: int,
    actions_json: list[dict[str, Any]],
    seat: int,
    order: Sequence[Card] | None = None,
) -> list[dict[str, Any]]:
    """A finished match as one seat lived it, for analysis after the match: one entry per action,
    ``{"ply", "action", "events"}`` with the events redacted for ``seat`` (what it received), and for
    the seat's own actions also ``"view"``, its view just before it acted. Nothing else: no other
    hand, no stock order."""
    from app.engine.codec import event_to_json
    from app.engine.views import public_cards

    state = new_match(Rules.from_json(rules_json), int(seed), dealer, order)
    if not 0 <= seat < state.n:
        raise ValueError(f"there is no seat {seat} at this table")
    timeline: list[dict[str, Any]] = []
    for ply, data in enumerate(actions_json):
        action = action_from_json(data)
        entry: dict[str, Any] = {"ply": ply, "action": data}
        if action.seat == seat:
            entry["view"] = view(state, seat)
        state, events = apply(state, action)
        entry["events"] = [event_to_json(public_cards(event, seat)) for event in events]
        timeline.append(entry)
    return timeline
