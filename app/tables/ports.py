"""What a table needs from the world, as interfaces: its transport (where its frames go). The
database is reached through ``MatchHooks`` (hooks.py), the store through ``TableStore``
(app/store/base.py). The implementations are injected: ``app/transport/delivery.py`` (the
registry's default), ``app/db/table_hooks.py`` and the store for the broker URL (app/main.py)."""

from __future__ import annotations

from typing import Protocol

Outbox = list[tuple[str, str]]  # (channel, frame text), in the order they must arrive


class TableTransport(Protocol):
    """Where a table's frames go. What the actor sends while it handles one command is held and goes
    out together, in order, when the command is done (:meth:`hold`, :meth:`flush`)."""

    process: str  # this process (the registry's owner id): its connections are served here

    def heard(self, conn: str, principal_key: str, process: str) -> None:
        """Connection ``conn`` of ``principal_key``, held by ``process`` ("" when unknown), sent a
        command: that person's frames go there from now on."""

    def gone(self, conn: str) -> None:
        """Connection ``conn`` closed."""

    def hold(self) -> None: ...

    def send(self, outbox: Outbox) -> None: ...

    def flush(self) -> None: ...

    def deliver(self, outbox: Outbox, *, everywhere: bool = False) -> None:
        """Send at once; ``everywhere``: to every process (after a takeover nobody is known yet)."""
