#!/usr/bin/env bash
# Runs every load test in turn and prints one table of results (Markdown), with the
# machine and the goal from DESIGN.md next to each figure.
#
#   loadtest/run_all.sh                 # full sizes: ~10-15 min on 2 cores
#   BENCH_QUICK=1 loadtest/run_all.sh   # small sizes and short runs: a dry run
#   loadtest/run_all.sh resolve clone   # a subset
#   loadtest/run_all.sh transfer_memory # a known test outside the default list
#   loadtest/run_all.sh --deployment    # the same against deploy/stack.sh's two replicas
#                                       # behind HAProxy, on PostgreSQL (lib.sh
#                                       # HANGAR_DEPLOYMENT; HANGAR_DEPLOY_S3=1 for S3 blobs)
#
# Known tests: the default list, plus transfer_memory (issue #3's 4 x 1 GiB upload and
# >= 16 GiB download memory/speed run: ~3-5 min and ~12 GiB of temp files, so only on request).
#
# A failing test is reported and the others still run. Each test starts and kills its
# own servers and cleans its temp files; load goes to 127.0.0.1 only.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
default=(startup resolve tree_listing clone)
known=("${default[@]}" transfer_memory)
tests=()
for a in "$@"; do
  if [ "$a" = --deployment ]; then export HANGAR_DEPLOYMENT=1; else tests+=("$a"); fi
done
((${#tests[@]})) || tests=("${default[@]}")

logs="${BENCH_LOG_DIR:-$(mktemp -d /tmp/hangar-bench-logs.XXXXXX)}"
mkdir -p "$logs"
out="$logs/results.tsv"
: >"$out"
export BENCH_RESULTS="$out"

echo "# Hangar load tests — $(date -u +'%Y-%m-%d %H:%M UTC')"
echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem/ {print $2}') GiB RAM; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "hangar: ${HANGAR_BIN:-$(ls -t "$here"/../build*/hangar 2>/dev/null | head -1)} built from ${BENCH_REV:-$(git -C "$here/.." rev-parse --short HEAD)}"
if [ "${HANGAR_DEPLOYMENT:-0}" = 1 ]; then
  echo "hub: deploy/stack.sh — two replicas and a worker behind HAProxy, PostgreSQL, blobs $([ "${HANGAR_DEPLOY_S3:-0}" = 1 ] && echo "in S3 (radosgw)" || echo "on the shared data dir"); all on this machine's cores"
else
  echo "hub: one hangar serve on SQLite and local disk"
fi
echo
failed=()
for t in "${tests[@]}"; do
  s="$here/$t.sh"
  [ -x "$s" ] || { echo "no such test: $t (known: ${known[*]})" >&2; failed+=("$t"); continue; }
  echo "running $t ..." >&2
  t0=$(date +%s)
  if ! "$s" >"$logs/$t.log" 2>&1; then
    failed+=("$t")
    echo "FAILED: $t (last lines of its log):" >&2
    tail -5 "$logs/$t.log" >&2
  fi
  echo "  $t took $(( $(date +%s) - t0 )) s" >&2
done

echo "| figure | value | unit | DESIGN.md goal | notes |"
echo "| --- | --- | --- | --- | --- |"
awk -F'\t' '$1 == "RESULT" {printf "| %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6}' "$out"
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg); logs in $logs"
if ((${#failed[@]})); then
  echo "failed: ${failed[*]}"
  exit 1
fi
