"""Operator commands.

``python -m app.cli create-admin NAME [--password PASSWORD]`` creates an admin account (prompting
for the password unless given) or, when the name exists, promotes that account to admin. The
database is migrated to head first.

``python -m app.cli reset-password NAME [--password PASSWORD]`` sets an account's password (an admin's
too, which the admin route refuses), prompting for it unless given; every session of the account
is signed out. Audited as the operator's (no admin id).

``python -m app.cli verify-deal MATCH_ID`` (from the database) or ``verify-deal --file match.json``
(the answer of ``GET /api/matches/{id}``, or its ``fairness`` object alone) recomputes a match's
commitment and deck (docs/fairness.md) and prints the deck and ``ok``, or what differs (exit 1).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.api import signouts
from app.api.schemas import PASSWORD_MAX, PASSWORD_MIN
from app.broker import open_broker
from app.config import get_settings
from app.db import accounts
from app.db.errors import NameTaken
from app.db.migrate import upgrade
from app.db.models import ROLE_ADMIN
from app.db.passwords import hash_password
from app.db.session import Database


def _ask_password(prompt: str = "Password for the new admin: ") -> str:
    first = getpass.getpass(prompt)
    if getpass.getpass("Repeat it: ") != first:
        raise SystemExit("the passwords differ")
    return first


async def create_admin(database_url: str, name: str, password: str | None, starting_balance: int) -> str:
    """Create or promote; returns a message saying which."""
    problem = accounts.name_problem(name)
    if problem:
        raise SystemExit(problem)
    await upgrade(database_url)
    db = Database(database_url)
    try:
        async with db.session() as session:
            existing = await accounts.get_by_name(session, name)
        if existing is not None:
            existing_id = existing.id

            async def promote(session: AsyncSession) -> None:
                await accounts.set_role(
                    session, account_id=existing_id, role=ROLE_ADMIN, admin_id=None, reason="cli create-admin"
                )

            await db.write(promote)
            note = " (password left unchanged)" if password else ""
            return f"promoted existing account {existing.name!r} (id {existing.id}) to admin{note}"
        if password is None:
            password = _ask_password()
        if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
            raise SystemExit(f"password must be {PASSWORD_MIN}-{PASSWORD_MAX} characters long")
        password_hash = await hash_password(password)

        async def create(session: AsyncSession) -> int:
            account = await accounts.create_account(
                session,
                name=name,
                password_hash=password_hash,
                starting_balance=starting_balance,
                role=ROLE_ADMIN,
            )
            return account.id

        try:
            account_id = await db.write(create)
        except NameTaken as exc:  # created concurrently
            raise SystemExit(str(exc)) from exc
        return f"created admin account {name!r} (id {account_id})"
    finally:
        await db.dispose()


async def reset_password(database_url: str, broker_url: str, name: str, password: str | None) -> str:
    await upgrade(database_url)
    db = Database(database_url)
    try:
        async with db.session() as session:
            account = await accounts.get_by_name(session, name)
        if account is None:
            raise SystemExit(f"no account {name!r}")
        if password is None:
            password = _ask_password("New password: ")
        if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
            raise SystemExit(f"password must be {PASSWORD_MIN}-{PASSWORD_MAX} characters long")
        password_hash, account_id = await hash_password(password), account.id

        async def reset(session: AsyncSession) -> None:
            await accounts.reset_password(
                session, account_id=account_id, password_hash=password_hash, admin_id=None, reason="cli reset-password"
            )

        await db.write(reset)
    finally:
        await db.dispose()
    async with open_broker(broker_url) as broker:  # the open table sockets of its sessions close
        await signouts.announce(broker, account_id=account_id, session_id=None)
    return f"reset the password of {account.name!r} (id {account_id}); every session of it is signed out"


def verify_deal(data: dict[str, Any]) -> tuple[bool, str]:
    """Whether a match's published ``fairness`` checks out, and the report to print."""
    from app.engine.cards import cards_text
    from app.engine.fairness import verify

    fairness = data.get("fairness", data) if isinstance(data, dict) else None
    if not isinstance(fairness, dict):
        return False, "no fairness record (a match dealt before provably fair deals, or not a match)"
    if fairness.get("server_seed") is None:
        return False, "the server seed is not revealed yet: the match is not over"
    problems, order = verify(fairness)
    lines = [f"deck: {cards_text(order)}"] if order is not None else []
    lines.extend(problems or ["ok"])
    return not problems, "\n".join(lines)


async def load_fairness(database_url: str, match_id: str) -> dict[str, Any]:
    from app.db import matches as history

    db = Database(database_url)
    try:
        async with db.session() as session:
            match = await history.get_match(session, match_id, viewer_id=None, viewer_is_admin=True)
    finally:
        await db.dispose()
    if match is None:
        raise SystemExit(f"no match {match_id}")
    fairness = getattr(match, "fairness", None)
    if not fairness:
        raise SystemExit(f"match {match_id} has no fairness record (dealt before provably fair deals)")
    return dict(fairness)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.cli", description="Durak Peak operator commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create-admin", help="create an admin account, or promote an existing one")
    create.add_argument("name")
    create.add_argument("--password", help="the new account's password (prompted for when omitted)")
    reset = commands.add_parser("reset-password", help="set an account's password, signing out its sessions")
    reset.add_argument("name")
    reset.add_argument("--password", help="the new password (prompted for when omitted)")
    check = commands.add_parser("verify-deal", help="recompute a finished match's deal (docs/fairness.md)")
    check.add_argument("match_id", nargs="?", help="a match in the database")
    check.add_argument("--file", type=Path, help="a JSON file: GET /api/matches/{id}, or its fairness object")
    args = parser.parse_args(argv)
    if args.command == "verify-deal":
        if (args.match_id is None) == (args.file is None):
            parser.error("verify-deal takes a MATCH_ID or --file, one of the two")
        if args.file is not None:
            try:
                data = json.loads(args.file.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise SystemExit(f"cannot read {args.file}: {exc}") from exc
        else:
            data = asyncio.run(load_fairness(get_settings().database_url, args.match_id))
        ok, report = verify_deal(data)
        print(report)
        return 0 if ok else 1
    settings = get_settings()
    if args.command == "create-admin":
        message = asyncio.run(
            create_admin(settings.database_url, args.name, args.password, settings.starting_balance)
        )
        print(message)
    if args.command == "reset-password":
        print(asyncio.run(reset_password(settings.database_url, settings.broker_url, args.name, args.password)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
