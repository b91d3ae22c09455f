#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite: every unit and integration
# test (ctest), then every fuzz target for 40 s from its corpus (scripts/fuzz.sh), then the
# unit tests under ASan + UBSan (scripts/sanitize.sh; docs/fuzzing.md). Arguments go to
# ctest and skip the other two: `scripts/test.sh -R s3`. Every part runs even when an
# earlier one failed; the exit status is non-zero if any did.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh || exit 1
scripts/build.sh || exit 1
(cd build && ctest --output-on-failure -j 2 "$@")
rc=$?
if [ $# -eq 0 ]; then
  scripts/fuzz.sh 40 || rc=1
  scripts/sanitize.sh || rc=1
fi
exit $rc
