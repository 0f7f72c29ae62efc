"""Account CRUD: sign-up (with the starting grant through the ledger), look-ups, search, roles."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import ledger, login_sessions
from app.db.errors import NameTaken
from app.db.models import (
    HOUSE_MINT,
    KIND_PLAYER,
    ROLE_ADMIN,
    ROLE_PLAYER,
    Account,
    AdminAction,
    LedgerAccount,
)

NAME_MIN, NAME_MAX = 2, 24
NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]+")
REASON_SIGNUP = "signup_grant"


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid account or guest name, or ``None`` when it is."""
    if not NAME_MIN <= len(name) <= NAME_MAX:
        return f"name must be {NAME_MIN}-{NAME_MAX} characters long (got {len(name)})"
    if not NAME_PATTERN.fullmatch(name):
        return "name may contain only the letters A-Z and a-z, the digits 0-9, '_' and '-'"
    return None


@dataclass(frozen=True, slots=True)
class AccountView:
    id: int
    name: str
    role: str
    balance: int | None

    @property
    def is_admin(self) -> bool:
        return self.role == ROLE_ADMIN


async def get_by_name(session: AsyncSession, name: str) -> Account | None:
    return await session.scalar(select(Account).where(func.lower(Account.name) == name.lower()))


async def get(session: AsyncSession, account_id: int) -> Account | None:
    return await session.get(Account, account_id)


async def create_account(
    session: AsyncSession,
    *,
    name: str,
    password_hash: str,
    starting_balance: int,
    role: str = ROLE_PLAYER,
) -> Account:
    """Create an account and its wallet; credit ``starting_balance`` from the mint via the ledger.

    Raises ``NameTaken`` if the name exists (case-insensitively) and ``ValueError`` for a bad name.
    """
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    if role not in (ROLE_PLAYER, ROLE_ADMIN):
        raise ValueError(f"unknown role {role!r}")
    if await get_by_name(session, name) is not None:
        raise NameTaken(name)
    account = Account(name=name, password_hash=password_hash, role=role)
    try:
        async with session.begin_nested():
            session.add(account)
            await session.flush()
    except IntegrityError as exc:  # a concurrent sign-up took the name between check and insert
        raise NameTaken(name) from exc
    wallet = LedgerAccount(code=f"player:{account.id}", kind=KIND_PLAYER, owner_id=account.id, balance=0)
    session.add(wallet)
    await session.flush()
    if starting_balance > 0:
        mint = await ledger.house_account_id(session, HOUSE_MINT)
        await ledger.transfer(
            session,
            key=f"signup:{account.id}",
            reason=REASON_SIGNUP,
            moves=[(mint, wallet.id, starting_balance)],
        )
    return account


async def set_password_hash(session: AsyncSession, *, account_id: int, password_hash: str) -> None:
    account = await session.get(Account, account_id)
    if account is not None:
        account.password_hash = password_hash


class PasswordResetRefused(Exception):
    """An admin's password is not reset by another admin (he changes it himself, or the operator
    runs ``python -m app.cli reset-password``)."""


async def change_password(session: AsyncSession, *, account_id: int, password_hash: str) -> int:
    """The account's new password; every login session of it is revoked (how many were)."""
    await set_password_hash(session, account_id=account_id, password_hash=password_hash)
    return await login_sessions.revoke_all(session, account_id=account_id)


async def reset_password(
    session: AsyncSession, *, account_id: int, password_hash: str, admin_id: int | None, reason: str
) -> Account | None:
    """An admin sets a player's password (a temporary one he hands over): every login session of
    the account is revoked, and the reset is audited. None when there is no such account;
    ``PasswordResetRefused`` for another admin's account."""
    account = await session.get(Account, account_id, with_for_update=True)
    if account is None:
        return None
    if account.role == ROLE_ADMIN and admin_id is not None:
        raise PasswordResetRefused(f"{account.name} is an admin: admins change their own passwords")
    account.password_hash = password_hash
    await login_sessions.revoke_all(session, account_id=account_id)
    session.add(AdminAction(admin_id=admin_id, target_id=account_id, action="password_reset", reason=reason))
    await session.flush()
    return account


async def set_role(
    session: AsyncSession, *, account_id: int, role: str, admin_id: int | None, reason: str
) -> Account | None:
    """Change an account's role and record it in the admin audit trail."""
    if role not in (ROLE_PLAYER, ROLE_ADMIN):
        raise ValueError(f"unknown role {role!r}")
    account = await session.get(Account, account_id, with_for_update=True)
    if account is None:
        return None
    if account.role != role:
        account.role = role
        session.add(
            AdminAction(admin_id=admin_id, target_id=account.id, action=f"set_role:{role}", reason=reason)
        )
        await session.flush()
    return account


async def view(session: AsyncSession, account_id: int) -> AccountView | None:
    row = (
        await session.execute(
            select(Account.id, Account.name, Account.role, LedgerAccount.balance)
            .outerjoin(LedgerAccount, LedgerAccount.owner_id == Account.id)
            .where(Account.id == account_id)
        )
    ).first()
    if row is None:
        return None
    return AccountView(id=row[0], name=row[1], role=row[2], balance=row[3])


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def search(
    session: AsyncSession, *, q: str | None, offset: int, limit: int
) -> tuple[list[tuple[Account, int | None]], int]:
    """Accounts whose name contains ``q`` (case-insensitively), by name, with balances and a total."""
    where = []
    if q:
        where.append(func.lower(Account.name).like(f"%{_like_escape(q.lower())}%", escape="\\"))
    total = int(await session.scalar(select(func.count()).select_from(Account).where(*where)) or 0)
    rows = (
        await session.execute(
            select(Account, LedgerAccount.balance)
            .outerjoin(LedgerAccount, LedgerAccount.owner_id == Account.id)
            .where(*where)
            .order_by(func.lower(Account.name), Account.id)
            .offset(offset)
            .limit(limit)
        )
    ).all()
    return [(account, balance) for account, balance in rows], total
