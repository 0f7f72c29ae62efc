"""``python -m app.cli create-admin``: creates an admin on a fresh database, or promotes one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app import cli
from app.config import get_settings
from app.db import accounts, ledger
from app.db.session import Database


def _lookup(url: str, name: str) -> tuple[str, int | None, str]:
    async def run() -> tuple[str, int | None, str]:
        db = Database(url)
        try:
            async with db.session() as session:
                account = await accounts.get_by_name(session, name)
                assert account is not None
                return account.role, await ledger.balance_of(session, account.id), account.password_hash
        finally:
            await db.dispose()

    return asyncio.run(run())


def test_create_admin_then_promote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.sqlite3'}"
    monkeypatch.setenv("DURAK_DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        # A brand-new file: the command migrates it first.
        assert cli.main(["create-admin", "Boss", "--password", "a long password"]) == 0
        assert "created admin account 'Boss'" in capsys.readouterr().out
        role, balance, password_hash = _lookup(url, "boss")
        assert role == "admin" and balance == 1000 and password_hash.startswith("$argon2id$")

        async def signup() -> None:
            db = Database(url)
            try:
                await db.write(lambda s: accounts.create_account(s, name="pat", password_hash="x", starting_balance=5))
            finally:
                await db.dispose()

        asyncio.run(signup())
        assert cli.main(["create-admin", "PAT"]) == 0  # no password prompt when promoting
        assert "promoted existing account 'pat'" in capsys.readouterr().out
        assert _lookup(url, "pat")[:2] == ("admin", 5)

        with pytest.raises(SystemExit, match="name may contain only"):
            cli.main(["create-admin", "bad name", "--password", "a long password"])
        with pytest.raises(SystemExit, match="password must be"):
            cli.main(["create-admin", "newbie", "--password", "short"])
    finally:
        get_settings.cache_clear()


def test_python_m_app_migrates_before_serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from app import __main__ as entry
    from app.main import DurakPeak

    path = tmp_path / "serve.sqlite3"
    monkeypatch.setenv("DURAK_DATABASE_URL", f"sqlite+aiosqlite:///{path}")
    get_settings.cache_clear()
    served: list[object] = []

    class Server:  # app.main.Server: it would serve the app it is given
        def __init__(self, config: object, app: object) -> None:
            served.append(app)

        started = True

        def run(self) -> None:
            pass

    monkeypatch.setattr(entry, "Server", Server)
    try:
        entry.main()
    finally:
        get_settings.cache_clear()
    assert len(served) == 1 and isinstance(served[0], DurakPeak)
    with sqlite3.connect(path) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    newest = sorted(
        p.name.split("_")[0] for p in (Path(entry.__file__).parents[1] / "migrations" / "versions").glob("0*.py")
    )[-1]
    assert {"accounts", "ledger_accounts", "ledger_entries", "matches", "login_sessions"} <= tables
    assert version == (newest,)  # the newest migration, whichever it is
