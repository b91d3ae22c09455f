#!/usr/bin/env bash
# Configures and builds Hangar (Release with debug info, ccache when present).
#   scripts/build.sh [--dir DIR] [-DVAR=VALUE]... [CMAKE_BUILD_ARGS...]
# DIR (default build/) is configured when new, and again whenever -D options are given (so
# an existing DIR takes new ones); the remaining arguments go to `cmake --build`:
# `scripts/build.sh --target hangar` builds the server alone.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
configure=()
while (($#)); do
  case $1 in
    --dir) dir=${2:?--dir needs a directory}; shift 2 ;;
    -D*) configure+=("$1"); shift ;;
    *) break ;;
  esac
done
launcher=()
# Paths relative to the checkout, so another clone (CI's) reuses this machine's cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$dir/build.ninja" ] || [ ${#configure[@]} -gt 0 ]; then
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" "${configure[@]}"
fi
cmake --build "$dir" -j "$(nproc)" "$@"
