"""Operator commands.

``python -m app.cli create-admin NAME [--password PASSWORD]`` creates an admin account (prompting
for the password unless given) or, when the name exists, promotes that account to admin. The
database is migrated to head first.

``python -m app.cli reset-password NAME [--password PASSWORD]`` sets an account's password (an admin's
too, which the admin route refuses), prompting for it unless given; every session of the account
is signed out. Audited as the operator's (no admin id).

``python -m app.cli verify-deal MATCH_ID`` (from the database) or ``verify-deal --file match.json
--replay replay.json`` (the answers of ``GET /api/matches/{id}`` — or its ``fairness`` object alone —
and ``GET /api/matches/{id}/replay``) recomputes a match's commitment and deck and checks that the
cards the replay deals and draws are that deck's (docs/fairness.md, "Verifying"). It prints the deck
and ``ok``, or what differs (exit 1); without a replay the deck is checked but the game is not, and
it says so (exit 2).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:  # the engine is imported lazily where it runs
    from app.engine.replay import ReplayViewJson


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


REPLAY_NOT_CHECKED = 2  # the exit status when the deck was checked but no replay was given


def verify_deal(data: dict[str, Any], replay: Any = None) -> tuple[int, str]:
    """Check a match's published ``fairness`` and, given its ``replay`` (the list of positions of
    ``GET /api/matches/{id}/replay``), that the cards dealt and drawn in it came from that deck. The
    exit status (0 verified, 1 something differs, 2 the replay was not checked) and the report."""
    from app.engine.cards import cards_text
    from app.engine.fairness import check_replay, verify

    fairness = data.get("fairness", data) if isinstance(data, dict) else None
    if not isinstance(fairness, dict):
        return 1, "no fairness record (a match dealt before provably fair deals, or not a match)"
    if fairness.get("server_seed") is None:
        return 1, "the server seed is not revealed yet: the match is not over"
    problems, order = verify(fairness)
    lines = [f"deck: {cards_text(order)}"] if order is not None else []
    if order is not None and replay is not None:
        if isinstance(replay, str):
            problems.append(f"replay: {replay}")
        elif not isinstance(replay, list):
            problems.append("replay: not a list of positions (the answer of GET /api/matches/{id}/replay)")
        else:
            found = check_replay([str(card) for card in order], replay)
            problems.extend(found)
            if not found:
                lines.append(f"replay: {len(replay)} positions, every card dealt and drawn is the deck's")
    if problems:
        return 1, "\n".join([*lines, *problems])
    if replay is None:
        lines.append("replay: NOT CHECKED (give --replay, the answer of GET /api/matches/{id}/replay)")
        return REPLAY_NOT_CHECKED, "\n".join(lines)
    return 0, "\n".join([*lines, "ok"])


async def load_match(database_url: str, match_id: str) -> tuple[dict[str, Any], list[ReplayViewJson] | str]:
    """A stored match's fairness record and its replay, as the API would give them."""
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
    return dict(fairness), stored_replay(match.rules, match.seed, match.dealer, match.actions, fairness)


def stored_replay(
    rules: dict[str, Any], seed: str, dealer: int, actions: list[dict[str, Any]], fairness: dict[str, Any]
) -> list[ReplayViewJson] | str:
    """The replay of a stored match (every hand at every position), as ``/replay`` serves it, or why
    its moves cannot be replayed from its stored deck."""
    from app.engine.cards import Card
    from app.engine.errors import IllegalAction
    from app.engine.replay import replay_views

    try:
        order = [Card.parse(text) for text in fairness["deck"]]
        return replay_views(rules, int(seed), dealer, actions, order, hands=True)
    except (IllegalAction, KeyError, TypeError, ValueError) as exc:
        return f"the stored moves cannot be replayed from the stored deck: {exc}"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"cannot read {path}: {exc}") from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.cli", description="Durak Peak operator commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create-admin", help="create an admin account, or promote an existing one")
    create.add_argument("name")
    create.add_argument("--password", help="the new account's password (prompted for when omitted)")
    reset = commands.add_parser("reset-password", help="set an account's password, signing out its sessions")
    reset.add_argument("name")
    reset.add_argument("--password", help="the new password (prompted for when omitted)")
    check = commands.add_parser(
        "verify-deal", help="recompute a finished match's deal and check its replay against it (docs/fairness.md)"
    )
    check.add_argument("match_id", nargs="?", help="a match in the database")
    check.add_argument("--file", type=Path, help="a JSON file: GET /api/matches/{id}, or its fairness object")
    check.add_argument("--replay", type=Path, help="with --file: a JSON file, GET /api/matches/{id}/replay")
    args = parser.parse_args(argv)
    if args.command == "verify-deal":
        if (args.match_id is None) == (args.file is None):
            parser.error("verify-deal takes a MATCH_ID or --file, one of the two")
        if args.replay is not None and args.file is None:
            parser.error("--replay goes with --file (a MATCH_ID's replay is read from the database)")
        if args.file is not None:
            data, replay = _read_json(args.file), (None if args.replay is None else _read_json(args.replay))
        else:
            data, replay = asyncio.run(load_match(get_settings().storage.database_url, args.match_id))
        status, report = verify_deal(data, replay)
        print(report)
        return status
    settings = get_settings()
    if args.command == "create-admin":
        message = asyncio.run(
            create_admin(settings.storage.database_url, args.name, args.password, settings.security.starting_balance)
        )
        print(message)
    if args.command == "reset-password":
        storage = settings.storage
        print(asyncio.run(reset_password(storage.database_url, storage.broker_url, args.name, args.password)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
