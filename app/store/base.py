"""What every table store offers (:class:`TableStore`) and the errors its writes raise.

Every table has a *record* (its parameters, seats, status, version, the match's seed and dealer,
the decision deadline...) and, while a match runs, an *action log*. The owning actor writes both
before it pushes anything to clients, and every write carries the owner's fencing token: a write
with a token older than the newest one seen for that table is refused (``Fenced``), so a process
that lost its lease can never overwrite its successor.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class Fenced(Exception):
    """A newer owner holds this table; this process must stop writing to it."""


class TableStore(Protocol):
    async def save(
        self, code: str, token: int, record: Mapping[str, Any], log: list[str] | None, *, create: bool = False
    ) -> None:
        """Write the record; with ``log`` also make the action log exactly that list (each entry the
        JSON text of one move, ``{"a": action, "k": command key}``, kept and stored as it is). Only a
        ``create`` write (a new table, or its owner's first write after taking its lease again) may
        find the table missing from the store; any other write then raises ``LogGap``: the store
        lost the table (a Redis that restarted empty), and an owner that wrote it back before taking
        its lease again would hand it to whichever process looked first."""

    async def append(self, code: str, token: int, live: Mapping[str, Any], entry: str, index: int) -> None:
        """Put ``entry`` at position ``index`` of the action log and note ``live`` (the version and
        the decision deadline after it), which ``load`` lays over the last saved record."""

    async def claim(self, code: str, token: int) -> None:
        """Refuse every later write with a token older than ``token`` (``Fenced`` if a newer one was
        seen already). A new owner claims the table before it loads it, so that nothing the old
        owner writes afterwards can be missing from what it loaded."""

    async def load(self, code: str) -> tuple[dict[str, Any], list[str]] | None: ...

    async def exists(self, code: str) -> bool:
        """Whether the store holds the table's record (without reading it)."""

    async def codes(self) -> list[str]: ...

    async def statuses(self, codes: list[str]) -> list[str | None]:
        """The stored status of each table (``waiting``, ``playing``, ``finished``; None: not stored),
        all in one round trip."""

    async def resolve_watch(self, watch_code: str) -> str | None: ...

    async def lobby(self) -> list[dict[str, Any]]:
        """The records of every public table (any process)."""

    async def remove(self, code: str, token: int) -> None: ...

    async def close(self) -> None: ...


class LogGap(Exception):
    """The store lost data (the stored action log is shorter than the owner's, or the table is gone):
    take the lease again, then write the table whole (``create``)."""


def overlay(record: dict[str, Any], live: dict[str, Any] | None) -> dict[str, Any]:
    """The saved record with the version, deadline and time of saving of the moves appended since."""
    if live is None or live.get("version", -1) <= record.get("version", -1):
        return record
    return {**record, "version": live["version"], "deadline": live["deadline"], "saved_at": live.get("saved_at")}
