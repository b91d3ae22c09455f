#!/usr/bin/env bash
# Installs dependencies, builds, and starts the hub on its embedded defaults
# (SQLite + local disk in ./hangar-data, http://127.0.0.1:8080).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --target hangar  # the server alone: the tests are not needed to serve
exec build/hangar serve "$@"
