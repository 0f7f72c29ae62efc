"""One validated settings object, read from the environment (prefix ``DURAK_``) or ``.env``."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DURAK_", env_file=".env", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    database_url: str = "sqlite+aiosqlite:///./durak.sqlite3"
    broker_url: str = "memory://"
    secret_key: str = Field(default="dev-only-change-me-" + "0" * 16, min_length=16)
    allowed_origins: list[str] = ["http://127.0.0.1:8000", "http://localhost:8000"]
    starting_balance: int = Field(default=1000, ge=0)
    session_max_age_s: int = Field(default=14 * 24 * 3600, ge=60)
    log_level: str = "info"
    node_name: str = Field(default="", description="Names this process in table leases (default: host-pid).")
    ws_burst: int = Field(default=20, ge=1, description="Commands a connection may send in a burst.")
    ws_rate_per_s: float = Field(default=10.0, gt=0, description="Sustained commands per second per connection.")
    login_failures: int = Field(default=5, ge=1, description="Wrong passwords for one name before it is locked.")
    login_window_s: float = Field(default=60.0, gt=0, description="How long a wrong password counts against a name.")
    # Bounded resources (docs/architecture.md, "Limits and eviction"). Counted per server process.
    max_waiting_tables_per_account: int = Field(
        default=3, ge=1, description="Tables one player (account or guest) may have open and waiting for players."
    )
    max_waiting_tables_per_ip: int = Field(
        default=10, ge=1, description="Tables waiting for players that may be opened from one IP address."
    )
    max_bot_tables_per_account: int = Field(
        default=1, ge=0, description="Matches of bots only (no person seated) one player may have running at once."
    )
    bot_table_unwatched_s: float = Field(
        default=60.0, gt=0, description="A match of bots only that nobody watches for this long is stopped."
    )
    bot_match_max_s: float = Field(default=1800.0, gt=0, description="A match of bots only is stopped after this long.")
    max_lobby_streams_per_ip: int = Field(default=8, ge=1, description="Open /api/lobby/stream feeds per IP address.")
    max_table_sockets_per_ip: int = Field(default=32, ge=1, description="Open table websockets per IP address.")
    finished_table_ttl_s: float = Field(
        default=600.0, gt=0, description="A finished table nobody is connected to leaves memory after this long."
    )
    idle_table_ttl_s: float = Field(
        default=1800.0, gt=0, description="A waiting table unchanged and unvisited leaves memory after this long."
    )

    @field_validator("database_url")
    @classmethod
    def _known_driver(cls, value: str) -> str:
        if not value.startswith(("sqlite+aiosqlite://", "postgresql+psycopg://", "postgresql+asyncpg://")):
            raise ValueError("database_url must use sqlite+aiosqlite, postgresql+psycopg or +asyncpg")
        return value

    @field_validator("broker_url")
    @classmethod
    def _known_broker(cls, value: str) -> str:
        if not value.startswith(("memory://", "redis://", "rediss://", "unix://")):
            raise ValueError("broker_url must be memory://, redis://host:port/db or unix:///path/redis.sock?db=0")
        return value


@lru_cache
def get_settings() -> Settings:
    return Settings()
