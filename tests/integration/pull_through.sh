#!/usr/bin/env bash
# Issue 18 §5: a pull-through cache of an upstream hub (docs/upstream.md). Two Hangar
# instances on 127.0.0.1, the first the second's upstream ([upstream] url):
#   - the real @huggingface/hub client (modelInfo, downloadFile) and git + git-lfs (clone)
#     read an upstream repo through the downstream, which the downstream did not hold;
#   - the bytes are kept: with the upstream stopped, the same downloads and the clone still
#     work, and a repo never read gets a clear 503;
#   - a branch made upstream appears downstream after the TTL;
#   - 8 concurrent downloads of one uncached 100 MiB file make one upstream fetch (counted
#     in the upstream's access log);
#   - deny rules and the size cap refuse with a clear error; a private upstream repo is not
#     brought for anyone without a token; the downstream's own repos are untouched by all this;
#   - upstream tokens: a user sets their own token for the upstream (checked there first;
#     malformed, refused and read-only-credential attempts refused), then reads a private
#     upstream repo through the downstream (API, @huggingface/hub with a token, git-lfs
#     clone); every other reader needs the upstream's own yes for their own token — anyone
#     without one, or whose token the upstream refuses (another user, a token revoked
#     upstream after the TTL), gets 404 as from the upstream; offline, the yes stands.
# Usage: pull_through.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

JS_DIR="$REPO_ROOT/tests/js"
[[ -d "$JS_DIR/node_modules/@huggingface/hub" ]] ||
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
  die "tests/js/node_modules missing and npm ci failed" "$(brief "$T/npm.out" 500)"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

section "the upstream hub, with a model (LFS files), a private repo and a gated one"
DATA="$T/up"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
HA="$(cred_helper alice "$ALICE")"
HANGAR_LOG_ACCESS_LOG=true start_server "$DATA" || die "the upstream did not start"
UP_PID="$SERVER_PID" UP_BASE="$BASE" UP_ERR="$SERVER_ERR"
pass "upstream listening on $UP_BASE"
must_create "$ALICE" model alice model false
lfs_clone "$HA" "$UP_BASE/alice/model" "$T/model" '*.bin'
printf -- '---\nlicense: apache-2.0\n---\n# A cached model\n' >"$T/model/README.md"
echo '{"hidden_size": 8}' >"$T/model/config.json"
head -c 3145728 /dev/urandom >"$T/model/weights.bin"
head -c 104857600 /dev/urandom >"$T/model/big.bin"
commit_push "$HA" "$T/model" "weights"
MODEL_HEAD="$HEAD_SHA"
W_SHA="$(sha_of "$T/model/weights.bin")" BIG_SHA="$(sha_of "$T/model/big.bin")"
must_create "$ALICE" hidden alice model true
lfs_clone "$HA" "$UP_BASE/alice/hidden" "$T/hidden" '*.bin'
head -c 1048576 /dev/urandom >"$T/hidden/secret.bin"
commit_push "$HA" "$T/hidden" "secret weights"
H_SHA="$(sha_of "$T/hidden/secret.bin")"
# Read tokens of alice's for two downstream users; carol upstream cannot read alice/hidden.
ALICE_R1="$(new_token alice --name for-bob --role read)"
ALICE_R2="$(new_token alice --name for-erin --role read)"
new_user carol --email carol@upstream.example
UP_CAROL="$(new_token carol --name up --role read)"
must_create "$ALICE" secret-model alice model false
must_create "$ALICE" goes-private alice model false
must_create "$ALICE" denied-later alice model false
# A repo upstream in a namespace that is a local user's downstream.
new_user bob --email bob@upstream.example
UP_BOB="$(new_token bob --name up --role write)"
must_create "$UP_BOB" upstream-only bob model false

section "the downstream hub, its upstream the first (TTL 3 s, a deny rule)"
DDATA="$T/down"
mkdir -p "$DDATA"
DATA="$DDATA" new_user bob --email bob@example.org
BOB="$(DATA="$DDATA" new_token bob --name laptop --role write)"
BOB_RO="$(DATA="$DDATA" new_token bob --name ci --role read)"
for u in dave erin frank; do DATA="$DDATA" new_user "$u" --email "$u@example.org"; done
DAVE="$(DATA="$DDATA" new_token dave --name laptop --role write)"
ERIN="$(DATA="$DDATA" new_token erin --name laptop --role write)"
FRANK="$(DATA="$DDATA" new_token frank --name laptop --role write)"
printf 'grace-Passw0rd\n' | DATA="$DDATA" admin user create grace --password-stdin >"$T/admin.out" 2>&1 ||
  die "create user grace" "$(cat "$T/admin.out")"
# max_waiting 8: the 8 concurrent first reads below all wait for the one fetch (the default
# of 4 would answer 503 to the others, keeping workers free for everyone else).
launch_server env HANGAR_UPSTREAM_URL="$UP_BASE" HANGAR_UPSTREAM_TTL_S=3 HANGAR_UPSTREAM_MAX_WAITING=8 \
  HANGAR_UPSTREAM_DENY='alice/secret-*' "$HANGAR_BIN" serve --data-dir "$DDATA" \
  --listen 127.0.0.1:0 || die "the downstream did not start"
DOWN_PID="$SERVER_PID" D="$BASE"
EXTRA_PIDS+=("$UP_PID")
pass "downstream listening on $D"

req GET "$D/api/models/bob/nothing-here"
check_hf_error "a repo neither hub has -> 404" 404 RepoNotFound
must_create "$BOB" own bob model false
req GET "$D/api/models/bob/own"
check_status "the downstream's own repos answer as before" 200

# ---------------------------------------------------------------------------------------
section "the real @huggingface/hub client reads through the downstream"
cat >"$T/read.mjs" <<'EOF'
import { createHash } from "node:crypto";
import { downloadFile, modelInfo, listFiles } from "@huggingface/hub";
const [hubUrl, repo, path] = process.argv.slice(2);
const accessToken = process.env.HUB_TOKEN || undefined;
const info = await modelInfo({ name: repo, hubUrl, accessToken, additionalFields: ["sha", "cardData"] });
const files = [];
for await (const f of listFiles({ repo, hubUrl, accessToken, recursive: true })) files.push(f.path);
const blob = await downloadFile({ repo, path, hubUrl, accessToken });
const sha = createHash("sha256").update(Buffer.from(await blob.arrayBuffer())).digest("hex");
console.log(JSON.stringify({ sha: info.sha, license: info.cardData?.license, files: files.sort(), file: sha }));
EOF
cp "$T/read.mjs" "$JS_DIR/.pull_through_read.mjs"
EXTRA_CLEANUP+=("rm -f '$JS_DIR/.pull_through_read.mjs'")
js_read() { (cd "$JS_DIR" && node .pull_through_read.mjs "$D" "$1" "$2") 2>"$T/js.err"; }
OUT="$(js_read alice/model weights.bin)"
check_eq "modelInfo: the upstream's commit" "$MODEL_HEAD" "$(jq -r .sha <<<"$OUT")"
check_eq "modelInfo: the card's data" apache-2.0 "$(jq -r .license <<<"$OUT")"
check_eq "listFiles: the upstream's files" '[".gitattributes","README.md","big.bin","config.json","weights.bin"]' \
  "$(jq -c .files <<<"$OUT")"
check_eq "downloadFile: the LFS file's bytes" "$W_SHA" "$(jq -r .file <<<"$OUT")"
req GET "$D/api/models/alice/model/mirrors"
check_json "the downstream keeps it as a mirror of the upstream" '.[0].url' "$UP_BASE/alice/model"
req HEAD "$D/alice/model/resolve/main/weights.bin"
check_hdr "HEAD /resolve: X-Repo-Commit is the upstream's" X-Repo-Commit "$MODEL_HEAD"
check_hdr "…X-Linked-Etag the file's sha256" X-Linked-Etag "\"$W_SHA\""
check_no_hdr "…and no Location: the data path stays on the downstream" Location

section "git and git-lfs clone through the downstream"
git clone -q "$D/alice/model" "$T/clone" 2>"$T/clone.err"
check_eq "git clone: the upstream's commit" "$MODEL_HEAD" "$(git -C "$T/clone" rev-parse HEAD 2>&1)"
check_eq "git-lfs: weights.bin's bytes" "$W_SHA" "$(sha_of "$T/clone/weights.bin" 2>/dev/null)"
check_eq "git-lfs: big.bin's bytes (100 MiB)" "$BIG_SHA" "$(sha_of "$T/clone/big.bin" 2>/dev/null)"
rm -rf "$T/clone"

# ---------------------------------------------------------------------------------------
section "8 concurrent downloads of one uncached 100 MiB file: one upstream fetch"
BASE="$UP_BASE" must_create "$ALICE" big alice model false
lfs_clone "$HA" "$UP_BASE/alice/big" "$T/big" '*.bin'
head -c 104857600 /dev/urandom >"$T/big/model.bin"
head -c 2097152 /dev/urandom >"$T/big/over-cap.bin"
commit_push "$HA" "$T/big" "big"
B2_SHA="$(sha_of "$T/big/model.bin")"
req GET "$D/api/models/alice/big"
check_status "the downstream brings the repo" 200
before="$(grep -c "GET /lfs-objects/download/.*/${B2_SHA}" "$UP_ERR" || true)"
pids=()
for i in 1 2 3 4 5 6 7 8; do
  curl -s --max-time 240 -o "$T/dl$i" "$D/alice/big/resolve/main/model.bin" &
  pids+=($!)
done
wait "${pids[@]}"  # not a bare wait: the servers are children of this shell too
ok=0
for i in 1 2 3 4 5 6 7 8; do [[ "$(sha_of "$T/dl$i")" == "$B2_SHA" ]] && ok=$((ok + 1)); done
check_eq "all 8 downloads have the file's bytes" 8 "$ok"
rm -f "$T"/dl?
after="$(grep -c "GET /lfs-objects/download/.*/${B2_SHA}" "$UP_ERR" || true)"
info "upstream requests for the object: $((after - before))"
check_eq "the upstream served the object once" 1 "$((after - before))"

# ---------------------------------------------------------------------------------------
section "refusals: deny rules, the size cap, private upstream repos"
req GET "$D/api/models/alice/secret-model"
check_hf_error "a denied repo -> 403" 403 '?'
check_match "…saying the rule" "upstream.*deny" "$(hdr X-Error-Message)"
req GET "$D/api/models/alice/hidden"
check_hf_error "a private upstream repo -> 404 (the upstream does not show it)" 404 RepoNotFound
req GET "$D/api/models/alice/denied-later"
check_status "alice/denied-later is cached" 200
req GET "$D/api/models/alice/goes-private"
check_status "alice/goes-private is cached" 200
req GET "$D/api/models/bob/upstream-only"
check_hf_error "a local user's namespace is never filled from upstream -> 404" 404 RepoNotFound
# The same downstream again, with a 1 MiB cap on what it fetches.
stop_server || die "stopping the downstream" "$SERVER_RC"
launch_server env HANGAR_UPSTREAM_URL="$UP_BASE" HANGAR_UPSTREAM_TTL_S=3 \
  HANGAR_UPSTREAM_DENY='alice/secret-* alice/denied-later' \
  HANGAR_UPSTREAM_MAX_FILE_BYTES=1MiB "$HANGAR_BIN" serve --data-dir "$DDATA" \
  --listen 127.0.0.1:0 || die "the downstream did not start again"
D="$BASE"
req GET "$D/alice/big/resolve/main/over-cap.bin"
check_hf_error "an uncached 2 MiB file over a 1 MiB cap -> 413" 413 '?'
check_match "…saying the limit" "max_file_bytes" "$(hdr X-Error-Message)"
req GET "$D/alice/big/resolve/main/model.bin" -o /dev/null
check_status "a file already cached is served whatever its size" 200
req GET "$D/api/models/alice/denied-later"
check_hf_error "a repo cached before a deny rule named it -> 403" 403 '?'

# ---------------------------------------------------------------------------------------
section "a new branch upstream appears downstream after the TTL"
gitc "$HA" -C "$T/model" push -q origin main:refs/heads/feature 2>"$T/push2.err" ||
  die "pushing a branch upstream" "$(brief "$T/push2.err")"
sleep 3.2
req GET "$D/api/models/alice/model"  # a read after the TTL queues a revalidation
check_true "after the TTL a read brings it (within 20 s)" wait_until 20 bash -c \
  "git ls-remote '$D/alice/model' | grep -q refs/heads/feature"

# ---------------------------------------------------------------------------------------
section "a repo made private upstream is dropped at its next revalidation"
req PUT "$UP_BASE/api/models/alice/goes-private/settings" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/json' --data-binary '{"private": true}'
check_status "made private upstream" 200
sleep 3.2
req GET "$D/api/models/alice/goes-private"  # after the TTL: queues the revalidation
check_true "within 20 s the downstream no longer serves it" wait_until 20 bash -c \
  "[[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$D/api/models/alice/goes-private')\" == 404 ]]"

# ---------------------------------------------------------------------------------------
section "upstream tokens: the settings API refuses what it cannot keep"
auth() { printf 'Authorization: Bearer %s' "$1"; }
put_token() {  # put_token DOWNSTREAM_TOKEN BODY
  req PUT "$D/api/settings/upstream-tokens" -H "$(auth "$1")" -H 'Content-Type: application/json' \
    --data-binary "$2"
}
req GET "$D/api/settings/upstream-tokens" -H "$(auth "$BOB")"
check_status "GET: 200" 200
check_json "…one row per upstream" '.[0].url' "$UP_BASE"
check_json "…no token set yet" '.[0].tokenSet' false
req GET "$D/api/settings/upstream-tokens"
check_status "anonymous: 401" 401
put_token "$BOB" '{"token": '
check_hf_error "malformed JSON -> 400" 400 '?'
put_token "$BOB" '{"token": "x", "tokne": "y"}'
check_hf_error "an unknown field -> 400" 400 '?'
put_token "$BOB" '{"token": "hf_a b"}'
check_hf_error "a token with a space -> 400" 400 '?'
put_token "$BOB" '{"token": ""}'
check_hf_error "an empty token -> 400" 400 '?'
put_token "$BOB" "{\"url\": \"http://127.0.0.1:9/\", \"token\": \"$ALICE_R1\"}"
check_hf_error "a URL that is no upstream of this hub -> 400" 400 '?'
check_match "…saying so" "not an upstream" "$(hdr X-Error-Message)"
put_token "$BOB" '{"token": "hf_not_a_real_token"}'
check_hf_error "a token the upstream refuses -> 400" 400 '?'
check_match "…saying the upstream refuses it" "refuses this token" "$(hdr X-Error-Message)"
put_token "$BOB_RO" "{\"token\": \"$ALICE_R1\"}"
check_hf_error "a read-only downstream token cannot set one -> 403" 403 '?'
req PUT "$D/api/settings/upstream-tokens" -H "$(auth "$BOB")" -H 'Content-Type: application/json' \
  -H 'Content-Length: 10000000' --data-binary '{}'
check_hf_error "a declared 10 MB body is refused from its head -> 413" 413 '?'
req GET "$D/api/settings/upstream-tokens" -H "$(auth "$BOB")"
check_json "nothing was kept by the refusals" '.[0].tokenSet' false

section "upstream tokens: a private upstream repo read through the downstream"
req GET "$D/api/models/alice/hidden" -H "$(auth "$BOB")"
check_hf_error "before bob sets his token: 404 as from the upstream" 404 RepoNotFound
put_token "$BOB" "{\"token\": \"$ALICE_R1\"}"
check_status "bob sets alice's read token as his upstream token" 200
check_json "…the upstream says whose it is" '.upstreamUser' alice
req GET "$D/api/settings/upstream-tokens" -H "$(auth "$BOB")"
check_json "…listed as set" '.[0].tokenSet' true
check_false "…and never shown back" grep -q "$ALICE_R1" "$BODY"
req GET "$D/api/models/alice/hidden" -H "$(auth "$BOB")"
check_status "bob: model info of the private upstream repo" 200
check_json "…private here too" '.private' true
OUT="$(HUB_TOKEN="$BOB" js_read alice/hidden secret.bin)"
check_eq "@huggingface/hub with bob's token: the LFS file's bytes" "$H_SHA" "$(jq -r .file <<<"$OUT")"
HB="$(cred_helper bob "$BOB")"
gitc "$HB" clone -q "$D/alice/hidden" "$T/hclone" 2>"$T/hclone.err"
check_eq "git-lfs clone as bob: the same bytes" "$H_SHA" "$(sha_of "$T/hclone/secret.bin" 2>/dev/null)"
rm -rf "$T/hclone"
req GET "$D/api/models/alice/hidden/auth-check" -H "$(auth "$BOB")"
check_status "auth-check as bob: 200" 200

section "upstream tokens: every other reader needs the upstream's own yes"
req GET "$D/api/models/alice/hidden"
check_hf_error "anonymous: 404" 404 RepoNotFound
req GET "$D/alice/hidden/resolve/main/secret.bin"
check_hf_error "anonymous /resolve of the cached file: 404" 404 RepoNotFound
req GET "$D/api/models/alice/hidden" -H "$(auth "$DAVE")"
check_hf_error "dave, no upstream token: 404" 404 RepoNotFound
req GET "$D/api/models/alice/hidden/auth-check" -H "$(auth "$DAVE")"
check_hf_error "auth-check as dave: 404" 404 RepoNotFound
GIT_TERMINAL_PROMPT=0 gitc "" clone -q "$D/alice/hidden" "$T/hclone-anon" >/dev/null 2>&1 </dev/null
check_false "an anonymous git clone gets nothing" test -e "$T/hclone-anon/secret.bin"
put_token "$FRANK" "{\"token\": \"$UP_CAROL\"}"
check_status "frank sets carol's upstream token (she cannot read alice/hidden)" 200
req GET "$D/alice/hidden/resolve/main/secret.bin" -H "$(auth "$FRANK")"
check_hf_error "frank: the upstream refuses carol -> 404" 404 RepoNotFound
req GET "$D/api/models?author=alice" -H "$(auth "$DAVE")"
check_false "the listing does not show it to dave" grep -q 'alice/hidden' "$BODY"
put_token "$ERIN" "{\"token\": \"$ALICE_R2\"}"
check_status "erin sets another read token of alice's" 200
req GET "$D/alice/hidden/resolve/main/secret.bin" -H "$(auth "$ERIN")"
check_eq "erin: the upstream admits her -> the file" "$H_SHA" "$(sha_of "$BODY")"
R2_ID="$(admin token list alice 2>/dev/null | awk -F'\t' '$2 == "for-erin" {print $1}')"
admin token revoke alice "$R2_ID" >/dev/null 2>"$T/revoke.err" || die "revoking erin's upstream token" "$(brief "$T/revoke.err")"
check_true "revoked upstream: within the TTL + 20 s erin is refused" wait_until 23 bash -c \
  "[[ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $ERIN' '$D/alice/hidden/resolve/main/secret.bin')\" == 404 ]]"
req GET "$D/alice/hidden/resolve/main/secret.bin" -H "$(auth "$BOB")"
check_eq "…while bob still reads it" "$H_SHA" "$(sha_of "$BODY")"
req DELETE "$D/api/settings/upstream-tokens" -H "$(auth "$DAVE")"
check_hf_error "deleting a token never set -> 404" 404 '?'
req DELETE "$D/api/settings/upstream-tokens" -H "$(auth "$FRANK")"
check_status "frank removes his upstream token" 204
req GET "$D/api/settings/upstream-tokens" -H "$(auth "$FRANK")"
check_json "…gone" '.[0].tokenSet' false

section "upstream tokens: the settings page (a browser session)"
JAR="$T/grace.jar"
page_csrf() { sed -n 's/.*name="_csrf" value="\([^"]*\)".*/\1/p' "$BODY" | head -n 1; }
req GET "$D/login" -c "$JAR" -b "$JAR"
req POST "$D/login" -c "$JAR" -b "$JAR" --data-urlencode "_csrf=$(page_csrf)" \
  --data-urlencode username=grace --data-urlencode password=grace-Passw0rd --data-urlencode next=/
check_status "grace signs in through the form" 303
req GET "$D/settings/upstream-tokens" -b "$JAR"
check_status "the page: 200" 200
check_true "…names the upstream" grep -q "$UP_BASE" "$BODY"
check_true "…with no token set" grep -q '>none<' "$BODY"
CSRF="$(page_csrf)"
req POST "$D/settings/upstream-tokens" -b "$JAR" --data-urlencode "url=$UP_BASE" \
  --data-urlencode "token=$ALICE_R1"
check_status "a form without its CSRF token -> 403" 403
req POST "$D/settings/upstream-tokens" -b "$JAR" --data-urlencode "_csrf=$CSRF" \
  --data-urlencode "url=$UP_BASE" --data-urlencode "token=hf_wrong_token"
check_status "a token the upstream refuses: the page again, 400" 400
check_true "…saying so" grep -q 'refuses this token' "$BODY"
check_false "…without the token typed back" grep -q 'hf_wrong_token' "$BODY"
req POST "$D/settings/upstream-tokens" -b "$JAR" --data-urlencode "_csrf=$CSRF" \
  --data-urlencode "url=$UP_BASE" --data-urlencode "token=$ALICE_R1"
check_status "a good token: 303" 303
req GET "$D/settings/upstream-tokens" -b "$JAR"
check_true "…the page shows whose it is upstream" grep -q '<strong>alice</strong>' "$BODY"
req GET "$D/alice/hidden/resolve/main/secret.bin" -b "$JAR"
check_eq "grace's browser session reads the private repo" "$H_SHA" "$(sha_of "$BODY")"
req POST "$D/settings/upstream-tokens/delete" -b "$JAR" --data-urlencode "_csrf=$CSRF" \
  --data-urlencode "url=$UP_BASE"
check_status "remove: 303" 303
req GET "$D/alice/hidden/resolve/main/secret.bin" -b "$JAR"
check_hf_error "without it, grace is refused at once" 404 RepoNotFound

section "offline: the upstream stopped, what was read is still served"
kill -TERM "$UP_PID"
for ((i = 0; i < 200; i++)); do alive "$UP_PID" || break; sleep 0.05; done
check_false "the upstream is stopped" alive "$UP_PID"
OUT="$(js_read alice/model weights.bin)"
check_eq "@huggingface/hub: the same file's bytes" "$W_SHA" "$(jq -r .file <<<"$OUT")"
req GET "$D/alice/big/resolve/main/model.bin"
check_eq "the 100 MiB file" "$B2_SHA" "$(sha_of "$BODY")"
git clone -q "$D/alice/model" "$T/clone2" 2>"$T/clone2.err"
check_eq "git-lfs clone: the same bytes" "$W_SHA" "$(sha_of "$T/clone2/weights.bin" 2>/dev/null)"
req GET "$D/api/models/alice/never-read"
check_hf_error "a repo never read -> 503, saying the upstream is unreachable" 503 '?'
check_match "…clearly" "not cached" "$(hdr X-Error-Message)"
req GET "$D/alice/hidden/resolve/main/secret.bin" -H "$(auth "$BOB")"
check_eq "bob still reads the private repo: the upstream's last yes stands" "$H_SHA" "$(sha_of "$BODY")"
req GET "$D/alice/hidden/resolve/main/secret.bin" -H "$(auth "$ERIN")"
check_ne "erin, whom the upstream refused, does not" 200 "$ST"
req GET "$D/alice/hidden/resolve/main/secret.bin"
check_hf_error "nor does an anonymous reader" 404 RepoNotFound
req GET "$D/api/models/bob/own"
check_status "the downstream's own repos are unaffected" 200

stop_server
check_eq "the downstream stopped cleanly" "$SERVER_RC" 0
finish
