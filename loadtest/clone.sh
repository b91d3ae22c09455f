#!/usr/bin/env bash
# Clone of a 10,000-commit repo from Hangar vs from `git http-backend` (behind nginx +
# fcgiwrap) serving the very same bare repo: the one inside Hangar's data dir after the
# push. Median of 5 clones each, alternating, and the ratio. Then the reference's
# scenario: 4 clients cloning at once, 5 clones each in a row, p95 of the 20 and the
# errors (a clone that fails or lacks commits), from Hangar and then from the peer.
#
#   loadtest/clone.sh
#   BENCH_QUICK=1 loadtest/clone.sh       # 1,000 commits, 3 clones each; 4 x 2 at once
source "$(dirname "$0")/lib.sh"

RUNS=5; CLIENTS=4; PER_CLIENT=5
if [ "${BENCH_QUICK:-0}" = 1 ]; then export BENCH_COMMITS=${BENCH_COMMITS:-1000}; RUNS=3; PER_CLIENT=2; fi
NCOMMITS=${BENCH_COMMITS:-10000}
REPO=$(BENCH_COMMITS=$NCOMMITS "$LT_ROOT/bench/gen_repo.sh" history)
NAME=history

hangar_admin_token "$LT_TMP/data"
hangar_start "$LT_TMP/data"
log "hangar at $HANGAR_URL"
hangar_create_repo "$NAME"
log "pushing $NCOMMITS-commit repo"
push_s=$(hangar_push "$REPO" "$NAME")
result clone_push_seconds "$push_s" s "" "git push of the $NCOMMITS-commit repo"

# The bare repo Hangar stored (DESIGN.md: repos/models/<ns>/<name>.git), in the data dir
# of the one server or the deployment's shared volume (lib.sh HANGAR_DATA).
stored="$HANGAR_DATA/repos/models/bench/$NAME.git"
[ -d "$stored" ] || stored=$(find "$HANGAR_DATA" -type d -name "$NAME.git" | head -1)
[ -d "$stored" ] || { echo "cannot find Hangar's bare repo for $NAME" >&2; exit 1; }
root=$(dirname "$stored")
git_backend_start "$root"
log "git http-backend at $NGINX_URL (root $root)"

# Anonymous if the repo is public (as the peer is); else with the token.
HURL="$HANGAR_URL/bench/$NAME"
git ls-remote "$HURL" >/dev/null 2>&1 || HURL=$(hangar_git_url "$NAME")
PURL="$NGINX_URL/$NAME.git"

clone_s() {  # clone_s URL [DEST] -> seconds; checks the commit count
  local dest="${2:-$LT_TMP/clone}" t0 t1
  rm -rf "$dest"
  t0=$(now_s)
  GIT_TERMINAL_PROMPT=0 timeout 300 git clone -q --bare "$1" "$dest" >&2
  t1=$(now_s)
  local n
  n=$(git -C "$dest" rev-list --count main)
  [ "$n" = "$NCOMMITS" ] || { echo "clone of $1 has $n commits, expected $NCOMMITS" >&2; return 1; }
  rm -rf "$dest"
  elapsed "$t0" "$t1"
}

: >"$LT_TMP/h"; : >"$LT_TMP/p"
clone_s "$HURL" >/dev/null; clone_s "$PURL" >/dev/null  # warm page cache, one each
for i in $(seq "$RUNS"); do
  h=$(clone_s "$HURL"); p=$(clone_s "$PURL")
  echo "$h" >>"$LT_TMP/h"; echo "$p" >>"$LT_TMP/p"
  log "clone $i: hangar ${h}s  http-backend ${p}s"
done
mh=$(median <"$LT_TMP/h"); mp=$(median <"$LT_TMP/p")
ratio=$(python3 -c "import sys; print('%.3f' % (float(sys.argv[1])/float(sys.argv[2])))" "$mh" "$mp")
result clone_seconds "$mh" s "within 5% of git http-backend (ratio <= 1.05)" \
  "median of $RUNS; git http-backend ${mp}s; ratio ${ratio}; hangar runs: $(paste -sd' ' "$LT_TMP/h")"
result clone_ratio "$ratio" x "<= 1.05" "hangar / git http-backend (nginx+fcgiwrap), same bare repo, git clone --bare"
# clones_4x URL TAG — CLIENTS clients at once, each cloning URL PER_CLIENT times in a row
# into a directory of its own: "ok SECONDS" or "error" per clone in $LT_TMP/TAG.*; sets
# P95 (over the good clones), P50, OK and ERRORS.
clones_4x() {
  local url=$1 tag=$2 c pids=()
  for c in $(seq "$CLIENTS"); do
    (
      for _ in $(seq "$PER_CLIENT"); do
        if s=$(clone_s "$url" "$LT_TMP/clone.$tag.$c"); then echo "ok $s"; else echo error; fi
      done
    ) >"$LT_TMP/$tag.$c" 2>>"$LT_TMP/$tag.err" &
    pids+=("$!")
  done
  for c in "${pids[@]}"; do wait "$c" || true; done
  rm -rf "$LT_TMP"/clone."$tag".*
  awk '$1 == "ok" { print $2 }' "$LT_TMP/$tag".[0-9]* >"$LT_TMP/$tag.ok"
  OK=$(wc -l <"$LT_TMP/$tag.ok")
  ERRORS=$((CLIENTS * PER_CLIENT - OK))
  P95=$(percentile 95 <"$LT_TMP/$tag.ok"); P50=$(median <"$LT_TMP/$tag.ok")
}
log "$CLIENTS clients cloning at once, $PER_CLIENT times each: hangar, then git http-backend"
clones_4x "$HURL" h4
h_p95=$P95 h_p50=$P50 h_ok=$OK h_errors=$ERRORS
clones_4x "$PURL" p4
first_error=$(grep -m1 -v '^$' "$LT_TMP/h4.err" 2>/dev/null | tr '\t|' '  ' | cut -c1-120 || true)
result clone_4x_p95_seconds "$h_p95" s "" \
  "$CLIENTS clients at once, $PER_CLIENT clones each: p95 of $h_ok good ones (p50 ${h_p50}s); git http-backend the same way: p95 ${P95}s, p50 ${P50}s, $ERRORS errors"
result clone_4x_errors "$h_errors" "" "0" \
  "clones of the $CLIENTS x $PER_CLIENT from hangar that failed or lacked commits${first_error:+ (first message: $first_error)}"
result rss_peak_clone "$(( $(hangar_hwm_kib) / 1024 ))" MiB "" "largest VmHWM of the hub after push + $((RUNS + 1)) clones + the 4-client phase (pack-objects runs as a child process; $(hub_hwm_note))"
hangar_stop
