#!/usr/bin/env bash
# Generates the forge benchmark repository (issue #4 point 3) as a bare repository at
# OUT_DIR, deterministically (bench/forge/make_repo.py documents its shape): >= 80,000
# commits, 1,100 refs, a 7,000+ line src/big.py with thousands of versions, a model card,
# renames, a binary file; then writes the commit-graph with changed-path Bloom filters and
# prints the counts.
#
#   bench/forge/make_repo.sh OUT_DIR            # 80,000 mainline commits (~80,800 in all)
#   FORGE_COMMITS=5000 bench/forge/make_repo.sh OUT_DIR   # a quick, smaller variant
#
# OUT_DIR must not exist, unless it holds a repository this script made with the same
# settings: then it is kept and only the counts are printed (a cache).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: make_repo.sh OUT_DIR}"
commits="${FORGE_COMMITS:-80000}"
GEN_VERSION=1
stamp="$out/forge-generated-v$GEN_VERSION-$commits"

counts() {
  local c r b t l
  c="$(git --git-dir="$out" rev-list --count --all)"
  r="$(git --git-dir="$out" for-each-ref | wc -l)"
  b="$(git --git-dir="$out" for-each-ref refs/heads | wc -l)"
  t="$(git --git-dir="$out" for-each-ref refs/tags | wc -l)"
  l="$(git --git-dir="$out" cat-file blob main:src/big.py | wc -l)"
  echo "repository: $out"
  echo "commits: $c  refs: $r (branches $b, tags $t)  src/big.py: $l lines," \
       "$(git --git-dir="$out" rev-list --count main -- src/big.py) commits touching it"
  echo "main: $(git --git-dir="$out" rev-parse main)  size: $(du -sh "$out" | cut -f1)"
}

if [[ -e "$out" ]]; then
  if [[ -f "$stamp" ]]; then
    counts
    exit 0
  fi
  echo "make_repo.sh: $out exists and is not this generator's output; remove it first" >&2
  exit 2
fi

export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
unset GIT_DIR GIT_WORK_TREE
start=$(date +%s.%N)
tmp="$out.tmp-$$"
trap 'rm -rf "$tmp"' EXIT
git init -q --bare -b main "$tmp"
python3 "$here/make_repo.py" --commits "$commits" |
  git --git-dir="$tmp" fast-import --quiet --done
gen=$(date +%s.%N)
git --git-dir="$tmp" commit-graph write --reachable --changed-paths --no-progress
graph=$(date +%s.%N)
touch "$tmp/forge-generated-v$GEN_VERSION-$commits"
mv "$tmp" "$out"
trap - EXIT
printf 'generated in %.1f s (fast-import %.1f s, commit-graph %.1f s)\n' \
  "$(echo "$graph - $start" | bc)" "$(echo "$gen - $start" | bc)" "$(echo "$graph - $gen" | bc)"
counts
