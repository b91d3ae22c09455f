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
scripts/build.sh --dir build-asan -DCMAKE_CXX_COMPILER=clang++ -DHANGAR_SANITIZE=ON --target unit_tests
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd build-asan && ctest -L unit --output-on-failure -j 2 "$@"
