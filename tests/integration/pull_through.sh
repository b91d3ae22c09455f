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
#   - deny rules and the size cap refuse with a clear error; private and gated upstream
#     repos are not cached; the downstream's own repos are untouched by all this.
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
const info = await modelInfo({ name: repo, hubUrl, additionalFields: ["sha", "cardData"] });
const files = [];
for await (const f of listFiles({ repo, hubUrl, recursive: true })) files.push(f.path);
const blob = await downloadFile({ repo, path, hubUrl });
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
req GET "$D/api/models/bob/own"
check_status "the downstream's own repos are unaffected" 200

stop_server
check_eq "the downstream stopped cleanly" "$SERVER_RC" 0
finish
