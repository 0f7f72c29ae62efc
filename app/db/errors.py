"""Domain errors of the accounts, ledger and stakes layer. The API maps them to HTTP codes."""

from __future__ import annotations


class LedgerError(Exception):
    """Base class: a ledger operation was refused; nothing was written."""


class InsufficientFunds(LedgerError):
    """A player's (or escrow's) balance would go below zero."""

    def __init__(
        self,
        *,
        ledger_account_id: int,
        account_id: int | None,
        name: str | None,
        balance: int,
        needed: int,
    ) -> None:
        who = f"ledger account {ledger_account_id}"
        if account_id is not None:
            who = f"account {account_id} ({name})"
        super().__init__(f"insufficient funds: {who} has {balance} coins and needs {needed}")
        self.ledger_account_id = ledger_account_id
        self.account_id = account_id
        self.name = name
        self.balance = balance
        self.needed = needed


class IdempotencyConflict(LedgerError):
    """An idempotency key was re-used for a different operation."""


class UnknownLedgerAccount(LedgerError):
    """A transfer named a ledger account (or player) that does not exist."""


class NoWallet(LedgerError):
    """The account holds no coins (it has no ledger account)."""


class EscrowNotFound(LedgerError):
    """No escrow was opened for that match."""


class EscrowClosed(LedgerError):
    """The escrow was already settled or refunded; settle and refund exclude each other."""

    def __init__(self, match_id: str, status: str, attempted: str) -> None:
        super().__init__(f"escrow of match {match_id} is already {status}; cannot {attempted} it")
        self.match_id = match_id
        self.status = status
        self.attempted = attempted


class PayoutMismatch(LedgerError):
    """Payouts that do not add up to the escrow or pay someone who did not stake."""


class NameTaken(Exception):
    """An account with that name (compared case-insensitively) exists."""

    def __init__(self, name: str) -> None:
        super().__init__(f"the name {name!r} is taken")
        self.name = name


class MatchConflict(Exception):
    """A match with that id was already recorded with different data."""
