#!/usr/bin/env bash
# Issue #15: the conversion survives a kill -9 of the hub mid-job. A dataset of 3,000,000
# rows (flights-3m.parquet, rewritten in small shards so the export takes a while) is
# pushed; once the job is writing shards the hub is killed with SIGKILL. Then
# refs/convert/parquet must not exist (the ref moves once, after every shard is stored),
# the restarted hub must take the unfinished export up again by itself (no new push) and
# finish it, and the export must be whole: every row there, the branch holding exactly the
# files /parquet lists.
#
# Usage: viewer_crash.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

fetch_inputs
FLIGHTS="$INPUTS/tables/flights-3m.parquet"
[[ -f "$FLIGHTS" ]] || die "input $FLIGHTS missing"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
# Small shards: the export writes many files, so there is a window to kill it in.
export HANGAR_VIEWER_ROW_GROUP_ROWS=4096 HANGAR_VIEWER_ROW_GROUPS_PER_FILE=4
start_server "$DATA" || die "hangar serve did not start"
HA="$(cred_helper alice "$ALICE")"
must_create "$ALICE" flights alice dataset false
W="$T/flights"
lfs_clone "$HA" "$BASE/datasets/alice/flights" "$W" '*.parquet'
mkdir -p "$W/data"
cp "$FLIGHTS" "$W/data/train.parquet"
commit_push "$HA" "$W" flights

section "kill -9 while the export writes its shards"
WORK="$DATA/viewer/work"
writing() { [[ -n "$(find "$WORK" -name '*.parquet' -path '*/out/*' 2>/dev/null | head -n 1)" ]]; }
if wait_until 120 writing; then
  pass "the export is writing shards ${WAITED_MS} ms after the push"
else
  die "the export never started writing shards"
fi
kill -KILL "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null
SERVER_PID=""
pass "hub killed with SIGKILL mid-export"
check_eq "refs/convert/parquet was not written" "" \
  "$(git --git-dir="$DATA/repos/datasets/alice/flights.git" for-each-ref refs/convert 2>&1)"

section "restart: the unfinished export is taken up again"
start_server "$DATA" || die "hangar serve did not restart"
# Done: every split Ready, and the job returned (its commit made, its attempt mark gone).
done_export() {
  req GET "$BASE/size?dataset=alice/flights"
  [[ "$ST" == 200 && "$(jbody '.pending | length')" == 0 ]] &&
    [[ -z "$(ls "$WORK"/*.attempt 2>/dev/null)" ]]
}
if wait_until 240 done_export; then
  pass "the export finished after the restart, with no new push (${WAITED_MS} ms)"
else
  _fail_http "the export finished after the restart" "waited 240 s"
fi
check_hdr "X-Revision is the pushed commit" X-Revision "$HEAD_SHA"
check_json "all 3,000,000 rows" .size.dataset.num_rows 3000000
check_json "nothing failed" '.failed | length' 0
req GET "$BASE/rows?dataset=alice/flights&config=default&split=train&offset=2999900&length=100"
check_json "the last rows read" '[.rows[].row_idx] | [first, last, length] | join(",")' "2999900,2999999,100"
req GET "$BASE/parquet?dataset=alice/flights"
jq -r '.parquet_files[] | "\(.config)/\(.split)/\(.filename)"' <"$BODY" | sort >"$T/listed"
git --git-dir="$DATA/repos/datasets/alice/flights.git" ls-tree -r --name-only refs/convert/parquet |
  grep -v '^.gitattributes$' | sort >"$T/branch"
check_eq "the branch holds exactly the files /parquet lists ($(wc -l <"$T/listed"))" \
  "$(cat "$T/listed")" "$(cat "$T/branch")"
G=(git --git-dir="$DATA/repos/datasets/alice/flights.git")
check_eq "the branch is one export commit on an empty root (none from the dead job)" 2 \
  "$("${G[@]}" rev-list --count refs/convert/parquet)"
check_eq "… whose root holds nothing of the dataset's files" "" \
  "$("${G[@]}" ls-tree "$("${G[@]}" rev-list --max-parents=0 refs/convert/parquet)")"
check_eq "the work dir of the killed job is gone" "" "$(ls -A "$WORK" 2>/dev/null)"

section "an export that keeps killing the hub is not run a third time"
EXPORT1="$("${G[@]}" rev-parse refs/convert/parquet)"
cp "$FLIGHTS" "$W/data/more.parquet"
git -C "$W" remote set-url origin "$BASE/datasets/alice/flights"  # the restarted hub's port
commit_push "$HA" "$W" more
HEAD2="$HEAD_SHA"
wait_until 120 writing || die "the second export never started writing shards"
kill -KILL "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null; SERVER_PID=""
ATTEMPT="$(ls "$WORK"/*.attempt 2>/dev/null | head -n 1)"
check_eq "the killed run left its attempt mark" "$HEAD2 1" "$(cat "$ATTEMPT" 2>/dev/null)"
# As if the restart had died on it too.
echo "$HEAD2 2" >"$ATTEMPT"
start_server "$DATA" || die "hangar serve did not restart"
given_up() { req GET "$BASE/size?dataset=alice/flights"; [[ "$ST" == 500 && "$(hdr X-Error-Code)" == UnexpectedError ]]; }
wait_until 60 given_up && pass "after two deaths the export is recorded as failed, not run" ||
  _fail_http "the export is recorded as failed" "waited 60 s"
check_json "… with a clear error" .error \
  "the conversion of this commit stopped the server; it is tried again after the next push"
req GET "$BASE/is-valid?dataset=alice/flights"
check_json "is-valid: nothing to show" '[.viewer, .preview, .filter] | any' false
check_eq "… and refs/convert/parquet still holds the last whole export" "$EXPORT1" \
  "$("${G[@]}" rev-parse refs/convert/parquet)"
git -C "$W" rm -q data/more.parquet
git -C "$W" remote set-url origin "$BASE/datasets/alice/flights"
commit_push "$HA" "$W" "drop more"
wait_until 240 done_export && pass "the next push exports again" ||
  _fail_http "the next push exports again" "waited 240 s"
check_json "… all its rows" .size.dataset.num_rows 3000000

finish
