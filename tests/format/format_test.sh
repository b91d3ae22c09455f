#!/usr/bin/env bash
# The code's formatting (issue #14 point 7): every C++ file under src/, tests/ and bench/
# is as clang-format lays it out with the repo's .clang-format (Google base, 100 columns).
# To fix: clang-format -i on the files it names (scripts/format.sh does the whole tree).
# usage: format_test.sh REPO_ROOT
set -uo pipefail
root=${1:?usage: format_test.sh REPO_ROOT}
cd "$root" || exit 2
command -v clang-format >/dev/null || { echo "FAIL  clang-format is not installed (scripts/install-deps.sh installs it)"; exit 1; }
mapfile -t files < <(bash scripts/format.sh --list)
out=$(clang-format --dry-run --Werror "${files[@]}" 2>&1)
if [[ $? -ne 0 ]]; then
  echo "FAIL  files not as clang-format lays them out:"
  grep -oE '^[^ :]+\.(cc|h):[0-9]+' <<<"$out" | cut -d: -f1 | sort -u | sed 's/^/  /'
  exit 1
fi
echo "PASS  ${#files[@]} files are formatted"
