from tests.api.support import api, cheap_hashing
from tests.db.support import database_url, postgres_server, postgres_template, sqlite_template

__all__ = ["api", "cheap_hashing", "database_url", "postgres_server", "postgres_template", "sqlite_template"]
