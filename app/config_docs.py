"""docs/configuration.md, generated from the settings of app/config.py: ``python -m app.config_docs``."""

from __future__ import annotations

import json
from pathlib import Path

from app.config import ENV_PREFIX, FLAT_NAMES, FlatName, Settings

DOC = "docs/configuration.md"


def render_docs() -> str:
    """docs/configuration.md: every setting by its environment variable, group by group."""
    lines = [
        "# Configuration",
        "",
        "<!-- Generated from app/config.py by `python -m app.config_docs`; edit the settings there. -->",
        "",
        "The server reads these variables from its environment, or from a `.env` file in its working",
        "directory (the environment wins). A list is written as JSON (`[\"https://durak.example\"]`). In",
        "code the settings come in groups (`settings.decisions.idle_limit_s`); the variable names are flat",
        "and do not name the group.",
    ]
    by_group: dict[str, list[tuple[str, FlatName]]] = {}
    for flat, place in FLAT_NAMES.items():
        by_group.setdefault(place.group, []).append((flat, place))
    for group, names in by_group.items():
        model = Settings.model_fields[group].annotation
        assert model is not None
        doc = " ".join((model.__doc__ or "").split())
        lines += ["", f"## {group}", "", doc, "", "| Variable | In code | Default | Meaning |", "|---|---|---|---|"]
        for flat, place in names:
            default = place.field.default
            shown = json.dumps(default) if isinstance(default, list | str) else default
            shown = "(unset)" if default is None else shown
            meaning = " ".join((place.field.description or "").split()).replace("|", "\\|")
            lines.append(f"| `{ENV_PREFIX}{flat.upper()}` | `{group}.{place.name}` | `{shown}` | {meaning} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    Path(__file__).resolve().parents[1].joinpath(DOC).write_text(render_docs(), encoding="utf-8")
