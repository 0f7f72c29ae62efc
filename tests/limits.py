"""The per-address limits of the auth routes and of tables, raised for test set-ups: every test signs its people up
from one address (127.0.0.1 or the test client's). The tests of the limits use the defaults."""

from __future__ import annotations

RELAXED_LIMITS = {
    "logins_per_ip": 100_000,
    "signups_per_ip": 100_000,
    "signups_per_56": 100_000,
    "signups_per_48": 100_000,
    "guests_per_ip": 100_000,
    "reports_per_ip": 100_000,
    # the tables' per-address limits (issue 14.4)
    "max_waiting_tables_per_ip": 100_000,
    "max_live_tables_per_ip": 100_000,
    "max_tables_opened_per_ip": 100_000,
    "max_tables_opened_per_account": 100_000,
    "max_lobby_streams_per_ip": 100_000,
    "max_table_sockets_per_ip": 100_000,
    # every test account signs up from one address: the same-address rule of related accounts off
    # (docs/integrity.md; tests/api/test_integrity.py turns it on)
    "related_same_ip": False,
    # fresh test accounts play for coins at once (docs/integrity.md, "New accounts"; the tests of
    # that rule use the default)
    "new_account_matches": 0,
}
RELAXED_LIMITS_ENV = {f"DURAK_{name.upper()}": str(value).lower() for name, value in RELAXED_LIMITS.items()}
