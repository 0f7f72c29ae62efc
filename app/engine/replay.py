"""Any match replays exactly from (rules, seed or dealt deck, dealer, action log)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from app.engine.actions import Action, action_from_json
from app.engine.cards import Card
from app.engine.deal import new_match
from app.engine.play import apply
from app.engine.rules import Rules
from app.engine.state import State
from app.engine.views import view


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
) -> list[dict[str, Any]]:
    """The spectator view after the deal and after every action of a stored match (``order``: the
    dealt deck of a provably fair deal, see ``new_match``)."""
    state = new_match(Rules.from_json(rules_json), int(seed), dealer, order)
    views = [view(state, None)]
    for data in actions_json:
        state, _ = apply(state, action_from_json(data))
        views.append(view(state, None))
    return views
