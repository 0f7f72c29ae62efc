"""``python -m app``: check the secret key, apply migrations, then serve on the configured host and
port. Off a loopback address the server refuses to start with the default or a short secret key."""

from __future__ import annotations

import contextlib
import logging
import sys

import uvicorn
from uvicorn.config import STARTUP_FAILURE

from app.api.security import secret_key_problem
from app.api.uvicorn_protocol import WebSocketProtocol
from app.config import get_settings
from app.db.migrate import upgrade_sync
from app.main import Server, create_app

GRACEFUL_SHUTDOWN_S = 10  # how long a stopping server waits for its last requests and sockets


def main() -> None:
    settings = get_settings()
    problem = secret_key_problem(settings)
    if problem is not None:
        raise SystemExit(f"durak: {problem}")
    upgrade_sync(settings.storage.database_url)  # the schema only ever comes from the migrations
    configure_logging(settings.server.log_level)
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.server.host,
        port=settings.server.port,
        log_level=settings.server.log_level,
        ws=WebSocketProtocol,  # uvicorn's sans-I/O protocol plus direct text frames (see the module)
        ws_per_message_deflate=False,
        ws_max_size=64 * 1024,
        forwarded_allow_ips=settings.server.forwarded_allow_ips,  # whose X-Forwarded-Proto decides Secure cookies
        # uvicorn's default (5 s) equals httpx's idle expiry and is below nginx's upstream one (60 s):
        # a client reusing a connection at that moment lost its request (a read error, or a 502).
        timeout_keep_alive=settings.server.keep_alive_s,
        # After SIGTERM the tables are handed over and the sockets told goodbye; then uvicorn waits
        # for the requests and sockets still running. Without a limit one that never ends (seen in
        # the soak: a process still "waiting for background tasks" minutes after SIGTERM) keeps the
        # process until the orchestrator kills it. Well inside the 30 s grace of compose and k8s.
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    server = Server(config, app)  # uvicorn's, saying goodbye to the table sockets before it closes them
    with contextlib.suppress(KeyboardInterrupt):  # as uvicorn.run: Ctrl-C (SIGINT) is a clean stop
        server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def configure_logging(level: str) -> None:
    """Our own loggers (``durak.*``, ``app.*``: takeovers, fencing, settlements, broker links) at the
    server's log level, with a time stamp; other libraries stay at warnings. uvicorn keeps its own."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for name in ("durak", "app"):
        logging.getLogger(name).setLevel(level.upper())


if __name__ == "__main__":
    main()
