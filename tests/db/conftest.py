from tests.db.support import database_url, db, postgres_server, postgres_template, sqlite_template

__all__ = ["database_url", "db", "postgres_server", "postgres_template", "sqlite_template"]
