"""The events of a table's change as clients get them (``update.events``, ``welcome.events`` and
``recent``): one model each, in a union keyed on ``type`` (``Event``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, TypeAdapter

from app.tables.message_parts import ActionView, Card, FairDeal, OutcomeView, RatingChangeView, Seat, Shape


class EventShape(Shape):
    """What every event has: the version its change made."""

    version: int = Field(description="The version this event's change made.")


class MoveEvent(EventShape):
    """A card move (lead, throw_in, cover, transfer): the action and its index in ``view.moves``."""

    type: Literal["move"]
    seat: Seat
    action: ActionView
    index: int = Field(description="Its index in view.moves: what a challenge names.")


class TakeEvent(EventShape):
    """The defender declares he takes; attackers may still add cards (throw_in_after_take)."""

    type: Literal["take"]
    seat: Seat


class PassEvent(EventShape):
    """An attacker adds nothing more to this bout."""

    type: Literal["pass"]
    seat: Seat


class TransferredEvent(EventShape):
    """After a transfer move: the transferring defender attacks now and ``defender`` defends.
    ``limit`` is the new defender's hand size, as in ``bout_start``."""

    type: Literal["transferred"]
    attacker: Seat
    defender: Seat
    limit: int = Field(description="Cards the new defender holds: the most attacks he can face.")


class ChallengeEvent(EventShape):
    """Cheating tables: a challenge and its ruling; the loser forfeits (a ``match_end`` follows)."""

    type: Literal["challenge"]
    seat: Seat = Field(description="Who challenged.")
    move: int = Field(description="The index of the challenged move in view.moves.")
    ruling: Literal["upheld", "rejected"] = Field(description="upheld: it was a cheat; rejected: it was honest.")
    loser: Seat = Field(description="The cheater (upheld) or the challenger (rejected).")
    rule: Literal["does_not_beat", "rank_not_on_table", "attack_limit", "transfer_rank", "transfer_limit"] | None = (
        Field(
            default=None,
            description="Upheld: the rule the move broke (a cover that does not beat its attack, a throw-in of a "
            "rank not on the table, an attack over the bout's limit, a transfer with a card of another rank, a "
            "transfer the next player cannot hold). Rejected: null.",
        )
    )


class ExchangeTrumpEvent(EventShape):
    """Durac 1993: a seat swapped the lowest trump for the turned card."""

    type: Literal["exchange_trump"]
    seat: Seat
    gave: Card
    got: Card


class ForfeitEvent(EventShape):
    """A seat forfeited (timer ran out, left, disconnected too long): it is the durak."""

    type: Literal["forfeit"]
    seat: Seat
    reason: Literal["timeout", "left", "disconnected"]


class DrawEvent(EventShape):
    """A seat drew from the stock. You see the cards only of your own draws; others get the count
    (and the turned trump card when it was drawn, since everybody saw it)."""

    type: Literal["draw"]
    seat: Seat
    count: int
    cards: list[Card] | None = Field(default=None, description="Your own draws only.")
    trump_card: Card | None = Field(default=None, description="Present when the turned trump card was drawn.")


class BoutEndEvent(EventShape):
    """The bout is over: beaten (the cards go to the discard) or taken (the defender picks them up)."""

    type: Literal["bout_end"]
    result: Literal["beaten", "taken"]
    defender: Seat
    cards: list[Card] = Field(description="Every card that was on the table.")


class OutEvent(EventShape):
    """A seat emptied its hand with the stock gone: it is out, at ``place``."""

    type: Literal["out"]
    seat: Seat
    place: int


class BoutStartEvent(EventShape):
    """A new bout: who leads and who defends. ``limit`` is the number of cards the defender holds
    as the bout starts, the most attacks he can be asked to beat; it is not the bout's room. The
    room is ``view.allowance``: min(``view.cap``, limit) minus the attacks on the table. So a
    defender who took and holds 8 cards shows ``limit`` 8 while the allowance is 5 (the Durak Peak
    cap before the first successful defence) or 6."""

    type: Literal["bout_start"]
    attacker: Seat
    defender: Seat
    limit: int = Field(description="Cards the defender holds as the bout starts.")


class MatchEndEvent(EventShape):
    """The match is over."""

    type: Literal["match_end"]
    outcome: OutcomeView


class SeatEvent(EventShape):
    """A seat was taken (a person joined, a bot was seated) or freed (left, bot removed)."""

    type: Literal["seat"]
    seat: Seat
    name: str | None
    kind: Literal["empty", "human", "bot"]


class MatchStartEvent(EventShape):
    """A match was dealt (the stakes are in escrow from now on)."""

    type: Literal["match_start"]
    match_id: str
    dealer: Seat
    attacker: Seat
    defender: Seat


class RematchEvent(EventShape):
    """A seat proposed a rematch, or agreed to the one proposed (see Rematch)."""

    type: Literal["rematch"]
    seat: Seat = Field(description="Who proposed or agreed.")


class ReadyCheckEvent(EventShape):
    """A staked match is about to start: the ready check opened (see Ready check)."""

    type: Literal["ready_check"]
    ready: list[Seat] = Field(description="The seats that confirmed by what opened it (each connected).")


class ReadyEvent(EventShape):
    """A seated player confirmed he is ready (see Ready check)."""

    type: Literal["ready"]
    seat: Seat


class ResultsEvent(EventShape):
    """The finished match's results (also in ``table.results`` from now on), with its deal revealed."""

    type: Literal["results"]
    outcome: OutcomeView
    coin_changes: dict[str, int]
    match_id: str
    fairness: FairDeal | None = Field(default=None, description="The match's deal, revealed.")


class RatingsEvent(EventShape):
    """A moment after a rated match's results: what it did to each seat's ratings (also in
    ``table.results.ratings`` from now on). Only rated matches have it (every seat an account, long
    enough, see docs/integrity.md)."""

    type: Literal["ratings"]
    match_id: str
    ratings: dict[str, RatingChangeView] = Field(description="Seat number -> the rating change.")


class ClientSeedEvent(EventShape):
    """A seated player sent his client seed for the next deal (the seed itself is revealed with it)."""

    type: Literal["client_seed"]
    seat: Seat


class CommitmentEvent(EventShape):
    """As a match ends: the commitment to the next match's secret seed (also in ``table.fairness``)."""

    type: Literal["commitment"]
    match_number: int
    commitment: str


Event = Annotated[
    MoveEvent
    | TakeEvent
    | PassEvent
    | TransferredEvent
    | ChallengeEvent
    | ExchangeTrumpEvent
    | ForfeitEvent
    | DrawEvent
    | BoutEndEvent
    | OutEvent
    | BoutStartEvent
    | MatchEndEvent
    | SeatEvent
    | MatchStartEvent
    | RematchEvent
    | ReadyCheckEvent
    | ReadyEvent
    | ResultsEvent
    | RatingsEvent
    | ClientSeedEvent
    | CommitmentEvent,
    Field(discriminator="type"),
]
event_adapter = TypeAdapter(Event)
