"""Connections per IP address (lobby feeds, table websockets): refused above a limit, counted in this
process. The limits are settings (``DURAK_MAX_LOBBY_STREAMS_PER_IP``, ``DURAK_MAX_TABLE_SOCKETS_PER_IP``).

Every per-address limit (these, the tables per address, and the auth limits of ``throttle.py``)
counts an IPv6 client by its /64 network, which one host or household usually holds whole: counted
per address, one machine would have 2^64 of them."""

from __future__ import annotations

import ipaddress
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


def network_of(host: str, prefix: int = 64) -> str:
    """Whom a per-address limit counts for ``host``: an IPv4 address itself (an IPv4-mapped IPv6
    one too), an IPv6 address as its network of ``prefix`` bits (/64 unless asked otherwise), and
    anything that is no IP address as it is ("unknown" when empty)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, prefix), strict=False))
    return str(address)


def is_ipv6(host: str) -> bool:
    """Whether ``host`` is an IPv6 address (an IPv4-mapped one is IPv4)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None


def address_of(client: tuple[str, int] | None) -> str:
    """Whom the per-address limits count for the peer as the server saw it (behind a trusted proxy,
    the client it names): its IPv4 address, or its IPv6 /64 (``network_of``)."""
    return network_of(client[0]) if client else "unknown"
