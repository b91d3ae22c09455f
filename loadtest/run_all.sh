#!/usr/bin/env bash
# Runs every load test in turn and prints one table of results (Markdown), with the
# machine and the goal from DESIGN.md next to each figure.
#
#   loadtest/run_all.sh                 # full sizes: ~10-15 min on 2 cores
#   BENCH_QUICK=1 loadtest/run_all.sh   # small sizes and short runs: a dry run
#   loadtest/run_all.sh resolve clone   # a subset
#   loadtest/run_all.sh transfer_memory # a known test outside the default list
#   loadtest/run_all.sh reference       # issue 17's reference scenarios (the group below)
#                                       # on one hangar serve on SQLite
#   loadtest/run_all.sh --postgres      # the reference scenarios on one hangar serve on a
#                                       # throw-away PostgreSQL (lib.sh HANGAR_ENGINE)
#   loadtest/run_all.sh --deployment    # ... against deploy/stack.sh's two replicas and a
#                                       # worker behind HAProxy, on PostgreSQL (lib.sh
#                                       # HANGAR_DEPLOYMENT; HANGAR_DEPLOY_S3=1 for S3 blobs)
#   loadtest/run_all.sh --replicas 1    # ... the same deployment with one replica
#                                       # (--replicas 2 is --deployment)
#
# Known tests: the default list, plus transfer_memory (issue #3's 4 x 1 GiB upload and
# >= 16 GiB download memory/speed run: ~3-5 min and ~12 GiB of temp files, so only on
# request) and downloads (4 clients downloading a 1 GiB file for 2 minutes). The group
# `reference` is issue 17's reference report, scenario for scenario: startup resolve
# tree_listing clone transfer_memory downloads (~20 min at full size); it is the default
# list when --postgres, --deployment or --replicas is given, and it runs resolve at the
# reference's rates (BENCH_REFERENCE=1: HEAD /resolve 400 req/s, model info 100 req/s).
#
# A failing test is reported and the others still run. Each test starts and kills its
# own servers and cleans its temp files; load goes to 127.0.0.1 only.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
default=(startup resolve tree_listing clone)
reference=(startup resolve tree_listing clone transfer_memory downloads)
known=("${default[@]}" transfer_memory downloads reference)
tests=()
hub_flag=0
while (($#)); do
  case $1 in
    --deployment) export HANGAR_DEPLOYMENT=1; hub_flag=1; shift ;;
    --replicas)
      [ "${2:-}" = 1 ] || [ "${2:-}" = 2 ] || { echo "--replicas takes 1 or 2" >&2; exit 2; }
      export HANGAR_DEPLOYMENT=1 HANGAR_DEPLOY_REPLICAS=$2; hub_flag=1; shift 2 ;;
    --postgres) export HANGAR_ENGINE=postgres; hub_flag=1; shift ;;
    reference) tests+=("${reference[@]}"); export BENCH_REFERENCE=1; shift ;;
    *) tests+=("$1"); shift ;;
  esac
done
if ! ((${#tests[@]})); then
  if ((hub_flag)); then tests=("${reference[@]}"); export BENCH_REFERENCE=1; else tests=("${default[@]}"); fi
fi

logs="${BENCH_LOG_DIR:-$(mktemp -d /tmp/hangar-bench-logs.XXXXXX)}"
mkdir -p "$logs"
out="$logs/results.tsv"
: >"$out"
export BENCH_RESULTS="$out"

echo "# Hangar load tests — $(date -u +'%Y-%m-%d %H:%M UTC')"
echo
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem/ {print $2}') GiB RAM; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "hangar: ${HANGAR_BIN:-$(ls -t "$here"/../build*/hangar 2>/dev/null | head -1)} built from ${BENCH_REV:-$(git -C "$here/.." rev-parse --short HEAD)}"
pg_version=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -type d -printf '%f\n' 2>/dev/null | sort -V | tail -1)
if [ "${HANGAR_DEPLOYMENT:-0}" = 1 ]; then
  n=${HANGAR_DEPLOY_REPLICAS:-2}
  echo "hub: deploy/stack.sh — $([ "$n" = 1 ] && echo "one replica" || echo "two replicas") and a worker behind HAProxy $(haproxy -v 2>/dev/null | grep -o -m1 'version [0-9.]*' | cut -d' ' -f2), PostgreSQL ${pg_version:-?} (fsync off), blobs $([ "${HANGAR_DEPLOY_S3:-0}" = 1 ] && echo "in S3 (radosgw)" || echo "on the shared data dir"); all on this machine's cores"
elif [ "${HANGAR_ENGINE:-sqlite}" = postgres ]; then
  echo "hub: one hangar serve on PostgreSQL ${pg_version:-?} (scripts/pg-server.sh, a throw-away cluster on 127.0.0.1, fsync off) and local disk"
else
  echo "hub: one hangar serve on SQLite and local disk"
fi
echo "tests: ${tests[*]}$([ "${BENCH_QUICK:-0}" = 1 ] && echo " (BENCH_QUICK=1: small sizes, short runs; not figures to publish)")"
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
