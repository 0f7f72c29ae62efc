"""The settings (app/config.py): grouped in code, each setting read by its one flat name
(``DURAK_<NAME>`` in the environment and ``.env``, ``NAME`` as a keyword), every name that
deployments and docs set still valid."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from app.config import (
    FLAT_NAMES,
    DecisionLimits,
    IntegrityRules,
    SeasonRules,
    Settings,
    TableLimits,
)
from app.config_docs import DOC, render_docs

ROOT = Path(__file__).resolve().parents[1]

# Values unlike the defaults for the settings whose type gives none by itself.
TEXT_VALUES: dict[str, Any] = {
    "host": "0.0.0.0",
    "log_level": "debug",
    "node_name": "node-7",
    "forwarded_allow_ips": "10.0.0.2",
    "database_url": "postgresql+psycopg://durak@db/durak",
    "broker_url": "redis://redis:6379/0",
    "redis_prefix": "other:",
    "secret_key": "a-secret-key-of-thirty-two-bytes!",
    "allowed_origins": ["https://durak.example"],
    "cookie_secure": "true",
    "password_hashing": "test",
    "length": "2w",
    "vapid_private_key": "a-key",
    "vapid_subject": "mailto:ops@durak.example",
    "push_hosts": ["push.example"],
}


def other_value(name: str, default: object) -> Any:
    """A valid value of the setting that is not its default."""
    if name in TEXT_VALUES:
        return TEXT_VALUES[name]
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    assert isinstance(default, float), name
    return default / 2 if default else 1.0


def env_text(value: Any) -> str:
    if isinstance(value, list):
        return json.dumps(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def test_every_setting_is_read_from_the_environment_by_its_flat_name(monkeypatch: pytest.MonkeyPatch) -> None:
    wanted: dict[str, Any] = {}
    for flat, place in FLAT_NAMES.items():
        wanted[flat] = other_value(place.name, place.field.default)
        monkeypatch.setenv(f"DURAK_{flat.upper()}", env_text(wanted[flat]))
    settings = Settings(_env_file=None)
    for flat, place in FLAT_NAMES.items():
        assert getattr(getattr(settings, place.group), place.name) == wanted[flat], flat


def test_a_dotenv_file_uses_the_flat_names_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text("DURAK_IDLE_LIMIT_S=120\nDURAK_MAX_WAITING_TABLES_PER_ACCOUNT=7\nDURAK_SEASON_LENGTH=1w\n")
    monkeypatch.setenv("DURAK_SEASON_LENGTH", "2d")
    settings = Settings(_env_file=dotenv)
    assert settings.decisions.idle_limit_s == 120
    assert settings.tables.waiting_per_account == 7
    assert settings.seasons.length == "2d"


def test_keywords_by_flat_name_or_by_group_and_they_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DURAK_IDLE_LIMIT_S", "120")
    monkeypatch.setenv("DURAK_DISCONNECT_GRACE_S", "30")
    settings = Settings(_env_file=None, idle_limit_s=90, max_live_tables_per_ip=3)
    assert settings.decisions == DecisionLimits(idle_limit_s=90, disconnect_grace_s=30)
    assert settings.tables.live_per_ip == 3
    grouped = Settings(_env_file=None, tables=TableLimits(live_per_ip=4), max_waiting_tables_per_ip=5)
    assert (grouped.tables.live_per_ip, grouped.tables.waiting_per_ip) == (4, 5)
    assert Settings(_env_file=None, decisions={"challenge_window_s": 2}).decisions.challenge_window_s == 2


def test_the_limits_objects_are_the_groups_with_the_same_defaults() -> None:
    settings = Settings(_env_file=None)
    assert settings.decisions == DecisionLimits()
    assert settings.tables == TableLimits()
    assert settings.integrity == IntegrityRules()
    assert settings.seasons == SeasonRules()


def test_a_group_refuses_what_its_setting_would() -> None:
    with pytest.raises(ValidationError):
        TableLimits(waiting_per_account=0)
    with pytest.raises(ValidationError):
        Settings(_env_file=None, soft_play_margin=2)
    with pytest.raises(ValidationError):
        DecisionLimits(idel_limit_s=1)  # type: ignore[call-arg]  # a misspelt name is not ignored in a group
    with pytest.raises(ValidationError):
        DecisionLimits().idle_limit_s = 1  # type: ignore[misc]  # frozen: a change is a new group


def test_every_setting_named_by_deployments_and_docs_exists() -> None:
    """Compose files, manifests, the Dockerfile and the docs set DURAK_* names; each is a setting,
    except the few read by the deployment's own scripts and proxies."""
    not_settings = {
        "DURAK_FRONT_PROXY",
        "DURAK_PUBLIC_HOST",
        "DURAK_PUBLIC_HTTPS_PORT",
        "DURAK_PUBLIC_PORT",
        "DURAK_REQUIRE_SERVICES",
        "DURAK_SERVER_NAME",
        "DURAK_TEST_WORKERS",
        "DURAK_TLS_CERT",
        "DURAK_TLS_DIR",
        "DURAK_TLS_KEY",
    }
    files = [ROOT / "README.md", ROOT / "Dockerfile", *ROOT.glob("docker-compose*.yml")]
    files += [path for folder in ("docs", "deploy") for path in (ROOT / folder).rglob("*") if path.is_file()]
    text = "\n".join(path.read_text(errors="ignore") for path in files)
    named = set(re.findall(r"\bDURAK_[A-Z0-9_]*[A-Z0-9]\b", text))
    assert len(named) > 30
    assert {name for name in named - not_settings if name[len("DURAK_") :].lower() not in FLAT_NAMES} == set()


def test_the_configuration_doc_is_generated_from_the_settings() -> None:
    assert (ROOT / DOC).read_text(encoding="utf-8") == render_docs(), "run: python -m app.config_docs"
