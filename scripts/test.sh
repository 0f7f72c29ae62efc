#!/usr/bin/env bash
# Install into .venv from requirements-dev.lock (pinned, hash-checked) and run every check: lint,
# types, container files, a vulnerability audit of the locks, the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# The lock is for CPython 3.11 on Linux x86_64.
[ -d .venv ] || "$(command -v python3.11 || command -v python3)" -m venv .venv
pip=(.venv/bin/pip install -q --disable-pip-version-check)
{ "${pip[@]}" --require-hashes --only-binary :all: -r requirements-dev.lock \
  && "${pip[@]}" --no-deps --no-build-isolation -e .; } >.venv/install.log 2>&1 || { cat .venv/install.log; exit 1; }
.venv/bin/ruff check app tests bench migrations
.venv/bin/mypy --strict app
DURAK_SECRET_KEY="${DURAK_SECRET_KEY:-compose-config-check-only}" .venv/bin/docker-compose -f docker-compose.yml config -q
DURAK_SECRET_KEY="${DURAK_SECRET_KEY:-compose-config-check-only}" .venv/bin/docker-compose \
  -f docker-compose.yml -f docker-compose.cluster.yml config -q
.venv/bin/hadolint --failure-threshold warning Dockerfile
# A known vulnerability in a locked release fails; without advisories (offline) it says SKIPPED.
.venv/bin/python scripts/audit_lock.py
# The tests in parallel workers (pytest-xdist; tests/conftest.py says how they are shared out).
# DURAK_TEST_WORKERS=0 runs them in this one process; arguments after the script's name go to pytest.
# --durations: the 40 slowest tests close the report (docs/performance.md, "The test suite").
.venv/bin/python -m pytest -n "${DURAK_TEST_WORKERS:-3}" --dist loadgroup --durations=40 "$@"
