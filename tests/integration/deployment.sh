#!/usr/bin/env bash
# Issue 17 §5: the local deployment (deploy/stack.sh, docs/deploy.md) — PostgreSQL, two
# replicas and a worker on one shared data dir, HAProxy in front — driven through the
# balancer's URL only:
#  - git clone and push with an LFS file, cloned again byte for byte;
#  - the real @huggingface/hub client (tests/js/hf_upload.test.mjs) uploads, reads back
#    and deletes files;
#  - 20 commits, each followed at once by reads of main: every read sees the commit just
#    made, though round-robin sends the reads to the other replica;
#  - skopeo pushes a two-layer OCI image and pulls it back byte for byte (an upload's
#    requests reach one replica: haproxy.cfg's oci_uploads backend);
#  - a job queued by the admin CLI runs on the worker;
#  - a rolling restart (deploy/stack.sh restart-replica a, then b) under a steady load of
#    GETs of a small file and HEADs of /resolve: no request fails;
#  - kill -9 of a replica during a 1 GiB `hangar upload` (the native API): the upload
#    finishes through the other replica (resuming where it was when the client gives up),
#    nothing of it is visible before it completes, and the file's sha256 is right.
# Blobs: on the S3 of HANGAR_TEST_S3_ENV when CTest's S3 fixture gives one
# (hangar_uses_s3), on an S3 of the stack's own with HANGAR_DEPLOY_S3=1 (~15 s more),
# else on the shared data dir (deploy/stack.sh --no-s3).
# Usage: deployment.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

STACK="$REPO_ROOT/deploy/stack.sh"
JS_DIR="$REPO_ROOT/tests/js"
command -v haproxy >/dev/null || die "haproxy is missing: run scripts/install-deps.sh"
[[ -d "$JS_DIR/node_modules/@huggingface/hub" ]] ||
  (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
  die "tests/js/node_modules missing and npm ci failed" "$(brief "$T/npm.out" 500)"

ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

section "setup: deploy/stack.sh start"
# Not under $T: as root, PostgreSQL's account must reach the stack's directory.
SD="$(mktemp -d /tmp/hangar-deploy.XXXXXX)"
EXTRA_CLEANUP+=("'$STACK' stop '$SD'; rm -rf '$SD'")
S3_OPT=(--no-s3)
if [[ -n "${HANGAR_TEST_S3_ENV:-}" ]]; then
  S3_OPT=(--s3-env "$HANGAR_TEST_S3_ENV")
elif [[ "${HANGAR_DEPLOY_S3:-0}" == 1 ]]; then
  S3_OPT=()
fi
T0="$(date +%s%N)"
HANGAR_BIN="$HANGAR_BIN" "$STACK" start "$SD" --watch $$ --no-fsync "${S3_OPT[@]}" \
  >"$T/stack.out" 2>&1 || die "deploy/stack.sh start $SD ${S3_OPT[*]}" "$(tail -n 30 "$T/stack.out")"
START_MS="$(ms_since "$T0")"
# shellcheck disable=SC1091
source "$SD/stack.env"
SERVER_LOGS+=("$SD/log/replica-a.log" "$SD/log/replica-b.log" "$SD/log/worker.log"
  "$SD/log/haproxy.log")
info "stack up in $START_MS ms (blobs: $BLOBS); balancer $HUB_URL, replicas $REPLICA_A_URL $REPLICA_B_URL"
pass "deploy/stack.sh start: PostgreSQL, two replicas, a worker and HAProxy"
BASE="$HUB_URL"
req GET "$HUB_URL/readyz"
check_status "GET /readyz through the balancer -> 200" 200
SEEN=""
for i in 1 2 3 4; do
  req GET "$HUB_URL/healthz"
  SEEN+="$(hdr X-Hangar-Replica)"
done
check_match "the balancer sends requests to both replicas in turn" '^(abab|baba)$' "$SEEN"

DATA="$DATA_DIR"
export HANGAR_DATABASE_URL="$PG_URL"
new_user alice --email alice@example.org
ALICE="$(new_token alice --role write)"
HA="$(cred_helper alice "$ALICE")"
AUTH=(-H "Authorization: Bearer $ALICE")

section "git + git-lfs through the balancer"
must_create "$ALICE" dep-model alice model false
W="$T/w"
gitc "$HA" clone -q "$HUB_URL/alice/dep-model" "$W" 2>"$T/clone.err" ||
  die "git clone through the balancer" "$(brief "$T/clone.err")"
head -c $((5 * 1024 * 1024 + 4321)) /dev/urandom >"$W/weights.bin"
printf '{"hidden_size": 128}\n' >"$W/config.json"
git -C "$W" lfs track "*.bin" >/dev/null
LFS_SHA="$(sha256_of "$W/weights.bin")"
git -C "$W" add -A && git -C "$W" commit -qm "weights over LFS" || die "git commit"
if gitc "$HA" -C "$W" push -q origin main >"$T/push.out" 2>&1; then
  pass "git push with an LFS file through the balancer"
else
  fail "git push with an LFS file through the balancer" "$(brief "$T/push.out" 1200)"
fi
gitc "$HA" clone -q "$HUB_URL/alice/dep-model" "$T/w2" 2>"$T/clone2.err" ||
  fail "second git clone through the balancer" "$(brief "$T/clone2.err")"
check_eq "the second clone has the LFS file's content (sha256)" "$LFS_SHA" \
  "$(sha256_of "$T/w2/weights.bin" 2>/dev/null)"
check_eq "... stored as an LFS pointer in git" "$LFS_SHA" \
  "$(git -C "$T/w2" cat-file -p HEAD:weights.bin | sed -n 's/^oid sha256://p')"
req GET "$HUB_URL/alice/dep-model/resolve/main/weights.bin"
check_eq "/resolve through the balancer gives the same bytes" "$LFS_SHA" "$(sha256_of "$BODY")"
IN_VOLUME="$(find "$DATA_DIR/blobs" -name "$LFS_SHA" 2>/dev/null | wc -l)"
if [[ "$BLOBS" == s3 ]]; then
  check_eq "the LFS object is in S3, not on the shared volume" 0 "$IN_VOLUME"
else
  check_eq "the LFS object is on the shared volume (--no-s3)" 1 "$IN_VOLUME"
fi

section "@huggingface/hub through the balancer (tests/js/hf_upload.test.mjs)"
must_create "$ALICE" js-up alice model false
T0="$(date +%s%N)"
(cd "$JS_DIR" && HANGAR_URL="$HUB_URL" HANGAR_TOKEN="$ALICE" HANGAR_REPO="alice/js-up" \
  node --test --test-reporter=tap hf_upload.test.mjs) >"$T/node.out" 2>&1
node_tap_report "$T/node.out" hf_upload.test.mjs "$?"
info "JS client: $(ms_since "$T0") ms"

section "read-your-writes through the balancer: 20 commits, each read at once"
must_create "$ALICE" ryw alice model false
SAW=0 CROSSED=0 MISSES=()
for i in $(seq 1 20); do
  printf '{"key":"header","value":{"summary":"c%s"}}\n{"key":"file","value":{"content":"%s","path":"note.txt","encoding":"base64"}}\n' \
    "$i" "$(printf 'commit %s' "$i" | base64 -w0)" >"$T/c.ndjson"
  req POST "$HUB_URL/api/models/alice/ryw/commit/main" "${AUTH[@]}" \
    -H 'Content-Type: application/x-ndjson' --data-binary @"$T/c.ndjson"
  if [[ "$ST" != 200 ]]; then
    MISSES+=("commit $i: status $ST $(head -c 200 "$BODY")")
    continue
  fi
  OID="$(jbody .commitOid)" BY="$(hdr X-Hangar-Replica)"
  req GET "$HUB_URL/api/models/alice/ryw/revision/main" "${AUTH[@]}"
  REV="$(jbody .sha)" READ_BY="$(hdr X-Hangar-Replica)"
  req GET "$HUB_URL/alice/ryw/resolve/main/note.txt" "${AUTH[@]}"
  if [[ "$REV" == "$OID" && "$(cat "$BODY")" == "commit $i" ]]; then
    SAW=$((SAW + 1))
  else
    MISSES+=("commit $i ($OID on $BY): main read on $READ_BY was ${REV:-?}, note.txt '$(head -c 40 "$BODY")'")
  fi
  [[ -n "$BY" && "$BY" != "$READ_BY" ]] && CROSSED=$((CROSSED + 1))
done
check_eq "every read of main sees the commit made just before it" 20 "$SAW"
((${#MISSES[@]})) && fail "read-your-writes misses" "${MISSES[@]}"
info "$CROSSED of 20 commits were read on the other replica than the one that made them"
check_true "most reads went to the other replica (no stickiness)" test "$CROSSED" -ge 10

section "OCI: skopeo push and pull through the balancer"
python3 - "$T/img" <<'EOF' || die "could not build the OCI image layout"
import gzip, hashlib, io, json, os, sys, tarfile
root = sys.argv[1]
blobs = os.path.join(root, "blobs", "sha256")
os.makedirs(blobs)
def put(data):
    d = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, d), "wb").write(data)
    return "sha256:" + d
def layer(name, data):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mtime = len(data), 1700000000
        tar.addfile(info, io.BytesIO(data))
    gz = gzip.compress(raw.getvalue(), compresslevel=1, mtime=0)
    return ({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": put(gz),
             "size": len(gz)}, "sha256:" + hashlib.sha256(raw.getvalue()).hexdigest())
layers = [layer("weights.bin", os.urandom(6 << 20)), layer("README.md", b"# deployment\n")]
config = json.dumps({"architecture": "amd64", "os": "linux",
                     "rootfs": {"type": "layers", "diff_ids": [d for _, d in layers]}}).encode()
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": put(config),
               "size": len(config)}, "layers": [l for l, _ in layers]}).encode()
json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
    "digest": put(manifest), "size": len(manifest),
    "annotations": {"org.opencontainers.image.ref.name": "v1"}}]}, open(os.path.join(root, "index.json"), "w"))
json.dump({"imageLayoutVersion": "1.0.0"}, open(os.path.join(root, "oci-layout"), "w"))
EOF
HUB_HOST="${HUB_URL#http://}"
if skopeo --insecure-policy copy --dest-tls-verify=false --dest-creds "alice:$ALICE" \
  "oci:$T/img:v1" "docker://$HUB_HOST/alice/img:v1" >"$T/skopeo.out" 2>&1; then
  pass "skopeo pushes a two-layer image through the balancer"
else
  fail "skopeo push through the balancer" "$(brief "$T/skopeo.out" 800)"
fi
if skopeo --insecure-policy copy --src-tls-verify=false --src-creds "alice:$ALICE" \
  "docker://$HUB_HOST/alice/img:v1" "oci:$T/img-back:v1" >"$T/skopeo.out" 2>&1; then
  pass "skopeo pulls it back through the balancer"
else
  fail "skopeo pull through the balancer" "$(brief "$T/skopeo.out" 800)"
fi
check_eq "the pulled image has the pushed manifest" "$(jq -r '.manifests[0].digest' "$T/img/index.json")" \
  "$(jq -r '.manifests[0].digest' "$T/img-back/index.json" 2>/dev/null)"
check_true "... and every blob byte for byte" diff -r "$T/img/blobs" "$T/img-back/blobs"

section "a job queued by the admin CLI runs on the worker"
OUT="$(admin maintain alice/dep-model --queue 2>&1)"
check_match "hangar admin maintain --queue" '^alice/dep-model: queued as job [0-9]+$' "$OUT"
JOB="${OUT##* }"
RAN=""
for ((i = 0; i < 100; i++)); do
  if admin jobs list --state done | awk -F'\t' -v id="$JOB" '$1 == id { f = 1 } END { exit !f }'; then
    RAN=1
    break
  fi
  sleep 0.1
done
check_eq "the job is done" 1 "$RAN"
check_true "... by the worker (its log)" grep -q "dep-model.git: full" "$SD/log/worker.log"

section "rolling restart under load: restart-replica a, then b"
cat >"$T/load.mjs" <<'EOF'
// A steady load through the balancer until STOP_FILE exists (or MAX_S): WORKERS loops on
// keep-alive connections, each alternating a GET of a small file and an authenticated
// HEAD of an LFS file's /resolve, PAUSE_MS between requests. Prints a JSON summary.
import http from "node:http";
import { existsSync, readFileSync } from "node:fs";
const [hub, token, getPath, getFile, headPath, stopFile, maxS] = process.argv.slice(2);
const getBody = readFileSync(getFile, "utf8");
const WORKERS = 4, PAUSE_MS = 4;
const url = new URL(hub);
const agent = new http.Agent({ keepAlive: true, maxSockets: WORKERS });
const r = { requests: 0, ok: 0, failures: 0, statuses: {}, errors: [], byReplica: {} };
const t0 = Date.now();
function one(method, path, headers) {
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, agent, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode, replica: res.headers["x-hangar-replica"], body }));
      res.on("error", (e) => resolve({ error: `response: ${e.code || ""} ${e.message}` }));
    });
    req.setTimeout(30000, () => req.destroy(new Error("no answer within 30 s")));
    req.on("error", (e) => resolve({ error: `${e.code || ""} ${e.message}` }));
    req.end();
  });
}
async function worker() {
  for (let i = 0; Date.now() - t0 < maxS * 1000 && !existsSync(stopFile); i++) {
    const head = i % 2 === 1;
    const a = head ? await one("HEAD", headPath, { authorization: `Bearer ${token}` })
                   : await one("GET", getPath, {});
    r.requests++;
    let bad = a.error;
    if (!bad && (a.status < 200 || a.status > 299)) bad = `status ${a.status}`;
    if (!bad && !head && a.body !== getBody) bad = `body ${JSON.stringify(a.body.slice(0, 60))}`;
    if (a.status) r.statuses[a.status] = (r.statuses[a.status] || 0) + 1;
    if (a.replica) r.byReplica[a.replica] = (r.byReplica[a.replica] || 0) + 1;
    if (bad) {
      r.failures++;
      if (r.errors.length < 10) r.errors.push(`${((Date.now() - t0) / 1000).toFixed(2)}s ${head ? "HEAD" : "GET"}: ${bad}`);
    } else {
      r.ok++;
    }
    await new Promise((res) => setTimeout(res, PAUSE_MS));
  }
}
await Promise.all(Array.from({ length: WORKERS }, worker));
r.seconds = (Date.now() - t0) / 1000;
console.log(JSON.stringify(r));
EOF
OLD_A="$REPLICA_A_PID" OLD_B="$REPLICA_B_PID"
STOP="$T/load.stop"
node "$T/load.mjs" "$HUB_URL" "$ALICE" /alice/dep-model/resolve/main/config.json \
  "$W/config.json" /alice/dep-model/resolve/main/weights.bin "$STOP" 60 \
  >"$T/load.json" 2>"$T/load.err" &
LOAD_PID=$!
EXTRA_PIDS+=("$LOAD_PID")
LOAD_T0="$(date +%s%N)"
sleep 2
for r in a b; do
  T0="$(date +%s%N)"
  if "$STACK" restart-replica "$SD" "$r" >"$T/restart-$r.out" 2>&1; then
    pass "deploy/stack.sh restart-replica $r ($(ms_since "$T0") ms: drain, exit, start, back in rotation)"
  else
    fail "deploy/stack.sh restart-replica $r" "$(tail -n 20 "$T/restart-$r.out")"
  fi
done
# The load goes on for 2 s after the second restart, 15 s in all at least.
sleep 2
while (($(ms_since "$LOAD_T0") < 15000)); do sleep 0.2; done
touch "$STOP"
wait "$LOAD_PID"
check_eq "the load generator exits 0" 0 "$?"
LOAD="$(cat "$T/load.json")"
info "load: $(jq -r '"\(.requests) requests in \(.seconds) s, \(.ok) ok, \(.failures) failed; statuses \(.statuses | tojson); by replica \(.byReplica | tojson)"' <<<"$LOAD" 2>/dev/null || echo "no summary: $(head -c 300 "$T/load.err")")"
check_eq "no request failed during the rolling restart" 0 "$(jq -r .failures <<<"$LOAD" 2>/dev/null)"
[[ "$(jq -r '.errors | length' <<<"$LOAD" 2>/dev/null)" == 0 ]] ||
  info "first failures: $(jq -r '.errors | join(" | ")' <<<"$LOAD")"
check_true "the load was steady (at least 1,000 requests)" test "$(jq -r '.requests // 0' <<<"$LOAD")" -ge 1000
# shellcheck disable=SC1091
source "$SD/stack.env"
check_true "both replicas are new processes" test "$REPLICA_A_PID" != "$OLD_A" -a "$REPLICA_B_PID" != "$OLD_B"
for r in a b; do
  check_true "HAProxy took replica $r out of rotation and back" awk -v s="Server replicas/$r is" \
    'index($0, s " DOWN") { down = 1 } down && index($0, s " UP") { up = 1 } END { exit !up }' \
    "$SD/log/haproxy.log"
done
STATS="$(curl -s --max-time 5 "$STATS_URL;csv" | awk -F, '$1 == "replicas" && $2 == "BACKEND" { print "retries " $16 ", redispatches " $17 }')"
info "HAProxy: ${STATS:-no stats}"

section "kill -9 of a replica during a 1 GiB upload through the balancer"
must_create "$ALICE" big alice model false
BIG="$T/big.bin"
head -c $((1024 * 1024 * 1024)) /dev/urandom >"$BIG"
BIG_SHA="$(sha256_of "$BIG")"
MARK_A="$(wc -l <"$SD/log/replica-a.log")"
T0="$(date +%s%N)"
"$HANGAR_BIN" upload alice/big "$BIG" big.bin --endpoint "$HUB_URL" --token "$ALICE" \
  --part-size 64M --workers 2 --quiet >"$T/up1.out" 2>"$T/up1.err" &
UP_PID=$!
EXTRA_PIDS+=("$UP_PID")
# Replica a has stored a part of this upload: kill it in the middle of the rest.
KILLED=""
for ((i = 0; i < 1200; i++)); do
  if tail -n +"$MARK_A" "$SD/log/replica-a.log" | grep -q 'PUT /api/uploads/[0-9a-f]*/parts/[0-9]* 200'; then
    kill -KILL "$REPLICA_A_PID" && KILLED="$(ms_since "$T0")"
    break
  fi
  alive "$UP_PID" || break
  sleep 0.05
done
check_true "replica a was killed (-9) while it took the upload's parts" test -n "$KILLED"
info "replica a killed $KILLED ms into the upload"
req HEAD "$HUB_URL/alice/big/resolve/main/big.bin" -H "Authorization: Bearer $ALICE"
check_status "nothing of the file is visible before the upload completes" 404
if [[ "$BLOBS" == local ]]; then
  check_eq "... not even the blob under its sha256" 0 \
    "$(find "$DATA_DIR/blobs" -name "$BIG_SHA" 2>/dev/null | wc -l)"
fi
wait "$UP_PID"
UP_RC=$?
RUNS=1
if ((UP_RC != 0)); then
  # The client gave up (its retries met the dead replica): run it again, as a user would.
  info "first run: exit $UP_RC ($(tail -n 2 "$T/up1.err" | tr '\n' ' ')); running it again"
  RUNS=2
  "$HANGAR_BIN" upload alice/big "$BIG" big.bin --endpoint "$HUB_URL" --token "$ALICE" \
    --part-size 64M --workers 2 --quiet >"$T/up2.out" 2>"$T/up2.err"
  UP_RC=$?
fi
check_eq "the upload completes through the balancer" 0 "$UP_RC"
info "upload finished after $RUNS run(s), $(ms_since "$T0") ms in all"
curl -sS -o "$T/big.down" --max-time 300 -H "Authorization: Bearer $ALICE" \
  "$HUB_URL/alice/big/resolve/main/big.bin" 2>"$T/down.err"
check_eq "the file downloaded through the balancer has the uploaded sha256" "$BIG_SHA" \
  "$(sha256_of "$T/big.down")"
rm -f "$BIG" "$T/big.down"
T0="$(date +%s%N)"
if "$STACK" restart-replica "$SD" a >"$T/revive.out" 2>&1; then
  pass "the killed replica starts again and rejoins the rotation ($(ms_since "$T0") ms)"
else
  fail "restart-replica a after the kill" "$(tail -n 20 "$T/revive.out")"
fi
# shellcheck disable=SC1091
source "$SD/stack.env"

section "deploy/stack.sh stop"
T0="$(date +%s%N)"
"$STACK" stop "$SD" >"$T/stop.out" 2>&1
check_eq "stop exits 0" 0 "$?"
info "stack stopped in $(ms_since "$T0") ms"
LEFT=""
for p in "$REPLICA_A_PID" "$REPLICA_B_PID" "$WORKER_PID" "$HAPROXY_PID"; do
  alive "$p" && LEFT+=" $p"
done
check_eq "no replica, worker or HAProxy left running" "" "$LEFT"
check_false "PostgreSQL stopped" test -f "$SD/pg/data/postmaster.pid"

finish
