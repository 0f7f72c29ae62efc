#!/usr/bin/env bash
# Install into .venv and start the server on the embedded default (SQLite file, in-process broker).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .venv ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e . >.venv/install.log 2>&1 || { cat .venv/install.log; exit 1; }
exec .venv/bin/python -m app "$@"
