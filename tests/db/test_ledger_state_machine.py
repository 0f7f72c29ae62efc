"""A hypothesis state machine over ledger operations, checked against a plain-Python model.

After every step: every player's balance matches the model, nobody is negative, and the ledger
audit holds (transfers balanced, cached balances equal ledger sums, the grand total is zero).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import admin, ledger, stakes
from app.db.errors import EscrowClosed, IdempotencyConflict, InsufficientFunds
from app.db.session import Database
from tests.db.helpers import make_player

T = TypeVar("T")
START = 300


class LedgerMachine(RuleBasedStateMachine):
    loop: asyncio.AbstractEventLoop
    db: Database

    def __init__(self) -> None:
        super().__init__()
        self.prefix = uuid.uuid4().hex[:8]
        self.players: list[int] = []
        self.model: dict[int, int] = {}
        self.escrows: dict[str, dict[str, Any]] = {}  # match id -> {stakes, status, payouts}
        self.adjustments: dict[str, tuple[int, int]] = {}  # key -> (account, amount)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    @initialize()
    def make_players(self) -> None:
        for _ in range(3):
            account = self.run(make_player(self.db, balance=START))
            self.players.append(account)
            self.model[account] = START

    # --- stakes ---------------------------------------------------------------------------------

    @rule(seats=st.sets(st.integers(0, 2), min_size=2), stake=st.sampled_from([1, 50, 120, 400]))
    def open_escrow(self, seats: set[int], stake: int) -> None:
        match_id = f"{self.prefix}-{len(self.escrows)}"
        accounts = [self.players[i] for i in sorted(seats)]
        can_pay = all(self.model[a] >= stake for a in accounts)
        try:
            self.run(stakes.open_escrow(self.db, match_id=match_id, stake=stake, account_ids=accounts))
        except InsufficientFunds as exc:
            assert not can_pay and exc.account_id in accounts and self.model[exc.account_id] < stake
            return
        assert can_pay
        for a in accounts:
            self.model[a] -= stake
        self.escrows[match_id] = {"stakes": dict.fromkeys(accounts, stake), "status": "open"}

    def _pick(self, data: st.DataObject, status: str | None = None) -> str:
        ids = sorted(m for m, e in self.escrows.items() if status is None or e["status"] == status)
        return data.draw(st.sampled_from(ids))

    @precondition(lambda self: any(e["status"] == "open" for e in self.escrows.values()))
    @rule(data=st.data())
    def settle(self, data: st.DataObject) -> None:
        match_id = self._pick(data, "open")
        escrow = self.escrows[match_id]
        pot = sum(escrow["stakes"].values())
        accounts = sorted(escrow["stakes"])
        cut = data.draw(st.integers(0, pot))
        payouts = dict.fromkeys(accounts, 0)
        payouts[accounts[0]] += cut
        payouts[accounts[-1]] += pot - cut
        self.run(stakes.settle_escrow(self.db, match_id=match_id, payouts=payouts))
        for a, coins in payouts.items():
            self.model[a] += coins
        escrow.update(status="settled", payouts=payouts)

    @precondition(lambda self: bool(self.escrows))
    @rule(data=st.data())
    def refund(self, data: st.DataObject) -> None:
        match_id = self._pick(data)
        escrow = self.escrows[match_id]
        if escrow["status"] == "settled":
            with pytest.raises(EscrowClosed):
                self.run(stakes.refund_escrow(self.db, match_id=match_id))
            return
        self.run(stakes.refund_escrow(self.db, match_id=match_id))  # a second refund is a no-op
        if escrow["status"] == "open":
            for a, coins in escrow["stakes"].items():
                self.model[a] += coins
            escrow["status"] = "refunded"

    @precondition(lambda self: any(e["status"] != "open" for e in self.escrows.values()))
    @rule(data=st.data())
    def repeat_settle(self, data: st.DataObject) -> None:
        match_id = self._pick(data)
        escrow = self.escrows[match_id]
        if escrow["status"] == "settled":
            self.run(stakes.settle_escrow(self.db, match_id=match_id, payouts=escrow["payouts"]))
        elif escrow["status"] == "refunded":
            with pytest.raises(EscrowClosed):
                pot = sum(escrow["stakes"].values())
                self.run(stakes.settle_escrow(self.db, match_id=match_id, payouts={min(escrow["stakes"]): pot}))

    # --- admin adjustments ------------------------------------------------------------------------

    @rule(
        who=st.integers(0, 2),
        amount=st.sampled_from([-500, -100, -1, 1, 75, 250]),
        key=st.sampled_from(["a", "b", "c", "d", "e", "f"]),
    )
    def adjust(self, who: int, amount: int, key: str) -> None:
        account = self.players[who]
        full_key = f"{self.prefix}-{key}"

        async def run(session: AsyncSession) -> admin.Adjustment:
            return await admin.adjust(
                session, admin_id=None, account_id=account, amount=amount, reason="machine", key=full_key
            )

        previous = self.adjustments.get(full_key)
        if previous is not None:
            if previous == (account, amount):
                assert self.run(self.db.write(run)).replayed
            else:
                with pytest.raises(IdempotencyConflict):
                    self.run(self.db.write(run))
            return
        if self.model[account] + amount < 0:
            with pytest.raises(InsufficientFunds):
                self.run(self.db.write(run))
            return
        result = self.run(self.db.write(run))
        assert not result.replayed and result.balance == self.model[account] + amount
        self.model[account] += amount
        self.adjustments[full_key] = (account, amount)

    # --- invariants -------------------------------------------------------------------------------

    @invariant()
    def balances_match_the_model_and_the_ledger(self) -> None:
        async def check() -> None:
            async with self.db.session() as session:
                for account, expected in self.model.items():
                    assert await ledger.balance_of(session, account) == expected
                report = await ledger.audit(session)
                assert report.ok, report

        self.run(check())


def test_ledger_state_machine(database_url: str) -> None:
    loop = asyncio.new_event_loop()
    db = Database(database_url)
    LedgerMachine.loop, LedgerMachine.db = loop, db
    try:
        run_state_machine_as_test(
            LedgerMachine,
            settings=settings(
                max_examples=20,
                stateful_step_count=15,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
                database=None,
            ),
        )
    finally:
        loop.run_until_complete(db.dispose())
        loop.close()
