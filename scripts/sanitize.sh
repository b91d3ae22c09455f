#!/usr/bin/env bash
# Builds the unit tests (CTest label `unit`: every GoogleTest binary, not the server, the
# integration scripts or the benches) into build-asan/ with clang under AddressSanitizer
# and UndefinedBehaviorSanitizer (-DHANGAR_SANITIZE=ON: -fsanitize=address,undefined
# -fno-sanitize-recover=undefined -fno-omit-frame-pointer), and runs them with ctest. A
# leak, a memory error or any undefined behaviour fails the test it happens in.
# Arguments go to ctest: `scripts/sanitize.sh -R core_test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f build-asan/build.ninja ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++ -DHANGAR_SANITIZE=ON "${launcher[@]}"
fi
cmake --build build-asan -j "$(nproc)" --target unit_tests
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd build-asan && ctest -L unit --output-on-failure -j 2 "$@"
