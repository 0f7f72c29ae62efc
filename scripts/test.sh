#!/usr/bin/env bash
# Install into .venv and run every check: lint, types, container files, the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d .venv ] || python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -e '.[dev]' >.venv/install.log 2>&1 || { cat .venv/install.log; exit 1; }
.venv/bin/ruff check app tests bench migrations
.venv/bin/mypy app
DURAK_SECRET_KEY="${DURAK_SECRET_KEY:-compose-config-check-only}" .venv/bin/docker-compose -f docker-compose.yml config -q
.venv/bin/hadolint --failure-threshold warning Dockerfile
.venv/bin/python -m pytest "$@"
