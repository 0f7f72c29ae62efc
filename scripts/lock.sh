#!/usr/bin/env bash
# Regenerate the lock files from pyproject.toml, for CPython 3.11 on Linux x86_64 with glibc 2.36 or
# newer (Debian 12 and the python:3.11-slim image), wheels only, from PyPI:
#   requirements-dev.lock  runtime + dev extra + build backend (scripts/test.sh)
#   requirements.lock      runtime + build backend, the same pins (scripts/run.sh, Dockerfile)
# Pins already in the files are kept unless pyproject.toml needs others; pass uv's options on:
#   bash scripts/lock.sh                          # after editing pyproject.toml
#   bash scripts/lock.sh --upgrade-package NAME   # move one package to its newest release
#   bash scripts/lock.sh --upgrade                # move everything to the newest releases
set -euo pipefail
cd "$(dirname "$0")/.."

uv_version=0.13.9
tools=${DURAK_LOCK_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/durak-peak/lock-tools}
if [ "$("$tools/bin/uv" --version 2>/dev/null)" != "uv $uv_version" ]; then
  python3 -m venv --clear "$tools"
  "$tools/bin/pip" install -q --disable-pip-version-check "uv==$uv_version"
fi

# The build backend is locked too, so that installing the project needs nothing unhashed
# (pip install --no-build-isolation); uv reads these lines from standard input ("-").
build_requires=$(python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))')

compile() {
  "$tools/bin/uv" pip compile --quiet --no-config --generate-hashes \
    --python-version 3.11 --python-platform x86_64-manylinux_2_36 --only-binary :all: \
    --index-url https://pypi.org/simple \
    --custom-compile-command "bash scripts/lock.sh" "$@"
}

echo "$build_requires" | compile pyproject.toml --extra dev - -o requirements-dev.lock "$@"
# The runtime lock takes its versions from the dev lock: the image runs what the tests ran.
echo "$build_requires" | compile pyproject.toml - -c requirements-dev.lock -o requirements.lock
echo "lock: requirements-dev.lock $(grep -c '^[a-z0-9]' requirements-dev.lock) packages," \
  "requirements.lock $(grep -c '^[a-z0-9]' requirements.lock) packages"
