#!/usr/bin/env bash
# Import benchmark (issue #4 acceptance): times `hangar import` of the forge repository
# against `git clone --mirror` of the same repository, the median of RUNS (3) runs each,
# and prints both and their ratio. Two source forms:
#   path     SOURCE as a local path: git's local clone (object files hard-linked or copied)
#   file://  SOURCE as a file:// URL: objects packed and sent over the git protocol, as
#            from a remote
# `hangar import` does more than the clone (HEAD, config, commit-graph with Bloom filters,
# the repo row, the rename); the ratio is what all of that costs on top of git. The
# maintenance that follows an import by default (a full repack, docs/maintenance.md) is
# skipped (--no-maintain): page_bench.sh times it on its own line.
#
#   bench/forge/import_bench.sh PATH_TO_HANGAR [REPO]
#
# REPO defaults to the forge repository made (once) by make_repo.sh in
# ${HANGAR_BENCH_CACHE:-~/.cache/hangar-bench}/forge.git. RUNS=5 for more runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
hangar="$(cd "$(dirname "${1:?usage: import_bench.sh PATH_TO_HANGAR [REPO]}")" && pwd)/$(basename "$1")"
repo="${2:-${HANGAR_BENCH_CACHE:-$HOME/.cache/hangar-bench}/forge.git}"
runs="${RUNS:-3}"
[[ -d "$repo" ]] || "$here/make_repo.sh" "$repo" >&2
repo="$(cd "$repo" && pwd)"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
work="$(mktemp -d "${TMPDIR:-/tmp}/hangar-import-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
data="$work/data"
"$hangar" admin user create bench --data-dir "$data" >/dev/null 2>&1

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# time_hangar SOURCE / time_git SOURCE: RUNS timed runs, prints the median in seconds.
time_hangar() {
  local src="$1" tag="$2" i t0 t1
  for ((i = 0; i < runs; i++)); do
    t0=$(now)
    "$hangar" import "$src" "bench/forge-$tag-$i" --no-maintain --data-dir "$data" >/dev/null
    t1=$(now)
    echo "$t1 - $t0" | bc
    rm -rf "$data/repos/models/bench/forge-$tag-$i.git"  # keep the disk flat; the row stays
  done | median
}
time_git() {
  local src="$1" i t0 t1
  for ((i = 0; i < runs; i++)); do
    t0=$(now)
    git clone -q --mirror "$src" "$work/mirror.git"
    t1=$(now)
    echo "$t1 - $t0" | bc
    rm -rf "$work/mirror.git"
  done | median
}

echo "repository: $repo"
echo "  $(git --git-dir="$repo" rev-list --count --all) commits, $(git --git-dir="$repo" for-each-ref | wc -l) refs, $(du -sh "$repo" | cut -f1)"
echo "machine: $(nproc) cores, $(git --version), median of $runs runs"
printf '%-8s %14s %22s %8s\n' source "hangar import" "git clone --mirror" ratio
for form in path file; do
  src="$repo"
  [[ "$form" == file ]] && src="file://$repo"
  h="$(time_hangar "$src" "$form")"
  g="$(time_git "$src")"
  printf '%-8s %12.2f s %20.2f s %7.2fx\n' "$form" "$h" "$g" "$(echo "$h / $g" | bc -l)"
done
