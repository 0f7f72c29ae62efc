"""What the server sends a table's clients: every message is a pydantic model in a union keyed on
``type`` (``docs/protocol.md`` is generated from them, ``app/api/protocol_docs.py``), and each message
model is also the message's *writer*: :meth:`_Message.wire` / :meth:`_Message.wire_text` build what goes on
the wire from the model's own fields, in its field order, so nothing is sent that the model does not
describe (``extra="forbid"``; the conformance tests validate every message of real matches against
these models). The messages every recipient of a change gets (``update``, ``presence``) are written
by :meth:`Update.spliced` / :meth:`Presence.spliced`: the parts all recipients share (the table
facts, the public view, the events when nobody drew a card) are encoded once and spliced into each
recipient's text (docs/performance.md).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

import orjson
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

ChatPhraseKey = Literal["gg", "hurry", "well_played", "oops", "hello", "thanks", "nice_move", "bad_luck"]


def dumps(value: Any) -> str:
    """Compact JSON text of a message or a part of one (integer keys become strings)."""
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Message(_Shape):
    """A message the server sends, whose model writes it."""

    kind: ClassVar[str] = ""
    _order: ClassVar[tuple[tuple[str, str, bool], ...]] = ()  # (field, JSON key, left out when None)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        fields = cls.model_fields
        cls.kind = get_args(fields["type"].annotation)[0]
        cls._order = tuple(
            (name, field.alias or name, not field.is_required() and field.default is None)
            for name, field in fields.items()
            if name != "type"
        )

    @classmethod
    def wire(cls, **values: Any) -> dict[str, Any]:
        """The message as JSON data, in the model's field order: its ``type``, then ``values`` (an
        optional field whose value is None is left out; a field the model lacks is an error)."""
        out: dict[str, Any] = {"type": cls.kind}
        taken = 0
        for name, key, optional in cls._order:
            if name in values:
                taken += 1
                value = values[name]
                if value is not None or not optional:
                    out[key] = value
        if taken != len(values):
            unknown = set(values) - {name for name, _, _ in cls._order}
            raise TypeError(f"{cls.kind} has no field {', '.join(sorted(unknown))}")
        return out

    @classmethod
    def wire_text(cls, **values: Any) -> str:
        """The message's JSON text (:meth:`wire`, encoded)."""
        return dumps(cls.wire(**values))


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


class Welcome(_Message):
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


class Update(_Message):
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

    @staticmethod
    def spliced(version: int, seat: int | None, events: str, view: str, table: str, you: str | None = None) -> str:
        """The update's text from parts encoded once for many recipients: ``events`` (the list),
        ``view`` (:meth:`joined_view`, or ``null``) and ``table`` (the facts without ``you``; a
        player's ``you`` is added to them here)."""
        facts = table if you is None else f'{table[:-1]},"you":{dumps(you)}}}'
        return (
            f'{{"type":"update","version":{version},"seat":{"null" if seat is None else seat},'
            f'"events":{events},"view":{view},"table":{facts}}}'
        )

    @staticmethod
    def joined_view(public: str, seat: int | None, private: dict[str, Any] | None = None) -> str:
        """A view's text: the public part every recipient shares (``public``, an object's text without
        its closing brace), the seat, and that seat's own part (its hand, its legal actions)."""
        if seat is None:
            return public + ',"seat":null}'
        return public + "," + dumps({"seat": seat, **(private or {})})[1:]


class Presence(_Message):
    """Someone connected or left (a player's connections, a spectator): the table facts again
    (``seats[].connected``, ``spectators``, ``deadline_ms``). Nothing about the match changed, so
    ``version`` stays the version you already have."""

    type: Literal["presence"]
    version: int
    table: TableInfo

    @staticmethod
    def spliced(version: int, table: str, you: str | None = None) -> str:
        """The presence's text from the facts encoded once (``table``, without ``you``; a player's
        ``you`` is added to them here)."""
        facts = table if you is None else f'{table[:-1]},"you":{dumps(you)}}}'
        return f'{{"type":"presence","version":{version},"table":{facts}}}'


class Ack(_Message):
    type: Literal["ack"]
    id: str | None
    version: int = Field(description="The table's version after the command.")
    duplicate: bool | None = Field(default=None, description="True when this id was already applied.")


class Error(_Message):
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


class Chat(_Message):
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


class Pong(_Message):
    type: Literal["pong"]
    id: str | None


class Bye(_Message):
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


# What the server says besides the client's messages (not in ``ServerMessage``): to the connections
# of other processes, and the answers of the seat commands of the REST API (app/api/schemas.py).


class Rehello(_Message):
    """After a takeover: every connection, on any process, is asked to say ``hello`` again (it never
    reaches a client)."""

    type: Literal["_rehello"]


class SeatAck(_Message):
    """A seat command's answer (REST join and bots: with the seat taken)."""

    type: Literal["ack"]
    id: str | None = None
    seat: int | None = None
    version: int


class StartAck(_Message):
    """The answer to a REST start: the match that started (null: a ready check opened)."""

    type: Literal["ack"]
    id: str | None = None
    version: int
    match_id: str | None


class InfoReply(_Message):
    """The answer to ``info`` (REST and the server's own look at a table): the table facts."""

    type: Literal["info"]
    id: str | None = None
    table: TableInfo
    watch_code: str


ServerMessage = Annotated[
    Welcome | Update | Presence | Ack | Error | Chat | Pong | Bye,
    Field(discriminator="type"),
]
server_message = TypeAdapter(ServerMessage)
