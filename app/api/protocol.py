"""The websocket protocol: every message is a pydantic model in a union keyed on ``type``.

``docs/protocol.md`` is generated from these models (``python -m app.api.protocol_docs``) and a test
checks that it is current, so the document cannot drift from the code.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from app.engine import Rules, State, apply, event_to_json, legal_actions, new_match, public_cards, view
from app.tables.commands import PLAY_COMMANDS

MAX_VERSION = 2**53 - 1  # the largest integer every JSON client reads exactly
Version = Annotated[int, Field(ge=0, le=MAX_VERSION)]
CardText = Annotated[str, Field(pattern=r"^(10|[2-9JQKAjqka])[cdhsCDHS]$", examples=["10h"])]
CommandId = Annotated[str, Field(min_length=1, max_length=64, description="Client-chosen; echoed in the ack/error.")]


class _Command(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: CommandId
    version: Version | None = Field(
        default=None,
        description="The table version the client acted on; a stale illegal command is "
        "refused with code stale_version.",
    )


class Hello(BaseModel):
    """Required: the first message after connecting, answered by ``welcome``; until then the
    connection receives no ``update`` or ``presence``. ``last_version`` resumes from a version
    already seen. Send it again at any time for a fresh snapshot."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["hello"]
    last_version: int | None = Field(
        default=None,
        ge=-MAX_VERSION,
        le=MAX_VERSION,
        description="The last version you saw (negative: none). When the table still has the events "
        "after it they come along; a version the table never had (beyond its own) or too old to "
        "replay gets the snapshot alone, without resumed_from.",
    )


class LeadCmd(_Command):
    """The main attacker opens the bout (several cards of a rank only under Durac 1993)."""

    type: Literal["lead"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")


class ThrowInCmd(_Command):
    type: Literal["throw_in"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")


class CoverCmd(_Command):
    type: Literal["cover"]
    attack: int = Field(ge=0, le=51, description="Index of the attack card in view.table.")
    card: CardText = Field(description="The covering card, e.g. 9h.")


class TransferCmd(_Command):
    type: Literal["transfer"]
    cards: list[CardText] = Field(min_length=1, max_length=6, description="Card codes: rank then suit, e.g. 7h, 10s.")


class TakeCmd(_Command):
    type: Literal["take"]


class PassCmd(_Command):
    """An attacker has nothing (more) to add: "bito" when all is covered."""

    type: Literal["pass"]


class ChallengeCmd(_Command):
    """Cheating tables: claim that move number ``move`` of the current bout broke a rule."""

    type: Literal["challenge"]
    move: int = Field(ge=0, le=255, description="Index of the move in view.moves.")


class ExchangeTrumpCmd(_Command):
    """Durac 1993: swap the lowest trump for the turned card before the first attack."""

    type: Literal["exchange_trump"]


class LeaveCmd(_Command):
    """Leave the seat; during a match this forfeits it (§8)."""

    type: Literal["leave"]


class RematchCmd(_Command):
    """After a match: propose a rematch, or agree to the one proposed. It starts when every seat is
    taken by a player who agreed (bots agree by themselves; sitting down in a free seat is agreeing),
    and only then are the stakes taken. ``table.rematch`` shows who agreed and the time left; whoever
    has not agreed when it runs out (60 s) gives up his seat, and the table waits for players again.
    To decline, ``leave``."""

    type: Literal["rematch"]


class ReadyCmd(_Command):
    """Before a staked match: confirm you are ready while ``table.ready_check`` is open (see Ready
    check). The match starts, and the stakes are taken, once every human seated is connected and has
    confirmed. Refused with ``no_ready_check`` when none is open."""

    type: Literal["ready"]


class ClientSeedCmd(_Command):
    """A seated player's own randomness for the next deal (docs/fairness.md): 128 bits made in the
    browser (``crypto.getRandomValues``), sent only after the table's commitment and naming it.
    Accepted between matches only (refused with ``match_running`` during one, ``stale_commitment``
    when it names another commitment); sending again replaces it. The deal reveals every seed when
    the match ends."""

    type: Literal["client_seed"]
    seed: str = Field(pattern=r"^[0-9a-fA-F]{32}$", description="32 hex digits (128 bits).")
    commitment: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="The table's current commitment (`table.fairness.commitment`)."
    )


class ChatCmd(BaseModel):
    """Say something at the table (plain text, shown as text). Seated players write in the players'
    chat, everyone else in the spectators' chat. At most 5 chat messages per 10 s per player (error
    chat_rate_limited with retry_after_ms); refused with chat_off where the creator turned chat off.
    Answered by an ack; the line itself comes back as a ``chat`` message like everyone else's."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["chat"]
    id: CommandId
    text: str = Field(min_length=1, max_length=200, description="At most 200 characters.")


ChatPhraseKey = Literal["gg", "hurry", "well_played", "oops", "hello", "thanks", "nice_move", "bad_luck"]


class ChatPhraseCmd(BaseModel):
    """Send a quick phrase by its key; each client shows it in its own language. Limits as chat."""

    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["chat_phrase"]
    id: CommandId
    key: ChatPhraseKey


class Ping(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    type: Literal["ping"]
    id: str | None = Field(default=None, max_length=64)


ClientMessage = Annotated[
    Hello
    | LeadCmd
    | ThrowInCmd
    | CoverCmd
    | TransferCmd
    | TakeCmd
    | PassCmd
    | ChallengeCmd
    | ExchangeTrumpCmd
    | LeaveCmd
    | RematchCmd
    | ReadyCmd
    | ClientSeedCmd
    | ChatCmd
    | ChatPhraseCmd
    | Ping,
    Field(discriminator="type"),
]
client_message = TypeAdapter(ClientMessage)
CLIENT_TYPES = frozenset(
    typing.get_args(model.model_fields["type"].annotation)[0]
    for model in typing.get_args(typing.get_args(ClientMessage)[0])
)
# The one list of play commands is the tables layer's (each becomes an engine action there).
PLAY_MODELS = {
    typing.get_args(model.model_fields["type"].annotation)[0]: model
    for model in (LeadCmd, ThrowInCmd, CoverCmd, TransferCmd, TakeCmd, PassCmd, ChallengeCmd, ExchangeTrumpCmd)
}
assert tuple(PLAY_MODELS) == PLAY_COMMANDS, "app/tables/commands.py PLAY_COMMANDS and these models differ"


# ---------------------------------------------------------------------------- what the server sends
#
# The server builds these messages itself (the actor splices pre-encoded JSON); the models below
# describe them for docs/protocol.md and for the tests, which validate every message real matches
# produce against them. ``extra="forbid"``: a field the server sends but the models do not
# describe fails those tests, so the document cannot fall behind the code.


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


Card = Annotated[str, Field(examples=["10h"])]
Seat = int


class ActionView(_Shape):
    """An action in ``view.legal`` or ``view.moves``: a command's fields (without ``id`` and
    ``version``) plus the seat that makes it. ``forfeit`` appears only in a finished match's log."""

    type: Literal["lead", "throw_in", "cover", "transfer", "take", "pass", "challenge", "exchange_trump", "forfeit"]
    seat: Seat
    cards: list[Card] | None = Field(default=None, description="lead, throw_in, transfer: the cards played.")
    attack: int | None = Field(default=None, description="cover: the index of the attack in view.table.")
    card: Card | None = Field(default=None, description="cover: the covering card.")
    move: int | None = Field(default=None, description="challenge: the index of the move in view.moves.")
    reason: str | None = Field(default=None, description="forfeit: timeout, left or disconnected.")


class PlayerView(_Shape):
    """One entry of ``view.players``, one per seat, in seat order."""

    seat: Seat
    cards: int = Field(description="How many cards the seat holds (only your own hand is shown, in view.hand).")
    out: bool = Field(description="The seat has emptied its hand and left the match (it is safe).")
    place: int | None = Field(description="1-based finishing place once known (ties share the better place).")
    role: Literal["attacker", "defender", "thrower"] | None = Field(
        description="attacker: the main attacker; defender; thrower: may add cards to this bout; null: none."
    )
    passed: bool = Field(
        description="The seat has passed in this bout (it adds nothing more unless a new cover); in the "
        "challenge phase: it passed on challenging."
    )


class TablePair(_Shape):
    """One attack on the table and its cover."""

    attack: Card
    cover: Card | None = Field(description="The covering card, or null while the attack is open.")


class Decision(_Shape):
    """Whose decision the table waits for (§8): the move timer (``table.deadline_ms``) runs for it."""

    kind: Literal["lead", "defend", "throw_in", "throw_in_after_take", "challenge", "none"] = Field(
        description="lead: the main attacker opens the bout; defend: the defender covers, transfers or takes; "
        "throw_in: all is covered, attackers add cards or pass; throw_in_after_take: the defender takes, "
        "attackers may add cards he will pick up; challenge: a cheating table's played-out bout waits for "
        "the seats that may still challenge a move of it (challenge or pass: no challenge); none: the match "
        "is over."
    )
    seats: list[Seat] = Field(description="The seats that must decide (several attackers at once when throwing in).")
    forfeits: bool = Field(
        description="true: running out of time forfeits the match (lead, defend); false: it counts as a pass."
    )


class OutcomeView(_Shape):
    """How the match ended (``view.outcome``, the ``match_end`` event, ``table.results.outcome``)."""

    draw: bool = Field(description="Nobody is the durak (every hand emptied together at a table with draws).")
    durak: Seat | None = Field(description="The loser, or null for a draw.")
    order: list[Seat] = Field(description="Seats in the order they went out.")
    places: list[list[Seat]] = Field(description="Seats grouped by place, best first; tied seats share a group.")
    forfeit: Seat | None = Field(description="The seat that forfeited, if the match ended by a forfeit.")
    reason: Literal["timeout", "left", "disconnected", "challenge"] | None = Field(
        description="Why it ended early; null when played out."
    )
    detail: str = Field(description="A sentence for people.")


class View(_Shape):
    """What you may see of the match (``welcome.view``, ``update.view``; null before the first
    match). Spectators get the same without ``hand`` and ``legal``. Never another hand, the order
    of the stock or the seed."""

    phase: Literal["lead", "bout", "challenge", "over"] = Field(
        description="lead: waiting for the main attacker to open a bout; bout: cards are on the table; "
        "challenge: (cheating tables) the bout is played out and waits, for at most the challenge window "
        "(DURAK_CHALLENGE_WINDOW_S, table.deadline_ms), until every seat that may challenge has challenged or "
        "passed; over: the match has ended (see outcome)."
    )
    ply: int = Field(description="Actions applied in this match so far.")
    rules: dict[str, Any] = Field(
        description="The match's rules: the fields of POST /api/tables (deck, seats, circle, transfer, draws, "
        "timer, stake, cheating, preset); see docs/api.md."
    )
    dealer: Seat
    trump: Literal["c", "d", "h", "s"] = Field(description="The trump suit.")
    trump_card: Card = Field(description="The turned card that set the trump.")
    trump_card_in_stock: bool = Field(description="The turned card is still in the stock (drawn last).")
    stock: int = Field(description="Cards left in the stock.")
    discard: int = Field(description="Cards in the discard pile.")
    players: list[PlayerView]
    table: list[TablePair] = Field(description="The attacks of this bout in order; a cover's attack is its index.")
    attacker: Seat | None = Field(description="The main attacker (null when the match is over).")
    defender: Seat | None = Field(description="The defender (null when the match is over).")
    taking: bool = Field(description="The defender has declared that he takes.")
    cap: int = Field(
        description="The most attacks a bout may hold now: 5 until the first successful defence at a Durak Peak "
        "table, 6 after (always 6 under the other presets)."
    )
    allowance: int = Field(
        description="How many more attack cards fit in this bout: min(cap, cards the defender held when the "
        "bout started) minus the attacks on the table; 0 when the match is over."
    )
    decision: Decision
    moves: list[ActionView] = Field(
        description="The card moves of this bout (a challenge names one by index); cleared when the bout ends."
    )
    order: list[Seat] = Field(description="Seats that went out so far, in order.")
    exchange_open: bool = Field(description="Durac 1993: the lowest trump may still be exchanged for the turned card.")
    outcome: OutcomeView | None = Field(description="Set when phase is over.")
    seat: Seat | None = Field(description="Whose view this is; null for a spectator.")
    hand: list[Card] | None = Field(
        default=None, description="Your cards, sorted (non-trumps by rank then suit, trumps last). Seated only."
    )
    legal: list[ActionView] | None = Field(
        default=None,
        description="Every action the table accepts from you now (cheats included at a cheating "
        "table). Send one as a command. Seated only.",
    )


class SeatRating(_Shape):
    """A seated account's rating (``table.seats[].rating``)."""

    rating: int = Field(description="The ordinal mu - 3 sigma on a scale where a new player has 1500.")
    provisional: bool = Field(description="Fewer than 5 rated matches (shown with a question mark).")


class SeatInfo(_Shape):
    """One entry of ``table.seats``."""

    seat: Seat
    kind: Literal["empty", "human", "bot"]
    name: str | None = Field(description="The player's display name; Bot (level) for a bot; null when empty.")
    level: str | None = Field(description="A bot's level (easy, normal, hard); null otherwise.")
    player: str | None = Field(description="The seated person's key (compare with table.you); null for bots.")
    guest: bool = Field(default=False, description="The seated person is a guest (clients show a badge).")
    rating: SeatRating | None = Field(
        default=None, description="An account's rating when it sat down; null for guests, bots and empty seats."
    )
    connected: bool = Field(description="The player has a connection open (always true for a bot).")
    deadline_ms: int | None = Field(
        default=None,
        description="Milliseconds this seat has left for the decision the match waits on it for, as of sending; "
        "null when the match does not wait for it (see Deadlines).",
    )
    deadline_kind: Literal["timer", "idle", "grace"] | None = Field(
        default=None,
        description="Which limit deadline_ms is: the move timer, the idle limit, or the disconnect grace.",
    )


class FairDeal(_Shape):
    """A finished match's deal, revealed (docs/fairness.md): anyone can recompute ``commitment`` from
    ``server_seed`` and the deck from everything."""

    algorithm: Literal["durak-peak/v1"]
    table: str = Field(description="The table code that went into the commitment and the deal.")
    match_number: int = Field(description="The table's match number, from 1.")
    deck_size: int
    commitment: str = Field(description="SHA-256 hex; the table showed it before any client seed was accepted.")
    server_seed: str = Field(description="The server's 256-bit secret (hex), revealed now that the match is over.")
    client_seeds: list[str] = Field(description="Each seat's client seed in seat order (hex); empty: none (bots).")
    deck: list[Card] = Field(description="The dealt deck, first card dealt first.")


class TableFairness(_Shape):
    """``table.fairness``: the commitment to the secret seed of the current deal (see Provably fair deals)."""

    algorithm: Literal["durak-peak/v1"]
    match_number: int = Field(description="The match it is for: the running one, or the next.")
    commitment: str = Field(description="SHA-256 hex of the table code, match number and secret server seed.")
    client_seeds: list[Seat] = Field(description="The seats whose players sent a client seed for it.")


class RatingChangeView(_Shape):
    """What a rated match did to one seat's ratings (``table.results.ratings``, the ``ratings`` event)."""

    rating: int = Field(description="The all-time rating after the match.")
    change: int = Field(description="Its change by the match (+/-).")
    provisional: bool = Field(description="Fewer than 5 rated matches.")
    season_rating: int | None = Field(description="The rating in the season the match counts for; null if none.")
    season_change: int | None = Field(description="Its change by the match.")


class Results(_Shape):
    """``table.results``: the last finished match of this table."""

    outcome: OutcomeView
    coin_changes: dict[int, int] = Field(description="Seat number -> coins won (+) or lost (-); all 0 at free tables.")
    match_id: str
    fairness: FairDeal | None = Field(default=None, description="The match's deal, revealed.")
    ratings: dict[int, RatingChangeView] | None = Field(
        default=None,
        description="Seat number -> the match's rating change, for the seats of a rated match, once the ledger "
        "has recorded it (a moment after the results: a `ratings` event brings it); absent otherwise.",
    )


class RematchProposalInfo(_Shape):
    """``table.rematch``: a rematch someone proposed after a match."""

    agreed: list[Seat] = Field(description="The seats that agreed so far (bots agree by themselves).")
    deadline_ms: int = Field(description="Milliseconds left to agree, as of sending.")


class ReadyCheckInfo(_Shape):
    """``table.ready_check``: a staked match is about to start (see Ready check)."""

    ready: list[Seat] = Field(description="The seats that confirmed (each connected).")
    deadline_ms: int = Field(description="Milliseconds left to confirm, as of sending.")


class TableInfo(_Shape):
    """The table's public facts (``welcome.table``, ``update.table``, ``presence.table``)."""

    code: str | None = Field(description="The invite code; null for spectators (a watch link never reveals it).")
    name: str | None
    private: bool = Field(description="Not listed in the lobby.")
    chat: bool = Field(default=True, description="Chat is on (the creator may turn it off at creation).")
    status: Literal["waiting", "playing", "finished"] = Field(
        description="waiting: seats are filling (a match starts when the last seat fills, or on /start); playing: a "
        "match runs; finished: the match is over and table.results holds it, until a rematch."
    )
    rules: dict[str, Any] = Field(description="The table's rules (as view.rules).")
    creator: str = Field(description="The creator's person key (only the creator seats bots and starts early).")
    seats: list[SeatInfo]
    spectators: int = Field(description="Open spectator connections.")
    series: dict[int, list[int]] = Field(
        description="Seat number -> [wins, losses] of the person (or bot) in that seat, over all matches at "
        "this table: a win for the first player out, a loss for the durak; a draw counts for nobody."
    )
    grace_s: float = Field(
        default=60.0, description="Seconds a disconnected player has to come back before his seat forfeits."
    )
    deadline_ms: int | None = Field(
        description="Milliseconds left for the current decision (view.decision), as of sending: the earliest of "
        "seats[].deadline_ms, or the challenge window; null when nothing runs out."
    )
    rematch: RematchProposalInfo | None = Field(
        default=None, description="An open rematch proposal (see Rematch); null when there is none."
    )
    ready_check: ReadyCheckInfo | None = Field(
        default=None,
        description="Before a staked match: the open ready check (see Ready check); null when there is none.",
    )
    fairness: TableFairness = Field(description="The commitment of the current deal (see Provably fair deals).")
    match_id: str | None = Field(description="The current or last match; its record is /api/matches/{id}.")
    results: Results | None = Field(
        description="The last finished match; null before the first one ends and again once the next one starts."
    )
    version: int = Field(description="The table's version (as the message's version).")
    you: str | None = Field(
        default=None,
        description="Your person key (compare with seats[].player); absent from the updates and presence "
        "messages spectators get.",
    )


class _Event(_Shape):
    version: int = Field(description="The version this event's change made.")


class MoveEvent(_Event):
    """A card move (lead, throw_in, cover, transfer): the action and its index in ``view.moves``."""

    type: Literal["move"]
    seat: Seat
    action: ActionView
    index: int = Field(description="Its index in view.moves: what a challenge names.")


class TakeEvent(_Event):
    """The defender declares he takes; attackers may still add cards (throw_in_after_take)."""

    type: Literal["take"]
    seat: Seat


class PassEvent(_Event):
    """An attacker adds nothing more to this bout."""

    type: Literal["pass"]
    seat: Seat


class TransferredEvent(_Event):
    """After a transfer move: the transferring defender attacks now and ``defender`` defends.
    ``limit`` is the new defender's hand size, as in ``bout_start``."""

    type: Literal["transferred"]
    attacker: Seat
    defender: Seat
    limit: int = Field(description="Cards the new defender holds: the most attacks he can face.")


class ChallengeEvent(_Event):
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


class ExchangeTrumpEvent(_Event):
    """Durac 1993: a seat swapped the lowest trump for the turned card."""

    type: Literal["exchange_trump"]
    seat: Seat
    gave: Card
    got: Card


class ForfeitEvent(_Event):
    """A seat forfeited (timer ran out, left, disconnected too long): it is the durak."""

    type: Literal["forfeit"]
    seat: Seat
    reason: Literal["timeout", "left", "disconnected"]


class DrawEvent(_Event):
    """A seat drew from the stock. You see the cards only of your own draws; others get the count
    (and the turned trump card when it was drawn, since everybody saw it)."""

    type: Literal["draw"]
    seat: Seat
    count: int
    cards: list[Card] | None = Field(default=None, description="Your own draws only.")
    trump_card: Card | None = Field(default=None, description="Present when the turned trump card was drawn.")


class BoutEndEvent(_Event):
    """The bout is over: beaten (the cards go to the discard) or taken (the defender picks them up)."""

    type: Literal["bout_end"]
    result: Literal["beaten", "taken"]
    defender: Seat
    cards: list[Card] = Field(description="Every card that was on the table.")


class OutEvent(_Event):
    """A seat emptied its hand with the stock gone: it is out, at ``place``."""

    type: Literal["out"]
    seat: Seat
    place: int


class BoutStartEvent(_Event):
    """A new bout: who leads and who defends. ``limit`` is the number of cards the defender holds
    as the bout starts, the most attacks he can be asked to beat; it is not the bout's room. The
    room is ``view.allowance``: min(``view.cap``, limit) minus the attacks on the table. So a
    defender who took and holds 8 cards shows ``limit`` 8 while the allowance is 5 (the Durak Peak
    cap before the first successful defence) or 6."""

    type: Literal["bout_start"]
    attacker: Seat
    defender: Seat
    limit: int = Field(description="Cards the defender holds as the bout starts.")


class MatchEndEvent(_Event):
    """The match is over."""

    type: Literal["match_end"]
    outcome: OutcomeView


class SeatEvent(_Event):
    """A seat was taken (a person joined, a bot was seated) or freed (left, bot removed)."""

    type: Literal["seat"]
    seat: Seat
    name: str | None
    kind: Literal["empty", "human", "bot"]


class MatchStartEvent(_Event):
    """A match was dealt (the stakes are in escrow from now on)."""

    type: Literal["match_start"]
    match_id: str
    dealer: Seat
    attacker: Seat
    defender: Seat


class RematchEvent(_Event):
    """A seat proposed a rematch, or agreed to the one proposed (see Rematch)."""

    type: Literal["rematch"]
    seat: Seat = Field(description="Who proposed or agreed.")


class ReadyCheckEvent(_Event):
    """A staked match is about to start: the ready check opened (see Ready check)."""

    type: Literal["ready_check"]
    ready: list[Seat] = Field(description="The seats that confirmed by what opened it (each connected).")


class ReadyEvent(_Event):
    """A seated player confirmed he is ready (see Ready check)."""

    type: Literal["ready"]
    seat: Seat


class ResultsEvent(_Event):
    """The finished match's results (also in ``table.results`` from now on), with its deal revealed."""

    type: Literal["results"]
    outcome: OutcomeView
    coin_changes: dict[str, int]
    match_id: str
    fairness: FairDeal | None = Field(default=None, description="The match's deal, revealed.")


class RatingsEvent(_Event):
    """A moment after a rated match's results: what it did to each seat's ratings (also in
    ``table.results.ratings`` from now on). Only rated matches have it (every seat an account, long
    enough, see docs/integrity.md)."""

    type: Literal["ratings"]
    match_id: str
    ratings: dict[str, RatingChangeView] = Field(description="Seat number -> the rating change.")


class ClientSeedEvent(_Event):
    """A seated player sent his client seed for the next deal (the seed itself is revealed with it)."""

    type: Literal["client_seed"]
    seat: Seat


class CommitmentEvent(_Event):
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


class Welcome(_Shape):
    """The answer to ``hello``: a full snapshot, plus the missed events when resuming. Also sent
    unasked to a player's connections when it leaves its seat: from then on they watch."""

    type: Literal["welcome"]
    version: int
    seat: int | None = Field(description="Your seat, or null when you are watching.")
    view: View | None = Field(description="The match as you see it (null before the first match).")
    table: TableInfo
    events: list[Event] | None = Field(
        default=None, description="With resumed_from: every event after last_version, in order."
    )
    resumed_from: int | None = Field(default=None, description="Your last_version, when the events since it follow.")
    recent: list[Event] | None = Field(
        default=None,
        description="Without resumed_from: the current (or last) match's events the server still keeps, "
        "redacted for you, so that a fresh page can show what happened.",
    )


class Update(_Shape):
    """Pushed after every change of the table's state: its new version, the events of that change
    and the new view. Each update is one version after the one before; a gap means messages were
    lost (the server then sends a fresh ``welcome`` on its own)."""

    type: Literal["update"]
    version: int
    seat: int | None = Field(description="Your seat, or null when you are watching.")
    events: list[Event] = Field(
        description="What happened, in order. Empty only when a table taken over by another server "
        "process re-announces a match that had just finished (same version, nothing new happened)."
    )
    view: View | None
    table: TableInfo


class Presence(_Shape):
    """Someone connected or left (a player's connections, a spectator): the table facts again
    (``seats[].connected``, ``spectators``, ``deadline_ms``). Nothing about the match changed, so
    ``version`` stays the version you already have."""

    type: Literal["presence"]
    version: int
    table: TableInfo


class Ack(_Shape):
    type: Literal["ack"]
    id: str | None
    version: int = Field(description="The table's version after the command.")
    duplicate: bool | None = Field(default=None, description="True when this id was already applied.")


class Error(_Shape):
    """A refused message. ``code`` is stable (see the table below); ``message`` is for people."""

    type: Literal["error"]
    id: str | None = Field(description="The id of the refused command, when it had one.")
    code: str
    message: str
    retry_after_ms: int | None = Field(
        default=None, description="With code rate_limited: the milliseconds to wait before sending again."
    )


class ChatFrom(_Shape):
    name: str = Field(description="The writer's display name (show it as text).")
    seat: int | None = Field(description="The writer's seat; null for a spectator.")
    guest: bool
    player: str = Field(description="The writer's person key (as table.seats[].player): mute and report by it.")


class Chat(_Shape):
    """One chat line, or a quick phrase (``key`` instead of ``text``). Right after the first welcome
    a connection gets the table's last 50 lines it may see, each with ``history: true``. The players
    of a staked match do not get the spectators' lines written while it runs (the table's state when
    the line is written decides), on any of their connections: a socket whose cookies are a seated
    player's (his session, or his browser's device, anonymous or through a watch link) counts as his."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True, validate_by_name=True, validate_by_alias=True)
    type: Literal["chat"]
    id: str = Field(description="The line's id (unique at the table).")
    from_: ChatFrom = Field(
        alias="from", description="Who wrote it: name, seat (null: a spectator), guest, player key."
    )
    channel: Literal["players", "spectators"]
    at: int = Field(description="When it was written: milliseconds since the Unix epoch.")
    text: str | None = Field(default=None, description="The text (at most 200 characters).")
    key: ChatPhraseKey | None = Field(default=None, description="A quick phrase's key.")
    history: bool | None = Field(default=None, description="True for the lines sent after the welcome.")


class Pong(_Shape):
    type: Literal["pong"]
    id: str | None


class Bye(_Shape):
    """The server is about to close the connection: ``shutdown`` (close 1012), ``rate_limited``
    (4008), ``signed_out`` (4001)."""

    type: Literal["bye"]
    code: Literal["shutdown", "rate_limited", "signed_out"]
    message: str
    reconnect_after_ms: int | None = Field(
        default=None,
        description="With code shutdown: reconnect after this many milliseconds (the same address: the "
        "stopping server takes no new connections), then hello with last_version and send your "
        "unanswered commands again with the same ids.",
    )


ServerMessage = Annotated[
    Welcome | Update | Presence | Ack | Error | Chat | Pong | Bye,
    Field(discriminator="type"),
]
server_message = TypeAdapter(ServerMessage)

# Every error code the server gives: on the socket (``error.code``) and, for the seat commands of
# the REST API (join, leave, bots, start, rematch), in the HTTP error's detail ("code: message").
# tests/api/test_protocol_docs.py derives the codes the code base can produce and fails when one
# is missing here (or listed here but produced nowhere).
ERROR_CODES: dict[str, str] = {
    # the frame itself
    "bad_json": "The frame is not valid JSON.",
    "bad_message": "Valid JSON, but not a message: not an object, no type, a missing or mistyped field, "
    "a version out of range.",
    "unknown_type": "The message type is not one of the documented types.",
    "rate_limited": "Too many messages: wait retry_after_ms, then send again. Still over the limit after "
    "10 s of refusals: bye and close code 4008.",
    # the command
    "not_seated": "You have no seat at this table (spectators cannot play).",
    "match_not_running": "There is no match running.",
    "match_running": "Not while a match runs (leave: you are out already and may leave when it ends).",
    "stale_version": "Your view was out of date and the action is not legal any more.",
    "chat_rate_limited": "Too many chat messages (5 per 10 s): wait retry_after_ms.",
    "chat_off": "The creator turned chat off at this table.",
    "chat_empty": "The chat message has no visible text.",
    "chat_forbidden": "Anonymous spectators cannot chat: sign in or play as a guest.",
    "unavailable": "Nothing happened: the table is unreachable right now (broker or storage down), or no "
    "server answered for it within 20 s (its server restarting): try again, with the same id.",
    "moved": "The table is now served by another server process: send it again (same id), or reconnect.",
    # the rules (the engine's refusals; the message names the reason)
    "not_your_turn": "The action is not yours to make now (or not now at all: e.g. nothing has been led).",
    "card_not_in_hand": "You do not hold that card.",
    "does_not_beat": "That card does not beat the attack.",
    "rank_not_on_table": "That rank is not on the table.",
    "limit_exceeded": "The bout's attack limit would be exceeded.",
    "transfer_not_allowed": "A transfer is not possible now.",
    "bad_play": "The play has the wrong shape (card count, group, index).",
    "not_allowed_here": "The table's parameters do not offer this action.",
    "illegal_action": "The rules do not allow this action.",
    "match_over": "The match is over.",
    # seat commands (REST)
    "already_seated": "REST join: you already have a seat at this table.",
    "seat_taken": "REST join / bots: that seat is taken.",
    "table_full": "REST join / bots: every seat is taken.",
    "bad_seat": "REST join / bots: there is no such seat (or no bot in it).",
    "guests_free_tables_only": "REST join: guests sit only at free tables.",
    "insufficient_funds": "A staked match cannot start: a player's balance is below the stake.",
    "not_creator": "REST bots / start: only the table's creator may do that.",
    "bad_level": "REST bots: unknown bot level.",
    "bots_free_tables_only": "REST bots: bots sit only at free tables.",
    "not_enough_players": "REST start: a match needs at least 2 seated players.",
    "bad_rules": "REST start: the table's rules do not fit the seated players.",
    "no_match": "REST rematch: there is no finished match to rematch.",
    "no_ready_check": "ready: no ready check is open (the match is not about to start, or has started).",
    "not_connected": "ready: you have no connection to the table; open it, then confirm.",
    "stale_commitment": "client_seed / REST join: the client seed names a commitment that is not the table's "
    "current one.",
    # integrity (docs/integrity.md)
    "related_accounts": "REST join / quick play / a staked match's start: related accounts (one device, or "
    "signed up from one address within 24 h) may play each other at free tables only.",
    "pair_cap": "REST join / quick play / a staked match's start: the two accounts have moved the daily cap of "
    "coins between them (`DURAK_PAIR_DAILY_COIN_CAP`); staked tables between them open again at 00:00 UTC.",
    "staked_play_frozen": "REST join / quick play / a staked match's start: an admin froze this account's staked "
    "play; the message gives the reason.",
    "new_account": "REST join / quick play / a staked match's start: the account has not yet played the matches that "
    "count which an account plays before it plays for coins (`DURAK_NEW_ACCOUNT_MATCHES`); free tables are open.",
}

CLOSE_CODES: dict[int, str] = {
    1000: "Normal close.",
    1008: "Handshake refused (HTTP 403): Origin not allowed, or a forged, expired or logged-out cookie.",
    1009: "Frame larger than 64 KiB.",
    1012: "Server restarting: reconnect (after bye shutdown).",
    4001: "The session was signed out (after bye signed_out): sign in again.",
    4004: "No table with that code.",
    4008: "Rate limit abused: still over the limit after 10 s of rate_limited refusals (after bye rate_limited).",
    4010: "The table was closed (idle, finished and left, or a match of bots nobody watched); "
    "its finished matches are in the match history.",
    4029: "Too many table connections from this IP address, or IPv6 /64 (`DURAK_MAX_TABLE_SOCKETS_PER_IP`).",
}


# ---------------------------------------------------------------------------- examples


def _example_match() -> tuple[Rules, State, State, list[dict[str, Any]]]:
    """A real match from the engine (a fixed seed): the deal, then the first lead and its events."""
    rules = Rules(timer=30)
    dealt = new_match(rules, seed=20261201, dealer=1)
    lead = next(action for action in legal_actions(dealt, dealt.attacker) if action.kind == "lead")
    led, events = apply(dealt, lead)
    return rules, dealt, led, events


def _table_example(rules: Rules, version: int, *, you: str | None = "a:17") -> TableInfo:
    return TableInfo(
        code="Hq3vT0xJm2c8kQwZr5LdNA" if you else None,
        name="Friday night",
        private=False,
        status="playing",
        rules=rules.to_json(),
        creator="a:17",
        seats=[
            SeatInfo(seat=0, kind="human", name="alice", level=None, player="a:17", connected=True),
            SeatInfo(seat=1, kind="human", name="bob", level=None, player="a:23", connected=True),
        ],
        spectators=1,
        series={0: [1, 0], 1: [0, 1]},
        deadline_ms=29000,
        fairness=TableFairness(
            algorithm="durak-peak/v1",
            match_number=1,
            commitment="018f3556adc4b2882807c2964d3a217b16ff902eb359401a4fcbe6bf1c1bfaaa",
            client_seeds=[0, 1],
        ),
        match_id="5d1f0c2e9a6b4e8f8a1c3b7d9e0f2a4c",
        results=None,
        version=version,
        you=you,
    )


def examples() -> list[BaseModel]:
    """One example of every message, client's first; the welcome and update carry real views."""
    rules, dealt, led, events = _example_match()
    defender = led.defender
    return [
        Hello(type="hello", last_version=41),
        LeadCmd(type="lead", id="c1", version=42, cards=["7h"]),
        ThrowInCmd(type="throw_in", id="c2", version=43, cards=["7s"]),
        CoverCmd(type="cover", id="c3", version=43, attack=0, card="9h"),
        TransferCmd(type="transfer", id="c4", version=42, cards=["7d"]),
        TakeCmd(type="take", id="c5", version=44),
        PassCmd(type="pass", id="c6", version=45),
        ChallengeCmd(type="challenge", id="c7", version=46, move=1),
        ExchangeTrumpCmd(type="exchange_trump", id="c8", version=2),
        LeaveCmd(type="leave", id="c9"),
        RematchCmd(type="rematch", id="c10"),
        ReadyCmd(type="ready", id="c12"),
        ClientSeedCmd(
            type="client_seed",
            id="c11",
            seed="00112233445566778899aabbccddeeff",
            commitment="018f3556adc4b2882807c2964d3a217b16ff902eb359401a4fcbe6bf1c1bfaaa",
        ),
        ChatCmd(type="chat", id="m1", text="good luck, all"),
        ChatPhraseCmd(type="chat_phrase", id="m2", key="well_played"),
        Ping(type="ping", id="p1"),
        Welcome(
            type="welcome",
            version=3,
            seat=dealt.attacker,
            view=View.model_validate(view(dealt, dealt.attacker)),
            table=_table_example(rules, 3),
        ),
        Update(
            type="update",
            version=4,
            seat=defender,
            events=[
                event_adapter.validate_python({**event_to_json(public_cards(event, defender)), "version": 4})
                for event in events
            ],
            view=View.model_validate(view(led, defender)),
            table=_table_example(rules, 4, you="a:23"),
        ),
        Presence(type="presence", version=4, table=_table_example(rules, 4, you=None)),
        Ack(type="ack", id="c3", version=44),
        Chat.model_validate(
            {
                "type": "chat",
                "id": "5f2a9c01d3e4",
                "from": {"name": "alice", "seat": 0, "guest": False, "player": "a:23"},
                "channel": "players",
                "at": 1764600000000,
                "text": "good luck, all",
            }
        ),
        Error(
            type="error",
            id="c3",
            code="does_not_beat",
            message="cover attack #0 with 8s by seat 1 refused: 8s does not beat 7h (trump d) "
            "(phase bout, attacker 0, defender 1, table 7h)",
        ),
        Error(
            type="error",
            id="c9",
            code="rate_limited",
            message="too many messages: wait 80 ms, then send it again",
            retry_after_ms=80,
        ),
        Pong(type="pong", id="p1"),
        Bye(
            type="bye",
            code="shutdown",
            message="this server is restarting: reconnect in 740 ms",
            reconnect_after_ms=740,
        ),
    ]


_OUTCOME = OutcomeView(draw=False, durak=1, order=[0], places=[[0], [1]], forfeit=None, reason=None, detail="")


_FAIR_DEAL = FairDeal(
    algorithm="durak-peak/v1",
    table="t-0123456789abcdef0123456789abcdef",
    match_number=1,
    deck_size=36,
    commitment="018f3556adc4b2882807c2964d3a217b16ff902eb359401a4fcbe6bf1c1bfaaa",
    server_seed="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    client_seeds=["00112233445566778899aabbccddeeff", ""],
    deck=["8c", "7d", "10d", "Kh", "Qs", "Qd", "…"],
)


def event_examples() -> list[_Event]:
    """One example of every event type, as it appears in ``update.events``."""
    return [
        MatchStartEvent(
            type="match_start", match_id="5d1f0c2e9a6b4e8f8a1c3b7d9e0f2a4c", dealer=1, attacker=0, defender=1, version=3
        ),
        DrawEvent(type="draw", seat=0, count=2, cards=["Qs", "9d"], version=19),
        DrawEvent(type="draw", seat=1, count=3, trump_card="6d", version=19),
        BoutStartEvent(type="bout_start", attacker=1, defender=0, limit=8, version=19),
        MoveEvent(type="move", seat=0, action=ActionView(type="lead", seat=0, cards=["7h"]), index=0, version=4),
        MoveEvent(
            type="move", seat=1, action=ActionView(type="cover", seat=1, attack=0, card="9h"), index=1, version=5
        ),
        TransferredEvent(type="transferred", attacker=1, defender=2, limit=6, version=5),
        TakeEvent(type="take", seat=1, version=6),
        PassEvent(type="pass", seat=0, version=7),
        BoutEndEvent(type="bout_end", result="beaten", defender=1, cards=["7h", "9h"], version=8),
        OutEvent(type="out", seat=0, place=1, version=60),
        ChallengeEvent(type="challenge", seat=0, move=1, ruling="upheld", loser=1, rule="does_not_beat", version=9),
        ExchangeTrumpEvent(type="exchange_trump", seat=2, gave="2d", got="Qd", version=4),
        ForfeitEvent(type="forfeit", seat=1, reason="timeout", version=12),
        MatchEndEvent(type="match_end", outcome=_OUTCOME, version=61),
        ResultsEvent(
            type="results",
            outcome=_OUTCOME,
            coin_changes={"0": 100, "1": -100},
            match_id="5d1f0c2e9a6b4e8f8a1c3b7d9e0f2a4c",
            fairness=_FAIR_DEAL,
            version=61,
        ),
        RatingsEvent(
            type="ratings",
            match_id="5d1f0c2e9a6b4e8f8a1c3b7d9e0f2a4c",
            ratings={
                "0": RatingChangeView(rating=1536, change=36, provisional=True, season_rating=1521, season_change=21),
                "1": RatingChangeView(rating=1468, change=-32, provisional=True, season_rating=1480, season_change=-20),
            },
            version=62,
        ),
        CommitmentEvent(
            type="commitment",
            match_number=2,
            commitment="5b0c7c2d3f0e4a8a9f1d2e3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a6978",
            version=61,
        ),
        ClientSeedEvent(type="client_seed", seat=0, version=63),
        RematchEvent(type="rematch", seat=0, version=62),
        ReadyCheckEvent(type="ready_check", ready=[1], version=3),
        ReadyEvent(type="ready", seat=0, version=4),
        SeatEvent(type="seat", seat=1, name="bob", kind="human", version=2),
    ]
