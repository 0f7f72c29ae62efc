"""Why an action is refused: one ``ValueError`` subclass per kind of mistake."""

from __future__ import annotations


class IllegalAction(ValueError):
    """An action the state does not accept. ``code`` is stable and machine-readable."""

    code = "illegal_action"


class MatchOver(IllegalAction):
    code = "match_over"


class NotYourTurn(IllegalAction):
    code = "not_your_turn"


class CardNotInHand(IllegalAction):
    code = "card_not_in_hand"


class DoesNotBeat(IllegalAction):
    code = "does_not_beat"


class RankNotOnTable(IllegalAction):
    code = "rank_not_on_table"


class LimitExceeded(IllegalAction):
    code = "limit_exceeded"


class TransferNotAllowed(IllegalAction):
    code = "transfer_not_allowed"


class BadPlay(IllegalAction):
    """Wrong shape: a wrong number of cards, a group that is not a group, an unknown attack index."""

    code = "bad_play"


class NotAllowedHere(IllegalAction):
    """The table's parameters do not offer this action (challenge at an honest table...)."""

    code = "not_allowed_here"
