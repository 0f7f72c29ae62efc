"""The rules engine: pure, deterministic from a seed, standard library only.

    state = new_match(Rules(deck=36, seats=2), seed=42)
    actions = legal_actions(state, seat)
    state, events = apply(state, actions[0])
    view(state, seat)          # what that seat may see
    state.outcome              # None until the match is over

The engine never imports the rest of ``app``.
"""

from app.engine.actions import (
    Action,
    ActionJson,
    ActionParseError,
    Challenge,
    Cover,
    ExchangeTrump,
    Forfeit,
    ForfeitReason,
    Lead,
    Pass,
    Take,
    ThrowIn,
    Transfer,
    action_from_json,
    action_to_json,
)
from app.engine.cards import Card, CardParseError, beats, deck
from app.engine.codec import event_to_json, state_from_json, state_to_json
from app.engine.deal import new_match, new_seed, shuffled
from app.engine.errors import IllegalAction
from app.engine.events import Event, EventJson
from app.engine.payout import coin_changes, payout, series_update
from app.engine.play import apply, legal_actions
from app.engine.position import position
from app.engine.replay import replay, replay_views
from app.engine.rules import PRESET_LABELS, PRESETS, Rules, RulesError, RulesJson
from app.engine.seating import allowance
from app.engine.state import Outcome, OutcomeJson, OutcomeReason, State
from app.engine.views import (
    DecisionJson,
    PublicViewJson,
    SeatViewJson,
    ViewJson,
    decision,
    public_cards,
    public_view,
    seat_view,
    timeout_actions,
    view,
)

__all__ = [
    "PRESETS",
    "PRESET_LABELS",
    "Action",
    "ActionJson",
    "ActionParseError",
    "Card",
    "CardParseError",
    "Challenge",
    "Cover",
    "DecisionJson",
    "Event",
    "EventJson",
    "ExchangeTrump",
    "Forfeit",
    "ForfeitReason",
    "IllegalAction",
    "Lead",
    "Outcome",
    "OutcomeJson",
    "OutcomeReason",
    "Pass",
    "PublicViewJson",
    "Rules",
    "RulesError",
    "RulesJson",
    "SeatViewJson",
    "State",
    "Take",
    "ThrowIn",
    "Transfer",
    "ViewJson",
    "action_from_json",
    "action_to_json",
    "allowance",
    "apply",
    "beats",
    "coin_changes",
    "decision",
    "deck",
    "event_to_json",
    "legal_actions",
    "new_match",
    "new_seed",
    "payout",
    "position",
    "public_cards",
    "public_view",
    "replay",
    "replay_views",
    "seat_view",
    "series_update",
    "shuffled",
    "state_from_json",
    "state_to_json",
    "timeout_actions",
    "view",
]
