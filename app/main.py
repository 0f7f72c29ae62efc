"""The ASGI application: ``create_app()`` wires routers and the static web client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.api.routes import accounts, admin, auth, health, matches
from app.config import Settings, get_settings
from app.db.session import Database

WEB_DIR = Path(__file__).resolve().parent.parent / "web"


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Open the database engine (``app.state.db``) for the life of the app; the schema itself is
    created by the migrations (``python -m app`` applies them before serving)."""
    settings: Settings = app.state.settings
    db = Database(settings.database_url)
    app.state.db = db
    try:
        yield
    finally:
        await db.dispose()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    app = FastAPI(title="Durak Peak", version="0.1.0", lifespan=lifespan)
    app.state.settings = settings
    app.include_router(health.router)
    app.include_router(auth.router)
    app.include_router(accounts.router)
    app.include_router(matches.router)
    app.include_router(admin.router)
    if WEB_DIR.is_dir():
        app.mount("/", StaticFiles(directory=WEB_DIR, html=True), name="web")
    return app
