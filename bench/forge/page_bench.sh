#!/usr/bin/env bash
# Page speed benchmark (issue #4 point 3 and its acceptance "Page speed benchmark"): every
# web page of a repository with 80,865 commits, 1,100 refs and a 7,603-line src/big.py
# (bench/forge/make_repo.sh, generated once into the cache), against the goal of < 50 ms
# each; blame and archives against the bare git command on the same repository; import
# against `git clone --mirror`.
#
#   bench/forge/page_bench.sh PATH_TO_HANGAR
#
# Steps: generate (or reuse) the repository; copy the binary (so a rebuild during the run
# changes nothing); `hangar import --no-maintain` it into a fresh data dir, timed beside one
# `git clone --mirror`; then `hangar admin maintain` (timed; docs/maintenance.md) unless
# MAINTAIN=0, which measures the pages on the source's unmaintained fast-import layout;
# then bench/forge/page_bench.py measures each page on `hangar serve` at
# 127.0.0.1 (a free port; the server's own time from its access log) and prints the
# tables; last, bench/forge/import_bench.sh (medians of 3) unless IMPORT_BENCH=0.
#
# Environment: RUNS (30 warm requests per page), COLD_RUNS (3 fresh servers per page),
# BLAME_RUNS (3), ARCHIVE_RUNS (5), IMPORT_BENCH (1), MAINTAIN (1), ONLY (a page-name substring, to
# measure a few pages), HANGAR_BENCH_CACHE (~/.cache/hangar-bench), BENCH_JSON (a file for
# all figures as JSON).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src_bin="${1:?usage: page_bench.sh PATH_TO_HANGAR}"
cache="${HANGAR_BENCH_CACHE:-$HOME/.cache/hangar-bench}"
repo="$cache/forge.git"

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C GIT_TERMINAL_PROMPT=0
unset GIT_DIR GIT_WORK_TREE
work="$(mktemp -d "${TMPDIR:-/tmp}/hangar-page-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT  # page_bench.py stops every server it starts

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'),"\
     "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(git --version), $(python3 --version)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p "$cache"
"$here/make_repo.sh" "$repo"

cp "$src_bin" "$work/hangar"
hangar="$work/hangar"
bin_dir="$(cd "$(dirname "$src_bin")" && pwd)"
src_root="$(cd "$here/../.." && pwd)"
commit="$(git -C "$src_root" rev-parse --short HEAD)"
dirty="$(git -C "$src_root" status --porcelain -- src CMakeLists.txt | wc -l)"
echo "hangar: $bin_dir/$(basename "$src_bin"), built $(date -u -r "$src_bin" '+%Y-%m-%d %H:%M UTC')" \
     "in the work tree at $commit ($dirty uncommitted file(s) under src/ now), sha256" \
     "$(sha256sum "$hangar" | cut -c1-16)…"

data="$work/data"
"$hangar" admin user create bench --data-dir "$data" >/dev/null 2>&1
t0=$(date +%s.%N)
"$hangar" import "$repo" bench/forge --no-maintain --data-dir "$data" >/dev/null
t1=$(date +%s.%N)
git clone -q --mirror "$repo" "$work/mirror.git"
t2=$(date +%s.%N)
rm -rf "$work/mirror.git"
printf 'import (local path, one run): hangar import %.2f s, git clone --mirror %.2f s, ratio %.2fx\n' \
  "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "$(echo "($t1 - $t0) / ($t2 - $t1)" | bc -l)"
if [[ "${MAINTAIN:-1}" == 1 ]]; then
  t3=$(date +%s.%N)
  "$hangar" admin maintain bench/forge --full --data-dir "$data" >/dev/null
  printf 'maintenance (full: pack-refs, repack -a -d -f, commit-graph): %.2f s\n' "$(echo "$(date +%s.%N) - $t3" | bc)"
else
  echo "maintenance: skipped (MAINTAIN=0): pages on the source's fast-import pack layout"
fi
git_dir="$data/repos/models/bench/forge.git"
[[ -d "$git_dir" ]] || { echo "page_bench.sh: the import is not at $git_dir" >&2; exit 1; }

python3 "$here/page_bench.py" --hangar "$hangar" --data-dir "$data" --repo bench/forge \
  --git-dir "$git_dir" --user bench --runs "${RUNS:-30}" --cold-runs "${COLD_RUNS:-3}" \
  --blame-runs "${BLAME_RUNS:-3}" --archive-runs "${ARCHIVE_RUNS:-5}" \
  ${ONLY:+--only "$ONLY"} ${BENCH_JSON:+--json "$BENCH_JSON"}

if [[ "${IMPORT_BENCH:-1}" == 1 ]]; then
  echo
  "$here/import_bench.sh" "$hangar" "$repo"
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
