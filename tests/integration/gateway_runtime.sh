#!/usr/bin/env bash
# Issue 16: supervised runtimes. The hub is configured with the ONNX runtime
# (runtimes/onnx: onnxruntime over the Open Inference Protocol) and a runtime that never
# starts. A model repo holds a real one-Relu ONNX model (Debian python3-onnx) in LFS; its
# commit is registered, `champion` set, and an OIP route follows it: /infer answers the
# model's real output (max(0, x), computed here). Then a second commit (the real Silero VAD
# model instead) is registered and `champion` moved while requests run: none fails, the
# runtime is restarted on the new snapshot (hard links to the blob store's objects), the
# audit log shows the move. A killed runtime is restarted; a template that fails to start
# answers 503 with its log, and the other routes still serve.
#
# Usage: gateway_runtime.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"
fetch_inputs
[[ -f "$REPO_ROOT/runtimes/onnx/node_modules/onnxruntime-node/package.json" ]] ||
  die "runtimes/onnx/node_modules is missing: bash scripts/install-deps.sh"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
cat >"$T/hangar.toml" <<TOML
[gateway]
health_interval_ms = 200

[runtimes.onnx]
command = ["node", "$REPO_ROOT/runtimes/onnx/server.mjs", "--model-dir", "{snapshot}",
           "--port", "{port}", "--name", "{model}", "--version", "{version}"]
protocol = "oip"
start_timeout_s = 30

[runtimes.broken]
command = ["sh", "-c", "env; echo cannot load the weights >&2; exit 3"]
start_timeout_s = 5
TOML
new_user alice --admin
ALICE="$(new_token alice --role write)"
HANGAR_SECRET_PROBE=s3cr3t start_server "$DATA" --config "$T/hangar.toml" || die "hangar serve did not start"
pass "server listening on $BASE"
AUTH=(-H "Authorization: Bearer $ALICE" -H 'Content-Type: application/json')
HA="$(cred_helper alice "$ALICE")"
must_create "$ALICE" relu alice model false
W="$T/relu"
gitc "" clone -q "$BASE/alice/relu" "$W" 2>"$T/c.err" || die "clone" "$(brief "$T/c.err" 500)"
(cd "$W" && git lfs track "*.onnx" >/dev/null && cp "$RELU" model.onnx && git add -A &&
  git commit -q -m "A one-Relu model")
FIRST="$(git -C "$W" rev-parse HEAD)"
gitc "$HA" -C "$W" push -q origin main >"$T/p.out" 2>&1 || die "push" "$(brief "$T/p.out" 1000)"
pass "pushed alice/relu with model.onnx in LFS"

req POST "$BASE/api/v1/models" "${AUTH[@]}" --data-binary "{\"name\":\"relu\",\"repo\":\"alice/relu\",\"revision\":\"$FIRST\"}"
check_status "register version 1" 201
req PUT "$BASE/api/v1/models/relu/aliases/champion" "${AUTH[@]}" --data-binary '{"version":1}'
check_status "champion -> 1" 200
req POST "$BASE/api/v1/gateway/routes" "${AUTH[@]}" --data-binary \
  '{"name":"relu","model":"relu","alias":"champion","protocol":"oip","timeout_ms":20000,"backends":[{"kind":"runtime","runtime":"onnx"}]}'
check_status "an OIP route to the onnx runtime" 201
check_json "the route shows its runtime" '.backends[0].runtime' onnx

section "the ONNX runtime answers /infer with the model's real output"
infer() {
  req POST "$BASE/v2/models/relu/infer" "${AUTH[@]}" --data-binary \
    "{\"inputs\":[{\"name\":\"x\",\"datatype\":\"FP32\",\"shape\":[1,2],\"data\":[$1,$2]}]}"
}
infer -1.5 2.25
check_status "infer" 200
# Relu by hand: max(0, -1.5) = 0, max(0, 2.25) = 2.25.
check_json "y = max(0, x)" '.outputs[0].data | map(tostring) | join(",")' "0,2.25"
check_json "output name and shape" '.outputs[0].name + " " + (.outputs[0].shape | map(tostring) | join("x"))' "y 1x2"
check_json "served by version 1" '.model_version' 1
infer 3 -0.0001
check_json "another input" '.outputs[0].data | map(tostring) | join(",")' "3,0"
req POST "$BASE/v2/models/relu/infer" "${AUTH[@]}" --data-binary '{"inputs":[{"name":"x","datatype":"FP32","shape":[1,3],"data":[1,2,3]}]}'
check_status "a wrong shape: the runtime's 400, passed on" 400
check_json_true "with its message" '.error | test("dimensions")'
SNAP1="$(ls -d "$DATA"/runtimes/snapshots/relu-v1-*)"
OID="$(sha256sum "$RELU" | cut -d' ' -f1)"
OBJECT="$(find "$DATA" -path '*/runtimes' -prune -o -type f -name "$OID*" -print | head -n1)"
check_eq "the snapshot's model.onnx is a hard link to the blob store's object" \
  "$(stat -c %i "$OBJECT" 2>/dev/null)" "$(stat -c %i "$SNAP1/model.onnx" 2>/dev/null)"

section "a killed runtime is restarted"
PID1="$(pgrep -f "server.mjs --model-dir $SNAP1" | head -n1)"
check_ne "the runtime runs" "" "$PID1"
kill -KILL -- "-$PID1" 2>/dev/null || kill -KILL "$PID1"
wait_until 20 sh -c "curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $ALICE' $BASE/v2/models/relu/ready | grep -q 200"
check_true "ready again after the kill (${WAITED_MS} ms)" test "$(pgrep -f "server.mjs --model-dir $SNAP1" | head -n1)" != ""

section "push, register, move champion under load"
(cd "$W" && git rm -q model.onnx && mkdir -p onnx && cp "$ONNX" onnx/silero_vad_legacy.onnx &&
  git add -A && git commit -q -m "The VAD model instead")
SECOND="$(git -C "$W" rev-parse HEAD)"
gitc "$HA" -C "$W" push -q origin main >"$T/p2.out" 2>&1 || die "push 2" "$(brief "$T/p2.out" 1000)"
req POST "$BASE/api/v1/models/relu/versions" "${AUTH[@]}" --data-binary "{\"repo\":\"alice/relu\",\"revision\":\"$SECOND\"}"
check_status "register version 2" 201
# Metadata requests while the alias moves: each must succeed, first from v1, then from v2.
(for i in $(seq 1 150); do
   curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $ALICE" "$BASE/v2/models/relu"
   sleep 0.02
 done) >"$T/during.txt" &
LOAD=$!
sleep 0.5
req PUT "$BASE/api/v1/models/relu/aliases/champion" "${AUTH[@]}" --data-binary '{"version":2}'
check_status "champion -> 2" 200
wait "$LOAD"
check_eq "150 requests during the switch, all 200" "150" "$(grep -c '^200$' "$T/during.txt")"
req GET "$BASE/v2/models/relu" -H "Authorization: Bearer $ALICE"
check_json "the route serves the new files (the VAD model's inputs)" '.inputs | map(.name) | sort | join(",")' "c,h,input,sr"
check_json "from version 2" '.versions[0]' 2
check_true "a snapshot of version 2" test -f "$(ls -d "$DATA"/runtimes/snapshots/relu-v2-*)/onnx/silero_vad_legacy.onnx"
# ('[s]erver': the pattern must not match the shell that runs pgrep.)
wait_until 20 sh -c "! pgrep -f '[s]erver.mjs --model-dir $SNAP1' >/dev/null"
check_true "the version 1 runtime was drained and stopped (${WAITED_MS} ms; unused for 5 s first)" test "$WAITED_MS" -lt 20000
req GET "$BASE/api/v1/models/relu/aliases/log"
check_json "the audit log shows the move" '.events[0] | "\(.alias) \(.from) \(.to) \(.actor)"' "champion 1 2 alice"

section "two routes, two versions of one model, one runtime template: both kept"
req PUT "$BASE/api/v1/models/relu/aliases/staging" "${AUTH[@]}" --data-binary '{"version":1}'
check_status "staging -> 1" 200
req POST "$BASE/api/v1/gateway/routes" "${AUTH[@]}" --data-binary \
  '{"name":"relu-staging","model":"relu","alias":"staging","protocol":"oip","timeout_ms":20000,"backends":[{"runtime":"onnx"}]}'
check_status "a staging route (the backend's kind implied by \"runtime\")" 201
req GET "$BASE/v2/models/relu-staging" -H "Authorization: Bearer $ALICE"
check_json "staging serves version 1" '.versions[0]' 1
pids_before="$(pgrep -f '[s]erver.mjs --model-dir' | sort | tr '\n' ' ')"
sleep 7  # past the superseded grace (5 s): neither may be drained while routes name both
req GET "$BASE/v2/models/relu-staging" -H "Authorization: Bearer $ALICE"
check_json "staging still version 1" '.versions[0]' 1
req GET "$BASE/v2/models/relu" -H "Authorization: Bearer $ALICE"
check_json "champion still version 2" '.versions[0]' 2
check_eq "the same two runtimes, not restarted" "$pids_before" "$(pgrep -f '[s]erver.mjs --model-dir' | sort | tr '\n' ' ')"

section "a runtime that fails to start"
req POST "$BASE/api/v1/gateway/routes" "${AUTH[@]}" --data-binary \
  '{"name":"broken","model":"relu","alias":"champion","protocol":"oip","retries":0,"timeout_ms":8000,"backends":[{"kind":"runtime","runtime":"broken"}]}'
check_status "a route to it" 201
req GET "$BASE/v2/models/broken/ready" -H "Authorization: Bearer $ALICE"
check_status "503" 503
check_json_true "saying why, with its log (to a site admin)" '.error | test("exited with status 3") and test("cannot load the weights")'
check_true "the runtime's environment is in its log" grep -q '^PATH=' "$DATA/runtimes/logs/relu-v2-broken.log"
check_false "without the hub's HANGAR_* variables" grep -q HANGAR_SECRET_PROBE "$DATA/runtimes/logs/relu-v2-broken.log"
new_user bob
BOB="$(new_token bob --role read)"
req GET "$BASE/v2/models/broken/ready" -H "Authorization: Bearer $BOB"
check_status "to another user: 503 too" 503
check_json_true "without the log, which names the host's paths" '.error | test("exited with status 3") and (test("weights") | not)'
req GET "$BASE/v2/models/relu" -H "Authorization: Bearer $ALICE"
check_status "the other route still serves" 200
req GET "$BASE/v2/models/relu/versions/1" -H "Authorization: Bearer $ALICE"
check_json "/versions/1 serves version 1 (the Relu model)" '.inputs | map(.name) | join(",")' "x"
req GET "$BASE/v2/models/relu/versions/9" -H "Authorization: Bearer $ALICE"
check_status "/versions/9: no such version" 404
req GET "$BASE/api/v1/gateway/routes/broken/metrics" -H "Authorization: Bearer $ALICE"
check_json_true "the route's metrics show the failing runtime to an admin" '.runtimes | map(select(.runtime == "broken")) | .[0].log | test("cannot load")'
req POST "$BASE/api/v1/gateway/routes" "${AUTH[@]}" --data-binary \
  '{"name":"nope","model":"relu","alias":"champion","protocol":"oip","backends":[{"kind":"runtime","runtime":"missing"}]}'
check_status "an unknown template is refused" 400
check_json_true "naming it" '.error | test("no runtime template .missing.")'
req GET "$BASE/api/v1/models/relu/aliases/log"
check_json "the registry is unchanged (three alias events)" '.events | length' 3

section "shutdown"
stop_server
check_eq "SIGTERM: server exits 0" 0 "$SERVER_RC"
check_false "no runtime outlives the hub" pgrep -f "runtimes/onnx/server.mjs --model-dir $DATA"
finish
