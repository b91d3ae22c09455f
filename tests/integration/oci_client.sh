#!/usr/bin/env bash
# Issue #5 point 4: `hangar oci push` / `pull` against two registries — Hangar's own /v2/
# (hub token, Bearer token flow) and Debian's docker-registry (CNCF Distribution 2.8.2,
# started here): a real model directory in 1 MiB parts and a 1 GiB random file, bytes
# identical after the round trip; a push killed mid-way and resumed without re-sending
# finished parts (counted from the client's --verbose lines and from each registry's
# access log); a wrong or missing token; a plain ORAS-style manifest pulled by titles, and
# one whose title escapes the output directory refused with nothing written.
# Usage: oci_client.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

command -v docker-registry >/dev/null || die "docker-registry (CNCF Distribution) is not installed"
MIB=$((1 << 20))
export XDG_CACHE_HOME="$T/cache"     # the client's resume records
export DOCKER_CONFIG="$T/docker"     # no credentials from the user's Docker config
unset HANGAR_TOKEN
RECORDS="$XDG_CACHE_HOME/hangar/oci-push"

section "setup"
fetch_inputs
DATA="$T/data"
mkdir -p "$DATA"
new_user olga
TOK="$(new_token olga --role write)"
start_server "$DATA" || die "hangar serve did not start"
HANGAR_LOG="$SERVER_ERR"
HREG="127.0.0.1:$PORT"
for name in model big resume; do must_create "$TOK" "$name" olga model false; done

# start_dreg: Distribution on 127.0.0.1:0 with its access log; sets DREG and DREG_LOG.
start_dreg() {
  mkdir -p "$T/dreg"
  cat >"$T/dreg/config.yml" <<EOF
version: 0.1
log:
  level: info
  accesslog:
    disabled: false
storage:
  filesystem:
    rootdirectory: $T/dreg/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:0
EOF
  DREG_LOG="$T/dreg/log"
  docker-registry serve "$T/dreg/config.yml" >"$DREG_LOG" 2>&1 </dev/null &
  EXTRA_PIDS+=($!)
  SERVER_LOGS+=("$DREG_LOG")
  local i
  for ((i = 0; i < 200; i++)); do
    DREG="$(grep -oE 'listening on 127\.0\.0\.1:[0-9]+' "$DREG_LOG" | head -n 1 | sed 's/listening on //')"
    [[ -n "$DREG" ]] && return 0
    sleep 0.05
  done
  return 1
}
start_dreg || die "docker-registry did not start" "$(tail -c 500 "$DREG_LOG")"
info "hangar at $HREG, docker-registry at $DREG"

# The model: a directory of two real model files (4 MiB and 1.7 MiB, so 1 MiB parts make
# several of each).
mkdir -p "$T/model/tessdata" "$T/model/onnx"
cp "$TESS" "$T/model/tessdata/eng.traineddata"
cp "$ONNX" "$T/model/onnx/silero_vad_legacy.onnx"
# 1 GiB of reproducible random bytes (AES-CTR keystream of a fixed password).
openssl enc -aes-128-ctr -nosalt -pbkdf2 -pass pass:hangar-oci-client </dev/zero 2>/dev/null |
  head -c $((1024 * MIB)) >"$T/big.bin"
[[ "$(stat -c %s "$T/big.bin")" == $((1024 * MIB)) ]] || die "could not make the 1 GiB file"
BIG_SHA="$(sha256_of "$T/big.bin")"

# oci ARGS...: runs `hangar oci ARGS`, stdout to $T/oci.out, stderr to $T/oci.err; RC.
oci() {
  "$HANGAR_BIN" oci "$@" >"$T/oci.out" 2>"$T/oci.err" </dev/null
  RC=$?
}
oci_fail() { fail "$1" "exit $RC" "stdout: $(head -c 300 "$T/oci.out")" "stderr: $(tail -c 600 "$T/oci.err")"; }
check_ok() { if [[ "$RC" == 0 ]]; then pass "$1"; else oci_fail "$1"; fi; }

# round_trip LABEL REG AUTH...: model dir and 1 GiB file there and back.
round_trip() {
  local label="$1" reg="$2"; shift 2
  local auth=("$@")

  oci push "$reg/olga/model:v1" "$T/model" --part-size 1M --workers 3 "${auth[@]}"
  check_ok "$label: push the model directory in 1 MiB parts"
  check_match "$label:   prints the pushed reference" "^$reg/olga/model@sha256:[0-9a-f]{64}$" "$(cat "$T/oci.out")"
  check_match "$label:   6 parts of 2 files sent" "pushed 2 file\\(s\\) in 6 part\\(s\\): 6 sent, 0 already there" "$(cat "$T/oci.err")"
  rm -rf "$T/out-model"
  oci pull "$reg/olga/model:v1" --output "$T/out-model" "${auth[@]}"
  check_ok "$label: pull the model"
  check_true "$label:   eng.traineddata identical" cmp -s "$TESS" "$T/out-model/tessdata/eng.traineddata"
  check_true "$label:   silero_vad_legacy.onnx identical" cmp -s "$ONNX" "$T/out-model/onnx/silero_vad_legacy.onnx"
  check_eq "$label:   nothing else in the output" 2 "$(find "$T/out-model" -type f | wc -l)"

  oci push "$reg/olga/model:v1-again" "$T/model" --part-size 1M "${auth[@]}" --verbose
  check_ok "$label: push the same files again"
  check_eq "$label:   every part found by HEAD, none sent" 0 "$(grep -c '^oci: PATCH ' "$T/oci.err")"
  check_match "$label:   summary says so" "6 part\\(s\\): 0 sent, 6 already there" "$(cat "$T/oci.err")"

  local t0=$SECONDS
  oci push "$reg/olga/big:1g" "$T/big.bin" --part-size 64M --workers 4 "${auth[@]}"
  check_ok "$label: push 1 GiB in 64 MiB parts"
  rm -rf "$T/out-big"
  oci pull "$reg/olga/big:1g" --output "$T/out-big" --workers 4 "${auth[@]}"
  check_ok "$label: pull 1 GiB"
  check_eq "$label:   sha256 identical" "$BIG_SHA" "$(sha256_of "$T/out-big/big.bin" 2>/dev/null)"
  check_eq "$label:   no temporary file left" "" "$(find "$T/out-big" -name '.*hangar-pull' | head -n 1)"
  info "$label: 1 GiB push + pull took $((SECONDS - t0)) s"
  rm -rf "$T/out-big"
}

# interrupted LABEL REG LOG AUTH...: a push in 32 MiB parts killed after a few parts, then
# resumed; checks the rerun sends exactly the parts the record does not hold.
interrupted() {
  local label="$1" reg="$2" log="$3"; shift 3
  local auth=("$@")
  local ref="$reg/olga/resume:v1"
  "$HANGAR_BIN" oci push "$ref" "$T/big.bin" --part-size 32M --workers 2 --verbose "${auth[@]}" \
    >"$T/int.out" 2>"$T/int.err" </dev/null &
  local pid=$!
  if ! wait_until 60 bash -c "(( \$(grep -c '^oci: sent big.bin part' '$T/int.err') >= 4 ))"; then
    kill -KILL "$pid" 2>/dev/null
    fail "$label: the first push sent 4 parts within 60 s" "$(tail -c 400 "$T/int.err")"
    return
  fi
  kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  local recorded
  recorded="$(cat "$RECORDS"/*.json 2>/dev/null |
    jq -s '[.[] | select(.identity | endswith("\n33554432")) | .parts | length] | max // 0')"
  check_match "$label: killed mid-way with some of 32 parts recorded" '^([4-9]|[12][0-9]|3[01])$' "$recorded"
  # PATCHes the registry accepted (202): the killed client's last one is logged late,
  # with an error status, when the registry notices the connection is gone.
  patches() { grep -cE 'PATCH /v2/olga/resume/[^ ]*( HTTP/1\.1")? 202 ' "$log"; }
  # Counted once the log has been still for a second: on a loaded machine the killed
  # client's last PATCH can still complete (202) after the kill.
  local before now i
  before="$(patches)"
  for ((i = 0; i < 20; i++)); do
    sleep 1
    now="$(patches)"
    [[ "$now" == "$before" ]] && break
    before="$now"
  done
  oci push "$ref" "$T/big.bin" --part-size 32M --workers 2 --verbose "${auth[@]}"
  check_ok "$label: the rerun completes"
  check_eq "$label:   HEAD skips the $recorded recorded parts" "$recorded" "$(grep -c '^oci: skip big.bin part' "$T/oci.err")"
  check_eq "$label:   the client sends only the other $((32 - recorded))" "$((32 - recorded))" "$(grep -c '^oci: PATCH ' "$T/oci.err")"
  check_eq "$label:   the registry's log shows as many PATCHes" "$((32 - recorded))" \
    "$(($(patches) - before))"
  rm -rf "$T/out-resume"
  oci pull "$ref" --output "$T/out-resume" "${auth[@]}"
  check_ok "$label: pull the resumed push"
  check_eq "$label:   sha256 identical" "$BIG_SHA" "$(sha256_of "$T/out-resume/big.bin" 2>/dev/null)"
  rm -rf "$T/out-resume" "$RECORDS"
}

section "docker-registry (CNCF Distribution 2.8.2)"
round_trip dreg "$DREG"
interrupted dreg "$DREG" "$DREG_LOG"

section "hangar"
round_trip hangar "$HREG" --token "$TOK"
interrupted hangar "$HREG" "$HANGAR_LOG" --token "$TOK"
HANGAR_TOKEN="$TOK" oci pull "$HREG/olga/model:v1" --output "$T/out-env"
check_ok "hangar: HANGAR_TOKEN is used when --token is not given"
check_true "hangar:   file identical" cmp -s "$TESS" "$T/out-env/tessdata/eng.traineddata"
mkdir -p "$DOCKER_CONFIG"
printf '{"auths":{"http://%s":{"auth":"%s"}}}\n' "$HREG" "$(printf 'olga:%s' "$TOK" | base64 -w0)" >"$DOCKER_CONFIG/config.json"
oci push "$HREG/olga/model:from-docker-config" "$T/model/onnx"
check_ok "hangar: credentials from \$DOCKER_CONFIG/config.json"
rm -f "$DOCKER_CONFIG/config.json"

section "bad credentials"
oci push "$HREG/olga/model:v2" "$T/model" --token hf_wrongwrongwrong
check_eq "wrong token: exit status 2" 2 "$RC"
check_match "  says the credentials were refused" "refused the credentials" "$(cat "$T/oci.err")"
oci push "$HREG/olga/model:v2" "$T/model"
check_eq "no token: exit status 2" 2 "$RC"
check_match "  says credentials are wanted" "wants credentials: give --token" "$(cat "$T/oci.err")"
oci push "$HREG/olga/model:v2" "$T/model" --password x
check_eq "--password without --username: exit status 2" 2 "$RC"

section "ORAS-style manifests"
# put_blob REG REPO FILE: monolithic POST + PUT (oci.md §4.2) with curl; prints the digest.
put_blob() {
  local d loc
  d="sha256:$(sha256_of "$3")"
  loc="$(curl -sS -o /dev/null -D - -X POST "http://$1/v2/$2/blobs/uploads/" |
    tr -d '\r' | awk -F': ' 'tolower($1) == "location" { print $2 }')"
  [[ "$loc" == /* ]] && loc="http://$1$loc"
  [[ "$loc" == *\?* ]] && loc="$loc&digest=$d" || loc="$loc?digest=$d"
  curl -sS -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' --data-binary "@$3" "$loc"
  printf '%s' "$d"
}
# oras_manifest REG REPO TAG TITLE FILE: a manifest as `oras push` makes it (oci.md §11.1).
oras_manifest() {
  printf '{}' >"$T/empty.json"
  put_blob "$1" "$2" "$T/empty.json" >/dev/null
  local d size
  d="$(put_blob "$1" "$2" "$5")"
  size="$(stat -c %s "$5")"
  jq -cn --arg d "$d" --argjson s "$size" --arg t "$4" '{schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json", artifactType: "application/vnd.unknown.artifact.v1",
    config: {mediaType: "application/vnd.oci.empty.v1+json", digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a", size: 2, data: "e30="},
    layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $d, size: $s,
              annotations: {"org.opencontainers.image.title": $t}}]}' >"$T/oras.json"
  req PUT "http://$1/v2/$2/manifests/$3" -H 'Content-Type: application/vnd.oci.image.manifest.v1+json' \
    --data-binary "@$T/oras.json"
}
oras_manifest "$DREG" olga/oras v1 "nested/silero.onnx" "$ONNX"
check_status "an ORAS-style manifest is in docker-registry" 201
rm -rf "$T/out-oras"
oci pull "$DREG/olga/oras:v1" --output "$T/out-oras"
check_ok "pull an ORAS-style manifest"
check_true "  the file lands under its title, identical" cmp -s "$ONNX" "$T/out-oras/nested/silero.onnx"

printf 'not for you\n' >"$T/evil.txt"
oras_manifest "$DREG" olga/oras evil "../escaped.txt" "$T/evil.txt"
check_status "a manifest titled ../escaped.txt is in docker-registry" 201
mkdir -p "$T/out-evil/inner"
oci pull "$DREG/olga/oras:evil" --output "$T/out-evil/inner"
check_eq "pull of an escaping title: exit status 2" 2 "$RC"
check_match "  says the name escapes" "file name '../escaped.txt' escapes the output directory" "$(cat "$T/oci.err")"
check_eq "  nothing written anywhere" "" "$(find "$T/out-evil" -type f | head -n 1)"
ln -s "$T" "$T/out-evil/inner/link"
oras_manifest "$DREG" olga/oras link "link/escaped.txt" "$T/evil.txt"
oci pull "$DREG/olga/oras:link" --output "$T/out-evil/inner"
check_eq "pull through a symlinked directory out of the output: exit status 2" 2 "$RC"
check_false "  nothing written through the link" test -e "$T/escaped.txt"

finish
