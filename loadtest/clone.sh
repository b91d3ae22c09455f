#!/usr/bin/env bash
# Clone of a 10,000-commit repo from Hangar vs from `git http-backend` (behind nginx +
# fcgiwrap) serving the very same bare repo: the one inside Hangar's data dir after the
# push. Median of 5 clones each, alternating, and the ratio.
#
#   loadtest/clone.sh
#   BENCH_QUICK=1 loadtest/clone.sh       # 1,000 commits, 3 clones each
source "$(dirname "$0")/lib.sh"

RUNS=5
if [ "${BENCH_QUICK:-0}" = 1 ]; then export BENCH_COMMITS=${BENCH_COMMITS:-1000}; RUNS=3; fi
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

# The bare repo Hangar stored (DESIGN.md: repos/models/<ns>/<name>.git).
stored="$LT_TMP/data/repos/models/bench/$NAME.git"
[ -d "$stored" ] || stored=$(find "$LT_TMP/data" -type d -name "$NAME.git" | head -1)
[ -d "$stored" ] || { echo "cannot find Hangar's bare repo for $NAME" >&2; exit 1; }
root=$(dirname "$stored")
git_backend_start "$root"
log "git http-backend at $NGINX_URL (root $root)"

# Anonymous if the repo is public (as the peer is); else with the token.
HURL="$HANGAR_URL/bench/$NAME"
git ls-remote "$HURL" >/dev/null 2>&1 || HURL=$(hangar_git_url "$NAME")
PURL="$NGINX_URL/$NAME.git"

clone_s() {  # clone_s URL -> seconds; checks the commit count once
  local dest="$LT_TMP/clone" t0 t1
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
result rss_peak_clone "$(( $(hangar_hwm_kib) / 1024 ))" MiB "" "VmHWM of hangar serve after push + $((RUNS + 1)) clones (pack-objects runs as a child process)"
hangar_stop
