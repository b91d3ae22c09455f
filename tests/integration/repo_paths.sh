#!/usr/bin/env bash
# Repo path rules on every writer (issue #13 point 4, core/repo_path.h): `.git` in any
# disguise (case, trailing dots or spaces, 8.3 short names, NTFS streams, HFS+ ignorables)
# and the classic traversal forms ('..', '.', empty components, a leading '/', NUL, control
# bytes, backslashes) are refused with 400 BadRequest naming the path, by each commit
# operation (file, lfsFile, deletedFile, deletedFolder, copyFile's path and srcPath) and by
# preupload, and nothing is written: the branch head, the git objects and the blob store
# stay as they were. A git push of such a tree is refused by receive.fsckObjects.
# Usage: repo_paths.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user pat
PAT="$(new_token pat --role write)"
start_server "$DATA" || die "hangar serve did not start"
HC="$(cred_helper pat "$PAT")"
AUTH=(-H "Authorization: Bearer $PAT")
must_create "$PAT" paths pat model false
API="$BASE/api/models/pat/paths"
GD="$DATA/repos/models/pat/paths.git"

# A regular file and an LFS file linked to the repo, so copies and lfsFile lines are
# valid but for their path.
W="$T/w"
gitc "$HC" clone -q "$BASE/pat/paths" "$W" 2>"$T/c.err" || die "clone" "$(brief "$T/c.err" 500)"
head -c 4096 /dev/urandom >"$T/w.bin"
LFS_SHA="$(sha256_of "$T/w.bin")"
(cd "$W" && cp "$T/w.bin" w.bin && git lfs track w.bin >/dev/null && echo keep >keep.txt &&
  mkdir -p dir && echo x >dir/x.txt && git add -A && git commit -q -m base) || die "base commit"
gitc "$HC" -C "$W" push -q origin main >"$T/p.out" 2>&1 || die "push" "$(brief "$T/p.out" 800)"
HEAD0="$(git --git-dir="$GD" rev-parse main)"
pass "pushed keep.txt, dir/x.txt and the LFS file w.bin"

# Bad paths as JSON string literals (NUL and control bytes can only travel escaped).
BAD=(
  '".GIT/config"' '".Git/x"' '".git./x"' '".git /x"' '"GIT~1/config"'
  '".git::$INDEX_ALLOCATION/x"' '".git:$DATA"' '".git/config"' '"a/.gIt/b"'
  '".g\u200cit/config"' '"dir/.git"'
  '"../x"' '"a/../b"' '".."' '"./a"' '"a/./b"' '"a//b"' '"/abs"' '""' '"a\\b"'
  '"..\\x"' '"a\u0000b"' '"a\nb"' '"a\u001fb"'
)

state() {  # what a refused request must leave alone
  git --git-dir="$GD" for-each-ref --format='%(refname) %(objectname)'
  # Every object id, loose or packed: a background repack may move them meanwhile.
  git --git-dir="$GD" cat-file --batch-all-objects --batch-check='%(objectname)'
  (cd "$DATA" && find blobs tmp -print 2>/dev/null | LC_ALL=C sort)
}

HDR='{"key":"header","value":{"summary":"bad path"}}'
GOOD='{"key":"file","value":{"path":"ok.txt","content":"b2s=","encoding":"base64"}}'
# op_line KIND PATH_JSON: one NDJSON operation of KIND with PATH_JSON where the path goes.
op_line() {
  case "$1" in
    file) printf '{"key":"file","value":{"path":%s,"content":"eA==","encoding":"base64"}}' "$2" ;;
    lfsFile) printf '{"key":"lfsFile","value":{"path":%s,"algo":"sha256","oid":"%s","size":4096}}' \
      "$2" "$LFS_SHA" ;;
    deletedFile) printf '{"key":"deletedFile","value":{"path":%s}}' "$2" ;;
    deletedFolder) printf '{"key":"deletedFolder","value":{"path":%s}}' "$2" ;;
    copyFile) printf '{"key":"copyFile","value":{"path":%s,"srcPath":"keep.txt"}}' "$2" ;;
    copySrc) printf '{"key":"copyFile","value":{"path":"copy.txt","srcPath":%s}}' "$2" ;;
  esac
}
# refused DESC: 400 BadRequest in the HF error shape, the message saying it is the path.
refused() {
  check_hf_error "$1" 400 BadRequest
  local msg
  msg="$(hdr X-Error-Message)"
  [[ "$msg" == *"invalid path"* ]] || fail "  ... the message names the path" "$msg"
}

section "the disguises and traversals are valid paths but for the rule (control)"
for kind in file lfsFile copyFile; do
  printf '%s\n%s\n' "$HDR" "$(op_line "$kind" '"fine/name.txt"')" >"$T/ok.ndjson"
  req POST "$API/commit/main?create_pr=1" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$T/ok.ndjson"
  check_status "$kind with a good path commits (to a pull request)" 200
done
# The control commits wrote objects and refs/pr/*: measure from here.
state >"$T/state.before"

for kind in file lfsFile deletedFile deletedFolder copyFile copySrc; do
  section "commit: $kind"
  for p in "${BAD[@]}"; do
    printf '%s\n%s\n%s\n' "$HDR" "$GOOD" "$(op_line "$kind" "$p")" >"$T/bad.ndjson"
    req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' \
      --data-binary @"$T/bad.ndjson"
    refused "$kind $p → 400"
  done
  check_eq "  main unchanged" "$HEAD0" "$(git --git-dir="$GD" rev-parse main)"
done

section "preupload"
for p in "${BAD[@]}"; do
  printf '{"files":[{"path":"ok.txt","size":2},{"path":%s,"size":1}]}' "$p" >"$T/pre.json"
  req POST "$API/preupload/main" "${AUTH[@]}" -H 'Content-Type: application/json' \
    --data-binary @"$T/pre.json"
  refused "preupload $p → 400"
done

section "nothing was written"
state >"$T/state.after"
check_eq "refs, git objects and the blob store are as before" \
  "$(cat "$T/state.before")" "$(cat "$T/state.after")"
req GET "$BASE/pat/paths/resolve/main/ok.txt"
check_hf_error "  the good line before each bad one was not committed" 404 EntryNotFound

section "git push (receive.fsckObjects)"
EVIL="$(printf 'evil\n' | git -C "$W" hash-object -w --stdin)"
INNER="$(printf '100644 blob %s\tconfig\n' "$EVIL" | git -C "$W" mktree)"
for name in .GIT .Git '.git.' '.git ' 'GIT~1' '.git::$INDEX_ALLOCATION' '..'; do
  TREE="$({ git -C "$W" ls-tree HEAD; printf '040000 tree %s\t%s\n' "$INNER" "$name"; } |
    git -C "$W" mktree)"
  C="$(git -C "$W" commit-tree "$TREE" -p HEAD -m "tree with '$name'")"
  if gitc "$HC" -C "$W" push -q origin "$C:refs/heads/main" "$C:refs/heads/evil" \
      >"$T/evil.out" 2>&1; then
    fail "push of a tree holding '$name' is refused" "$(brief "$T/evil.out" 600)"
  else
    pass "push of a tree holding '$name' is refused"
  fi
  check_match "  ... by git's fsck" 'hasDotgit|hasDotdot' "$(cat "$T/evil.out")"
  check_eq "  main unchanged" "$HEAD0" "$(git --git-dir="$GD" rev-parse main)"
  check_false "  no branch evil" git --git-dir="$GD" rev-parse -q --verify refs/heads/evil
done

section ".gitmodules: what git's fsck refuses in a push, the commit API refuses too"
# Each a .gitmodules that makes `git clone --recurse-submodules` run something or write
# outside the clone (CVE-2018-11235 and its kin). A file of that content under another
# name is harmless (git reads only .gitmodules), so evil.txt is pushed to copy from.
EVIL_MODULES=(
  $'[submodule "../../modules/x"]\n\tpath = x\n\turl = https://example.com/x.git\n'
  $'[submodule "a\\\\..\\\\b"]\n\tpath = x\n\turl = https://example.com/x.git\n'
  $'[submodule "x"]\n\tpath = x\n\turl = --upload-pack=touch${IFS}/tmp/pwned\n'
  $'[submodule "x"]\n\tpath = -x\n\turl = https://example.com/x.git\n'
  $'[submodule "x"]\n\tpath = x\n\turl = https://example.com/x.git\n\tupdate = !sh -c id\n'
  $'[submodule "x"]\n\tpath = x\n\turl = https://a%0ahost=evil.example/x.git\n'
  $'[submodule "x"]\n\turl = --evil\n[broken\n'
  $'[submodule "x"]\n\tpath = x\n\turl = ../../:example.com/x\n'
  $'[submodule "x"]\n\tpath = x\n\turl = https:///example.com/x\n'
)
GOOD_MODULES=$'[submodule "lib"]\n\tpath = lib\n\turl = https://example.com/lib.git\n'
(cd "$W" && printf '%s' "${EVIL_MODULES[2]}" >evil.txt &&
  git add evil.txt && git commit -q -m 'evil.txt (not .gitmodules)') || die "evil.txt commit"
gitc "$HC" -C "$W" push -q origin HEAD:main >"$T/p2.out" 2>&1 || die "push evil.txt" "$(brief "$T/p2.out" 800)"
HEAD1="$(git --git-dir="$GD" rev-parse main)"
state >"$T/state.before"
for i in "${!EVIL_MODULES[@]}"; do
  for name in .gitmodules sub/.gitmodules .GitModules '.gitmodules.' 'GITMOD~1'; do
    printf '%s\n{"key":"file","value":{"path":"%s","content":"%s","encoding":"base64"}}\n' \
      "$HDR" "$name" "$(printf '%s' "${EVIL_MODULES[$i]}" | base64 -w0)" >"$T/gm.ndjson"
    req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' \
      --data-binary @"$T/gm.ndjson"
    check_hf_error "bad .gitmodules #$i as '$name' → 400" 400 BadRequest
    check_match "  ... saying why" 'invalid \.gitmodules' "$(hdr X-Error-Message)"
  done
done
printf '%s\n{"key":"copyFile","value":{"path":".gitmodules","srcPath":"evil.txt"}}\n' "$HDR" >"$T/gm.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$T/gm.ndjson"
check_hf_error "copyFile of a bad .gitmodules from evil.txt → 400" 400 BadRequest
for name in .gitmodules x/GITMOD~1; do
  printf '%s\n{"key":"lfsFile","value":{"path":"%s","algo":"sha256","oid":"%s","size":4096}}\n' \
    "$HDR" "$name" "$LFS_SHA" >"$T/gm.ndjson"
  req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$T/gm.ndjson"
  check_hf_error "an LFS file as '$name' → 400" 400 BadRequest
done
printf '%s\n{"key":"file","value":{"path":".gitmodules/x","content":"eA==","encoding":"base64"}}\n' "$HDR" >"$T/gm.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$T/gm.ndjson"
check_hf_error "a folder named .gitmodules → 400" 400 BadRequest
state >"$T/state.after"
check_eq "  refs, git objects and the blob store are as before" \
  "$(cat "$T/state.before")" "$(cat "$T/state.after")"
check_eq "  main unchanged" "$HEAD1" "$(git --git-dir="$GD" rev-parse main)"
printf '%s\n{"key":"file","value":{"path":".gitmodules","content":"%s","encoding":"base64"}}\n' \
  "$HDR" "$(printf '%s' "$GOOD_MODULES" | base64 -w0)" >"$T/gm.ndjson"
req POST "$API/commit/main" "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' --data-binary @"$T/gm.ndjson"
check_status "an ordinary .gitmodules commits" 200
# The same contents through git push: refused by receive.fsckObjects, as the API refuses.
gitc "$HC" -C "$W" pull -q --ff-only origin main >"$T/pull.out" 2>&1 || die "pull" "$(brief "$T/pull.out" 600)"
for i in 0 2 3; do
  (cd "$W" && printf '%s' "${EVIL_MODULES[$i]}" >.gitmodules && git add .gitmodules &&
    git commit -q -m "evil .gitmodules #$i") || die "commit evil .gitmodules"
  if gitc "$HC" -C "$W" push -q origin HEAD:refs/heads/evil-modules >"$T/gm.out" 2>&1; then
    fail "push of bad .gitmodules #$i is refused by git too"
  else
    check_match "push of bad .gitmodules #$i is refused by git's fsck too" 'gitmodules' "$(cat "$T/gm.out")"
  fi
  git -C "$W" reset -q --hard HEAD~1
done

finish
