#!/usr/bin/env bash
# Formats every C++ file of the repo with clang-format and .clang-format (issue #14).
# usage: scripts/format.sh           rewrite the files in place
#        scripts/format.sh --list    print the files it formats (tests/format uses it)
set -euo pipefail
cd "$(dirname "$0")/.."
list() {
  # --others: new files not yet added are formatted before their first commit.
  git ls-files --cached --others --exclude-standard -- 'src/*.cc' 'src/*.h' 'tests/*.cc' 'tests/*.h' 'bench/*.cc' 'bench/*.h' |
    grep -v -e '/node_modules/' -e '^tests/layering/fixture/'
}
if [[ "${1:-}" == --list ]]; then list; exit 0; fi
list | xargs -r clang-format -i
