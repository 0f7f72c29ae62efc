"""An app on a throw-away database, HTTP clients for it, and ways to sign people in."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings, get_settings
from app.db import accounts
from app.db.models import ROLE_ADMIN
from app.db.session import Database
from app.main import create_app
from app.tables import commands as cmd
from app.tables.spec import Principal
from tests.limits import RELAXED_LIMITS

SECRET = "tests-secret-key-0123456789abcdef"
PASSWORD = "correct horse battery"


@dataclass
class Api:
    app: FastAPI
    settings: Settings

    @property
    def db(self) -> Database:
        db: Database = self.app.state.db
        return db

    def client(self, address: str = "127.0.0.1") -> httpx.AsyncClient:
        """A new client with its own cookie jar (one per person), connecting from ``address``."""
        transport = httpx.ASGITransport(app=self.app, client=(address, 50000))
        return httpx.AsyncClient(transport=transport, base_url="http://testserver")

    async def signed_up(self, name: str, password: str = PASSWORD) -> httpx.AsyncClient:
        client = self.client()
        response = await client.post("/api/auth/signup", json={"name": name, "password": password})
        assert response.status_code == 201, response.text
        return client

    async def guest(self, name: str) -> httpx.AsyncClient:
        client = self.client()
        response = await client.post("/api/auth/guest", json={"name": name})
        assert response.status_code == 200, response.text
        return client

    async def admin(self, name: str = "root") -> httpx.AsyncClient:
        client = await self.signed_up(name)
        me = (await client.get("/api/me")).json()

        async def promote(session: AsyncSession) -> None:
            await accounts.set_role(session, account_id=me["id"], role=ROLE_ADMIN, admin_id=None, reason="test")

        await self.db.write(promote)
        return client


@pytest.fixture
def cheap_hashing() -> None:
    """argon2id at its cheapest, so that tests sign people up quickly: the whole suite hashes so
    (tests/conftest.py sets ``DURAK_PASSWORD_HASHING=test``); this says so where a fixture relies on it."""
    assert get_settings().security.password_hashing == "test", "tests/conftest.py sets DURAK_PASSWORD_HASHING=test"


@pytest.fixture
async def api(database_url: str, cheap_hashing: None) -> AsyncIterator[Api]:
    settings = Settings(database_url=database_url, secret_key=SECRET, starting_balance=1000, **RELAXED_LIMITS)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield Api(app=app, settings=settings)


async def at_table(api: Api, client: httpx.AsyncClient, code: str) -> None:
    """``client``'s account has the table open: a connection of his says hello to it, as the table
    socket would (these clients speak HTTP only). A staked match starts only once everyone seated
    is connected and has confirmed he is ready (RULES §8; ``POST /api/tables/{code}/ready``)."""
    me = (await client.get("/api/me")).json()
    principal = Principal(key=f"a:{me['id']}", name=me["name"], account_id=me["id"])
    await api.app.state.tables.call(code, cmd.Hello(), principal, conn=f"test-{uuid.uuid4().hex[:8]}")
