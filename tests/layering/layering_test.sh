#!/usr/bin/env bash
# The layering of src/ (issue #14 point 4): every #include "…" in src/, and every
# target_link_libraries edge of its CMakeLists.txt files, is an edge the table in
# docs/architecture.md allows, and the checker does catch a forbidden one (planted in
# tests/layering/fixture/src: the includes db → http and services/auth → services/repo, a
# domain above it, and the link hangar_db → hangar_http).
# usage: layering_test.sh REPO_ROOT
set -uo pipefail
root=${1:?usage: layering_test.sh REPO_ROOT}
check="$root/tests/layering/check_layering.py"
doc="$root/docs/architecture.md"
failed=0
out=$(python3 "$check" "$doc" "$root/src")
rc=$?
if [[ $rc -ne 0 ]]; then
  echo "FAIL  src/ has includes or links the layering table does not allow (exit $rc):"
  echo "$out"
  failed=1
else
  echo "PASS  every include and link in src/ is allowed by docs/architecture.md"
fi
out=$(python3 "$check" "$doc" "$root/tests/layering/fixture/src")
rc=$?
want="$root/tests/layering/fixture/src/db/bad_store.cc:3: db may not include http/request.h
$root/tests/layering/fixture/src/services/auth/bad_rule.cc:3: services/auth may not include services/repo/repo_service.h
$root/tests/layering/fixture/src/db/CMakeLists.txt:4: db may not link hangar_http"
if [[ $rc -eq 1 && "$out" == "$want" ]]; then
  echo "PASS  the planted db → http and services/auth → services/repo includes and the db → http link are reported, and nothing else"
else
  echo "FAIL  the checker on the fixture: exit $rc (want 1), output:"
  echo "$out"
  echo "  want: $want"
  failed=1
fi
exit $failed
