#!/usr/bin/env bash
# Builds TARGETs (default: fuzz_targets and unit_tests) in build-asan/, the one clang build
# that scripts/sanitize.sh and scripts/fuzz.sh share (docs/fuzzing.md): every library under
# -fsanitize=address,undefined plus libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link), so the libraries are compiled once for the fuzz targets and
# the unit tests under the sanitizers. Usage: scripts/sanitized-build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} = 0 ] && targets=(fuzz_targets unit_tests)
args=()
for t in "${targets[@]}"; do args+=(--target "$t"); done
scripts/build.sh --dir build-asan -DCMAKE_CXX_COMPILER=clang++ -DHANGAR_SANITIZE=ON \
  -DHANGAR_FUZZ=ON "${args[@]}"
