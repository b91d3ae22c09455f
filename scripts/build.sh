#!/usr/bin/env bash
# Configures and builds Hangar into build/ (Release with debug info, ccache when present).
# Arguments go to `cmake --build`: `scripts/build.sh --target hangar` builds the server alone.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
# Paths relative to the checkout, so another clone (CI's) reuses this machine's cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}"
fi
cmake --build build -j "$(nproc)" "$@"
