#!/usr/bin/env bash
# Issue #5 acceptance "Real clients" (auth part, oci.md §9): skopeo copies a multi-layer OCI
# image layout into Hangar and back (manifest and blob digests identical), once with
# `[oci] challenge = "basic"` (hub token as the Basic password) and once with the default
# Bearer token flow (401 challenge → GET /v2/token → scoped registry token). Around it:
# the shape of the 401 challenges and of /v2/token answers (curl), skopeo inspect and
# list-tags, anonymous pull of a public repo, and refusals: anonymous push, wrong token,
# read-only token pushing, another user's repo, a registry token used for another repo or
# action, an expired or forged registry token. Last, the time of the same `skopeo copy`
# into Hangar and into docker-registry (CNCF Distribution 2.8.2) started here.
# Usage: oci_skopeo.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

command -v skopeo >/dev/null || die "skopeo is not installed (scripts/install-deps.sh)"
PEER_BIN=/usr/bin/docker-registry

# ---------------------------------------------------------------------------------------
# A multi-layer OCI image layout, built locally (python3 stdlib): 3 gzip tar layers
# (random 12 MiB, random 3 MiB, a few text files), an image config whose diff_ids are the
# uncompressed tars' digests, a manifest, and index.json naming it v1.
section "setup: image layout"
python3 - "$T/src" <<'EOF' || die "could not build the OCI image layout"
import gzip, hashlib, io, json, os, sys, tarfile

root = sys.argv[1]
blobs = os.path.join(root, "blobs", "sha256")
os.makedirs(blobs)

def put(data):
    d = hashlib.sha256(data).hexdigest()
    with open(os.path.join(blobs, d), "wb") as f:
        f.write(data)
    return "sha256:" + d

def layer(files):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 1700000000, 0o644
            tar.addfile(info, io.BytesIO(data))
    tar_bytes = raw.getvalue()
    gz = gzip.compress(tar_bytes, compresslevel=1, mtime=0)
    return ({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
             "digest": put(gz), "size": len(gz)},
            "sha256:" + hashlib.sha256(tar_bytes).hexdigest())

layers = [layer({"weights/a.bin": os.urandom(12 << 20)}),
          layer({"weights/b.bin": os.urandom(3 << 20)}),
          layer({"README.md": b"# skopeo test image\n", "config.json": b'{"k": 1}\n'})]
config = json.dumps({
    "created": "2024-01-01T00:00:00Z", "architecture": "amd64", "os": "linux",
    "config": {"Env": ["PATH=/usr/bin"]},
    "rootfs": {"type": "layers", "diff_ids": [d for _, d in layers]},
    "history": [{"created": "2024-01-01T00:00:00Z", "created_by": "oci_skopeo.sh"}] * 3,
}, sort_keys=True).encode()
manifest = json.dumps({
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
               "digest": put(config), "size": len(config)},
    "layers": [l for l, _ in layers],
}, sort_keys=True).encode()
with open(os.path.join(root, "index.json"), "w") as f:
    json.dump({"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": put(manifest), "size": len(manifest),
        "annotations": {"org.opencontainers.image.ref.name": "v1"}}]}, f)
with open(os.path.join(root, "oci-layout"), "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
EOF
# layout_digests DIR: the manifest digest of DIR's index.json, then every blob the
# manifest names (config and layers), one per line.
layout_digests() {
  local m
  m="$(jq -r '.manifests[0].digest' "$1/index.json")" || return 1
  echo "$m"
  jq -r '.config.digest, .layers[].digest' "$1/blobs/sha256/${m#sha256:}"
}
SRC_DIGESTS="$(layout_digests "$T/src")"
MANIFEST_DIGEST="$(head -n 1 <<<"$SRC_DIGESTS")"
check_eq "the source layout has a manifest, a config and 3 layers" 5 "$(wc -l <<<"$SRC_DIGESTS")"

section "setup: users and tokens"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
ALICE_RO="$(new_token alice --role read)"
new_user bob
BOB="$(new_token bob --role write)"

SK=(skopeo --insecure-policy)
# copy_in NAME[:TAG] [skopeo copy args...]: push $T/src:v1 to Hangar; output in $T/skopeo.out.
copy_in() {
  local ref="$1"; shift
  "${SK[@]}" copy --dest-tls-verify=false "$@" "oci:$T/src:v1" "docker://127.0.0.1:$PORT/$ref" \
    >"$T/skopeo.out" 2>&1
}
# copy_out NAME:TAG DIR [skopeo copy args...]: pull into the OCI layout DIR (tag v1).
copy_out() {
  local ref="$1" dir="$2"; shift 2
  rm -rf "$dir"
  "${SK[@]}" copy --src-tls-verify=false "$@" "docker://127.0.0.1:$PORT/$ref" "oci:$dir:v1" \
    >"$T/skopeo.out" 2>&1
}
skopeo_said() { brief "$T/skopeo.out" 600; }
# expect_ok DESC CMD...: CMD must succeed (skopeo's output shown when not).
expect_ok() {
  local desc="$1"; shift
  if "$@"; then pass "$desc"; else fail "$desc" "$(skopeo_said)"; fi
}
# expect_refused DESC ERE CMD...: CMD must fail, saying something matching ERE.
expect_refused() {
  local desc="$1" ere="$2"; shift 2
  if "$@"; then
    fail "$desc" "skopeo succeeded"
  elif grep -qiE "$ere" "$T/skopeo.out"; then
    pass "$desc"
  else
    fail "$desc" "expected output matching: $ere" "$(skopeo_said)"
  fi
}
# tags_of NAME: the tags pushed to NAME as alice sees them, comma-joined ("" if none); the
# branch `main` the repo projection (docs/oci-projection.md) shows for every repo is left out.
tags_of() {
  req GET "$BASE/v2/$1/tags/list" -u "alice:$ALICE"
  [[ "$ST" == 200 ]] && jbody '[.tags[] | select(. != "main")] | join(",")'
}
# check_oci_401 DESC CHALLENGE: a 401 with an OCI UNAUTHORIZED body and that exact challenge.
check_oci_401() {
  local problems=()
  [[ "$ST" == 401 ]] || problems+=("expected status 401")
  [[ "$(hdr WWW-Authenticate)" == "$2" ]] ||
    problems+=("expected WWW-Authenticate: $2" "got WWW-Authenticate: $(hdr WWW-Authenticate)")
  [[ "$(jbody '.errors[0].code')" == UNAUTHORIZED ]] || problems+=("expected errors[0].code UNAUTHORIZED")
  [[ -n "$(jbody '.errors[0].message')" ]] || problems+=("expected a message")
  if ((${#problems[@]} == 0)); then pass "$1"; else _fail_http "$1" "${problems[@]}"; fi
}

# round_trip MODE NAME: push as alice, pull back, compare digests, inspect, list-tags.
round_trip() {
  local mode="$1" name="$2"
  expect_ok "$mode: skopeo copy oci:src → $name:v1 with alice's token" \
    copy_in "$name:v1" --dest-creds "alice:$ALICE"
  expect_ok "$mode: skopeo copy $name:v1 → oci:dst" \
    copy_out "$name:v1" "$T/dst-$mode" --src-creds "alice:$ALICE"
  check_eq "$mode: manifest and blob digests identical after the round trip" \
    "$SRC_DIGESTS" "$(layout_digests "$T/dst-$mode" 2>/dev/null)"
  local ok=1 d
  while read -r d; do
    cmp -s "$T/src/blobs/sha256/${d#sha256:}" "$T/dst-$mode/blobs/sha256/${d#sha256:}" || ok=0
  done <<<"$SRC_DIGESTS"
  check_eq "$mode: every blob byte-identical" 1 "$ok"
  if "${SK[@]}" inspect --tls-verify=false --creds "alice:$ALICE" "docker://127.0.0.1:$PORT/$name:v1" \
    >"$T/inspect.json" 2>"$T/skopeo.out"; then
    check_eq "$mode: skopeo inspect names the manifest digest" "$MANIFEST_DIGEST" \
      "$(jq -r .Digest "$T/inspect.json")"
    check_eq "$mode: skopeo inspect lists the 3 layers" \
      "$(tail -n 3 <<<"$SRC_DIGESTS" | paste -sd,)" "$(jq -r '.Layers | join(",")' "$T/inspect.json")"
  else
    fail "$mode: skopeo inspect" "$(skopeo_said)"
  fi
  expect_ok "$mode: skopeo copy of the same image to tag v2" \
    copy_in "$name:v2" --dest-creds "alice:$ALICE"
  if "${SK[@]}" list-tags --tls-verify=false --creds "alice:$ALICE" "docker://127.0.0.1:$PORT/$name" \
    >"$T/tags.json" 2>"$T/skopeo.out"; then
    check_eq "$mode: skopeo list-tags (the projected branch main aside)" "v1,v2" \
      "$(jq -r '[.Tags[] | select(. != "main")] | sort | join(",")' "$T/tags.json")"
  else
    fail "$mode: skopeo list-tags" "$(skopeo_said)"
  fi
}

# refusals MODE NAME: who may and may not pull and push NAME (alice's public repo, made by
# round_trip) and alice's private repo alice/private-$MODE.
refusals() {
  local mode="$1" name="$2"
  expect_ok "$mode: anonymous pull of a public repo" copy_out "$name:v1" "$T/anon-$mode"
  check_eq "$mode:   same manifest" "$MANIFEST_DIGEST" \
    "$(jq -r '.manifests[0].digest' "$T/anon-$mode/index.json" 2>/dev/null)"
  expect_refused "$mode: anonymous push refused" 'unauthori[sz]ed|authentication required|denied' \
    copy_in "alice/anon-$mode:v1"
  check_eq "$mode:   nothing created" "" "$(tags_of "alice/anon-$mode")"
  expect_refused "$mode: wrong token refused" 'unauthori[sz]ed|invalid|denied' \
    copy_in "alice/wrong-$mode:v1" --dest-creds "alice:hf_thisIsNotAValidTokenAtAll123456"
  expect_refused "$mode: wrong token cannot pull either" 'unauthori[sz]ed|invalid|denied' \
    copy_out "$name:v1" "$T/wrong-$mode" --src-creds "alice:hf_thisIsNotAValidTokenAtAll123456"
  expect_ok "$mode: read-only token can pull" \
    copy_out "$name:v1" "$T/ro-$mode" --src-creds "alice:$ALICE_RO"
  expect_refused "$mode: read-only token cannot push" 'unauthori[sz]ed|denied|forbidden' \
    copy_in "$name:ro" --dest-creds "alice:$ALICE_RO"
  check_eq "$mode:   no tag ro" "v1,v2" "$(tags_of "$name")"
  expect_refused "$mode: bob's token cannot push to alice's repo" 'unauthori[sz]ed|denied|forbidden' \
    copy_in "$name:bob" --dest-creds "bob:$BOB"
  check_eq "$mode:   no tag bob" "v1,v2" "$(tags_of "$name")"
  expect_ok "$mode: bob's token pushes to bob's own repo" \
    copy_in "bob/img-$mode:v1" --dest-creds "bob:$BOB"
  expect_ok "$mode: alice pushes to her private repo" \
    copy_in "alice/private-$mode:v1" --dest-creds "alice:$ALICE"
  expect_refused "$mode: anonymous cannot pull a private repo" 'unauthori[sz]ed|denied|not found|unknown' \
    copy_out "alice/private-$mode:v1" "$T/priv-anon-$mode"
  expect_refused "$mode: bob cannot pull alice's private repo" 'unauthori[sz]ed|denied|not found|unknown' \
    copy_out "alice/private-$mode:v1" "$T/priv-bob-$mode" --src-creds "bob:$BOB"
}

# ---------------------------------------------------------------------------------------
section "Basic challenges ([oci] challenge = \"basic\")"
printf '[oci]\nchallenge = "basic"\n' >"$T/basic.toml"
start_server "$DATA" --config "$T/basic.toml" || die "hangar serve did not start"
must_create "$ALICE" private-basic alice model true
req GET "$BASE/v2/alice/private-basic/tags/list"
check_oci_401 "anonymous read of a private repo → 401 Basic challenge" 'Basic realm="Hangar"'
req POST "$BASE/v2/alice/img-basic/blobs/uploads/"
check_oci_401 "anonymous upload → 401 Basic challenge" 'Basic realm="Hangar"'
req GET "$BASE/v2/" -u "alice:hf_thisIsNotAValidTokenAtAll123456"
check_oci_401 "wrong token on /v2/ → 401 Basic challenge" 'Basic realm="Hangar"'
req GET "$BASE/v2/" -u "anyone:$ALICE"
check_status "/v2/ with a hub token as Basic password (any user name) → 200" 200
req GET "$BASE/v2/" -H "Authorization: Bearer $ALICE"
check_status "/v2/ with a hub token as Bearer → 200" 200
round_trip basic alice/img-basic
refusals basic alice/img-basic
stop_server || fail "hangar serve stops cleanly" "exit: $SERVER_RC"

# ---------------------------------------------------------------------------------------
section "Bearer token flow (default)"
start_server "$DATA" || die "hangar serve did not start"
SERVICE="127.0.0.1:$PORT"
REALM="$BASE/v2/token"
must_create "$ALICE" private-bearer alice model true
req GET "$BASE/v2/alice/private-bearer/tags/list"
check_oci_401 "anonymous read of a private repo → 401 Bearer challenge with pull scope" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\",scope=\"repository:alice/private-bearer:pull\""
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/"
check_oci_401 "anonymous upload → 401 Bearer challenge with pull,push scope" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\",scope=\"repository:alice/img-bearer:pull,push\""
req GET "$BASE/v2/" -H "Authorization: Bearer hf_thisIsNotAValidTokenAtAll123456"
check_oci_401 "wrong token on /v2/ → 401 Bearer challenge without scope" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\""
req GET "$BASE/v2/" -u "anyone:$ALICE"
check_status "/v2/ still takes a hub token as Basic password → 200" 200

# token URL PARAMS [curl args]: GET /v2/token?PARAMS; TOK = the token ("" on failure).
token() {
  local q="$1"; shift
  req GET "$REALM?$q" "$@"
  TOK=""
  [[ "$ST" == 200 ]] && TOK="$(jbody .token)"
}
# claims TOKEN: a registry token's claims (base64url JSON between the prefix and the MAC).
claims() {
  python3 -c 'import base64, sys
p = sys.argv[1].split(".")[1]
sys.stdout.buffer.write(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))' "$1" 2>/dev/null
}
# granted: the access list of TOK as space-separated "type:name:actions".
granted() { claims "$TOK" | jq -r '[.access[] | "\(.type):\(.name):\(.actions | join(","))"] | join(" ")'; }
Q_PUSH="service=$SERVICE&scope=repository:alice/img-bearer:pull,push"

token "$Q_PUSH" -u "alice:$ALICE"
check_status "GET /v2/token with alice's hub token → 200" 200
check_json "  token and access_token are the same" '.token == .access_token' true
check_json "  expires_in 300 (the default token_ttl_s)" .expires_in 300
check_json_true "  issued_at is an RFC 3339 time" '.issued_at | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")'
check_match "  the token has the registry prefix" '^hgroci1\.' "$TOK"
check_eq "  grants pull,push on alice/img-bearer" "repository:alice/img-bearer:pull,push" "$(granted)"
ALICE_PUSH_TOK="$TOK"
ALICE_UID="$(claims "$TOK" | jq -r .uid)"
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/" -H "Authorization: Bearer $ALICE_PUSH_TOK"
check_status "  the token opens an upload in that repo → 202" 202
req POST "$BASE/v2/alice/other-bearer/blobs/uploads/" -H "Authorization: Bearer $ALICE_PUSH_TOK"
check_oci_401 "  the same token on another repo → 401 asking for that repo's scope" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\",scope=\"repository:alice/other-bearer:pull,push\""
check_match "  the message names what is missing" 'does not grant push on alice/other-bearer' \
  "$(jbody '.errors[0].message')"
req DELETE "$BASE/v2/alice/img-bearer/manifests/$MANIFEST_DIGEST" -H "Authorization: Bearer $ALICE_PUSH_TOK"
check_oci_401 "  the same token for a delete (not granted) → 401 asking for delete" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\",scope=\"repository:alice/img-bearer:delete\""

token "service=$SERVICE&scope=repository:alice/img-bearer:pull&scope=repository:bob/x:pull,push%20repository:alice/y:push&scope=registry:catalog:*" \
  -u "alice:$ALICE"
check_status "several scopes (repeated and space-separated) → 200" 200
check_eq "  intersection per repository: bob/x nothing, alice/y (creatable) push, catalog *" \
  "repository:alice/img-bearer:pull repository:alice/y:push registry:catalog:*" "$(granted)"

# alice/img-bearer exists now (the upload above created it, public).
Q_PRIV="service=$SERVICE&scope=repository:alice/private-bearer:pull,push"
token "$Q_PUSH"
check_status "anonymous token request → 200" 200
check_eq "  anonymous gets pull, not push, on a public repo" "repository:alice/img-bearer:pull" "$(granted)"
check_eq "  its subject is anonymous" "true " "$(claims "$TOK" | jq -r '"\(.anon) \(.sub)"')"
token "$Q_PRIV"
check_eq "  anonymous gets nothing on a private repo" "" "$(granted)"
token "$Q_PUSH" -u "anyone:"
check_eq "  Basic with an empty password (skopeo without credentials) is anonymous" \
  "repository:alice/img-bearer:pull" "$(granted)"
token "$Q_PUSH" -u "alice:$ALICE_RO"
check_status "read-only hub token → 200" 200
check_eq "  but only pull" "repository:alice/img-bearer:pull" "$(granted)"
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/" -H "Authorization: Bearer $TOK"
check_oci_401 "  its token cannot open an upload → 401" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\",scope=\"repository:alice/img-bearer:pull,push\""
token "$Q_PUSH" -u "bob:$BOB"
check_eq "bob's token gets only pull on alice's public repo" "repository:alice/img-bearer:pull" "$(granted)"
token "$Q_PRIV" -u "bob:$BOB"
check_eq "bob's token gets nothing on alice's private repo" "" "$(granted)"
token "$Q_PRIV" -u "alice:$ALICE"
check_eq "alice's token gets pull,push on her private repo" \
  "repository:alice/private-bearer:pull,push" "$(granted)"

req GET "$REALM?$Q_PUSH" -u "alice:hf_thisIsNotAValidTokenAtAll123456"
check_status "token request with a wrong hub token → 401" 401
check_json "  OCI error body" '.errors[0].code' UNAUTHORIZED
req GET "$REALM?$Q_PUSH" -u "alice:$ALICE_PUSH_TOK"
check_status "a registry token is not a credential for /v2/token → 401" 401
req GET "$REALM?service=other.example&scope=repository:alice/img-bearer:pull" -u "alice:$ALICE"
check_status "token request for another service → 400" 400
check_match "  message names the service" "unknown service 'other.example'" "$(jbody '.errors[0].message')"
req GET "$REALM?service=$SERVICE&scope=repository:alice/img-bearer" -u "alice:$ALICE"
check_status "malformed scope → 400" 400
check_match "  message names the scope" "invalid scope 'repository:alice/img-bearer'" "$(jbody '.errors[0].message')"

req POST "$REALM" -H 'Content-Type: application/x-www-form-urlencoded' \
  --data-urlencode grant_type=password --data-urlencode username=alice \
  --data-urlencode "password=$ALICE" --data-urlencode "service=$SERVICE" \
  --data-urlencode "scope=repository:alice/img-bearer:pull,push" --data-urlencode client_id=it
check_status "POST /v2/token, OAuth2 password grant → 200" 200
check_json "  token_type Bearer" .token_type Bearer
check_json "  scope granted" .scope "repository:alice/img-bearer:pull,push"
TOK="$(jbody .access_token)"
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/" -H "Authorization: Bearer $TOK"
check_status "  its access_token opens an upload → 202" 202
req POST "$REALM" -H 'Content-Type: application/x-www-form-urlencoded' \
  --data "grant_type=password&username=alice&password=hf_wrong&service=$SERVICE"
check_status "POST /v2/token with a wrong password → 401" 401
check_json "  OAuth2 error" .error invalid_grant
req POST "$REALM" -H 'Content-Type: application/x-www-form-urlencoded' \
  --data "grant_type=refresh_token&refresh_token=x&service=$SERVICE"
check_status "POST /v2/token refresh grant (none issued) → 400" 400
check_json "  OAuth2 error" .error unsupported_grant_type
req POST "$REALM" -H 'Content-Type: application/json' --data '{}'
check_status "POST /v2/token that is not a form → 400" 400
check_json "  OAuth2 error" .error invalid_request

# Registry tokens minted here with the server's own secret ($DATA/secret): one expired,
# one signed with another key. The format is services/oci/oci_token.h's.
mint() { # mint KEYFILE IAT EXP: a token for alice with push on alice/img-bearer
  python3 - "$@" "$SERVICE" "$ALICE_UID" <<'EOF'
import base64, hashlib, hmac, json, sys
key = open(sys.argv[1], "rb").read()
claims = {"anon": False, "uid": int(sys.argv[5]), "sub": "alice", "adm": False, "role": "write",
          "aud": sys.argv[4], "iat": int(sys.argv[2]), "exp": int(sys.argv[3]),
          "access": [{"type": "repository", "name": "alice/img-bearer", "actions": ["pull", "push"]}]}
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
signed = "hgroci1." + b64(json.dumps(claims).encode())
mac = hmac.new(key, b"hangar-oci-registry-token-v1\n" + signed.encode(), hashlib.sha256).digest()
print(signed + "." + b64(mac))
EOF
}
NOW="$(date +%s)"
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/" -H "Authorization: Bearer $(mint "$DATA/secret" "$((NOW - 30))" "$((NOW + 300))")"
check_status "a token minted here with the server secret is accepted (the minting is right)" 202
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/" -H "Authorization: Bearer $(mint "$DATA/secret" "$((NOW - 400))" "$((NOW - 100))")"
check_oci_401 "an expired registry token → 401 with the challenge" \
  "Bearer realm=\"$REALM\",service=\"$SERVICE\",scope=\"repository:alice/img-bearer:pull,push\""
check_match "  message says expired" 'expired' "$(jbody '.errors[0].message')"
head -c 32 /dev/urandom >"$T/other.key"
req POST "$BASE/v2/alice/img-bearer/blobs/uploads/" -H "Authorization: Bearer $(mint "$T/other.key" "$NOW" "$((NOW + 300))")"
check_status "a registry token signed with another key → 401" 401

round_trip bearer alice/img-bearer
refusals bearer alice/img-bearer
stop_server || fail "hangar serve stops cleanly" "exit: $SERVER_RC"

# ---------------------------------------------------------------------------------------
section "skopeo copy time: Hangar vs docker-registry"
# Fresh data dirs on both sides; each copies the same 3-layer image (≈15 MiB) once, cold.
[[ -x "$PEER_BIN" ]] || die "$PEER_BIN is not installed (scripts/install-deps.sh installs it)"
PEER_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$T/peer.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $T/peer-storage
http:
  addr: 127.0.0.1:$PEER_PORT
  secret: skopeo-$RANDOM$RANDOM
EOF
"$PEER_BIN" serve "$T/peer.yml" >"$T/peer.log" 2>&1 </dev/null &
PEER_PID=$!
EXTRA_PIDS+=("$PEER_PID")
SERVER_LOGS+=("$T/peer.log")
peer_up() { [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PEER_PORT/v2/")" == 200 ]]; }
wait_until 10 peer_up || die "docker-registry did not answer on 127.0.0.1:$PEER_PORT" "$(tail -c 600 "$T/peer.log")"

# timed DESC CMD...: runs CMD, prints its wall time; sets SECS.
timed() {
  local desc="$1" start end; shift
  start="$(date +%s%N)"
  if "$@"; then
    end="$(date +%s%N)"
    SECS="$(awk -v ns="$((end - start))" 'BEGIN { printf "%.3f", ns / 1e9 }')"
    pass "$desc"
    info "$desc: $SECS s"
  else
    SECS=""
    fail "$desc" "$(skopeo_said)"
  fi
}
timed "skopeo copy into docker-registry (no auth)" \
  "${SK[@]}" copy --dest-tls-verify=false "oci:$T/src:v1" "docker://127.0.0.1:$PEER_PORT/bench/img:v1" \
  >"$T/skopeo.out" 2>&1
PEER_SECS="$SECS"
kill -TERM "$PEER_PID" 2>/dev/null
wait "$PEER_PID" 2>/dev/null

for mode in basic bearer; do
  mkdir -p "$T/bench-$mode"
  DATA="$T/bench-$mode"
  new_user bench
  BENCH="$(new_token bench --role write)"
  printf '[oci]\nchallenge = "%s"\n' "$mode" >"$T/bench-$mode.toml"
  start_server "$DATA" --config "$T/bench-$mode.toml" || die "hangar serve did not start"
  timed "skopeo copy into Hangar ($mode auth)" copy_in bench/img:v1 --dest-creds "bench:$BENCH"
  [[ -n "$SECS" && -n "$PEER_SECS" ]] &&
    info "Hangar ($mode) / docker-registry: $(awk -v a="$SECS" -v b="$PEER_SECS" 'BEGIN { printf "%.2f", a / b }')"
  stop_server || fail "hangar serve stops cleanly" "exit: $SERVER_RC"
done

finish
