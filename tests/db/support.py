"""Throw-away databases for the db and api tests, on SQLite and on PostgreSQL.

Each backend is migrated once per test session into a template (a SQLite file; a PostgreSQL
database created with CREATE DATABASE from ``test``); every test then gets a fresh copy: the file
copied, or ``CREATE DATABASE ... TEMPLATE``. All PostgreSQL databases are dropped at the end.

On PostgreSQL the copies are made and dropped by a thread of the worker, beside the tests: a
``CREATE DATABASE`` takes about 0.4 s and a ``DROP DATABASE`` 0.5-0.7 s (it waits for a checkpoint,
which every worker's drops queue for), and some 400 tests each took both in their set-up and
teardown. Now a test takes the copy that the thread made while the previous test ran, and hands its
own to the thread to drop (the drops waiting are made at once, to wait for one checkpoint); a copy is
never used twice.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import shutil
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
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
        self._lock = threading.Lock()  # ``created`` and ``_ready`` are shared with the thread below
        self._ready: dict[str, list[str]] = {}  # template -> copies made ahead, never used yet
        # made before dropped (a test may be waiting for a copy; a drop can wait), then the end
        self._jobs: queue.PriorityQueue[tuple[int, int, str, str]] = queue.PriorityQueue()
        self._numbers = itertools.count()
        self._thread: threading.Thread | None = None

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
        with self._lock:
            self.created.append(name)
        return name

    def drop(self, name: str) -> None:
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        with self._lock:
            if name in self.created:
                self.created.remove(name)

    def copy_of(self, template: str) -> str:
        """A fresh copy of ``template``: one the thread made ahead if there is one, else made now.
        Either way the thread starts making the next."""
        with self._lock:
            ready = self._ready.setdefault(template, [])
            name = ready.pop(0) if ready else None
        self._submit(0, "make", template)
        return name if name is not None else self.create(template=template)

    def discard(self, name: str) -> None:
        """Drop a copy a test has finished with, on the thread (the test goes on meanwhile)."""
        self._submit(1, "drop", name)

    def _submit(self, priority: int, action: str, name: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="postgres-copies", daemon=True)
            self._thread.start()
        self._jobs.put((priority, next(self._numbers), action, name))

    def _work(self) -> None:
        while True:
            _, _, action, name = self._jobs.get()
            if action == "stop":
                return
            try:
                if action == "drop":
                    self._drop_together([name, *self._more_drops()])
                else:
                    with self._lock:
                        waiting = len(self._ready.get(name, []))
                    if waiting == 0:  # one made ahead is enough: the tests take them one at a time
                        made = self.create(template=name)
                        with self._lock:
                            self._ready.setdefault(name, []).append(made)
            except psycopg.Error:
                pass  # a copy not made is made in the test's set-up; one not dropped, by drop_all

    def _more_drops(self) -> list[str]:
        """The drops waiting in the queue, up to the first job of another kind (put back)."""
        names = []
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return names
            if job[2] != "drop":
                self._jobs.put(job)
                return names
            names.append(job[3])

    def _drop_together(self, names: list[str]) -> None:
        """Drops at the same time wait for one checkpoint together instead of one each."""
        with ThreadPoolExecutor(max_workers=8) as pool:
            for done in [pool.submit(self.drop, name) for name in names]:
                with contextlib.suppress(psycopg.Error):
                    done.result()

    def drop_all(self) -> None:
        if self._thread is not None:
            self._submit(2, "stop", "")
            self._thread.join(timeout=120)
            self._thread = None
        self._drop_together(list(self.created))


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
    name = server.copy_of(request.getfixturevalue("postgres_template"))
    try:
        yield server.url_for(name)
    finally:
        server.discard(name)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    try:
        yield database
    finally:
        await database.dispose()
