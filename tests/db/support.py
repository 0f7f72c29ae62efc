"""Throw-away databases for the db and api tests, on SQLite and on PostgreSQL.

Each backend is migrated once per test session into a template (a SQLite file; a PostgreSQL
database created with CREATE DATABASE from ``test``); every test then gets a fresh copy: the file
copied, or ``CREATE DATABASE ... TEMPLATE``. All PostgreSQL databases are dropped at the end.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from app.db import migrate
from app.db.session import Database
from tests.services import require_postgres

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


class PostgresServer:
    """Creates and drops scratch databases next to the ``test`` database."""

    def __init__(self, url: str) -> None:
        self.url = make_url(url)
        self.created: list[str] = []

    def _admin(self) -> psycopg.Connection:
        conninfo = self.url.set(drivername="postgresql").render_as_string(hide_password=False)
        return psycopg.connect(conninfo, autocommit=True)

    def url_for(self, name: str) -> str:
        return self.url.set(database=name).render_as_string(hide_password=False)

    def create(self, *, template: str | None = None) -> str:
        name = f"durak_test_{uuid.uuid4().hex[:12]}"
        with self._admin() as conn:
            if template:
                conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
            else:
                conn.execute(f'CREATE DATABASE "{name}"')
        self.created.append(name)
        return name

    def drop(self, name: str) -> None:
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self.created:
            self.created.remove(name)

    def drop_all(self) -> None:
        for name in list(self.created):
            self.drop(name)


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sqlite-template") / "template.sqlite3"
    migrate.upgrade_sync(sqlite_url(path))
    return path


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    server = PostgresServer(require_postgres())
    try:
        yield server
    finally:
        server.drop_all()


@pytest.fixture(scope="session")
def postgres_template(postgres_server: PostgresServer) -> str:
    name = postgres_server.create()
    migrate.upgrade_sync(postgres_server.url_for(name))
    return name


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A freshly migrated, empty database of each backend (the test is run once per backend)."""
    if request.param == "sqlite":
        template: Path = request.getfixturevalue("sqlite_template")
        path = tmp_path / "durak.sqlite3"
        shutil.copyfile(template, path)
        yield sqlite_url(path)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    name = server.create(template=request.getfixturevalue("postgres_template"))
    try:
        yield server.url_for(name)
    finally:
        server.drop(name)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    try:
        yield database
    finally:
        await database.dispose()
