"""Connections per IP address (lobby feeds, table websockets): refused above a limit, counted in this
process. The limits are settings (``DURAK_MAX_LOBBY_STREAMS_PER_IP``, ``DURAK_MAX_TABLE_SOCKETS_PER_IP``)."""

from __future__ import annotations

from collections import Counter


class PerAddress:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open: Counter[str] = Counter()

    def take(self, address: str) -> bool:
        """Count one more connection from ``address``; False (and nothing counted) at the limit."""
        if self.open[address] >= self.limit:
            return False
        self.open[address] += 1
        return True

    def give_back(self, address: str) -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]


def address_of(client: tuple[str, int] | None) -> str:
    """The peer's IP address as the server saw it (the proxy's own, unless it passes the client's)."""
    return client[0] if client else "unknown"
