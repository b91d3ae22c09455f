#!/usr/bin/env bash
# Issue #5 acceptance "Conformance" and "Bad input": oci_conformance.py walks the OCI
# Distribution spec's four categories (pull, push, content discovery, content management,
# oci.md §10.1 and §10.2) plus the bad-input cases, against Hangar (a user's write token as
# the password, once through the Bearer token flow and once as Basic; Hangar must pass
# every check) and then against Debian's
# docker-registry (CNCF Distribution 2.8.2, htpasswd auth) with
# oci_conformance.peer-expected-fail listing the checks the peer fails, so that a change in
# either registry shows up. docs/oci-conformance.md explains each listed difference.
# Usage: oci_conformance.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

PY="$LIB_DIR/oci_conformance.py"
PEER_BIN=/usr/bin/docker-registry

# conformance NAME PY_ARGS...: runs the checks, shows their output, and adds each result line
# to lib.sh's counters (PASS and XFAIL — an expected, documented failure — count as passed;
# FAIL and XPASS as failed), plus one check for the script's own exit status.
conformance() {
  local name="$1"; shift
  local out="$T/conformance-$name.out" rc=0 start
  start="$(date +%s%N)"
  python3 "$PY" "$@" >"$out" 2>&1 || rc=$?
  local ms=$((($(date +%s%N) - start) / 1000000))
  sed 's/^/    /' "$out"
  local p x f xp
  p="$(grep -c '^PASS ' "$out")"
  x="$(grep -c '^XFAIL ' "$out")"
  f="$(grep -c '^FAIL ' "$out")"
  xp="$(grep -c '^XPASS ' "$out")"
  PASSED=$((PASSED + p + x))
  FAILED=$((FAILED + f + xp))
  info "$name: $p passed, $x failed as listed, $f failed, $xp listed but passed ($ms ms)"
  if ((rc == 0)) && ((p + x > 0)); then
    pass "$name: oci_conformance.py exits 0"
  else
    fail "$name: oci_conformance.py exits 0" "exit status $rc" "$(grep -E '^(ERROR|summary)' "$out" | head -n 5)"
  fi
}

HANGAR_EXPECT="$LIB_DIR/oci_conformance.hangar-expected-fail"
[[ -f "$HANGAR_EXPECT" ]] || HANGAR_EXPECT=/dev/null
DATA="$T/data"
mkdir -p "$DATA"
new_user conf
TOKEN="$(new_token conf --role write)"

# The default challenge is Bearer: the script trades the hub token for registry tokens at
# the challenge's realm (/v2/token), as docker, skopeo and oras do.
section "Hangar, Bearer challenge (default)"
start_server "$DATA" || die "hangar serve did not start"
conformance hangar-bearer --url "$BASE" --repo conf/conformance --mount-repo conf/crossmount \
  --username conf --password "$TOKEN" --expect-fail "$HANGAR_EXPECT"
check_match "  the Bearer token flow was used" '(^|'$'\n'')PASS auth.bearer_token_response' "$(cat "$T/conformance-hangar-bearer.out")"
stop_server || fail "hangar serve stops cleanly on SIGTERM" "exit: $SERVER_RC"

# [oci] challenge = basic: the hub token is the Basic password on every request. Fresh
# repositories, so nothing of the first run is reused.
section "Hangar, Basic challenge"
HANGAR_OCI_CHALLENGE=basic start_server "$DATA" || die "hangar serve did not start"
conformance hangar-basic --url "$BASE" --repo conf/conformance-basic \
  --mount-repo conf/crossmount-basic --username conf --password "$TOKEN" --expect-fail "$HANGAR_EXPECT"
check_match "  Basic credentials were used" '(^|'$'\n'')SKIP auth.bearer_token_response: the registry challenges with basic' "$(cat "$T/conformance-hangar-basic.out")"
stop_server || fail "hangar serve stops cleanly on SIGTERM" "exit: $SERVER_RC"

section "docker-registry (peer)"
if [[ ! -x "$PEER_BIN" ]]; then
  die "$PEER_BIN is not installed (scripts/install-deps.sh installs it)"
fi
PEER_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
PEER_PW="peer-$RANDOM$RANDOM"
# bcrypt cost 4: the peer checks the password on every request.
python3 -W ignore -c 'import crypt, sys; print("conf:" + crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))' \
  "$PEER_PW" >"$T/peer.htpasswd" || die "could not write the peer's htpasswd file"
cat >"$T/peer.yml" <<EOF
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $T/peer-storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:$PEER_PORT
  secret: conformance-$RANDOM$RANDOM
auth:
  htpasswd:
    realm: docker-registry
    path: $T/peer.htpasswd
# Without an allow list the peer refuses every layer URL (500), so no manifest with a
# nondistributable layer (which must carry urls) could be pushed.
validation:
  manifests:
    urls:
      allow:
        - ^https?://
EOF
"$PEER_BIN" serve "$T/peer.yml" >"$T/peer.log" 2>&1 </dev/null &
PEER_PID=$!
EXTRA_PIDS+=("$PEER_PID")
SERVER_LOGS+=("$T/peer.log")
peer_up() { [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PEER_PORT/v2/")" == 401 ]]; }
wait_until 10 peer_up || die "docker-registry did not answer on 127.0.0.1:$PEER_PORT" "$(tail -c 600 "$T/peer.log")"
conformance docker-registry --url "http://127.0.0.1:$PEER_PORT" --repo conf/conformance \
  --mount-repo conf/crossmount --username conf --password "$PEER_PW" \
  --expect-fail "$LIB_DIR/oci_conformance.peer-expected-fail"
kill -TERM "$PEER_PID" 2>/dev/null
wait "$PEER_PID" 2>/dev/null

finish
