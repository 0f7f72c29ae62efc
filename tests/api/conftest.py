from tests.api.support import api, cheap_hashing
from tests.db.support import database_url, postgres_server, postgres_template, sqlite_template
from tests.tables.harness import client, migrated_template

__all__ = [
    "api",
    "cheap_hashing",
    "client",
    "database_url",
    "migrated_template",
    "postgres_server",
    "postgres_template",
    "sqlite_template",
]
