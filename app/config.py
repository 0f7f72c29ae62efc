"""One validated settings object, read from the environment (prefix ``DURAK_``) or ``.env``.

The settings come in groups (``settings.tables``, ``settings.integrity``, ...), each a frozen model
whose defaults are the one statement of them; the limits objects the code passes around
(``DecisionLimits``, ``TableLimits``, ``LeaseSettings``, ``IntegrityRules``, ``SeasonRules``,
``TournamentSettings``) are these groups. Every setting keeps one flat name whatever its group: ``DURAK_<NAME>`` in the
environment and ``.env``, ``NAME`` as a keyword of :class:`Settings` (``Settings(idle_limit_s=120)``).
NAME is the field's name, or its ``validation_alias`` where the code names it shorter
(``TableLimits.waiting_per_account`` is ``DURAK_MAX_WAITING_TABLES_PER_ACCOUNT``); :data:`FLAT_NAMES`
lists them all.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

# The embedded default: fine on a loopback address, refused on any other (app/api/security.py).
DEFAULT_SECRET_KEY = "dev-only-change-me-" + "0" * 16
ENV_PREFIX = "DURAK_"

PasswordHashing = Literal["strong", "test"]


class Group(BaseModel):
    """A group of settings: frozen (a change is a new group, ``model_copy(update=...)``), built by
    field name or by the flat name of a field that has one."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True)


class ServerSettings(Group):
    """The process: where it listens, how it logs and collects garbage, its name."""

    host: str = Field(
        default="127.0.0.1",
        description="The address the server listens on; off a loopback address the secret key must be a real one.",
    )
    port: int = Field(default=8000, ge=1, le=65535, description="The port the server listens on.")
    log_level: str = Field(
        default="info",
        description="The level of the server's own logs and uvicorn's (debug, info, warning, error, critical).",
    )
    node_name: str = Field(default="", description="Names this process in table leases (default: host-pid).")
    forwarded_allow_ips: str | None = Field(
        default=None,
        description="Addresses whose X-Forwarded-Proto/-For uvicorn trusts (comma-separated IPs or "
        "networks, or *); unset: uvicorn's FORWARDED_ALLOW_IPS, else 127.0.0.1.",
    )
    keep_alive_s: int = Field(
        default=75,
        ge=1,
        le=3600,
        description="How long an idle HTTP keep-alive connection stays open. Longer than any client or proxy "
        "keeps one idle (httpx 5 s, nginx's upstream keepalive_timeout 60 s): the client, not the server, "
        "must close an idle connection, or a request sent as the server closes it is lost.",
    )
    gc_full_interval_s: float = Field(
        default=3600.0,
        gt=0,
        description="Seconds between the process's full garbage collections, its only ones (app/collector.py).",
    )


class StorageSettings(Group):
    """The database and the broker (Redis, or memory for one process)."""

    database_url: str = Field(
        default="sqlite+aiosqlite:///./durak.sqlite3",
        description="The database: sqlite+aiosqlite:// (one process), postgresql+psycopg:// or postgresql+asyncpg://.",
    )
    broker_url: str = Field(
        default="memory://",
        description="How the processes reach each other (docs/broker.md): memory:// (one process), "
        "redis://host:port/db, rediss://, unix:///path/redis.sock?db=0 or redis+cluster://host:port[,host:port...].",
    )
    redis_prefix: str = Field(
        default="durak:",
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="Begins every Redis key and channel of this deployment (docs/broker.md): deployments "
        "sharing one Redis or Redis Cluster each need their own; all processes of one deployment the same.",
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
        if not value.startswith(
            ("memory://", "redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")
        ):
            raise ValueError(
                "broker_url must be memory://, redis://host:port/db, unix:///path/redis.sock?db=0"
                " or redis+cluster://host:port[,host:port...]"
            )
        return value


class SecuritySettings(Group):
    """Sessions, cookies, origins and password hashing (docs/security.md)."""

    secret_key: str = Field(
        default=DEFAULT_SECRET_KEY,
        min_length=16,
        description="Signs session cookies. Off a loopback address: at least 32 bytes, not the default.",
    )
    allowed_origins: list[str] = Field(
        default=[],
        description="Origins besides the server's own (the scheme and Host of each request, always allowed) "
        "that browsers may show this server's pages under: a public origin a proxy does not pass on in Host. "
        "They may open table sockets and send state-changing requests; a request the browser marks "
        "cross-site or same-site (Sec-Fetch-Site) is refused whatever its Origin.",
    )
    cookie_secure: Literal["auto", "true", "false"] = Field(
        default="auto",
        description="Secure session cookies (named __Host-durak_session): auto = when the request came "
        "over HTTPS (behind a proxy: its X-Forwarded-Proto, trusted from forwarded_allow_ips only).",
    )
    session_max_age_s: int = Field(default=14 * 24 * 3600, ge=60, description="How long a session cookie is valid.")
    password_hashing: PasswordHashing = Field(
        default="strong",
        description="The cost of argon2id (app/db/passwords.py): strong = RFC 9106's low-memory choice (64 MiB, "
        "3 passes; about 160 ms of CPU a hash). test = argon2's cheapest, which protects nothing: for test "
        "suites only (the server logs a warning); a strong server rehashes such a hash at its next log-in.",
    )
    starting_balance: int = Field(default=1000, ge=0, description="Coins granted to every new account.")

    @field_validator("cookie_secure", mode="before")
    @classmethod
    def _lower_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class ThrottleSettings(Group):
    """Rate limits counted per connection or per client address (app/api/throttle.py, docs/security.md)."""

    ws_burst: int = Field(default=20, ge=1, description="Commands a connection may send in a burst.")
    ws_rate_per_s: float = Field(default=10.0, gt=0, description="Sustained commands per second per connection.")
    login_failures: int = Field(
        default=5, ge=1, description="Wrong passwords for one name from one address before that is locked."
    )
    login_window_s: float = Field(default=60.0, gt=0, description="How long a wrong password counts.")
    logins_per_ip: int = Field(default=20, ge=1, description="Log-in attempts per address per window.")
    login_ip_window_s: float = Field(default=60.0, gt=0, description="The window of logins_per_ip.")
    signups_per_ip: int = Field(default=5, ge=1, description="Sign-ups (each granting coins) per address per window.")
    signup_window_s: float = Field(default=3600.0, gt=0, description="The window of signups_per_ip.")
    signups_per_56: int = Field(
        default=10, ge=1, description="Sign-ups per IPv6 /56 (a household's or a small site's) per signup_window_s."
    )
    signups_per_48: int = Field(default=30, ge=1, description="Sign-ups per IPv6 /48 (a site's) per signup_window_s.")
    guests_per_ip: int = Field(default=30, ge=1, description="Guest sessions started per address per window.")
    guest_window_s: float = Field(default=3600.0, gt=0, description="The window of guests_per_ip.")
    reports_per_person: int = Field(
        default=5, ge=1, description="Player reports one person (account or guest) may file per report_window_s."
    )
    reports_per_ip: int = Field(default=20, ge=1, description="Player reports filed from one address per window.")
    report_window_s: float = Field(default=3600.0, gt=0, description="The window of the report limits.")
    max_lobby_streams_per_ip: int = Field(
        default=8, ge=1, description="Open /api/lobby/stream feeds per IP address (IPv6: one /64)."
    )
    max_table_sockets_per_ip: int = Field(
        default=32, ge=1, description="Open table websockets per IP address (IPv6: one /64)."
    )


class DecisionLimits(Group):
    """How long a seat may hold a decision besides the table's move timer (RULES §8): a player
    who is not connected has ``disconnect_grace_s`` to come back, a connected one may take at most
    ``idle_limit_s``; at a cheating table a played-out bout waits ``challenge_window_s`` for
    challenges (§9). Between matches (§8): how long a staked match's ready check waits for every
    seated player's confirmation, and how long a seated player may be away from a waiting table."""

    disconnect_grace_s: float = Field(
        default=60.0, gt=0, description="How long a seat whose player is not connected waits for him on his decision."
    )
    idle_limit_s: float = Field(
        default=300.0, gt=0, description="The longest a connected player may hold a decision, timer or not."
    )
    challenge_window_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description="Cheating tables: how long a played-out bout waits for challenges before it is resolved.",
    )
    ready_check_s: float = Field(
        default=30.0,
        gt=0,
        description="A staked match starts only when every human seated is connected and confirms: how long the "
        "ready check waits before it frees the seats of those who have not.",
    )
    waiting_seat_away_s: float = Field(
        default=180.0,
        gt=0,
        description="A player seated at a waiting table with no connection to it for this long loses his seat.",
    )


class TableLimits(Group):
    """Bounded resources (docs/architecture.md, "Limits and eviction"): the tables one player or
    address may hold and open, and when tables leave memory. Counted per server process."""

    waiting_per_account: int = Field(
        default=3,
        ge=1,
        validation_alias="max_waiting_tables_per_account",
        description="Tables one player (account or guest) may have open and waiting for players.",
    )
    waiting_per_ip: int = Field(
        default=10,
        ge=1,
        validation_alias="max_waiting_tables_per_ip",
        description="Tables waiting for players that may be opened from one IP address (IPv6: one /64).",
    )
    live_per_account: int = Field(
        default=5,
        ge=1,
        validation_alias="max_live_tables_per_account",
        description="Tables one player (account or guest) may have opened that are waiting or playing, play-a-bot "
        "tables included.",
    )
    live_per_ip: int = Field(
        default=30,
        ge=1,
        validation_alias="max_live_tables_per_ip",
        description="Tables waiting or playing that may be opened from one IP address (IPv6: one /64), play-a-bot "
        "tables included.",
    )
    # Tables opened within ``opened_window_s``, whatever became of them: a table whose match is left
    # at once is live no more, but it was opened, and its match stays in the history.
    opened_per_account: int = Field(
        default=30,
        ge=1,
        validation_alias="max_tables_opened_per_account",
        description="Tables one player (account or guest) may open within tables_opened_window_s, whatever became "
        "of them (a finished match stays in the history).",
    )
    opened_per_ip: int = Field(
        default=150,
        ge=1,
        validation_alias="max_tables_opened_per_ip",
        description="Tables that may be opened from one IP address (IPv6: one /64) per window.",
    )
    opened_window_s: float = Field(
        default=600.0,
        gt=0,
        validation_alias="tables_opened_window_s",
        description="The window of max_tables_opened_per_account and max_tables_opened_per_ip.",
    )
    bot_tables_per_account: int = Field(
        default=1,
        ge=0,
        validation_alias="max_bot_tables_per_account",
        description="Matches of bots only (no person seated) one player may have running at once.",
    )
    bot_table_unwatched_s: float = Field(
        default=60.0, gt=0, description="A match of bots only that nobody watches for this long is stopped."
    )
    bot_match_max_s: float = Field(default=1800.0, gt=0, description="A match of bots only is stopped after this long.")
    finished_ttl_s: float = Field(
        default=60.0,
        gt=0,
        validation_alias="finished_table_ttl_s",
        description="A finished table leaves memory this long after its match ended, or after the last "
        "one connected to it left, whichever is later: while a player is at the table a rematch stays possible. "
        "Short, so that a stopping process has few tables besides the live ones to hand over.",
    )
    idle_ttl_s: float = Field(
        default=1800.0,
        gt=0,
        validation_alias="idle_table_ttl_s",
        description="A waiting table unchanged and unvisited leaves memory after this long.",
    )


class LeaseSettings(Group):
    """Table ownership across processes (docs/architecture.md, "Ownership across processes"): the lease
    each process holds on its tables, how soon a dead process's tables are taken over, and how many
    tables are taken over or handed over at once."""

    lease_ttl_s: float = Field(
        default=3.0,
        gt=0,
        description="How long a table's lease lasts unrenewed (renewed every third of it): a killed process's "
        "tables are taken over about this long plus takeover_sweep_s after it died.",
    )
    takeover_sweep_s: float = Field(
        default=1.0,
        gt=0,
        description="How often each process looks for tables whose lease has lapsed, to take them over.",
    )
    takeovers_at_once: int = Field(
        default=16,
        ge=1,
        description="Tables a process takes over at once (handed over by a stopping peer, in the order "
        "announced, or lapsed, playing ones first); a stopping process hands its tables over in batches "
        "of this many, live ones first, announcing each batch as it goes.",
    )


class ClientSettings(Group):
    """What the web client is told (GET /api/quickplay/settings)."""

    quickplay_bot_offer_s: float = Field(
        default=20.0,
        ge=0,
        le=3600,
        description="Play now: how long the web client searches for players before it offers to fill the "
        "table's empty seats with bots (free tables).",
    )


class CoachSettings(Group):
    """The coach (docs/api.md, "Coach"): who may start an analysis is fixed (the match's players and
    admins); how many, here. Counted in the database: every process shares them."""

    coach_runs_per_account: int = Field(
        default=1, ge=1, description="Analyses one account may have being computed at once (more: 429)."
    )
    coach_starts_per_account: int = Field(
        default=20, ge=1, description="Analyses one account may start per coach_window_s (more: 429)."
    )
    coach_window_s: float = Field(default=3600.0, gt=0, description="The window of coach_starts_per_account.")
    coach_max_running: int = Field(
        default=2, ge=1, description="Analyses the whole server computes at once (more: 503, try later)."
    )
    coach_unpolled_s: float = Field(
        default=30.0, gt=0, description="An analysis nobody has asked about for this long is cancelled."
    )


class IntegrityRules(Group):
    """Integrity (docs/integrity.md): related accounts, matches that count, farming watch. The
    defaults are the published rules."""

    related_same_ip: bool = Field(
        default=True,
        description="Accounts created from the same IP address within related_ip_window_s are related (may not "
        "sit at one staked table, never rated against each other). Off for tests on one loopback address.",
    )
    related_ip_window_s: float = Field(default=24 * 3600.0, gt=0, description="The window of related_same_ip.")
    rated_min_bouts: int = Field(default=3, ge=0, description="Bouts a match needs to move ratings.")
    rated_min_seconds: float = Field(default=60.0, ge=0, description="Seconds a match needs to move ratings.")
    quick_wins_warning: int = Field(
        default=3, ge=1, description="Quick wins of one account over another in a UTC day that warn both."
    )
    quick_wins_report: int = Field(
        default=4, ge=1, description="Quick wins of one account over another in a UTC day that file a report."
    )
    pair_daily_coin_cap: int = Field(
        default=2000, ge=0, description="Coins two accounts may move between themselves per UTC day (staked tables)."
    )
    soft_play_min_chances: int = Field(
        default=20,
        ge=1,
        description="Throw-in chances, against the one opponent and against the others, before a soft-play flag.",
    )
    soft_play_margin: float = Field(
        default=0.25, gt=0, le=1, description="How much more often throw-ins are passed up against one opponent."
    )
    private_staked_matches: int = Field(
        default=5,
        ge=2,
        description="Staked matches of a pair at private tables within private_staked_days that raise a flag.",
    )
    private_staked_days: int = Field(default=7, ge=1, description="The window of private_staked_matches.")
    new_account_matches: int = Field(
        default=5,
        ge=0,
        description="Matches that count (rated_min_bouts and rated_min_seconds long, against people or bots) an "
        "account plays before it may play for coins; until then its forfeits are not rated either.",
    )
    new_account_days: float = Field(
        default=7.0, ge=0, description="An account younger than this (or in its first new_account_matches) is new."
    )
    new_inflow_accounts: int = Field(
        default=5, ge=1, description="New accounts one account takes coins or wins from in a UTC day that raise a flag."
    )
    new_inflow_coins: int = Field(
        default=1000, ge=1, description="Coins one account takes from new accounts in a UTC day that raise a flag."
    )


class SeasonRules(Group):
    """Seasons (app/db/seasons.py, docs/api.md "Seasons"): ratings per season beside the all-time one."""

    length: str = Field(
        default="1m",
        pattern=r"^[1-9][0-9]?[dwm]$",
        validation_alias="season_length",
        description="How long a season lasts: N days (d), weeks (w, from Mondays) or months (m, from the 1st), "
        "in UTC; 1m: calendar months.",
    )
    mu_keep: float = Field(
        default=0.5,
        ge=0,
        le=1,
        validation_alias="season_mu_keep",
        description="Soft reset: the share of a player's distance from the start mu kept.",
    )
    sigma_widen: float = Field(
        default=0.5,
        ge=0,
        le=1,
        validation_alias="season_sigma_widen",
        description="Soft reset: the share of the way back to a new player's sigma.",
    )


class TournamentSettings(Group):
    """Arena tournaments (app/tournaments, docs/tournaments.md)."""

    default_bot_after_s: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        validation_alias="tournament_bot_after_s",
        description="A tournament's default: bots fill a table that would wait longer.",
    )
    tick_s: float = Field(
        default=1.0,
        gt=0,
        le=60,
        validation_alias="tournament_tick_s",
        description="How often the arena runner looks at the live tournaments.",
    )
    notice_s: float = Field(
        default=300.0,
        ge=0,
        validation_alias="tournament_notice_s",
        description="The \"about to start\" push notice goes out this long before a start.",
    )
    tournaments_per_player: int = Field(
        default=3, ge=0, description="Free tournaments one player may have scheduled or running at once."
    )


class FriendSettings(Group):
    """Friends and challenges (app/db/friends.py, docs/api.md "Friends")."""

    friend_requests_per_hour: int = Field(
        default=30, ge=1, description="Friend requests one account may send per hour."
    )
    challenges_per_hour: int = Field(default=20, ge=1, description="Challenges one account may send per hour.")
    challenge_ttl_s: float = Field(default=600.0, gt=0, description="How long a challenge waits for the friend.")


class PushSettings(Group):
    """Web Push (app/push.py, docs/api.md "Notices that reach a closed tab")."""

    vapid_private_key: str = Field(
        default="",
        description="The VAPID key that signs every push (raw P-256 private key, base64url; or PEM). Empty: the "
        "server makes one on first start and keeps it in the database (table server_keys) for every process.",
    )
    vapid_subject: str = Field(
        default="mailto:admin@localhost", description="Who runs this server, for the push services (mailto: or https:)."
    )
    push_hosts: list[str] = Field(
        default=[
            "fcm.googleapis.com",
            "push.services.mozilla.com",
            "notify.windows.com",
            "push.apple.com",
        ],
        description="The push services a subscription may name (a host or its subdomains): the only hosts POSTed to.",
    )
    push_allow_http: bool = Field(
        default=False, description="Accept http:// push endpoints (tests with a local push endpoint only)."
    )


class Settings(BaseSettings):
    """Every setting of the server, in its groups (see the module for the names they are set by)."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_file=".env", extra="ignore", case_sensitive=False)

    server: ServerSettings = ServerSettings()
    storage: StorageSettings = StorageSettings()
    security: SecuritySettings = SecuritySettings()
    throttle: ThrottleSettings = ThrottleSettings()
    decisions: DecisionLimits = DecisionLimits()
    tables: TableLimits = TableLimits()
    leases: LeaseSettings = LeaseSettings()
    client: ClientSettings = ClientSettings()
    coach: CoachSettings = CoachSettings()
    integrity: IntegrityRules = IntegrityRules()
    seasons: SeasonRules = SeasonRules()
    tournaments: TournamentSettings = TournamentSettings()
    friends: FriendSettings = FriendSettings()
    push: PushSettings = PushSettings()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Keywords first, then the environment, then .env, each by flat name (no secrets directory is used).
        assert isinstance(env_settings, EnvSettingsSource) and isinstance(dotenv_settings, EnvSettingsSource)
        return init_settings, FlatNames(settings_cls, env_settings), FlatNames(settings_cls, dotenv_settings)

    @model_validator(mode="before")
    @classmethod
    def _flat_names_to_groups(cls, data: Any) -> Any:
        """``Settings(idle_limit_s=120)``: a keyword by its flat name goes to its group."""
        if not isinstance(data, dict) or not any(key in FLAT_NAMES for key in data):
            return data
        grouped: dict[str, Any] = {key: value for key, value in data.items() if key not in FLAT_NAMES}
        for key, value in data.items():
            if key in FLAT_NAMES:
                place = FLAT_NAMES[key]
                given = grouped.get(place.group, {})
                values = dict(given) if isinstance(given, dict | BaseModel) else {}
                grouped[place.group] = {**values, place.name: value}
        return grouped


class FlatName(NamedTuple):
    group: str  # the field of Settings
    name: str  # the field of the group
    field: FieldInfo


def _flat_names() -> dict[str, FlatName]:
    names: dict[str, FlatName] = {}
    for group, group_field in Settings.model_fields.items():
        model = group_field.annotation
        assert isinstance(model, type) and issubclass(model, Group), group
        for name, field in model.model_fields.items():
            flat = field.validation_alias if isinstance(field.validation_alias, str) else name
            if flat in names or flat in Settings.model_fields:
                raise RuntimeError(f"two settings named {flat}")
            names[flat] = FlatName(group, name, field)
    return names


FLAT_NAMES = _flat_names()


class FlatNames(PydanticBaseSettingsSource):
    """Reads every setting by its flat name (``DURAK_IDLE_LIMIT_S``) from the environment or ``.env``
    (as read by ``source``) into its group; a list is written as JSON, as pydantic-settings reads it."""

    def __init__(self, settings_cls: type[BaseSettings], source: EnvSettingsSource) -> None:
        super().__init__(settings_cls)
        self.source = source

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every group at once

    def __call__(self) -> dict[str, Any]:
        data: dict[str, dict[str, Any]] = {}
        for flat, place in FLAT_NAMES.items():
            value = self.source.env_vars.get((ENV_PREFIX + flat).lower())
            if value is not None:
                data.setdefault(place.group, {})[place.name] = self.source.prepare_field_value(
                    flat, place.field, value, False
                )
        return data


@lru_cache
def get_settings() -> Settings:
    return Settings()
