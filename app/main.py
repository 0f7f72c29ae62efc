"""The ASGI application: ``create_app()`` wires the database, the broker, the live tables, the
routers and the static web client."""

from __future__ import annotations

import asyncio
import gzip
import logging
import os
import socket
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from os import PathLike
from pathlib import Path
from types import FrameType

import uvicorn
from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.datastructures import Headers, QueryParams
from starlette.staticfiles import NotModifiedResponse
from starlette.types import Receive, Scope, Send

from app import collector
from app.api import errors, social
from app.api.answers import document_answers
from app.api.body_limit import MAX_BODY_BYTES, BodySizeLimit
from app.api.devices import DeviceCookie
from app.api.limits import PerAddress
from app.api.routes import (
    accounts,
    admin,
    analysis,
    auth,
    friends,
    health,
    integrity,
    matches,
    play,
    players,
    push,
    quickplay,
    seasons,
    tables,
    tournaments,
)
from app.api.routes.tournaments import arena_running
from app.api.security import BrowserGuard, WeakKeyGuard, redact_access_log, secret_key_problem
from app.api.signouts import OpenSessions
from app.api.table_connection import Connection
from app.api.throttle import AuthThrottles
from app.broker import BrokerOptions, open_broker
from app.coaching import shutdown_pool
from app.config import Settings, get_settings
from app.db.live_tables import keep_tables, resume_tables
from app.db.recovery import record_abandoned_deals, refund_abandoned_escrows
from app.db.session import Database
from app.db.table_hooks import DbHooks
from app.metrics import DRAINING, LIVE_TABLES, REGISTRY
from app.store import open_store
from app.tables.bot_runner import BotRunner
from app.tables.registry import TableRegistry
from app.tournaments.runner import ArenaHooks
from app.transport.table_transport import BrokerTransport
from app.web_pages import BUNDLE_PATH, LONG_CACHE_CONTROL, Page, PageSource, content_hash

WEB_DIR = Path(__file__).resolve().parent.parent / "web"
log = logging.getLogger("durak")


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the database engine, the broker and the table registry for the life of the app; the
    schema itself is created by the migrations (``python -m app`` applies them before serving).
    On shutdown, connected clients are told (``bye``, close code 1012: under ``python -m app`` by
    :class:`Server` before uvicorn closes the sockets, else here) and in-flight commands finish."""
    settings: Settings = app.state.settings
    db = Database(settings.storage.database_url)
    app.state.db = db
    app.state.connections = set()
    app.state.leaving = False
    app.state.draining = False  # readiness (/api/ready) fails from the moment the server is told to stop
    DRAINING.set(0)
    try:
        storage = settings.storage
        async with open_broker(storage.broker_url, BrokerOptions(prefix=storage.redis_prefix)) as broker:
            app.state.broker = broker
            store = open_store(storage.broker_url, storage.redis_prefix)
            node = settings.server.node_name or f"{socket.gethostname()}-{os.getpid()}"
            hooks = ArenaHooks(
                DbHooks(
                    db,
                    settings.integrity,
                    season_rules=settings.seasons,
                    secret=settings.security.secret_key,
                )
            )
            registry = TableRegistry(
                broker,
                hooks,
                BotRunner(),
                store,
                owner=f"{node}-{uuid.uuid4().hex[:8]}",
                limits=settings.decisions,
                table_limits=settings.tables,
                lease_settings=settings.leases,
                transport=BrokerTransport,
            )
            async with (
                registry,
                OpenSessions(db).following(broker) as open_sessions,
                social.running(app, registry),
                arena_running(app, registry, hooks),
            ):
                app.state.tables = registry
                app.state.open_sessions = open_sessions
                LIVE_TABLES.set_function(lambda: len(registry.tables))
                try:
                    if not registry.shares_tables():  # the embedded default: its tables kept at the last stop
                        await resume_tables(db, registry)
                except Exception:
                    log.exception("could not resume the tables kept at the last stop")
                try:
                    # first: refunds with the record
                    await record_abandoned_deals(db, store, settings.security.secret_key)
                    await refund_abandoned_escrows(db, store)
                except Exception:  # e.g. a database without its schema: serve anyway, say why
                    log.exception("could not sweep abandoned matches and escrows at start-up")
                collector.settle()  # the garbage collector's schedule (app/collector.py)
                full_collections = asyncio.create_task(
                    collector.collect_old_garbage_forever(settings.server.gc_full_interval_s)
                )
                try:
                    yield
                finally:
                    full_collections.cancel()
                    await drain(app)  # under python -m app, done already by Server.shutdown
                    if not registry.shares_tables():  # nobody to hand them to: kept for the next start
                        try:
                            await keep_tables(db, registry)
                        except Exception:  # their matches are then settled as aborted at the next start
                            log.exception("could not keep the live tables for the next start")
                    await say_goodbye(app)
            await store.close()
    finally:
        shutdown_pool()
        await db.dispose()


GOODBYE_S = 2.0  # how long a stopping server waits for its goodbyes to go out


async def drain(app: FastAPI) -> None:
    """The server is stopping: readiness fails, no new table is opened here, and every table of the
    process goes to a peer at once (``TableRegistry.hand_over``), before the sockets are told
    ``bye``: by the time a client reconnects elsewhere, its table has its new owner. Once only."""
    app.state.draining = True
    DRAINING.set(1)
    registry: TableRegistry | None = getattr(app.state, "tables", None)
    if registry is None or getattr(app.state, "drained", False):
        return
    app.state.drained = True
    try:
        await registry.hand_over()
    except Exception:  # never keep the server from stopping: the leases lapse, peers take over
        log.exception("handing the tables over failed")


async def say_goodbye(app: FastAPI) -> None:
    """The server is stopping: every table socket gets ``bye`` (code ``shutdown``, with
    ``reconnect_after_ms``, spread over the clients) and is closed with 1012; sockets that open
    later are told the same at once. Waits (at most ``GOODBYE_S``) until the closes are out."""
    app.state.leaving = True
    connections: set[Connection] = getattr(app.state, "connections", set())
    closing = [connection.goodbye() for connection in list(connections)]
    if closing:
        await asyncio.wait(closing, timeout=GOODBYE_S)


class Server(uvicorn.Server):
    """uvicorn's server, which says goodbye to the table sockets (:func:`say_goodbye`) before it
    closes them itself. uvicorn's own shutdown closes every connection (a websocket with 1012) before
    the application's lifespan hears of it, so a goodbye sent from there never reaches anyone."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.durak_app = app

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.durak_app.state.draining = True  # readiness fails at once, before the main loop notices
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:  # tables to the peers first, while the sockets still carry their frames
            await drain(self.durak_app)
        except Exception:
            log.exception("draining failed")
        for server in self.servers:  # no new connections meanwhile (uvicorn closes them again: harmless)
            server.close()
        try:
            await say_goodbye(self.durak_app)
        except Exception:  # never keep the server from stopping
            log.exception("saying goodbye to the table sockets failed")
        await super().shutdown(sockets)


class DurakPeak(FastAPI):
    """FastAPI, with the table sockets (``/ws/tables/{code}``) served ahead of its middleware stack.

    A table socket lives as long as its player stays at the table, and every ASGI layer it passes
    through keeps a coroutine, the layer's closures and their cells alive for all that time: about
    two dozen objects per connection that the garbage collector walks in every collection that
    reaches them (docs/performance.md). None of the layers does anything to a websocket:
    Starlette's error middleware, FastAPI's telemetry and body limit, and ours (``BodySizeLimit``,
    ``BrowserGuard``, ``DeviceCookie``) all pass websockets on untouched, and
    :func:`play.table_socket` checks the origin itself. So this ``__call__`` hands a table socket
    straight to it, and everything else (HTTP, the lifespan, other websockets) to FastAPI as usual.
    (It stays a coroutine function: servers tell an ASGI 3 application by that.) An exception in a
    table socket is logged by uvicorn as before; FastAPI's exception telemetry, off unless
    configured, no longer sees it.
    """

    weak_key_guard: WeakKeyGuard | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        guard = self.weak_key_guard
        if guard is not None and guard.refuses(scope):  # before anything else, sockets included
            await guard.refuse(scope, send)
            return
        code = play.table_socket_code(scope)
        if code is None or "\x00" in code:  # a NUL (%00) names no table; FastAPI refuses the socket
            await super().__call__(scope, receive, send)
            return
        scope["app"] = self  # as Starlette sets it: ``websocket.app`` is how the socket finds the state
        await play.table_socket(WebSocket(scope, receive, send), code, receive, send)


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    problem = secret_key_problem(settings)
    if problem is not None:  # as python -m app: not on a public address with a weak key
        raise RuntimeError(f"durak: {problem}")
    # No interactive API pages (Swagger UI, ReDoc): third-party code from a CDN, running on the game's
    # own origin with the players' cookies. The schema is public at /openapi.json (docs/api.md).
    app = DurakPeak(title="Durak Peak", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None)
    # ... and whatever address the server really listens on, only this machine is served then.
    app.weak_key_guard = WeakKeyGuard(settings)
    app.state.settings = settings
    app.state.auth_throttles = AuthThrottles(settings)
    app.state.lobby_streams = PerAddress(settings.throttle.max_lobby_streams_per_ip)
    app.state.table_sockets = PerAddress(settings.throttle.max_table_sockets_per_ip)
    app.include_router(health.router)
    app.include_router(auth.router)
    app.include_router(accounts.router)
    app.include_router(matches.router)
    app.include_router(analysis.router)
    app.include_router(admin.router)
    app.include_router(integrity.router)
    app.include_router(tables.router)
    app.include_router(quickplay.router)
    app.include_router(players.router)
    app.include_router(seasons.router)
    app.include_router(friends.router)
    app.include_router(push.router)
    app.include_router(tournaments.router)
    app.add_middleware(DeviceCookie, settings=settings)  # the device cookie (docs/integrity.md)
    # Security (docs/security.md): cross-site and non-JSON state-changing requests refused, security
    # headers on every answer, invite codes out of the access log. Outermost, so nothing runs first.
    app.add_middleware(BrowserGuard, settings=settings)
    redact_access_log()

    # --- request bodies: a size limit enforced while reading (413), and 422 answers that are always
    # valid JSON and never echo a password or a large input (docs/api.md, "Requests and errors").
    app.add_middleware(BodySizeLimit, max_bytes=MAX_BODY_BYTES)
    app.add_exception_handler(RequestValidationError, errors.request_validation_error)
    document_answers(app)  # what the layers around the routes answer, in the OpenAPI
    # --- end of request bodies

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    # --- the static web client: one shell for every page, the table page's modules joined into one
    # script, hashed URLs cached for a year, the rest gzipped and revalidated (docs/web.md)
    if WEB_DIR.is_dir():
        pages = PageSource(WEB_DIR)
        web_files = WebFiles(directory=WEB_DIR, html=True)

        @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
        @app.api_route("/index.html", methods=["GET", "HEAD"], include_in_schema=False)
        async def lobby_page(request: Request) -> Response:
            return page_response(pages.current().lobby, request, WEB_CACHE_CONTROL)

        @app.api_route("/t/{code}", methods=["GET", "HEAD"], include_in_schema=False)
        @app.api_route("/w/{code}", methods=["GET", "HEAD"], include_in_schema=False)
        async def table_page(code: str, request: Request) -> Response:
            return page_response(pages.current().table, request, WEB_CACHE_CONTROL)

        @app.api_route(BUNDLE_PATH, methods=["GET", "HEAD"], include_in_schema=False)
        async def table_bundle(request: Request) -> Response:
            bundle = pages.current().bundle
            if bundle is None:  # joining refused (logged): the table page loads the modules themselves
                return Response(status_code=404)
            hashed = request.query_params.get("v") == bundle.etag.strip('"')
            return page_response(bundle, request, LONG_CACHE_CONTROL if hashed else WEB_CACHE_CONTROL)

        app.mount("/", web_files, name="web")
    # --- end of the static web client
    return app


# --- the static web client: served compressed and cached (docs/web.md, "How the pages are served").
# The pages (app/web_pages.py) name their CSS, main.js, icons and the table bundle with ``?v=<content
# hash>``: an answer to such a URL whose hash is the file's own is ``Cache-Control: max-age=31536000,
# immutable`` (a deploy changes the URL). Everything else (the pages themselves, modules reached by
# relative imports, the translations) is ``no-cache``: the browser keeps its copy and revalidates it
# with ``If-None-Match``, which costs a 304 without a body and picks up a deploy at once. A text file
# goes out gzipped when the browser accepts it (compressed once per file version and kept in memory;
# the web client is about 300 KB), under its own ETag so a cache never mixes the two encodings. Only
# this mount and the pages are compressed: the API, the lobby's event stream and the websocket are
# untouched.
COMPRESSIBLE_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")
MIN_COMPRESSED_BYTES = 512
WEB_CACHE_CONTROL = "no-cache"
_GZIPPED: dict[str, tuple[tuple[int, int], bytes]] = {}  # path -> ((mtime, size), gzipped bytes)
_HASHES: dict[str, tuple[tuple[int, int], str]] = {}  # path -> ((mtime, size), content hash)


def page_response(page: Page, request: Request, cache_control: str) -> Response:
    """A page or script held in memory (app/web_pages.py): gzipped when accepted, its ETag, 304."""
    zipped = _accepts_gzip(request.headers.get("accept-encoding", ""))
    etag = page.etag[:-1] + '-gzip"' if zipped else page.etag
    headers = {"etag": etag, "cache-control": cache_control, "vary": "Accept-Encoding"}
    if etag in [tag.strip() for tag in request.headers.get("if-none-match", "").split(",")]:
        return Response(status_code=304, headers=headers)
    if zipped:
        headers["content-encoding"] = "gzip"
    body = page.gzipped if zipped else page.body
    if request.method == "HEAD":
        headers["content-length"] = str(len(body))
        body = b""
    return Response(body, headers=headers, media_type=page.media_type)


def _content_hash(path: str, stat_result: os.stat_result) -> str:
    version = (stat_result.st_mtime_ns, stat_result.st_size)
    cached = _HASHES.get(path)
    if cached is None or cached[0] != version:
        cached = (version, content_hash(Path(path).read_bytes()))
        _HASHES[path] = cached
    return cached[1]


class WebFiles(StaticFiles):
    """``StaticFiles`` with gzip (``Content-Encoding``, ``Vary: Accept-Encoding``), the ETag (a strong
    one per encoding) on every file, and ``Cache-Control``: immutable for a URL whose ``?v=`` is the
    file's content hash, else ``no-cache``."""

    def file_response(
        self, full_path: PathLike[str] | str, stat_result: os.stat_result, scope: Scope, status_code: int = 200
    ) -> Response:
        plain = FileResponse(full_path, status_code=status_code, stat_result=stat_result)
        request_headers = Headers(scope=scope)
        version = QueryParams(scope.get("query_string", b"")).get("v")
        hashed = version is not None and status_code == 200 and version == _content_hash(str(full_path), stat_result)
        cache_control = LONG_CACHE_CONTROL if hashed else WEB_CACHE_CONTROL
        plain.headers["cache-control"] = cache_control
        content_type = plain.headers.get("content-type", "")
        compressible = content_type.startswith(COMPRESSIBLE_TYPES) and stat_result.st_size >= MIN_COMPRESSED_BYTES
        if compressible:
            plain.headers["vary"] = "Accept-Encoding"
        if not compressible or not _accepts_gzip(request_headers.get("accept-encoding", "")):
            if self.is_not_modified(plain.headers, request_headers):
                return NotModifiedResponse(plain.headers)
            return plain
        headers = {
            "etag": plain.headers["etag"][:-1] + '-gzip"',
            "last-modified": plain.headers["last-modified"],
            "cache-control": cache_control,
            "vary": "Accept-Encoding",
            "content-encoding": "gzip",
        }
        response = Response(b"", status_code=status_code, headers=headers, media_type=None)
        if self.is_not_modified(response.headers, request_headers):
            return NotModifiedResponse(response.headers)
        body = self._gzip(str(full_path), stat_result)
        return Response(body, status_code=status_code, headers={**headers, "content-type": content_type})

    def _gzip(self, path: str, stat_result: os.stat_result) -> bytes:
        version = (stat_result.st_mtime_ns, stat_result.st_size)
        cached = _GZIPPED.get(path)
        if cached is None or cached[0] != version:
            cached = (version, gzip.compress(Path(path).read_bytes(), compresslevel=9, mtime=0))
            _GZIPPED[path] = cached
        return cached[1]


def _accepts_gzip(accept_encoding: str) -> bool:
    """Whether ``Accept-Encoding`` lists gzip (or ``*``) without ``q=0``."""
    for item in accept_encoding.lower().split(","):
        name, _, params = item.strip().partition(";")
        if name.strip() not in ("gzip", "*"):
            continue
        quality = params.strip()
        if not quality.startswith("q="):
            return True
        try:
            return float(quality[2:]) > 0
        except ValueError:
            return False
    return False


# --- end of the static web client
