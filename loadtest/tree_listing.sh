#!/usr/bin/env bash
# Full recursive, paginated tree listing of a 100,000-file repo (one commit, nested
# dirs), following Link rel="next" to the end: median of 5 runs, plus the first (cold)
# run and the push that loaded the repo. Then the reference's scenario: 4 clients listing
# at once, 5 listings each in a row, p95 of the 20 and the errors (a failed or incomplete
# listing).
#
#   loadtest/tree_listing.sh
#   BENCH_QUICK=1 loadtest/tree_listing.sh     # 10,000 files, 3 runs; 4 x 2 at once
#
# No peer: git has no paginated-listing service. For context the script prints how
# long `git ls-tree -r -t` takes on the same bare repo (the object-read floor).
source "$(dirname "$0")/lib.sh"

RUNS=5; CLIENTS=4; PER_CLIENT=5
if [ "${BENCH_QUICK:-0}" = 1 ]; then export BENCH_FILES=${BENCH_FILES:-10000}; RUNS=3; PER_CLIENT=2; fi
NFILES=${BENCH_FILES:-100000}
REPO=$(BENCH_FILES=$NFILES "$LT_ROOT/bench/gen_repo.sh" many-files)
NAME=many-files

hangar_admin_token "$LT_TMP/data"
hangar_start "$LT_TMP/data"
log "hangar at $HANGAR_URL"
hangar_create_repo "$NAME"
log "pushing $NFILES-file repo"
if push_s=$(hangar_push "$REPO" "$NAME"); then
  result tree_push_seconds "$push_s" s "" "git push of the $NFILES-file repo ($(du -sh "$REPO/objects/pack" | cut -f1) pack)"
else
  echo "push failed; cannot measure the listing" >&2
  exit 1
fi

URL="$HANGAR_URL/api/models/bench/$NAME/tree/main?recursive=true"
expect_files=$((NFILES + 1))  # + README.md
python3 "$LT_ROOT/bench/list_tree.py" --token "$HANGAR_TOKEN" --runs $((RUNS + 1)) "$URL" | tee "$LT_TMP/runs.jsonl" >&2
python3 - "$LT_TMP/runs.jsonl" "$expect_files" >"$LT_TMP/summary" <<'EOF'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
cold, warm = runs[0], runs[1:]
ok = all(r["files"] == int(sys.argv[2]) for r in runs)
print(cold["seconds"], statistics.median(r["seconds"] for r in warm), warm[0]["pages"], warm[0]["entries"],
      warm[0]["files"], warm[0]["dirs"], "complete" if ok else "INCOMPLETE")
EOF
read -r cold med pages entries files dirs complete <"$LT_TMP/summary"

t0=$(now_s); git -C "$REPO" ls-tree -r -t main | wc -l >/dev/null; t1=$(now_s)
lstree=$(elapsed "$t0" "$t1")

result tree_listing_seconds "$med" s "< 0.5 s (100,000 files)" \
  "median of $RUNS; $pages pages, $entries entries ($files files, $dirs dirs, $complete); cold first run ${cold}s; git ls-tree -r -t: ${lstree}s"
# --- 4 clients at once, each with its own connection (list_tree.py), PER_CLIENT listings
# in a row; every listing must end complete.
log "$CLIENTS clients listing at once, $PER_CLIENT times each"
pids=()
for c in $(seq "$CLIENTS"); do
  python3 "$LT_ROOT/bench/list_tree.py" --token "$HANGAR_TOKEN" --runs "$PER_CLIENT" --keep-going "$URL" \
    >"$LT_TMP/c$c.jsonl" &
  pids+=("$!"); LT_PIDS+=("$!")
done
for p in "${pids[@]}"; do wait "$p" || true; done  # a client that died shows as missing runs
cat "$LT_TMP"/c[0-9]*.jsonl >"$LT_TMP/all.jsonl"
jq -r --argjson n "$expect_files" 'select(.error == null and .files == $n) | .seconds' \
  "$LT_TMP/all.jsonl" >"$LT_TMP/ok"
ok=$(wc -l <"$LT_TMP/ok")
errors=$((CLIENTS * PER_CLIENT - ok))
first_error=$(jq -r 'select(.error != null) | .error' "$LT_TMP/all.jsonl" | head -1 | tr '\t|' '  ' | cut -c1-120)
p95=$(percentile 95 <"$LT_TMP/ok"); p50=$(median <"$LT_TMP/ok"); max=$(percentile 100 <"$LT_TMP/ok")
result tree_listing_4x_p95_seconds "$p95" s "" \
  "$CLIENTS clients at once, $PER_CLIENT full listings each: p95 of $ok complete ones (p50 ${p50}s, max ${max}s); single client median ${med}s"
result tree_listing_4x_errors "$errors" "" "0" \
  "listings of the $CLIENTS x $PER_CLIENT that failed or came back incomplete${first_error:+ (first: $first_error)}"
result rss_peak_tree "$(( $(hangar_hwm_kib) / 1024 ))" MiB "" "largest VmHWM of the hub after push + listings ($(hub_hwm_note))"
hangar_stop
