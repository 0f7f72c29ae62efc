"""Many writers at once: stakes, payouts, refunds and admin adjustments, each task with its own session.

Whatever interleaving the database picks, coins are conserved, no player goes negative, each
idempotency key is applied at most once, settle and refund never both happen, and every cached
balance equals its ledger sum.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import admin, ledger, stakes
from app.db.errors import EscrowClosed, EscrowNotFound, InsufficientFunds
from app.db.models import KIND_ESCROW, KIND_PLAYER, Escrow, LedgerAccount, LedgerTransfer
from app.db.session import Database
from tests.db.helpers import assert_ledger_sound, make_player

PLAYERS = 10
START = 1000
MATCHES = 24
ADJUSTMENTS = 20


async def _players_total(db: Database) -> int:
    async with db.session() as session:
        return int(
            await session.scalar(
                select(func.sum(LedgerAccount.balance)).where(LedgerAccount.kind.in_([KIND_PLAYER, KIND_ESCROW]))
            )
            or 0
        )


async def test_concurrent_stakes_payouts_refunds_and_adjustments_conserve_coins(db: Database) -> None:
    rng = random.Random(4)
    players = [await make_player(db, balance=START) for _ in range(PLAYERS)]
    outcomes: Counter[str] = Counter()

    async def play_match(index: int) -> None:
        match_id = f"race-{index}"
        seated = rng.sample(players, rng.randint(2, 4))
        stake = rng.choice([50, 100, 150, 250])
        # Two tasks open the same match: one escrow, one set of stakes. (One may be refused and the
        # other succeed, if a payout elsewhere lands in between.)
        opened = await asyncio.gather(
            stakes.open_escrow(db, match_id=match_id, stake=stake, account_ids=seated),
            stakes.open_escrow(db, match_id=match_id, stake=stake, account_ids=list(reversed(seated))),
            return_exceptions=True,
        )
        for result in opened:
            if isinstance(result, BaseException) and not isinstance(result, InsufficientFunds):
                raise result
        infos = [r for r in opened if isinstance(r, stakes.EscrowInfo)]
        if not infos:
            outcomes["open refused"] += 1
            return
        assert all(info.stakes == dict.fromkeys(sorted(seated), stake) for info in infos)
        pot = stake * len(seated)
        winner = rng.choice(seated)
        payouts = {a: (pot if a == winner else 0) for a in seated}

        async def settle() -> str:
            try:
                await stakes.settle_escrow(db, match_id=match_id, payouts=payouts)
                return "settled"
            except EscrowClosed:
                return "settle refused"

        async def refund() -> str:
            await asyncio.sleep(rng.random() / 200)  # settles get a random head start on the real database
            try:
                await stakes.refund_escrow(db, match_id=match_id)
                return "refunded"
            except EscrowClosed:
                return "refund refused"

        # Settle twice (idempotent) and race a refund against it: exactly one of them wins.
        results = await asyncio.gather(settle(), settle(), refund())
        outcomes.update(results)
        assert ("refunded" in results) != ("settled" in results)

    async def adjust(index: int) -> None:
        target = rng.choice(players)
        amount = rng.choice([-400, -50, 25, 75, 300])
        key = f"adj-{index}"

        async def run(session: AsyncSession) -> admin.Adjustment:
            return await admin.adjust(
                session, admin_id=None, account_id=target, amount=amount, reason="concurrency test", key=key
            )

        # The same adjustment submitted twice at once is applied once.
        results = await asyncio.gather(db.write(run), db.write(run), return_exceptions=True)
        for result in results:
            if isinstance(result, InsufficientFunds):
                outcomes["adjust refused"] += 1
            elif isinstance(result, BaseException):
                raise result

    async def stray_refund(index: int) -> None:
        try:
            await stakes.refund_escrow(db, match_id=f"race-{index}")
            outcomes["stray refund"] += 1
        except (EscrowNotFound, EscrowClosed):
            pass

    tasks = [play_match(i) for i in range(MATCHES)]
    tasks += [adjust(i) for i in range(ADJUSTMENTS)]
    tasks += [stray_refund(i) for i in range(0, MATCHES, 3)]
    assert len(tasks) >= 50  # each task opens two to three sessions of its own
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=90)

    await assert_ledger_sound(db)
    async with db.session() as session:
        keys = (await session.scalars(select(LedgerTransfer.key))).all()
        assert len(keys) == len(set(keys))
        applied_adjustments = [k for k in keys if k.startswith("admin:")]
        assert len(applied_adjustments) <= ADJUSTMENTS
        house_delta = -(
            await session.scalar(select(LedgerAccount.balance).where(LedgerAccount.code == "house:adjustments")) or 0
        )
        escrows = (await session.scalars(select(Escrow))).all()
        for escrow in escrows:
            settle = f"match:{escrow.match_id}:settle" in keys
            refund = f"match:{escrow.match_id}:refund" in keys
            assert not (settle and refund)
            assert escrow.status == ("settled" if settle else "refunded" if refund else "open")
            held = await session.scalar(
                select(LedgerAccount.balance).where(LedgerAccount.id == escrow.ledger_account_id)
            )
            assert (held == 0) == (escrow.status != "open")
        balances = (await session.scalars(select(LedgerAccount.balance).where(LedgerAccount.kind == KIND_PLAYER))).all()
        assert min(balances) >= 0
        adjustments = (
            await session.scalars(select(LedgerTransfer).where(LedgerTransfer.reason == "admin_adjustment"))
        ).all()
        assert len(adjustments) == len(applied_adjustments)
    # Coins held by players and escrows = what the mint granted + what admins added or took.
    assert await _players_total(db) == PLAYERS * START + house_delta
    assert outcomes["settled"] + outcomes["refunded"] + outcomes["stray refund"] > 0, outcomes
    assert not any(e.status == "open" for e in escrows)
    async with db.session() as session:
        report = await ledger.audit(session)
    assert report.total == 0
