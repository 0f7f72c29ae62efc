"""The ASGI application: ``create_app()`` wires the database, the broker, the live tables, the
routers and the static web client."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from app.api import errors
from app.api.body_limit import MAX_BODY_BYTES, BodySizeLimit, document_body_limit
from app.api.limits import PerAddress
from app.api.routes import accounts, admin, analysis, auth, health, matches, play, tables
from app.api.security import BrowserGuard, redact_access_log
from app.api.signouts import OpenSessions
from app.api.throttle import AuthThrottles
from app.broker import open_broker
from app.coaching import shutdown_pool
from app.config import Settings, get_settings
from app.db.session import Database
from app.metrics import LIVE_TABLES, REGISTRY
from app.tables.bot_runner import BotRunner
from app.tables.db_hooks import DbHooks
from app.tables.recovery import refund_abandoned_escrows
from app.tables.registry import TableLimits, TableRegistry
from app.tables.spec import DecisionLimits
from app.tables.store import open_store

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
log = logging.getLogger("durak")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the database engine, the broker and the table registry for the life of the app; the
    schema itself is created by the migrations (``python -m app`` applies them before serving).
    On shutdown, connected clients are told (``bye``, close code 1012) and in-flight commands finish."""
    settings: Settings = app.state.settings
    db = Database(settings.database_url)
    app.state.db = db
    app.state.sockets = set()
    try:
        async with open_broker(settings.broker_url) as broker:
            app.state.broker = broker
            store = open_store(settings.broker_url)
            node = settings.node_name or f"{socket.gethostname()}-{os.getpid()}"
            limits = DecisionLimits(settings.disconnect_grace_s, settings.idle_limit_s, settings.challenge_window_s)
            registry = TableRegistry(
                broker,
                DbHooks(db),
                BotRunner(),
                store,
                owner=f"{node}-{uuid.uuid4().hex[:8]}",
                limits=limits,
                table_limits=TableLimits.from_settings(settings),
            )
            async with registry, OpenSessions(db).following(broker) as open_sessions:
                app.state.tables = registry
                app.state.open_sessions = open_sessions
                LIVE_TABLES.set_function(lambda: len(registry.tables))
                try:
                    await refund_abandoned_escrows(db, store)
                except Exception:  # e.g. a database without its schema: serve anyway, say why
                    log.exception("could not sweep abandoned escrows at start-up")
                # Long-lived objects (code, tables, connections) leave the collector's view: a full
                # collection over them used to be the whole p99 latency at a human pace.
                gc.collect()
                gc.freeze()
                gc.set_threshold(10_000, 20, 10)
                try:
                    yield
                finally:
                    await _say_goodbye(app.state.sockets)
            await store.close()
    finally:
        shutdown_pool()
        await db.dispose()


async def _say_goodbye(sockets: set[WebSocket]) -> None:
    async def close(ws: WebSocket) -> None:
        with contextlib.suppress(Exception):
            await ws.send_json({"type": "bye", "code": "shutdown", "message": "server restarting, reconnect"})
            await ws.close(code=1012, reason="server restarting")

    await asyncio.gather(*(close(ws) for ws in list(sockets)))


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = FastAPI(title="Durak Peak", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.state.auth_throttles = AuthThrottles(settings)
    app.state.lobby_streams = PerAddress(settings.max_lobby_streams_per_ip)
    app.state.table_sockets = PerAddress(settings.max_table_sockets_per_ip)
    app.include_router(health.router)
    app.include_router(auth.router)
    app.include_router(accounts.router)
    app.include_router(matches.router)
    app.include_router(analysis.router)
    app.include_router(admin.router)
    app.include_router(tables.router)
    app.add_middleware(play.TableSockets)
    # Security (docs/security.md): cross-site and non-JSON state-changing requests refused, security
    # headers on every answer, invite codes out of the access log. Outermost, so nothing runs first.
    app.add_middleware(BrowserGuard, settings=settings)
    redact_access_log()

    # --- request bodies: a size limit enforced while reading (413), and 422 answers that are always
    # valid JSON and never echo a password or a large input (docs/api.md, "Requests and errors").
    app.add_middleware(BodySizeLimit, max_bytes=MAX_BODY_BYTES)
    app.add_exception_handler(RequestValidationError, errors.request_validation_error)
    document_body_limit(app)
    # --- end of request bodies

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    if WEB_DIR.is_dir():
        index = WEB_DIR / "index.html"

        @app.get("/t/{code}", include_in_schema=False)
        @app.get("/w/{code}", include_in_schema=False)
        async def table_page(code: str) -> FileResponse:
            return FileResponse(index)

        app.mount("/", StaticFiles(directory=WEB_DIR, html=True), name="web")
    return app
