"""The integrity rules on the database (app/db/integrity.py, app/db/integrity_admin.py and the table
hooks of app/db/table_hooks.py), on SQLite and PostgreSQL: related accounts, the refusals at staked
tables, which matches move ratings, the farming watch, soft-play and private-table signals, and the
admins' actions with a ledger-correct reversal."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import admin, integrity, integrity_admin, matches, stakes
from app.db.models import (
    AdminAction,
    IntegrityFlag,
    IntegrityWarning,
    LedgerEntry,
    LedgerTransfer,
    Match,
    PairDay,
    RatingChange,
    SignupAddress,
    ThrowInCount,
)
from app.db.session import Database
from app.db.table_hooks import DbHooks
from app.engine import Action, Forfeit, Rules, State, action_to_json, apply, legal_actions, new_match
from app.integrity_policy import IntegrityRules, MatchFacts, Refusal, utc_day
from app.tables.hooks import CannotStart, FinishedMatch
from app.tables.results import match_end
from app.tables.spec import Principal, Seat, TableSpec
from tests.db.helpers import assert_ledger_sound, balance, make_player


class Clock:
    """The hooks' wall clock, moved by hand (starts now, so the admin's 30-day coin flow sees it)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def seats_of(*accounts: int) -> list[Seat]:
    return [Seat(i, "human", Principal(f"a:{a}", f"P{a}", a)) for i, a in enumerate(accounts)]


def play(state: State, log: list[dict[str, Any]], *, until: Callable[[State], bool] | None = None) -> State:
    """Play on (leads, covers and throw-ins first) until the match ends or ``until`` holds."""
    while state.outcome is None and not (until and until(state)):
        seat = next(s for s in range(state.n) if legal_actions(state, s))
        options = legal_actions(state, seat)
        action = next((a for a in options if a.kind in ("cover", "lead", "throw_in")), options[0])
        state = act(state, log, action)
    return state


def act(state: State, log: list[dict[str, Any]], action: Action) -> State:
    log.append(action_to_json(action))
    state, _ = apply(state, action)
    return state


def finished(rules: Rules, state: State, log: list[dict[str, Any]], seats: list[Seat], match_id: str) -> FinishedMatch:
    spec = TableSpec(rules, seats[0].principal or Principal("a:0", "nobody"), code="T" * 22)
    return match_end(state, rules, seats, {}, spec, match_id=match_id, actions=log).record


async def run_match(
    hooks: DbHooks,
    clock: Clock,
    accounts: list[int],
    *,
    stake: int = 0,
    seconds: float = 300,
    ending: Callable[[State, list[dict[str, Any]]], State] | None = None,
    seed: int = 5,
) -> str:
    """A real match through the hooks (start, play, finish, recorded): played to the end, or ended by
    ``ending``. Its id."""
    rules = Rules(deck=24, seats=len(accounts), timer=0, stake=stake)
    match_id = uuid.uuid4().hex
    await hooks.match_started(match_id=match_id, stake=stake, account_ids=accounts)
    state, log = new_match(rules, seed, 0), []
    state = ending(state, log) if ending else play(state, log)
    clock.advance(seconds)
    await hooks.match_finished(finished(rules, state, log, seats_of(*accounts), match_id))
    clock.advance(1)
    return match_id


def left_at_once(state: State, log: list[dict[str, Any]]) -> State:
    """The defender (seat 1) leaves before anyone moved: the attacker wins."""
    return act(state, log, Forfeit(1, "left"))


async def rated(db: Database, match_id: str) -> bool:
    async with db.session() as session:
        count = await session.scalar(
            select(func.count()).select_from(RatingChange).where(RatingChange.match_id == match_id)
        )
    return bool(count)


async def count(db: Database, model: Any, *where: Any) -> int:
    async with db.session() as session:
        return int(await session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


# ---------------------------------------------------------------------- related accounts


async def test_accounts_of_one_device_are_related(db: Database) -> None:
    a, b, c = await make_player(db), await make_player(db), await make_player(db)

    async def seen(session: AsyncSession) -> None:
        await integrity.saw_device(session, device="D" * 22, account_id=a)
        await integrity.saw_device(session, device="D" * 22, account_id=b)
        await integrity.saw_device(session, device="D" * 22, account_id=b)  # twice: one row
        await integrity.saw_device(session, device="E" * 22, account_id=c)
        await integrity.saw_device(session, device="bad value!", account_id=c)  # not a device id: ignored

    await db.write(seen)
    rules = IntegrityRules()
    async with db.session() as session:
        assert await integrity.related_to(session, a, [b, c], rules) == {b: "device"}
        assert await integrity.related_to(session, c, [a, b], rules) == {}
        assert await integrity.related_pair(session, [c, b, a], rules) == (a, b, "device")
        assert await integrity.related_pair(session, [a, c], rules) is None


async def test_accounts_signed_up_from_one_address_within_a_day_are_related(db: Database) -> None:
    ids = [await make_player(db) for _ in range(4)]
    t0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
    rows = [
        (ids[0], "203.0.113.7", t0),
        (ids[1], "203.0.113.7", t0 + timedelta(hours=23)),  # within 24 h: related
        (ids[2], "203.0.113.7", t0 + timedelta(hours=25)),  # a day later: related to ids[1] only
        (ids[3], "198.51.100.1", t0),  # another address
    ]

    async def write(session: AsyncSession) -> None:
        for account, address, at in rows:
            session.add(SignupAddress(account_id=account, address=address, created_at=at))

    await db.write(write)
    on, off = IntegrityRules(), IntegrityRules(related_same_ip=False)
    async with db.session() as session:
        assert await integrity.related_to(session, ids[0], ids[1:], on) == {ids[1]: "address"}
        assert await integrity.related_to(session, ids[1], [ids[0], ids[2], ids[3]], on) == {
            ids[0]: "address",
            ids[2]: "address",
        }
        assert await integrity.related_to(session, ids[0], ids[1:], off) == {}
        assert await integrity.related_to(session, ids[3], ids[:3], on) == {}


# ---------------------------------------------------------------------- refusals at staked tables


async def test_staked_seats_refuse_frozen_related_and_capped_accounts(db: Database) -> None:
    a, b, c, d = [await make_player(db) for _ in range(4)]
    rules = IntegrityRules(pair_daily_coin_cap=500)
    now = datetime.now(UTC)
    day = utc_day(now)

    async def setup(session: AsyncSession) -> None:
        await integrity.saw_device(session, device="D" * 22, account_id=a)
        await integrity.saw_device(session, device="D" * 22, account_id=b)
        session.add(PairDay(winner_id=c, loser_id=d, day=day, quick_wins=0, coins=300, quick_matches=[]))
        session.add(PairDay(winner_id=d, loser_id=c, day=day, quick_wins=0, coins=100, quick_matches=[]))
        yesterday = utc_day(now - timedelta(days=1))
        session.add(PairDay(winner_id=c, loser_id=d, day=yesterday, quick_wins=0, coins=5000, quick_matches=[]))

    await db.write(setup)

    async def refusal(account: int, others: list[int], stake: int) -> Refusal | None:
        async with db.session() as session:
            return await integrity.staked_seat_refusal(
                session, account_id=account, others=others, stake=stake, rules=rules, now=now
            )

    assert await refusal(a, [b], 0) is None  # free tables: anything goes
    related = await refusal(b, [a], 10)
    assert related is not None and related.code == "related_accounts" and "same device" in related.message
    assert await refusal(a, [c], 10) is None
    assert await refusal(c, [d], 100) is None  # 400 moved today + 100 = the cap: allowed
    capped = await refusal(d, [c], 101)
    assert capped is not None and capped.code == "pair_cap" and capped.pair == (d, c) and capped.moved == 400
    await db.write(lambda s: integrity_admin.freeze(s, account_id=c, admin_id=None, reason="coin farming"))
    frozen = await refusal(c, [], 10)
    assert frozen is not None and frozen.code == "staked_play_frozen" and "coin farming" in frozen.message
    async with db.session() as session:
        start = await integrity.staked_match_refusal(session, account_ids=[a, c], stake=10, rules=rules, now=now)
    assert start is not None and start.code == "staked_play_frozen"


async def test_a_staked_match_does_not_start_between_related_accounts(db: Database) -> None:
    """The hook refuses at the start too (a rematch, or relations found after the players sat down),
    before any stake is taken."""
    a, b = await make_player(db), await make_player(db)
    hooks = DbHooks(db)
    assert await hooks.may_sit(account_id=b, others=[a], stake=50) is None
    await db.write(lambda s: integrity.saw_device(s, device="D" * 22, account_id=a))
    await db.write(lambda s: integrity.saw_device(s, device="D" * 22, account_id=b))
    code, message = await hooks.may_sit(account_id=b, others=[a], stake=50) or ("", "")
    assert code == "related_accounts" and "free tables only" in message
    assert await hooks.may_sit(account_id=b, others=[a], stake=0) is None
    with pytest.raises(CannotStart) as refused:
        await hooks.match_started(match_id="m-related", stake=50, account_ids=[a, b])
    assert refused.value.code == "related_accounts"
    assert await stakes.get_escrow(db, match_id="m-related") is None
    assert await balance(db, a) == await balance(db, b) == 1000


# ---------------------------------------------------------------------- matches that count


async def test_a_full_match_is_rated_and_a_short_one_is_not(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    long_match = await run_match(hooks, clock, [a, b], seconds=300)
    async with db.session() as session:
        bouts = sum(1 for action in (await session.get(Match, long_match)).actions if action["type"] == "lead")
    assert bouts >= 3 and await rated(db, long_match)
    async with db.session() as session:  # the replay counted the throw-in chances (always taken here)
        counts = (await session.scalars(select(ThrowInCount))).all()
    assert counts and all(row.chances > 0 and row.passes == 0 for row in counts)
    too_quick = await run_match(hooks, clock, [a, b], seconds=30)  # the same match, 30 s
    assert not await rated(db, too_quick)
    left = await run_match(hooks, clock, [a, b], seconds=300, ending=left_at_once)  # 0 bouts
    assert not await rated(db, left)
    lenient = DbHooks(db, IntegrityRules(rated_min_bouts=0, rated_min_seconds=0), now=clock)
    assert await rated(db, await run_match(lenient, clock, [a, b], seconds=1, ending=left_at_once))


async def test_a_timer_forfeit_of_a_player_who_had_moved_is_rated_however_short(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)

    def defender_moved_then_timed_out(state: State, log: list[dict[str, Any]]) -> State:
        state = play(state, log, until=lambda s: bool(log) and log[-1]["type"] in ("cover", "take"))
        return act(state, log, Forfeit(log[-1]["seat"], "timeout"))

    def attacker_never_moved(state: State, log: list[dict[str, Any]]) -> State:
        return act(state, log, Forfeit(state.attacker, "timeout"))

    def moved_then_disconnected(state: State, log: list[dict[str, Any]]) -> State:
        state = play(state, log, until=lambda s: len(log) >= 2)
        return act(state, log, Forfeit(log[0]["seat"], "disconnected"))

    def moved_then_left(state: State, log: list[dict[str, Any]]) -> State:
        state = play(state, log, until=lambda s: len(log) >= 2)
        return act(state, log, Forfeit(log[0]["seat"], "left"))

    assert await rated(db, await run_match(hooks, clock, [a, b], seconds=5, ending=defender_moved_then_timed_out))
    assert await rated(db, await run_match(hooks, clock, [a, b], seconds=5, ending=moved_then_disconnected))
    assert not await rated(db, await run_match(hooks, clock, [a, b], seconds=5, ending=attacker_never_moved))
    assert not await rated(db, await run_match(hooks, clock, [a, b], seconds=5, ending=moved_then_left))


async def test_related_accounts_are_never_rated_against_each_other(db: Database) -> None:
    a, b, c = await make_player(db), await make_player(db), await make_player(db)
    await db.write(lambda s: integrity.saw_device(s, device="D" * 22, account_id=a))
    await db.write(lambda s: integrity.saw_device(s, device="D" * 22, account_id=b))
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    assert not await rated(db, await run_match(hooks, clock, [a, b]))
    assert await rated(db, await run_match(hooks, clock, [a, c]))


async def test_bots_hold_no_coins_and_a_match_with_a_bot_is_not_rated(db: Database) -> None:
    a = await make_player(db)
    rules = Rules(deck=24, seats=2, timer=0)
    state, log = new_match(rules, 5, 0), []
    state = play(state, log)
    seats = [Seat(0, "human", Principal(f"a:{a}", "P", a)), Seat(1, "bot", None, "easy")]
    record = finished(rules, state, log, seats, "with-bot")
    assert record.seats[1]["bot_level"] == "easy" and record.seats[1]["account_id"] is None
    assert record.payouts == {} and set(record.coin_changes.values()) == {0}
    clock = Clock()
    lenient = IntegrityRules(rated_min_bouts=0, rated_min_seconds=0)  # only the bot keeps it unrated
    await DbHooks(db, lenient, now=clock).match_finished(record)
    assert await count(db, Match, Match.id == "with-bot") == 1
    assert not await rated(db, "with-bot")
    staked = stakes.MatchRecord(
        match_id="bot-coins",
        table_id="t",
        rules={"deck": 24, "seats": 2, "stake": 10},
        seed=5,
        dealer=0,
        seats=record.seats,
        actions=[],
        result=record.outcome,
        created_at=clock(),
        coin_changes={0: 10, 1: -10},
    )
    with pytest.raises(ValueError, match="cannot win or lose coins"):
        await db.write(lambda s: matches.record_match(s, staked))


async def test_a_log_the_signals_cannot_read_still_settles(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    rules = Rules(deck=24, seats=2, timer=0, stake=10)
    await hooks.match_started(match_id="odd", stake=10, account_ids=[a, b])
    state, log = new_match(rules, 5, 0), []
    state = act(state, log, Forfeit(1, "left"))
    record = finished(rules, state, [{"type": "take", "seat": 0}, *log], seats_of(a, b), "odd")  # not replayable
    await hooks.match_finished(record)
    assert (await balance(db, a), await balance(db, b)) == (1010, 990)
    assert await count(db, Match, Match.id == "odd") == 1
    await assert_ledger_sound(db)


# ---------------------------------------------------------------------- the farming watch


async def test_quick_wins_by_leaving_warn_the_quitter_at_three_and_report_at_four(db: Database) -> None:
    winner, loser, other = await make_player(db), await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    ids = [await run_match(hooks, clock, [winner, loser], ending=left_at_once) for _ in range(2)]
    await run_match(hooks, clock, [winner, other], ending=left_at_once)  # another pair
    assert await count(db, IntegrityWarning) == 0
    ids.append(await run_match(hooks, clock, [winner, loser], ending=left_at_once))
    async with db.session() as session:
        # Every quick win was the loser leaving: he is warned, the winner (who only stayed) is not.
        view = await integrity.player_view(session, loser)
        assert len(view["warnings"]) == 1 and "3 matches quickly" in view["warnings"][0]["text"]
        assert (await integrity.player_view(session, winner))["warnings"] == []
        assert (await integrity.player_view(session, other))["warnings"] == []
    assert await count(db, IntegrityFlag) == 0
    ids.append(await run_match(hooks, clock, [winner, loser], ending=left_at_once))
    async with db.session() as session:
        flags, total = await integrity_admin.flag_page(session, status="open", offset=0, limit=10)
    assert total == 1
    flag = flags[0]
    assert flag["kind"] == "quick_wins" and [acc["id"] for acc in flag["accounts"]] == [winner, loser]
    assert [m["id"] for m in flag["matches"]] == list(reversed(ids))
    assert all(m["url"] == f"/#/replay/{m['id']}" and m["winner"] == f"P{winner}" for m in flag["matches"])
    today = flag["coin_flow"]["days"][-1]
    assert today["quick_wins_a"] == 4 and today["quick_wins_b"] == 0
    ids.append(await run_match(hooks, clock, [winner, loser], ending=left_at_once))  # a 5th: the same flag
    async with db.session() as session:
        again = await integrity_admin.get_flag(session, flag["id"])
    assert await count(db, IntegrityFlag) == 1 and len(again["matches"]) == 5
    assert await count(db, IntegrityWarning) == 1  # the warning is not repeated


def timed_out_at_once(state: State, log: list[dict[str, Any]]) -> State:
    """The defender (seat 1) runs out of time before anyone moved: a short match, nobody left."""
    return act(state, log, Forfeit(1, "timeout"))


async def test_quick_wins_of_short_matches_warn_both_players(db: Database) -> None:
    winner, loser = await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    await run_match(hooks, clock, [winner, loser], ending=left_at_once)
    for _ in range(2):
        await run_match(hooks, clock, [winner, loser], ending=timed_out_at_once, seconds=10)
    async with db.session() as session:
        for account in (winner, loser):
            view = await integrity.player_view(session, account)
            assert len(view["warnings"]) == 1 and "3 matches quickly" in view["warnings"][0]["text"]


async def test_a_long_win_is_not_quick_but_its_coins_count(db: Database) -> None:
    a, b = await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    match_id = await run_match(hooks, clock, [a, b], stake=100, seconds=300)
    async with db.session() as session:
        match = await session.get(Match, match_id)
        assert match is not None
        winner = next(int(seat) for seat, change in match.coin_changes.items() if change > 0)
        rows = (await session.scalars(select(PairDay))).all()
    assert len(rows) == 1 and rows[0].coins == 100 and rows[0].quick_wins == 0
    assert rows[0].winner_id == [a, b][winner]
    await assert_ledger_sound(db)


async def test_the_pair_cap_refuses_further_staked_tables_and_files_one_flag(db: Database) -> None:
    a, b, c = await make_player(db), await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, IntegrityRules(pair_daily_coin_cap=250), now=clock)
    for _ in range(2):
        await run_match(hooks, clock, [a, b], stake=100, ending=left_at_once)
    refused = await hooks.may_sit(account_id=b, others=[a], stake=100)  # 200 moved + 100 > 250
    assert refused is not None and refused[0] == "pair_cap" and "00:00 UTC" in refused[1]
    assert await hooks.may_sit(account_id=b, others=[a], stake=50) is None  # 250: at the cap, not past it
    assert await hooks.may_sit(account_id=b, others=[c], stake=100) is None  # another pair
    with pytest.raises(CannotStart) as at_start:  # a rematch is refused too, before any stake moves
        await hooks.match_started(match_id="rematch", stake=100, account_ids=[a, b])
    assert at_start.value.code == "pair_cap"
    await hooks.may_sit(account_id=a, others=[b], stake=100)
    async with db.session() as session:
        flags, total = await integrity_admin.flag_page(session, status="all", offset=0, limit=10)
    assert total == 1 and flags[0]["kind"] == "pair_cap" and len(flags[0]["matches"]) == 2
    assert flags[0]["coin_flow"]["b_to_a"] + flags[0]["coin_flow"]["a_to_b"] == 200
    clock.advance(24 * 3600)  # the next UTC day
    assert await hooks.may_sit(account_id=b, others=[a], stake=100) is None
    await assert_ledger_sound(db)


async def test_soft_play_is_flagged_from_the_throw_in_counts(db: Database) -> None:
    soft, friend, stranger = await make_player(db), await make_player(db), await make_player(db)
    clock = Clock()
    rules = IntegrityRules()

    async def record(opponent: int, chances: int, passes: int, match_id: str) -> None:
        facts = MatchFacts(bouts=5, seconds=300, rules=rules, throw_ins={(0, 1): (chances, passes), (1, 0): (9, 0)})
        record = stakes.MatchRecord(
            match_id=match_id,
            table_id="t",
            rules={"deck": 36, "seats": 2, "stake": 0},
            seed=1,
            dealer=0,
            seats=[
                {"seat": 0, "account_id": soft, "display_name": "soft"},
                {"seat": 1, "account_id": opponent, "display_name": "opp"},
            ],
            actions=[],
            result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
            created_at=clock(),
            finished_at=clock(),
            integrity=facts,
        )
        await db.write(lambda s: matches.record_match(s, record))

    await record(stranger, 30, 3, "s1")
    await record(friend, 12, 9, "f1")
    assert await count(db, IntegrityFlag) == 0  # 12 chances against the friend: not enough yet
    await record(friend, 12, 10, "f2")  # 19 of 24 (79%) against him, 3 of 30 (10%) against others
    async with db.session() as session:
        flags, _ = await integrity_admin.flag_page(session, status="open", offset=0, limit=10)
    assert [(f["kind"], [a["id"] for a in f["accounts"]]) for f in flags] == [("soft_play", [soft, friend])]
    assert "19 of 24" in flags[0]["summary"] and "3 of 30" in flags[0]["summary"]
    assert {m["id"] for m in flags[0]["matches"]} == {"f1", "f2"}
    await record(friend, 12, 12, "f3")  # still open: no second flag
    assert await count(db, IntegrityFlag) == 1


async def test_repeated_private_staked_matches_are_flagged(db: Database) -> None:
    a, b = await make_player(db, balance=10_000), await make_player(db, balance=10_000)
    clock = Clock()
    rules = IntegrityRules(pair_daily_coin_cap=10**9)

    async def staked(private: bool) -> None:
        match_id = uuid.uuid4().hex
        await stakes.open_escrow(db, match_id=match_id, stake=10, account_ids=[a, b])
        facts = MatchFacts(bouts=5, seconds=300, rules=rules)
        record = stakes.MatchRecord(
            match_id=match_id,
            table_id="t",
            rules={"deck": 36, "seats": 2, "stake": 10},
            seed=1,
            dealer=0,
            seats=[
                {"seat": 0, "account_id": a, "display_name": "a"},
                {"seat": 1, "account_id": b, "display_name": "b"},
            ],
            actions=[],
            result={"draw": False, "durak": 1, "order": [0], "places": [[0], [1]]},
            created_at=clock(),
            finished_at=clock(),
            private=private,
            integrity=facts,
        )
        await stakes.settle_escrow(db, match_id=match_id, payouts={a: 20, b: 0}, record=record)
        clock.advance(3600)

    for _ in range(3):
        await staked(private=False)  # public tables do not count
    for _ in range(4):
        await staked(private=True)
    assert await count(db, IntegrityFlag) == 0
    await staked(private=True)
    async with db.session() as session:
        flags, _ = await integrity_admin.flag_page(session, status="open", offset=0, limit=10)
    assert [f["kind"] for f in flags] == ["private_staked"] and len(flags[0]["matches"]) == 5
    await assert_ledger_sound(db)


# ---------------------------------------------------------------------- the admins' actions


async def settled_match(db: Database, payouts: dict[int, int], stake: int, match_id: str) -> None:
    accounts = list(payouts)
    await stakes.open_escrow(db, match_id=match_id, stake=stake, account_ids=accounts)
    seats = [{"seat": i, "account_id": a, "display_name": f"P{a}"} for i, a in enumerate(accounts)]
    order = sorted(range(len(accounts)), key=lambda i: -payouts[accounts[i]])
    record = stakes.MatchRecord(
        match_id=match_id,
        table_id="t",
        rules={"deck": 36, "seats": len(accounts), "stake": stake},
        seed=1,
        dealer=0,
        seats=seats,
        actions=[],
        result={"draw": False, "durak": order[-1], "order": order[:-1], "places": [[i] for i in order]},
        created_at=datetime.now(UTC),
    )
    await stakes.settle_escrow(db, match_id=match_id, payouts=payouts, record=record)


async def test_dismiss_and_warn_are_audited_and_warn_both(db: Database) -> None:
    root = await make_player(db, role="admin")
    winner, loser = await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    for _ in range(4):
        await run_match(hooks, clock, [winner, loser], ending=left_at_once)
    flag_id = (await _only_flag(db))["id"]
    dismissed = await db.write(
        lambda s: integrity_admin.review_flag(s, flag_id=flag_id, admin_id=root, verdict="dismissed", note="friends")
    )
    assert dismissed["status"] == "dismissed" and dismissed["note"] == "friends"
    async with db.session() as session:
        assert (await integrity_admin.flag_page(session, status="open", offset=0, limit=5))[1] == 0
        assert (await integrity_admin.flag_page(session, status="dismissed", offset=0, limit=5))[1] == 1
    warned = await db.write(
        lambda s: integrity_admin.review_flag(s, flag_id=flag_id, admin_id=root, verdict="warned", note="stop it")
    )
    assert warned["status"] == "warned"
    async with db.session() as session:
        # both get the admin's warning; the automatic fair-play one went to the quitter only
        for account, count in ((winner, 1), (loser, 2)):
            texts = [w["text"] for w in (await integrity.player_view(session, account))["warnings"]]
            assert len(texts) == count and "stop it" in texts[0]
        actions = (await session.execute(select(AdminAction.action, AdminAction.target_id))).all()
    assert sorted(actions) == sorted(
        [("flag_dismiss", winner), ("flag_dismiss", loser), ("flag_warn", winner), ("flag_warn", loser)]
    )
    with pytest.raises(integrity_admin.NotFound):
        await db.write(lambda s: integrity_admin.review_flag(s, flag_id=999, admin_id=root, verdict="warned", note=""))


async def _only_flag(db: Database) -> dict[str, Any]:
    async with db.session() as session:
        flags, total = await integrity_admin.flag_page(session, status="all", offset=0, limit=10)
    assert total == 1
    return flags[0]


async def test_freeze_and_unfreeze_are_audited(db: Database) -> None:
    root, player = await make_player(db, role="admin"), await make_player(db)
    out = await db.write(lambda s: integrity_admin.freeze(s, account_id=player, admin_id=root, reason="  farming "))
    assert out == {"id": player, "frozen": True, "reason": "farming"}
    async with db.session() as session:
        view = await integrity.player_view(session, player)
    assert view["frozen"]["reason"] == "farming" and view["frozen"]["since"]
    assert await DbHooks(db).may_sit(account_id=player, others=[], stake=1) == (
        "staked_play_frozen",
        "your staked play is frozen by an admin: farming",
    )
    out = await db.write(lambda s: integrity_admin.unfreeze(s, account_id=player, admin_id=root))
    assert out == {"id": player, "frozen": False, "reason": None}
    assert await DbHooks(db).may_sit(account_id=player, others=[], stake=1) is None
    with pytest.raises(integrity_admin.NotFound):
        await db.write(lambda s: integrity_admin.freeze(s, account_id=99_999, admin_id=root, reason="x"))
    async with db.session() as session:
        actions = (await session.scalars(select(AdminAction.action).order_by(AdminAction.id))).all()
    assert actions == ["freeze_staked", "unfreeze_staked"]


async def _total(db: Database) -> int:
    async with db.session() as session:
        from app.db.models import LedgerAccount

        return int(await session.scalar(select(func.sum(LedgerAccount.balance))) or 0)


async def test_a_reversal_gives_the_coins_back_with_new_ledger_entries(db: Database) -> None:
    root = await make_player(db, role="admin")
    winner, loser = await make_player(db), await make_player(db)
    await settled_match(db, {winner: 200, loser: 0}, 100, "m1")
    assert (await balance(db, winner), await balance(db, loser)) == (1100, 900)
    async with db.session() as session:
        entries_before = int(await session.scalar(select(func.count()).select_from(LedgerEntry)) or 0)
    out = await db.write(lambda s: integrity_admin.reverse_match(s, match_id="m1", admin_id=root, note="farmed"))
    async with db.session() as session:
        names = await integrity.names_of(session, [winner, loser])
    assert out == {
        "match_id": "m1",
        "transfers": [{"account": names[winner], "amount": -100}, {"account": names[loser], "amount": 100}],
        "reversed": True,
        "shortfall": 0,
    }
    assert (await balance(db, winner), await balance(db, loser)) == (1000, 1000)
    async with db.session() as session:
        transfer = await session.scalar(select(LedgerTransfer).where(LedgerTransfer.key == "reverse:m1"))
        assert transfer is not None and transfer.reason == "match_reversal" and transfer.actor_id == root
        assert transfer.memo == "farmed" and transfer.match_id == "m1"
        entries_after = int(await session.scalar(select(func.count()).select_from(LedgerEntry)) or 0)
        audit = (
            await session.execute(select(AdminAction.target_id, AdminAction.amount, AdminAction.transfer_id))
        ).all()
        view = await integrity_admin.match_rows(session, ["m1"])
    assert entries_after == entries_before + 2  # new entries; the match's own are untouched
    assert sorted(audit) == sorted([(winner, -100, transfer.id), (loser, 100, transfer.id)])
    assert view[0]["reversed"] is True and view[0]["coins"] == 100
    with pytest.raises(integrity_admin.AlreadyReversed):
        await db.write(lambda s: integrity_admin.reverse_match(s, match_id="m1", admin_id=root, note="again"))
    assert (await balance(db, winner), await balance(db, loser)) == (1000, 1000)
    assert await _total(db) == 0
    await assert_ledger_sound(db)


async def test_a_winner_who_spent_his_winnings_pays_back_what_he_holds(db: Database) -> None:
    root = await make_player(db, role="admin")
    winner, loser = await make_player(db, balance=100), await make_player(db, balance=100)
    await settled_match(db, {winner: 200, loser: 0}, 100, "spent")
    await db.write(  # the winner loses 160 of his 200 elsewhere
        lambda s: admin.adjust(s, admin_id=root, account_id=winner, amount=-160, reason="test", key="spend-1")
    )
    out = await db.write(lambda s: integrity_admin.reverse_match(s, match_id="spent", admin_id=root, note=""))
    assert out["shortfall"] == 60 and [t["amount"] for t in out["transfers"]] == [-40, 40]
    assert (await balance(db, winner), await balance(db, loser)) == (0, 40)
    async with db.session() as session:
        reason = await session.scalar(
            select(AdminAction.reason).where(AdminAction.action == "reverse_match", AdminAction.target_id == winner)
        )
    assert "shortfall 60" in str(reason)
    await assert_ledger_sound(db)


async def test_a_winner_with_nothing_left_pays_nothing_and_the_reversal_is_recorded(db: Database) -> None:
    root = await make_player(db, role="admin")
    winner, loser = await make_player(db, balance=50), await make_player(db, balance=50)
    await settled_match(db, {winner: 100, loser: 0}, 50, "broke")
    await db.write(lambda s: admin.adjust(s, admin_id=root, account_id=winner, amount=-100, reason="t", key="spend-2"))
    out = await db.write(lambda s: integrity_admin.reverse_match(s, match_id="broke", admin_id=root, note="late"))
    assert out["shortfall"] == 50 and [t["amount"] for t in out["transfers"]] == [0, 0]
    assert await count(db, LedgerTransfer, LedgerTransfer.reason == "match_reversal") == 0
    with pytest.raises(integrity_admin.AlreadyReversed):
        await db.write(lambda s: integrity_admin.reverse_match(s, match_id="broke", admin_id=root, note=""))
    await assert_ledger_sound(db)


async def test_a_three_player_match_is_reversed_in_proportion(db: Database) -> None:
    root = await make_player(db, role="admin")
    a, b, c = [await make_player(db) for _ in range(3)]
    await settled_match(db, {a: 250, b: 50, c: 0}, 100, "three")  # a +150, b -50, c -100
    before = {x: await balance(db, x) for x in (a, b, c)}
    assert before == {a: 1150, b: 950, c: 900}
    out = await db.write(lambda s: integrity_admin.reverse_match(s, match_id="three", admin_id=root, note=""))
    assert out["shortfall"] == 0
    assert {x: await balance(db, x) for x in (a, b, c)} == {a: 1000, b: 1000, c: 1000}
    await assert_ledger_sound(db)


async def test_nothing_to_reverse_and_unknown_matches(db: Database) -> None:
    root = await make_player(db, role="admin")
    a, b = await make_player(db), await make_player(db)
    clock = Clock()
    free = await run_match(DbHooks(db, now=clock), clock, [a, b])
    with pytest.raises(integrity_admin.NothingToReverse):
        await db.write(lambda s: integrity_admin.reverse_match(s, match_id=free, admin_id=root, note=""))
    with pytest.raises(integrity_admin.NotFound):
        await db.write(lambda s: integrity_admin.reverse_match(s, match_id="nope", admin_id=root, note=""))
    async with db.session() as session:
        assert (await integrity_admin.match_rows(session, [free]))[0]["reversed"] is False
