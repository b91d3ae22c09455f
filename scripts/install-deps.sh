#!/usr/bin/env bash
# Installs every Debian and npm package Hangar's build and tests need. Idempotent:
# a package already present is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git git-lfs curl ca-certificates
  libboost1.81-dev libboost-url1.81-dev libboost-json1.81-dev libboost-system1.81-dev
  libboost-thread1.81-dev
  libgit2-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev libargon2-dev zlib1g-dev
  libtomlplusplus-dev libcli11-dev libspdlog-dev libyaml-cpp-dev
  libcmark-gfm-dev libcmark-gfm-extensions-dev libkainjow-mustache-dev libgumbo-dev
  libjs-highlight.js gpg
  libgtest-dev libgmock-dev libbenchmark-dev
  wrk python3 jq
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# Headless Chromium for the browser tests (without the desktop it recommends).
if ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium
fi

# OCI peers for the registry tests: skopeo (a real client) and Debian's docker-registry
# (CNCF Distribution 2.8.2, the side-by-side peer). Its service is never started: tests
# run their own instance on 127.0.0.1.
oci_missing=()
for p in skopeo docker-registry; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || oci_missing+=("$p")
done
if ((${#oci_missing[@]})); then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${oci_missing[@]}"
fi

# Node.js: the machine's own if present, else Debian's.
if ! command -v npm >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm
fi

# npm packages used by the integration tests (the real @huggingface/hub client, and
# playwright-core driving the Debian chromium above for the browser tests).
if [ ! -f tests/js/node_modules/@huggingface/hub/package.json ] ||
   [ ! -f tests/js/node_modules/playwright-core/package.json ]; then
  (cd tests/js && npm install --no-audit --no-fund --loglevel=error)
fi
