#!/usr/bin/env bash
# Install into .venv from requirements.lock (pinned, hash-checked) and start the server on the
# embedded default (SQLite file, in-process broker).
set -euo pipefail
cd "$(dirname "$0")/.."
# The lock is for CPython 3.11 on Linux x86_64.
[ -d .venv ] || "$(command -v python3.11 || command -v python3)" -m venv .venv
pip=(.venv/bin/pip install -q --disable-pip-version-check)
{ "${pip[@]}" --require-hashes --only-binary :all: -r requirements.lock \
  && "${pip[@]}" --no-deps --no-build-isolation -e .; } >.venv/install.log 2>&1 || { cat .venv/install.log; exit 1; }
exec .venv/bin/python -m app "$@"
