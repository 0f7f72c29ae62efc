"""New accounts (docs/integrity.md, "New accounts"), on SQLite and PostgreSQL: the matches that
count, the hold on playing for coins until an account has played enough of them, no rated forfeits
in its first matches, and the inflow signal that sees a star of new accounts feeding one account."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select, update

from app.db import integrity
from app.db.models import Account, InflowDay, IntegrityFlag, PairDay
from app.db.session import Database
from app.db.table_hooks import DbHooks
from app.engine import Forfeit, State
from app.integrity_policy import IntegrityRules, utc_day
from app.tables.hooks import CannotStart
from tests.db.helpers import assert_ledger_sound, balance, make_player
from tests.db.test_integrity import Clock, act, left_at_once, play, rated, run_match


async def counted(db: Database, account: int) -> int:
    async with db.session() as session:
        return (await integrity.standings(session, [account]))[account].counted


async def flags(db: Database, kind: str) -> list[IntegrityFlag]:
    async with db.session() as session:
        return list((await session.scalars(select(IntegrityFlag).where(IntegrityFlag.kind == kind))).all())


async def make_old(db: Database, account: int, days: float) -> None:
    """The account signed up ``days`` ago."""

    async def write(session: Any) -> None:
        created = await session.scalar(select(Account.created_at).where(Account.id == account))
        await session.execute(
            update(Account).where(Account.id == account).values(created_at=created - timedelta(days=days))
        )

    await db.write(write)


def moved_then_disconnected(state: State, log: list[dict[str, Any]]) -> State:
    """Seat 0 leads, seat 1 answers, then seat 0 (who had moved) forfeits by disconnecting."""
    state = play(state, log, until=lambda s: len(log) >= 2)
    return act(state, log, Forfeit(log[0]["seat"], "disconnected"))


def three_bouts_then_left(state: State, log: list[dict[str, Any]]) -> State:
    """Three bouts played, then seat 0 leaves (a forfeit in a match long enough to count)."""
    state = play(state, log, until=lambda s: sum(1 for a in log if a["type"] == "lead") >= 3)
    return act(state, log, Forfeit(0, "left"))


async def test_a_new_account_plays_for_coins_only_after_enough_matches_that_count(db: Database) -> None:
    rules = IntegrityRules()
    newcomer, other = await make_player(db, new=True), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    code, message = await hooks.may_sit(account_id=newcomer, others=[other], stake=10) or ("", "")
    assert code == "new_account"
    assert f"once it has played {rules.new_account_matches} matches that count (0 so far" in message
    assert await hooks.may_sit(account_id=newcomer, others=[other], stake=0) is None  # free tables are open
    with pytest.raises(CannotStart) as refused:  # a staked match does not start with him, nothing is taken
        await hooks.match_started(match_id="early", stake=10, account_ids=[other, newcomer])
    assert refused.value.code == "new_account" and "'s account may play for coins" in refused.value.message
    assert await balance(db, newcomer) == await balance(db, other) == 1000
    # Matches too short to count do not count: a quick one, and one left at once.
    await run_match(hooks, clock, [newcomer, other], seconds=30)
    await run_match(hooks, clock, [newcomer, other], seconds=300, ending=left_at_once)
    assert await counted(db, newcomer) == 0
    for played in range(1, rules.new_account_matches + 1):
        assert await hooks.may_sit(account_id=newcomer, others=[other], stake=10) is not None
        await run_match(hooks, clock, [newcomer, other], seconds=300)  # played out: it counts
        assert await counted(db, newcomer) == played
    assert await hooks.may_sit(account_id=newcomer, others=[other], stake=10) is None
    await run_match(hooks, clock, [newcomer, other], stake=10, seconds=300)
    assert await balance(db, newcomer) + await balance(db, other) == 2000
    await assert_ledger_sound(db)


async def test_a_forfeit_of_an_account_in_its_first_matches_is_not_rated(db: Database) -> None:
    """A one-move-then-disconnect account hands out no rated wins while it is new, nor does one that
    plays a few bouts and leaves; the same forfeits of an established account are rated
    (docs/integrity.md)."""
    newcomer, winner, established = await make_player(db, new=True), await make_player(db), await make_player(db)
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    assert not await rated(
        db, await run_match(hooks, clock, [newcomer, winner], seconds=5, ending=moved_then_disconnected)
    )
    assert await rated(
        db, await run_match(hooks, clock, [established, winner], seconds=5, ending=moved_then_disconnected)
    )
    # Nor after three slow bouts: a new account's forfeit is never rated, however long the match.
    slow = await run_match(hooks, clock, [newcomer, winner], seconds=300, ending=three_bouts_then_left)
    assert not await rated(db, slow)
    settled = await run_match(hooks, clock, [established, winner], seconds=300, ending=three_bouts_then_left)
    assert await rated(db, settled)
    # A long match played out with the new account in it is rated as ever.
    assert await rated(db, await run_match(hooks, clock, [newcomer, winner], seconds=300))


async def test_a_star_of_new_accounts_feeding_one_account_is_flagged(db: Database) -> None:
    """Each new account loses once to the main one: no pair's watch sees anything, the inflow signal
    does, at the fifth new account (wins at free tables) and at 1,000 coins (staked tables)."""
    rules = IntegrityRules()
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    main = await make_player(db)
    alts = [await make_player(db, new=True) for _ in range(rules.new_inflow_accounts)]
    for alt in alts[:-1]:
        await run_match(hooks, clock, [main, alt], ending=left_at_once)  # the alt leaves: main wins
    assert await flags(db, "new_inflow") == [] and await flags(db, "quick_wins") == []
    await run_match(hooks, clock, [main, alts[-1]], ending=left_at_once)
    [flag] = await flags(db, "new_inflow")
    assert flag.account_a == main and flag.account_b == alts[-1] and len(flag.match_ids) == len(alts)
    assert f"from {len(alts)} new accounts" in flag.summary
    async with db.session() as session:
        pairs = (await session.scalars(select(PairDay))).all()
        row = await session.get(InflowDay, (main, utc_day(clock())))
    assert max(pair.quick_wins for pair in pairs) == 1  # one quick win per pair: the pair watch is blind
    assert row is not None and row.wins == len(alts) and sorted(row.losers) == sorted(alts)


async def test_coins_taken_from_young_accounts_are_flagged_and_from_old_ones_not(db: Database) -> None:
    clock = Clock()
    hooks = DbHooks(db, now=clock)
    main, veteran = await make_player(db), await make_player(db)
    await make_old(db, veteran, 30)  # past its first matches and 30 days old: not new
    young = [await make_player(db) for _ in range(3)]  # past their first matches, but days old
    await run_match(hooks, clock, [main, veteran], stake=900, ending=left_at_once)
    assert await balance(db, main) == 1900 and await flags(db, "new_inflow") == []
    await run_match(hooks, clock, [main, young[0]], stake=600, ending=left_at_once)
    assert await flags(db, "new_inflow") == []  # 600 coins from new accounts: under 1,000
    await run_match(hooks, clock, [main, young[1]], stake=400, ending=left_at_once)
    [flag] = await flags(db, "new_inflow")
    assert flag.account_a == main and "took 1000 coins" in flag.summary and "from 2 new accounts" in flag.summary
    await run_match(hooks, clock, [main, young[2]], stake=100, ending=left_at_once)
    [flag] = await flags(db, "new_inflow")  # the day's flag gathers the later matches
    assert len(flag.match_ids) == 3 and "took 1100 coins" in flag.summary
    await assert_ledger_sound(db)
