#!/usr/bin/env bash
# Issue #4, cold page speed: repository maintenance (docs/maintenance.md). A repository
# made by git fast-import (every file's newest version at the end of a forward delta chain)
# is imported with and without --no-maintain; `hangar admin maintain` runs on one repo and
# on all (--full, --light); pushes over HTTP while a maintenance repacks lose nothing; the
# GC loop of `hangar serve` maintains a repo that needs it; bad input gets a clear error.
# Every maintained repo must keep every ref and object (fsck, for-each-ref, rev-list) and
# end with one pack, a bitmap, a single-file commit-graph with Bloom filters and its newest
# blob stored whole.
# Usage: maintenance.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

DATA="$T/data"
mkdir -p "$DATA"

section "setup: a fast-import repository"
SRC="$T/source.git"
git init -q --bare -b main "$SRC"
python3 - <<'PY' | git --git-dir="$SRC" fast-import --quiet || die "fast-import failed"
import sys
w = sys.stdout.buffer.write
for i in range(1, 301):
    w(b"commit refs/heads/main\nmark :%d\ncommitter A <a@example.com> %d +0000\n" % (i, 1700000000 + i))
    w(b"data 8\nstep %03d\n" % i)
    for f in range(6):
        body = b"".join(b"file %d line %d omega step\n" % (f, k) for k in range(1, i + 1))
        w(b"M 100644 inline src/f%d.txt\ndata %d\n%s\n" % (f, len(body), body))
    if i == 150:
        w(b"reset refs/heads/old\nfrom :150\n\n")
        w(b"tag v1\nfrom :150\ntagger A <a@example.com> 1700000150 +0000\ndata 3\nv1\n\n")
PY
info "source: $(git --git-dir="$SRC" rev-list --count --all) commits, $(git --git-dir="$SRC" for-each-ref | wc -l) refs"

refs_of() { git --git-dir="$1" for-each-ref --format='%(objectname) %(objecttype) %(refname)'; }
objects_of() { git --git-dir="$1" rev-list --all --objects | sort; }
tip_base() { echo main:src/f0.txt | git --git-dir="$1" cat-file --batch-check='%(deltabase)'; }
packs_of() { ls "$1/objects/pack" | grep -c '\.pack$'; }
ZERO=0000000000000000000000000000000000000000
hub_import() { "$HANGAR_BIN" import "$@" --data-dir "$DATA" >"$T/import.out" 2>"$T/import.err" </dev/null; }
maintain() { "$HANGAR_BIN" admin maintain "$@" --data-dir "$DATA" >"$T/m.out" 2>"$T/m.err" </dev/null; }
repo_dir() { printf '%s/repos/models/alice/%s.git' "$DATA" "$1"; }

check_source_tip_is_a_delta() { [[ "$(tip_base "$SRC")" != "$ZERO" ]]; }
check_true "the source stores the newest src/f0.txt as a delta (fast-import's layout)" \
  check_source_tip_is_a_delta

# check_maintained NAME DIR: DIR holds the source's refs and objects in a maintained layout.
check_maintained() {
  local name="$1" dir="$2"
  check_true "$name: git fsck --full" git --git-dir="$dir" fsck --full --no-progress
  check_eq "$name: every ref, same object" "$(refs_of "$SRC")" "$(refs_of "$dir")"
  check_eq "$name: rev-list --all --objects identical" "$(objects_of "$SRC")" "$(objects_of "$dir")"
  check_eq "$name: one pack" 1 "$(packs_of "$dir")"
  check_eq "$name: with a bitmap" 1 "$(ls "$dir/objects/pack" | grep -c '\.bitmap$')"
  check_eq "$name: newest src/f0.txt stored whole (delta base 0)" "$ZERO" "$(tip_base "$dir")"
  check_true "$name: single-file commit-graph with Bloom filters" grep -q BDAT "$dir/objects/info/commit-graph"
  check_false "$name: no split commit-graph chain" test -e "$dir/objects/info/commit-graphs"
  check_true "$name: maintenance recorded" grep -q '^last_full_unix=[1-9]' "$dir/hangar-maintenance"
}

new_user alice
ALICE="$(new_token alice --role write)"

section "hangar import maintains by default"
hub_import "$SRC" alice/m
check_eq "hangar import SOURCE alice/m exits 0" 0 "$?"
check_match "  says what it imported" 'imported .* as alice/m' "$(cat "$T/import.out")"
check_match "  prints the time of each step" \
  'pack-refs +[0-9.]+ s.*repack +[0-9.]+ s.*commit-graph +[0-9.]+ s' "$(tr '\n' ' ' <"$T/import.out")"
check_match "  and the summary" 'maintained alice/m: full: .*packs [0-9]+ → 1, [0-9]+ objects' "$(cat "$T/import.out")"
check_maintained "alice/m" "$(repo_dir m)"

section "hangar import --no-maintain keeps the source's layout"
hub_import "$SRC" alice/raw --no-maintain
check_eq "hangar import --no-maintain exits 0" 0 "$?"
check_false "  no maintenance line" grep -q maintain "$T/import.out"
check_eq "  newest src/f0.txt still a delta" "$(tip_base "$SRC")" "$(tip_base "$(repo_dir raw)")"
check_false "  no maintenance record" test -e "$(repo_dir raw)/hangar-maintenance"

section "hangar admin maintain"
maintain alice/raw
check_eq "admin maintain alice/raw exits 0" 0 "$?"
check_match "  prints the steps" '^alice/raw: full: pack-refs .* repack .* commit-graph' "$(cat "$T/m.out")"
check_maintained "alice/raw" "$(repo_dir raw)"
maintain alice/raw --full
check_eq "admin maintain again (idempotent) exits 0" 0 "$?"
check_maintained "alice/raw, twice" "$(repo_dir raw)"
maintain alice/raw --light
check_eq "admin maintain --light exits 0" 0 "$?"
check_match "  a light run" '^alice/raw: light:' "$(cat "$T/m.out")"
check_eq "  still one pack" 1 "$(packs_of "$(repo_dir raw)")"
maintain --all
check_eq "admin maintain --all exits 0" 0 "$?"
check_eq "  one line per repo" "alice/m alice/raw" "$(cut -d: -f1 "$T/m.out" | sort | tr '\n' ' ' | sed 's/ $//')"

section "bad input"
maintain alice/nope
check_eq "an unknown repo exits 2" 2 "$?"
check_match "  says so" 'repo alice/nope: .*not found' "$(cat "$T/m.err")"
maintain alice/raw --full --light
check_eq "--full with --light exits 2" 2 "$?"
check_match "  says they exclude each other" '\-\-full and \-\-light exclude each other' "$(cat "$T/m.err")"
maintain
check_eq "no repo and no --all exits 2" 2 "$?"
check_match "  says what to give" 'NS/NAME, or --all' "$(cat "$T/m.err")"
maintain alice/raw --all
check_eq "a repo and --all exits 2" 2 "$?"
maintain alice
check_eq "a repo without NAME exits 2" 2 "$?"

section "pushes over HTTP during a maintenance lose nothing"
start_server "$DATA" --set gc.interval_s=0 || die "hangar serve did not start"
HELPER="$(cred_helper alice "$ALICE")"
C="$T/client"
gitc "$HELPER" clone -q "$BASE/alice/raw" "$C" >"$T/clone.out" 2>&1 || die "clone" "$(brief "$T/clone.out" 600)"
git -C "$C" config user.name P && git -C "$C" config user.email p@example.com
"$HANGAR_BIN" admin maintain alice/raw --data-dir "$DATA" >"$T/bg.out" 2>&1 &
BG=$!
pushes=0
push_failed=0
while alive "$BG" || ((pushes < 3)); do
  pushes=$((pushes + 1))
  echo "push $pushes" >"$C/p.txt"
  git -C "$C" add p.txt && git -C "$C" commit -q -m "push $pushes"
  gitc "$HELPER" -C "$C" push -q origin "HEAD:main" "HEAD:refs/heads/p$pushes" >"$T/push.out" 2>&1 ||
    { push_failed=1; info "push $pushes: $(brief "$T/push.out" 300)"; }
done
wait "$BG"
check_eq "the concurrent maintenance exits 0" 0 "$?"
check_eq "every push ($pushes) succeeded" 0 "$push_failed"
RAW="$(repo_dir raw)"
check_true "  git fsck --full" git --git-dir="$RAW" fsck --full --no-progress
check_eq "  main is the last push" "$(git -C "$C" rev-parse HEAD)" "$(git --git-dir="$RAW" rev-parse main)"
check_eq "  every pushed branch is there" "$pushes" "$(git --git-dir="$RAW" for-each-ref refs/heads/p* | wc -l)"
check_eq "  every object the client has" "$(git -C "$C" rev-list --all --objects | sort)" \
  "$(git --git-dir="$RAW" rev-list --all --objects | sort)"
stop_server

section "the GC loop of hangar serve maintains a repo that needs it"
hub_import "$SRC" alice/late --no-maintain
check_eq "import alice/late --no-maintain exits 0" 0 "$?"
start_server "$DATA" --set gc.interval_s=1 || die "hangar serve did not start"
late_maintained() { test -e "$(repo_dir late)/hangar-maintenance"; }
if wait_until 60 late_maintained; then
  pass "  alice/late maintained within ${WAITED_MS} ms"
  check_maintained "alice/late" "$(repo_dir late)"
else
  fail "  alice/late maintained within 60 s" "$(tail -c 600 "$SERVER_ERR")"
fi
check_true "the server stops cleanly afterwards (SIGTERM, exit 0)" stop_server

finish
