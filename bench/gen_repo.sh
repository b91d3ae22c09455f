#!/usr/bin/env bash
# Generates (once) and caches the benchmark repositories as bare git repos, and prints
# the path of the one asked for.
#
#   bench/gen_repo.sh many-files   # 100,000 files in one commit, nested dirs (+ README.md)
#   bench/gen_repo.sh history      # 10,000 commits, 3 files + config.json change per commit
#
# Cache: ${HANGAR_BENCH_CACHE:-$HOME/.cache/hangar-bench}/repos/<kind>-<size>.git, outside
# the work tree. Sizes can be lowered for a quick dry run: BENCH_FILES=1000,
# BENCH_COMMITS=100. Delete the cache directory to regenerate.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
kind="${1:?usage: gen_repo.sh many-files|history}"
cache="${HANGAR_BENCH_CACHE:-$HOME/.cache/hangar-bench}/repos"
mkdir -p "$cache"
GEN_VERSION=1

case "$kind" in
  many-files) size="${BENCH_FILES:-100000}"; args=(--files "$size") ;;
  history)    size="${BENCH_COMMITS:-10000}"; args=(--commits "$size") ;;
  *) echo "unknown kind $kind" >&2; exit 2 ;;
esac
repo="$cache/$kind-$size.git"
stamp="$repo/bench-generated-v$GEN_VERSION"
if [ -f "$stamp" ]; then
  echo "$repo"
  exit 0
fi

rm -rf "$repo" "$repo.tmp"
git init -q --bare -b main "$repo.tmp"
start=$(date +%s.%N)
python3 "$here/gen_repo.py" "$kind" "${args[@]}" |
  git -C "$repo.tmp" fast-import --quiet --done
# fast-import writes a pack with shallow deltas; repack as a gc'd repo would be, so
# pushes and clones start from a realistic pack. Bounded: small repos, -j1 to be kind
# to a shared 2-core machine.
git -C "$repo.tmp" -c pack.threads=1 repack -q -a -d -f --window=10 --depth=50
git -C "$repo.tmp" symbolic-ref HEAD refs/heads/main
end=$(date +%s.%N)
touch "$repo.tmp/bench-generated-v$GEN_VERSION"
mv "$repo.tmp" "$repo"
printf 'generated %s in %.1f s: %s objects, %s\n' "$kind" "$(echo "$end - $start" | bc)" \
  "$(git -C "$repo" count-objects -v | awk '/^in-pack/ {print $2}')" \
  "$(du -sh "$repo" | cut -f1)" >&2
echo "$repo"
