"""One example of every message of the websocket protocol (app/api/protocol.py), for
``docs/protocol.md`` (app/api/protocol_docs.py) and the tests that validate them: the welcome and
the update carry real views of a match dealt by the engine.
"""

from __future__ import annotations

from pydantic import BaseModel

from app.api.protocol import (
    Ack,
    ActionView,
    BoutEndEvent,
    BoutStartEvent,
    Bye,
    ChallengeCmd,
    ChallengeEvent,
    Chat,
    ChatCmd,
    ChatPhraseCmd,
    ClientSeedCmd,
    ClientSeedEvent,
    CommitmentEvent,
    CoverCmd,
    DrawEvent,
    Error,
    ExchangeTrumpCmd,
    ExchangeTrumpEvent,
    FairDeal,
    ForfeitEvent,
    Hello,
    LeadCmd,
    LeaveCmd,
    MatchEndEvent,
    MatchStartEvent,
    MoveEvent,
    OutcomeView,
    OutEvent,
    PassCmd,
    PassEvent,
    Ping,
    Pong,
    Presence,
    RatingChangeView,
    RatingsEvent,
    ReadyCheckEvent,
    ReadyCmd,
    ReadyEvent,
    RematchCmd,
    RematchEvent,
    ResultsEvent,
    RulesInfo,
    SeatEvent,
    SeatInfo,
    TableFairness,
    TableInfo,
    TakeCmd,
    TakeEvent,
    ThrowInCmd,
    TransferCmd,
    TransferredEvent,
    Update,
    View,
    Welcome,
    _Event,
    event_adapter,
)
from app.engine import Event, Rules, State, apply, event_to_json, legal_actions, new_match, public_cards, view


def _example_match() -> tuple[Rules, State, State, list[Event]]:
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
        rules=RulesInfo.model_validate(rules.to_json()),
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


OUTCOME = OutcomeView(draw=False, durak=1, order=[0], places=[[0], [1]], forfeit=None, reason=None, detail="")


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
        MatchEndEvent(type="match_end", outcome=OUTCOME, version=61),
        ResultsEvent(
            type="results",
            outcome=OUTCOME,
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
