"""The errors of request/reply calls to a table's actor (the calls themselves are the transport's:
``Transport.call``, ports.py; app/transport/calls.py)."""

from __future__ import annotations


class TableGone(Exception):
    """No live table answers to that code."""


class StoreUnreachable(TableGone):
    """Whether a table answers to that code cannot be told now: the table store (Redis) does not
    answer. Try again shortly -- unlike its parent, this says nothing about the table."""


class TableClosed(TableGone):
    """The table existed here but was closed (idle, finished, or a match of bots nobody watched)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
