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
# The static checks (lint, types, container files, the audit of the locks) run beside the tests: mypy
# needs one core for about 20 s, which the tests leave idle while they wait on servers and browsers,
# so the whole command is shorter (docs/performance.md, "The test suite"). Their output and verdict
# come after the tests'; either failing fails the command.
checks_log="$(mktemp)"
trap 'rm -f "$checks_log"' EXIT
(
  set -e
  .venv/bin/ruff check app tests bench migrations
  .venv/bin/mypy --strict app
  DURAK_SECRET_KEY="${DURAK_SECRET_KEY:-compose-config-check-only}" .venv/bin/docker-compose -f docker-compose.yml config -q
  DURAK_SECRET_KEY="${DURAK_SECRET_KEY:-compose-config-check-only}" .venv/bin/docker-compose \
    -f docker-compose.yml -f docker-compose.cluster.yml config -q
  .venv/bin/hadolint --failure-threshold warning Dockerfile
  # A known vulnerability in a locked release fails; without advisories (offline) it says SKIPPED.
  .venv/bin/python scripts/audit_lock.py
) >"$checks_log" 2>&1 &
checks=$!
# The tests in parallel workers (pytest-xdist; tests/conftest.py says how they are shared out).
# DURAK_TEST_WORKERS=0 runs them in this one process; arguments after the script's name go to pytest.
# --durations: the 40 slowest tests close the report (docs/performance.md, "The test suite").
status=0
.venv/bin/python -m pytest -n "${DURAK_TEST_WORKERS:-3}" --dist loadgroup --durations=40 "$@" || status=$?
checked=0
wait "$checks" || checked=$?
echo "--- static checks (ruff, mypy --strict app, compose, hadolint, the lock audit)"
cat "$checks_log"
if [ "$checked" -ne 0 ]; then
  echo "static checks failed (exit $checked)"
  [ "$status" -ne 0 ] || status=$checked
fi
exit "$status"
