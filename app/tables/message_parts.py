"""The objects inside the server's messages to a table's clients (``messages.py``): what a client
sees of the match (``view``: its actions, decision and outcome) and of the table (``table``: seats,
fairness, results, rematch, ready check). The conformance tests validate real messages against these
models and docs/protocol.md is generated from them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class Shape(BaseModel):
    """A part of a message: nothing is sent that its model does not describe."""

    model_config = ConfigDict(extra="forbid")


Card = Annotated[str, Field(examples=["10h"])]
Seat = int


class ActionView(Shape):
    """An action in ``view.legal`` or ``view.moves``: a command's fields (without ``id`` and
    ``version``) plus the seat that makes it. ``forfeit`` appears only in a finished match's log."""

    type: Literal["lead", "throw_in", "cover", "transfer", "take", "pass", "challenge", "exchange_trump", "forfeit"]
    seat: Seat
    cards: list[Card] | None = Field(default=None, description="lead, throw_in, transfer: the cards played.")
    attack: int | None = Field(default=None, description="cover: the index of the attack in view.table.")
    card: Card | None = Field(default=None, description="cover: the covering card.")
    move: int | None = Field(default=None, description="challenge: the index of the move in view.moves.")
    reason: str | None = Field(default=None, description="forfeit: timeout, left or disconnected.")


class PlayerView(Shape):
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


class TablePair(Shape):
    """One attack on the table and its cover."""

    attack: Card
    cover: Card | None = Field(description="The covering card, or null while the attack is open.")


class Decision(Shape):
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


class RulesInfo(Shape):
    """The rules of the table and its match (``view.rules``, ``table.rules``): the fields of POST
    /api/tables (docs/api.md), the parameters of the rule book (§1) and its preset (§11)."""

    deck: Literal[24, 36, 52] = Field(description="Cards in the deck.")
    seats: int = Field(description="Seats at the table: 2-6 (2-4 with 24 cards).")
    circle: Literal["neighbours", "all"] = Field(
        description="Who may throw in: neighbours, the players on both sides of the defender; all, every "
        "player still in the match."
    )
    transfer: bool = Field(description="The defender may pass the attack on (perevodnoy).")
    draws: bool = Field(
        description="A final bout that leaves nobody with cards is a draw (else the last defender is the durak)."
    )
    timer: int = Field(description="Seconds per decision; 0: no timer.")
    stake: int = Field(description="Coins each player stakes on a match; 0: a free table.")
    cheating: bool = Field(description="A cheating table: a move may break the card rules, and be challenged.")
    preset: Literal["durak_peak", "classic36", "durac1993"] = Field(description="The rule book the table plays by.")


class OutcomeView(Shape):
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


class View(Shape):
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
    rules: RulesInfo = Field(description="The match's rules.")
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


class SeatRating(Shape):
    """A seated account's rating (``table.seats[].rating``)."""

    rating: int = Field(description="The ordinal mu - 3 sigma on a scale where a new player has 1500.")
    provisional: bool = Field(description="Fewer than 5 rated matches (shown with a question mark).")


class SeatInfo(Shape):
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


class FairDeal(Shape):
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


class TableFairness(Shape):
    """``table.fairness``: the commitment to the secret seed of the current deal (see Provably fair deals)."""

    algorithm: Literal["durak-peak/v1"]
    match_number: int = Field(description="The match it is for: the running one, or the next.")
    commitment: str = Field(description="SHA-256 hex of the table code, match number and secret server seed.")
    client_seeds: list[Seat] = Field(description="The seats whose players sent a client seed for it.")


class RatingChangeView(Shape):
    """What a rated match did to one seat's ratings (``table.results.ratings``, the ``ratings`` event)."""

    rating: int = Field(description="The all-time rating after the match.")
    change: int = Field(description="Its change by the match (+/-).")
    provisional: bool = Field(description="Fewer than 5 rated matches.")
    season_rating: int | None = Field(description="The rating in the season the match counts for; null if none.")
    season_change: int | None = Field(description="Its change by the match.")


class Results(Shape):
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


class RematchProposalInfo(Shape):
    """``table.rematch``: a rematch someone proposed after a match."""

    agreed: list[Seat] = Field(description="The seats that agreed so far (bots agree by themselves).")
    deadline_ms: int = Field(description="Milliseconds left to agree, as of sending.")


class ReadyCheckInfo(Shape):
    """``table.ready_check``: a staked match is about to start (see Ready check)."""

    ready: list[Seat] = Field(description="The seats that confirmed (each connected).")
    deadline_ms: int = Field(description="Milliseconds left to confirm, as of sending.")


class TableInfo(Shape):
    """The table's public facts (``welcome.table``, ``update.table``, ``presence.table``)."""

    code: str | None = Field(description="The invite code; null for spectators (a watch link never reveals it).")
    name: str | None
    private: bool = Field(description="Not listed in the lobby.")
    chat: bool = Field(default=True, description="Chat is on (the creator may turn it off at creation).")
    status: Literal["waiting", "playing", "finished"] = Field(
        description="waiting: seats are filling (a match starts when the last seat fills, or on /start); playing: a "
        "match runs; finished: the match is over and table.results holds it, until a rematch."
    )
    rules: RulesInfo = Field(description="The table's rules (as view.rules).")
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
