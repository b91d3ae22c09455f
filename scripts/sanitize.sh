#!/usr/bin/env bash
# Builds the unit tests (CTest label `unit`: every GoogleTest binary, not the server, the
# integration scripts or the benches) into build-asan/ with clang under AddressSanitizer
# and UndefinedBehaviorSanitizer (scripts/sanitized-build.sh: -fsanitize=address,undefined
# -fno-sanitize-recover=undefined -fno-omit-frame-pointer, and the fuzzer's coverage
# instrumentation, since scripts/fuzz.sh shares the build), and runs them with ctest. A
# leak, a memory error or any undefined behaviour fails the test it happens in.
# storage_s3_test is a unit test on a real S3: ctest runs its `s3` fixture with it
# (s3_server_start/s3_server_stop: a one-node Ceph cluster with the RADOS gateway on
# 127.0.0.1, scripts/s3-server.sh, ~15 s), so the S3 client code runs under the sanitizers
# too (the Ceph daemons themselves are Debian's builds, not instrumented).
# Arguments go to ctest: `scripts/sanitize.sh -R core_test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/sanitized-build.sh unit_tests
export ASAN_OPTIONS=detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
cd build-asan && ctest -L unit --output-on-failure -j 2 "$@"
