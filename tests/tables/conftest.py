from tests.tables.harness import client, migrated_template

__all__ = ["client", "migrated_template"]
