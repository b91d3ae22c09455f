#!/usr/bin/env bash
# Issue 19 §4: history and storage management, each answer field by field with its 4xx
# cases — GET /api/{type}s/{id}/lfs-files (list_lfs_files), POST …/lfs-files/batch
# (permanently_delete_lfs_files: with rewriteHistory every ref's history is rewritten
# without the objects' pointers and the rewrite recorded; without it the pointers stay,
# dangling; GC then removes the bytes), and POST …/super-squash/{branch}
# (super_squash_history: one commit, same tree, the old commits unreachable from it).
# Usage: lfs_files.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: ann/m with three LFS objects on main, a tag and a branch"
DATA="$T/data"
mkdir -p "$DATA"
new_user ann
new_user bob
ANN="$(new_token ann --role write)"
BOB="$(new_token bob --role write)"
start_server "$DATA" || die "hangar serve did not start"
A=(-H "Authorization: Bearer $ANN")
B=(-H "Authorization: Bearer $BOB")
J=(-H 'Content-Type: application/json')
must_create "$ANN" m ann model false
HA="$(cred_helper ann "$ANN")"
W="$T/work"
lfs_clone "$HA" "$BASE/ann/m" "$W" '*.bin'
blob_path() { printf '%s/blobs/sha256/%s/%s/%s' "$DATA" "${1:0:2}" "${1:2:2}" "$1"; }
sha_of() { sha256sum "$1" | cut -d' ' -f1; }
head -c 3000 /dev/urandom >"$W/big.bin"
printf 'plain\n' >"$W/a.txt"
commit_push "$HA" "$W" "weights and a text"
C1="$HEAD_SHA"
mkdir -p "$W/ckpt"
head -c 2000 /dev/urandom >"$W/ckpt/c1.bin"
commit_push "$HA" "$W" "a checkpoint"
C2="$HEAD_SHA"
git -C "$W" tag -a v1 -m "release one"
gitc "$HA" -C "$W" push -q origin v1 2>/dev/null || die "push tag v1"
git -C "$W" checkout -q -b dev
head -c 1000 /dev/urandom >"$W/dev.bin"
git -C "$W" add dev.bin && git -C "$W" commit -qm "dev weights"
C3="$(git -C "$W" rev-parse HEAD)"
DEV="$(sha256sum "$W/dev.bin" | cut -d' ' -f1)"
gitc "$HA" -C "$W" push -q origin dev 2>"$T/p.err" || die "push dev" "$(brief "$T/p.err")"
git -C "$W" checkout -q main
BIG="$(sha_of "$W/big.bin")"; CKPT="$(sha_of "$W/ckpt/c1.bin")"

section "list_lfs_files"
req GET "$BASE/api/models/ann/m/lfs-files" "${A[@]}"
check_status "GET lfs-files → 200" 200
check_json "  three objects" 'length' 3
item() { jq -r --arg o "$1" '.[] | select(.fileOid == $o) | '"$2" <"$BODY"; }
check_eq "  big.bin: filename, size, commit" "big.bin 3000 $C1" "$(item "$BIG" '"\(.filename) \(.size) \(.commit)"')"
check_eq "  ckpt/c1.bin: filename, size, commit" "ckpt/c1.bin 2000 $C2" "$(item "$CKPT" '"\(.filename) \(.size) \(.commit)"')"
check_eq "  dev.bin (only on dev): filename, commit" "dev.bin $C3" "$(item "$DEV" '"\(.filename) \(.commit)"')"
check_match "  pushedAt is ISO 8601" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$' "$(item "$BIG" .pushedAt)"
check_match "  oid is the pointer file's blob" '^[0-9a-f]{40}$' "$(item "$BIG" .oid)"
check_eq "  which git has as big.bin" "$(git -C "$W" rev-parse "$C1:big.bin")" "$(item "$BIG" .oid)"
req GET "$BASE/api/models/ann/m/lfs-files?limit=2" "${A[@]}"
check_json "limit=2 → 2 items" 'length' 2
check_match "  and a Link to the next page" 'rel="next"' "$(hdr Link)"
NEXT="$(hdr Link | sed -E 's/^<([^>]*)>.*/\1/')"
req GET "$NEXT" "${A[@]}"
check_json "  the next page has the third" 'length' 1
check_no_hdr "  and no further Link" Link
req GET "$BASE/api/models/ann/m/lfs-files?cursor=zz" "${A[@]}"
check_hf_error "a malformed cursor → 400" 400 "?"
req GET "$BASE/api/models/ann/m/lfs-files?limit=0" "${A[@]}"
check_hf_error "limit=0 → 400" 400 "?"
req GET "$BASE/api/models/ann/m/lfs-files" "${B[@]}"
check_hf_error "bob (no write access) → 403" 403 "?"
req GET "$BASE/api/models/ann/m/lfs-files"
check_hf_error "anonymous → 401" 401 "?"

section "permanently_delete_lfs_files: bad input changes nothing"
batch() { req POST "$BASE/api/models/ann/m/lfs-files/batch" "${@:2}" "${J[@]}" --data-binary "$1"; }
batch '{"deletions":' "${A[@]}"; check_hf_error "malformed JSON → 400" 400 "?"
batch '{}' "${A[@]}"; check_hf_error "no deletions → 400" 400 "?"
batch '{"deletions":{"sha":"abc"}}' "${A[@]}"; check_hf_error "sha not an array → 400" 400 "?"
batch '{"deletions":{"sha":["xyz"]}}' "${A[@]}"; check_hf_error "sha not 64 hex digits → 400" 400 "?"
batch '{"deletions":{"sha":[]}}' "${A[@]}"; check_hf_error "an empty list → 400" 400 "?"
batch "{\"deletions\":{\"sha\":[\"$CKPT\"],\"rewriteHistory\":\"yes\"}}" "${A[@]}"; check_hf_error "rewriteHistory a string → 400" 400 "?"
batch "{\"deletions\":{\"sha\":[\"$CKPT\",\"$(printf '0%.0s' {1..64})\"]}}" "${A[@]}"
check_hf_error "an object the repo does not hold → 404" 404 "?"
batch "{\"deletions\":{\"sha\":$(jq -cn '[range(1001)] | map("a" * 64)')}}" "${A[@]}"
check_hf_error "1001 objects → 400" 400 "?"
batch "{\"deletions\":{\"sha\":[\"$CKPT\"]}}" "${B[@]}"; check_hf_error "bob → 403" 403 "?"
batch "{\"deletions\":{\"sha\":[\"$CKPT\"]},\"rewriteHistory\":false}" "${A[@]}"
check_hf_error "rewriteHistory misplaced at the top → 400 (not a silent rewrite)" 400 "?"
batch "{\"deletions\":{\"sha\":[\"$CKPT\"],\"rewrite_history\":false}}" "${A[@]}"
check_hf_error "rewrite_history misspelt → 400" 400 "?"
req GET "$BASE/api/models/ann/m/lfs-files" "${A[@]}"
check_json "  still three objects" 'length' 3
req GET "$BASE/api/models/ann/m/revision/main" "${A[@]}"
check_json "  main did not move" .sha "$C2"

section "an open pull request on main, before the rewrite"
req POST "$BASE/api/models/ann/m/discussions" "${A[@]}" "${J[@]}" --data-binary '{"title":"Add pr.txt","pullRequest":true}'
PR="$(jbody .num)"
gitc "$HA" -C "$W" fetch -q origin "refs/pr/$PR:refs/remotes/origin/pr" || die "fetch refs/pr/$PR"
git -C "$W" checkout -q -b pr origin/pr && printf 'pr\n' >"$W/pr.txt" && git -C "$W" add pr.txt &&
  git -C "$W" commit -qm "Add pr.txt" && gitc "$HA" -C "$W" push -q origin "HEAD:refs/pr/$PR" 2>/dev/null
git -C "$W" checkout -q main
req GET "$BASE/api/models/ann/m/discussions/$PR" "${A[@]}"
check_json "pull request #$PR has one commit event" '[.events[] | select(.type == "commit")] | length' 1

section "delete with rewriteHistory (the client's default)"
batch "{\"deletions\":{\"sha\":[\"$CKPT\"],\"rewriteHistory\":true}}" "${A[@]}"
check_status "delete ckpt/c1.bin → 200" 200
check_json "  deleted" '.deleted | tostring' "[\"$CKPT\"]"
check_json "  rewriteHistory" .rewriteHistory true
check_json "  main, dev, the pull request and the tag v1 moved" '[.refs[].ref] | sort | join(",")' "refs/heads/dev,refs/heads/main,refs/pr/$PR,refs/tags/v1"
NEW_MAIN="$(jq -r '.refs[] | select(.ref == "refs/heads/main") | .to' <"$BODY")"
check_ne "  main has a new commit" "$C2" "$NEW_MAIN"
check_json "  from the old one" '.refs[] | select(.ref == "refs/heads/main") | .from' "$C2"
req GET "$BASE/api/models/ann/m/revision/main" "${A[@]}"
check_json "  main now names it" .sha "$NEW_MAIN"
req GET "$BASE/api/models/ann/m/tree/main?recursive=true" "${A[@]}"
check_json "  main's tree: no ckpt/c1.bin, big.bin kept" '[.[].path] | sort | join(",")' ".gitattributes,a.txt,big.bin"
req GET "$BASE/api/models/ann/m/lfs-files" "${A[@]}"
check_json "  lfs-files: two objects left" '[.[].fileOid] | index("'"$CKPT"'") == null and length == 2' true
rm -rf "$T/fresh"
gitc "$HA" clone -q --mirror "$BASE/ann/m" "$T/fresh" 2>"$T/c.err" || fail "a fresh mirror clone" "$(brief "$T/c.err")"
check_eq "  no commit of any ref holds a pointer to it" 0 "$(git -C "$T/fresh" log --all -p | grep -c "$CKPT")"
check_true "  the rewritten repo passes git fsck" git -C "$T/fresh" fsck --no-dangling --no-progress
check_eq "  the tag v1 is still annotated, with its message" "tag release one" \
  "$(git -C "$T/fresh" cat-file -t v1) $(git -C "$T/fresh" tag -l --format='%(contents:subject)' v1)"
check_eq "  the commits kept their messages" "a checkpoint|weights and a text|initial commit" \
  "$(git -C "$T/fresh" log --format=%s main | paste -sd'|')"
req GET "$BASE/api/models/ann/m/lfs-files/purges" "${A[@]}"
check_json "the rewrite is recorded: who, what, the refs" \
  '.[0] | "\(.user) \(.deleted[0]) \(.rewriteHistory) \(.refs | length)"' "ann $CKPT true 4"
req GET "$BASE/api/models/ann/m/discussions/$PR" "${A[@]}"
check_json "  the pull request records its own rewritten commit, not main's history" \
  '[.events[] | select(.type == "commit") | .data.subject] | join("|")' "Add pr.txt|Add pr.txt"
check_true "  the object's bytes are still stored (GC removes them)" test -f "$(blob_path "$CKPT")"
admin gc --grace 0 >"$T/gc.out" 2>&1 || fail "admin gc" "$(brief "$T/gc.out")"
check_false "  after GC its bytes are gone" test -f "$(blob_path "$CKPT")"
check_true "  and the others' are kept" test -f "$(blob_path "$BIG")"

section "delete without rewriteHistory: the pointers stay, dangling"
batch "{\"deletions\":{\"sha\":[\"$DEV\"],\"rewriteHistory\":false}}" "${A[@]}"
check_status "delete dev.bin without rewriting → 200" 200
check_json "  no ref moved" '.refs | length' 0
req GET "$BASE/api/models/ann/m/tree/dev" "${A[@]}"
check_json "  dev still lists dev.bin" '[.[].path] | index("dev.bin") != null' true
req GET "$BASE/ann/m/resolve/dev/dev.bin" "${A[@]}"
check_true "  but it no longer downloads (4xx)" test "${ST:0:1}" = 4
req GET "$BASE/api/models/ann/m/lfs-files" "${A[@]}"
check_json "  lfs-files: only big.bin left" '[.[].fileOid] | join(",")' "$BIG"

section "super_squash_history"
sq() { req POST "$BASE/api/models/ann/m/super-squash/$1" "${@:3}" "${J[@]}" --data-binary "$2"; }
sq nope '{"message":"x"}' "${A[@]}"; check_hf_error "a branch that does not exist → 404" 404 RevisionNotFound
sq main '{"message":5}' "${A[@]}"; check_hf_error "a message that is a number → 400" 400 "?"
sq main '{"message":"a\u001b[2Jb"}' "${A[@]}"; check_hf_error "a message with an escape sequence → 400" 400 "?"
sq main '{"message":"x"}' "${B[@]}"; check_hf_error "bob → 403" 403 "?"
req GET "$BASE/api/models/ann/m/tree/main?recursive=true" "${A[@]}"
TREE_BEFORE="$(jq -c '[.[] | {path, oid}] | sort_by(.path)' <"$BODY")"
sq main '{"message":"Squash it all"}' "${A[@]}"
check_status "super-squash main → 200" 200
SQ="$(jbody .commitOid)"
req GET "$BASE/api/models/ann/m/commits/main" "${A[@]}"
check_json "  main's history is one commit" 'length' 1
check_json "  with the message" '.[0] | "\(.id) \(.title)"' "$SQ Squash it all"
check_eq "  X-Total-Count 1" 1 "$(hdr X-Total-Count)"
req GET "$BASE/api/models/ann/m/tree/main?recursive=true" "${A[@]}"
check_eq "  the same tree" "$TREE_BEFORE" "$(jq -c '[.[] | {path, oid}] | sort_by(.path)' <"$BODY")"
req GET "$BASE/ann/m/resolve/main/big.bin"
check_eq "  the LFS file still downloads" "$BIG" "$(sha256sum "$BODY" | cut -d' ' -f1)"
gitc "$HA" -C "$W" fetch -q origin 2>/dev/null
check_false "  the old commits are not reachable from main" git -C "$W" merge-base --is-ancestor "$NEW_MAIN" origin/main
req GET "$BASE/api/models/ann/m/revision/dev" "${A[@]}"
OLD_DEV="$(jbody .sha)"
sq 'refs%2Fheads%2Fdev' '' "${A[@]}"
check_status "a fully-qualified branch and no body → 200" 200
req GET "$BASE/api/models/ann/m/commits/dev" "${A[@]}"
check_json "  the default message" '.[0].title' "Super-squash branch 'dev'"
req GET "$BASE/api/models/ann/m/revision/$OLD_DEV" "${A[@]}"
check_status "  dev's old commit, unreachable now, is still read by its id" 200
find "$DATA/repos/models/ann/m.git/objects" -type f -exec touch -d '3 days ago' {} +
HANGAR_GC_GRACE_S=60 "$HANGAR_BIN" admin maintain ann/m --data-dir "$DATA" >"$T/m.out" 2>&1 ||
  fail "admin maintain ann/m" "$(brief "$T/m.out")"
check_match "  maintenance prunes" ' prune ' "$(cat "$T/m.out")"
req GET "$BASE/api/models/ann/m/revision/$OLD_DEV" "${A[@]}"
check_hf_error "  once pruned (older than gc.grace_s), it is gone → 404" 404 RevisionNotFound
req GET "$BASE/ann/m/resolve/main/big.bin"
check_eq "  what the refs hold is kept" "$BIG" "$(sha256sum "$BODY" | cut -d' ' -f1)"

finish
