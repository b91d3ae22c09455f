#!/usr/bin/env bash
# Issue #4 point 2: `hangar import SOURCE NS/NAME` (docs/import.md). A generated repository
# with several branches, lightweight and annotated tags and merges is imported once with no
# server running and once beside a running one; every ref and every ref's commit count must
# match the source, the commit-graph must carry Bloom filters, the repo must be listed by
# the API and clonable with git. Bad sources (missing, a disallowed transport) and an
# existing name must fail clearly and leave nothing: no row (API 404), no directory, no
# temporaries.
# Usage: import.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

DATA="$T/data"
mkdir -p "$DATA"

section "setup: a source repository with branches, tags and merges"
SRC="$T/source"
(
  set -e
  git init -q -b trunk "$SRC"
  cd "$SRC"
  c() { t=$1; shift; GIT_AUTHOR_DATE="@$t +0000" GIT_COMMITTER_DATE="@$t +0000" git commit -q "$@"; }
  printf -- '---\nlicense: mit\n---\n# Imported\n' >README.md
  git add README.md && c 1700000000 -m "card"
  for i in 1 2 3; do echo "step $i" >>log.txt; git add log.txt; c $((1700000000 + i * 60)) -m "step $i"; done
  git tag light-1
  git checkout -q -b feature/x
  for i in 1 2; do echo "x $i" >>x.txt; git add x.txt; c $((1700001000 + i * 60)) -m "x $i"; done
  git checkout -q -b dev trunk~1
  echo dev >dev.txt && git add dev.txt && c 1700002000 -m "dev work"
  git checkout -q trunk
  GIT_AUTHOR_DATE="@1700003000 +0000" GIT_COMMITTER_DATE="@1700003000 +0000" git merge -q --no-ff -m "merge feature/x" feature/x
  GIT_AUTHOR_DATE="@1700003100 +0000" GIT_COMMITTER_DATE="@1700003100 +0000" git merge -q --no-ff -m "merge dev" dev
  GIT_COMMITTER_DATE="@1700003200 +0000" git tag -a -m "release 1.0" v1.0
  git tag -a -m "old release" v0.9 trunk~2
  git branch release/1.0 v0.9
  git update-ref refs/pr/7 feature/x
) >"$T/setup.out" 2>&1 || die "building the source repository" "$(brief "$T/setup.out" 600)"
info "source: $(git -C "$SRC" for-each-ref | wc -l) refs, $(git -C "$SRC" rev-list --count --all) commits"

refs_of() { git --git-dir="$1" for-each-ref --format='%(objectname) %(objecttype) %(refname)'; }
counts_of() {
  local d="$1" r
  for r in $(git --git-dir="$d" for-each-ref --format='%(refname)'); do
    printf '%s %s\n' "$r" "$(git --git-dir="$d" rev-list --count "$r")"
  done
}
hub_import() { "$HANGAR_BIN" import "$@" --data-dir "$DATA" >"$T/import.out" 2>"$T/import.err" </dev/null; }
no_import_temporaries() { ! compgen -G "$DATA/tmp/import-*" >/dev/null; }

# check_mirror NAME GIT_DIR: the imported repo at GIT_DIR equals the source.
check_mirror() {
  local name="$1" dir="$2"
  check_eq "$name: every ref, same object" "$(refs_of "$SRC/.git")" "$(refs_of "$dir")"
  check_eq "$name: commit count of every ref" "$(counts_of "$SRC/.git")" "$(counts_of "$dir")"
  check_eq "$name: commits in all" "$(git -C "$SRC" rev-list --count --all)" \
    "$(git --git-dir="$dir" rev-list --count --all)"
  check_eq "$name: HEAD is the source's default branch" refs/heads/trunk \
    "$(git --git-dir="$dir" symbolic-ref HEAD 2>&1)"
  check_true "$name: commit-graph verifies" git --git-dir="$dir" commit-graph verify --no-progress
  check_true "$name: commit-graph has changed-path Bloom filters (BIDX/BDAT chunks)" \
    grep -q BDAT "$dir/objects/info/commit-graph"
  check_false "$name: no remote pointing back at the source" git --git-dir="$dir" config remote.origin.url
}

section "import with no server running"
NEW_DIR="$DATA/repos/models/alice/offline.git"
new_user alice
ALICE="$(new_token alice --role write)"
AUTH=(-H "Authorization: Bearer $ALICE")
hub_import "$SRC" alice/offline
check_eq "hangar import SOURCE alice/offline exits 0" 0 "$?"
check_match "  says what it imported" 'imported .* as alice/offline \(default branch trunk' "$(cat "$T/import.out")"
check_mirror offline "$NEW_DIR"
check_true "  no temporaries left in tmp/" no_import_temporaries

section "import beside a running server"
start_server "$DATA" --set gc.interval_s=0 || die "hangar serve did not start"
hub_import "$SRC/.git" alice/imported
check_eq "hangar import SOURCE/.git alice/imported exits 0 (server running)" 0 "$?"
check_mirror imported "$DATA/repos/models/alice/imported.git"

req GET "$BASE/api/models?author=alice"
check_status "GET /api/models?author=alice → 200" 200
check_eq "  lists both imports" "alice/imported alice/offline" "$(jbody '[.[].id] | sort | join(" ")')"
req GET "$BASE/api/models/alice/imported"
check_status "GET /api/models/alice/imported → 200" 200
check_eq "  sha is the source's HEAD" "$(git -C "$SRC" rev-parse trunk)" "$(jbody .sha)"

C="$T/clone"
if gitc "" clone -q "$BASE/alice/imported" "$C" >"$T/clone.out" 2>&1; then
  pass "git clone $BASE/alice/imported"
  check_eq "  checks out trunk at the source's commit" "$(git -C "$SRC" rev-parse trunk)" "$(git -C "$C" rev-parse HEAD)"
  check_eq "  with every branch" "$(git -C "$SRC" for-each-ref --format='%(refname:short)' refs/heads | sort)" \
    "$(git -C "$C" for-each-ref --format='%(refname:lstrip=3)' refs/remotes/origin | grep -v '^HEAD$' | sort)"
  check_eq "  and every tag" "$(git -C "$SRC" tag | sort)" "$(git -C "$C" tag | sort)"
else
  fail "git clone $BASE/alice/imported" "$(brief "$T/clone.out" 600)"
fi

section "import over http (from the hub itself)"
hub_import "$BASE/alice/imported" alice/copy
check_eq "hangar import $BASE/alice/imported alice/copy exits 0" 0 "$?"
check_eq "  every ref, same object" "$(refs_of "$SRC/.git")" "$(refs_of "$DATA/repos/models/alice/copy.git")"
check_eq "  HEAD follows the served HEAD" refs/heads/trunk \
  "$(git --git-dir="$DATA/repos/models/alice/copy.git" symbolic-ref HEAD 2>&1)"

section "a private dataset"
hub_import "file://$SRC" alice/private-data --type dataset --private
check_eq "hangar import file://SOURCE --type dataset --private exits 0" 0 "$?"
req GET "$BASE/api/datasets/alice/private-data"
check_status "  anonymous GET /api/datasets/alice/private-data → 404" 404
req GET "$BASE/api/datasets/alice/private-data" "${AUTH[@]}"
check_status "  the owner's GET → 200" 200
check_eq "  private" true "$(jbody .private)"

section "bad sources and names leave nothing"
hub_import "$T/no-such-repo" alice/bad
check_eq "import of a missing path exits 2" 2 "$?"
check_match "  says git cannot read it" "cannot read .*no-such-repo: fatal: .*does not exist" "$(cat "$T/import.err")"
req GET "$BASE/api/models/alice/bad"
check_status "  GET /api/models/alice/bad → 404" 404
check_false "  no repository directory" test -e "$DATA/repos/models/alice/bad.git"
check_true "  no temporaries left in tmp/" no_import_temporaries

hub_import "ext::sh -c touch% $T/pwned" alice/bad
check_eq "import from ext:: exits 2" 2 "$?"
check_match "  names the refused transport" "transport 'ext::' is not allowed" "$(cat "$T/import.err")"
check_false "  ext:: ran nothing" test -e "$T/pwned"
hub_import "ftp://example.com/r.git" alice/bad
check_match "import from ftp:// is refused" "'ftp://' is not allowed" "$(cat "$T/import.err")"
req GET "$BASE/api/models/alice/bad"
check_status "  still no alice/bad (404)" 404

hub_import "$SRC" alice/imported
check_eq "import onto an existing repo exits 2" 2 "$?"
check_match "  says it exists" "already exists" "$(cat "$T/import.err")"
check_mirror "imported, untouched" "$DATA/repos/models/alice/imported.git"
hub_import "$SRC" nobody/x
check_match "import into a namespace that is no user or org is refused" "namespace 'nobody'" \
  "$(cat "$T/import.err")"
hub_import "$SRC" alice/bad..name
check_eq "import under an invalid name exits 2" 2 "$?"

check_true "the server stops cleanly afterwards (SIGTERM, exit 0)" stop_server

finish
