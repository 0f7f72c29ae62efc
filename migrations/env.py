"""Alembic environment: async engines for both backends, or a connection handed in by app.db.migrate."""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import text
from sqlalchemy.engine import Connection

from app.db.models import Base
from app.db.session import Database

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from app.config import get_settings

    return get_settings().database_url


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        compare_server_default=True,
        render_as_batch=connection.dialect.name == "sqlite",
    )


# Several replicas may start at once and each runs `python -m app`, which upgrades first: on
# PostgreSQL they take turns on this advisory lock (held until the migration transaction ends), so
# the first one migrates and the others find the schema at head.
MIGRATION_LOCK_ID = 0x64757261  # "dura"


def run_with_connection(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": MIGRATION_LOCK_ID})
    _configure(connection)
    with context.begin_transaction():
        context.run_migrations()


async def run_async() -> None:
    db = Database(_url())
    try:
        async with db.engine.connect() as connection:
            # On SQLite a write transaction (BEGIN IMMEDIATE) so migrations run under the write lock.
            connection = await connection.execution_options(durak_sqlite_begin="IMMEDIATE")
            await connection.run_sync(run_with_connection)
            await connection.commit()
    finally:
        await db.dispose()


def run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    handed_in = config.attributes.get("connection")
    if handed_in is not None:
        run_with_connection(handed_in)
    else:
        asyncio.run(run_async())
