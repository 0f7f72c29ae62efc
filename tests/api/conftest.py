from tests.api.support import api
from tests.db.support import database_url, postgres_server, postgres_template, sqlite_template

__all__ = ["api", "database_url", "postgres_server", "postgres_template", "sqlite_template"]
