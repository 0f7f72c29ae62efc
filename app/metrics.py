"""Prometheus metrics of this process (served at ``/metrics``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry()

CONNECTIONS = Gauge("durak_ws_connections", "Open table websocket connections.", registry=REGISTRY)
LIVE_TABLES = Gauge("durak_live_tables", "Table actors running in this process.", registry=REGISTRY)
COMMANDS = Counter("durak_commands_total", "Client commands received, by type.", ["type"], registry=REGISTRY)
ERRORS = Counter("durak_errors_total", "Errors sent to clients, by code.", ["code"], registry=REGISTRY)
COMMAND_LATENCY = Histogram(
    "durak_command_latency_seconds",
    "From a command frame arriving to its ack or error being sent.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
TAKEOVERS = Counter(
    "durak_takeovers_total",
    "Tables this process took over, by cause: a stopping peer handed it over, or its owner's lease lapsed "
    "(a process died).",
    ["cause"],
    registry=REGISTRY,
)
HANDED_OVER = Counter(
    "durak_tables_handed_over_total", "Tables this process handed to a peer as it stopped.", registry=REGISTRY
)
DRAINING = Gauge("durak_draining", "1 while this process drains (it was told to stop), else 0.", registry=REGISTRY)
