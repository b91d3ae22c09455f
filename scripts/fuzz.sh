#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz into build-asan/ (scripts/sanitized-build.sh:
# clang, every library under -fsanitize=fuzzer-no-link,address,undefined) and runs each
# for SECONDS (default 60) from a copy of its seed corpus tests/fuzz/corpus/<name>/ (never
# written to), two at a time, with leak detection on and UBSan halting on the first error. Prints a line per target and
# "fuzz: N passed, M failed"; exits 1 when any failed. A failing input is kept in
# build-asan/crashes/ and printed. Usage: scripts/fuzz.sh [SECONDS] [NAME...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: scripts/fuzz.sh [SECONDS] [NAME...]" >&2; exit 2; }

scripts/install-deps.sh
scripts/sanitized-build.sh fuzz_targets

names=("$@")
if [ ${#names[@]} = 0 ]; then
  for f in tests/fuzz/*_fuzz.cc; do n=${f##*/}; names+=("${n%_fuzz.cc}"); done
fi
run=build-asan/run
crashes=build-asan/crashes
rm -rf "$run"
mkdir -p "$run" "$crashes"
# halt_on_error: the first UB report ends the run as a crash (-fno-sanitize-recover does
# the same at compile time); leaks are reported at exit of each input batch by libFuzzer.
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# fuzz_one NAME: runs NAME_fuzz from a copy of its corpus; leaves $run/NAME.{log,rc}.
fuzz_one() {
  local name=$1 corpus=tests/fuzz/corpus/$1 dict=()
  mkdir -p "$run/$name"
  [ -d "$corpus" ] && cp -r "$corpus/." "$run/$name/"
  [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
  local rc=0
  "build-asan/${name}_fuzz" "$run/$name" "${dict[@]}" -max_total_time="$seconds" \
    -error_exitcode=77 -timeout=30 -rss_limit_mb=2560 -detect_leaks=1 -print_final_stats=1 \
    -artifact_prefix="$crashes/$name-" >"$run/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$run/$name.rc"
}

# Two at a time (this is a 2-core machine).
jobs_running=0
for name in "${names[@]}"; do
  [ -x "build-asan/${name}_fuzz" ] || { echo "fuzz: no target ${name}_fuzz" >&2; exit 2; }
  if [ "$jobs_running" -ge 2 ]; then wait -n || true; jobs_running=$((jobs_running - 1)); fi
  fuzz_one "$name" &
  jobs_running=$((jobs_running + 1))
done
wait

passed=0 failed=0
for name in "${names[@]}"; do
  rc=$(cat "$run/$name.rc")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/$name.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$run/$name.log" | tail -1 | cut -d' ' -f2)
  if [ "$rc" = 0 ]; then
    passed=$((passed + 1))
    echo "PASS ${name}_fuzz: ${seconds} s, ${runs:-?} runs, coverage ${cov:-?}, corpus" \
      "$(ls "$run/$name" | wc -l) inputs"
  else
    failed=$((failed + 1))
    echo "FAIL ${name}_fuzz: exit $rc (log $run/$name.log)"
    grep -E 'ERROR: |runtime error:|invariant failed|SUMMARY:' "$run/$name.log" | head -5 || true
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$run/$name.log" | tail -1)
    if [ -n "$input" ] && [ -f "$input" ]; then
      echo "  input kept in $input ($(wc -c <"$input") bytes):"
      od -An -c "$input" | head -16
    fi
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
