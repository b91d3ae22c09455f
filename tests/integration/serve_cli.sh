#!/usr/bin/env bash
# Issue #2: `hangar serve` and `hangar admin` as an operator uses them.
#  - --listen 127.0.0.1:0 prints exactly one line "listening on http://127.0.0.1:PORT";
#  - /healthz and /readyz answer 200;
#  - absolute URLs (Link, create url, LFS hrefs) use the request's Host and the bound port;
#  - SIGTERM during a slow in-flight download lets it finish, then the process exits 0;
#  - HANGAR_DATA_DIR / HANGAR_LISTEN work, flags override them;
#  - admin commands (users, tokens, orgs, members) work while the server runs and while
#    it does not, and their effect on access is immediate.
# The slow download is a 16,452,352-byte LFS object made of four copies of the real
# Tesseract eng.traineddata (Debian tesseract-ocr-eng 1:4.1.0-2).
#
# Usage: serve_cli.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"
cd "$T" || exit 1  # so that a server started without --data-dir could only write under $T

fetch_inputs
DATA="$T/data"
mkdir -p "$DATA"

section "hangar --version"
"$HANGAR_BIN" --version >"$T/version.out" 2>&1
check_true "exits 0" test $? -eq 0
check_match "  prints 'hangar X.Y.Z'" '^hangar [0-9]+\.[0-9]+\.[0-9]+$' "$(cat "$T/version.out")"

section "admin while the server is not running"
new_user alice --email alice@example.org --admin
ALICE="$(new_token alice --name laptop --role write)"
pass "user alice + token created offline"
admin token create alice --name second >"$T/tok.out" 2>"$T/tok.err"
check_eq "token create prints exactly one line" 1 "$(wc -l <"$T/tok.out" | tr -d ' ')"
check_match "  ... which is an hf_ token" '^hf_[A-Za-z0-9]+$' "$(tr -d '\n' <"$T/tok.out")"
check_ne "  tokens differ" "$ALICE" "$(tr -d '\n' <"$T/tok.out")"
if admin user create alice >"$T/dup.out" 2>&1; then
  fail "creating an existing user fails" "exit 0: $(head -c 300 "$T/dup.out")"
else
  pass "creating an existing user fails (non-zero exit)"
fi
if admin token create nobody >"$T/nob.out" 2>&1; then
  fail "token for an unknown user fails" "exit 0: $(head -c 300 "$T/nob.out")"
else
  pass "token for an unknown user fails (non-zero exit)"
fi
if admin token create alice --role superuser >"$T/role.out" 2>&1; then
  fail "token with an invalid role fails" "exit 0: $(head -c 300 "$T/role.out")"
else
  pass "token with an invalid role fails (non-zero exit)"
fi
if printf 's3cret-Passw0rd\n' | admin user create frank --password-stdin >"$T/pw.out" 2>&1; then
  pass "user create --password-stdin"
else
  fail "user create --password-stdin" "$(head -c 300 "$T/pw.out")"
fi

# ---------------------------------------------------------------------------------------
section "serve --listen 127.0.0.1:0"
if start_server "$DATA"; then
  pass "serve printed 'listening on http://127.0.0.1:PORT' (port $PORT)"
else
  die "hangar serve --data-dir DIR --listen 127.0.0.1:0 did not print its line" "$(tail -c 800 "$SERVER_ERR")"
fi
check_ne "  the bound port is not 0" 0 "$PORT"
check_eq "  stdout has exactly that one line" 1 "$(wc -l <"$SERVER_OUT" | tr -d ' ')"
req GET "$BASE/healthz"
check_status "GET /healthz -> 200" 200
req GET "$BASE/readyz"
check_status "GET /readyz -> 200" 200
FIRST_OUT="$SERVER_OUT"

section "admin while the server runs"
new_user bob
BOB="$(new_token bob --role write)"
new_user carol
CAROL="$(new_token carol --role write)"
new_user dave
DAVE="$(new_token dave --role write)"
ALICE_RO="$(new_token alice --name ro --role read)"
req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $BOB"
check_json "token made while running works at once (whoami name)" .name bob
req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $ALICE_RO"
check_json "  --role read shows as auth.accessToken.role" .auth.accessToken.role read
api_create "$ALICE_RO" ro-made alice model false
check_status "  a read token cannot create a repo -> 403" 403

if admin org create acme --owner alice >"$T/org.out" 2>&1; then
  pass "admin org create acme --owner alice (server running)"
else
  fail "admin org create acme --owner alice (server running)" "$(head -c 400 "$T/org.out")"
fi
if admin org add-member acme bob --role write >"$T/am1.out" 2>&1; then
  pass "admin org add-member acme bob --role write"
else
  fail "admin org add-member acme bob --role write" "$(head -c 400 "$T/am1.out")"
fi
if admin org add-member acme carol --role read >"$T/am2.out" 2>&1; then
  pass "admin org add-member acme carol --role read"
else
  fail "admin org add-member acme carol --role read" "$(head -c 400 "$T/am2.out")"
fi
if admin org add-member nosuchorg bob --role write >"$T/am3.out" 2>&1; then
  fail "add-member to an unknown org fails" "exit 0"
else
  pass "add-member to an unknown org fails (non-zero exit)"
fi
if admin org add-member acme bob --role emperor >"$T/am4.out" 2>&1; then
  fail "add-member with an invalid role fails" "exit 0"
else
  pass "add-member with an invalid role fails (non-zero exit)"
fi
req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $BOB"
check_json_true "whoami-v2 of bob lists org acme" 'any(.orgs[]; .name == "acme")'
api_create "$BOB" bobs-model acme model false
check_status "write member bob creates acme/bobs-model -> 200" 200
check_json "  url" .url "$BASE/acme/bobs-model"
api_create "$CAROL" carols-model acme model false
check_status "read member carol cannot create in acme -> 403" 403
api_create "$DAVE" daves-model acme model false
check_status "non-member dave cannot create in acme -> 403" 403
api_create "$ALICE" secret acme model true
check_status "owner alice creates private acme/secret -> 200" 200
req GET "$BASE/api/models/acme/secret" -H "Authorization: Bearer $CAROL"
check_status "read member carol reads private acme/secret -> 200" 200
req GET "$BASE/api/models/acme/secret" -H "Authorization: Bearer $DAVE"
check_hf_error "non-member dave: private acme/secret -> 404 RepoNotFound" 404 RepoNotFound
req PUT "$BASE/api/models/acme/secret/settings" -H "Authorization: Bearer $CAROL" \
  -H 'Content-Type: application/json' --data-binary '{"private": false}'
check_status "read member carol cannot change settings -> 403" 403
if admin org add-member acme dave --role read >"$T/am5.out" 2>&1; then
  pass "add dave to acme while running"
else
  fail "add dave to acme while running" "$(head -c 400 "$T/am5.out")"
fi
# Memberships are cached (documented auth cache TTL, 5 s): poll for up to 15 s.
dave_reads() { req GET "$BASE/api/models/acme/secret" -H "Authorization: Bearer $DAVE"; [[ "$ST" == 200 ]]; }
wait_until 15 dave_reads
info "dave's new membership took effect after ${WAITED_MS} ms"
check_status "  dave's access follows (within 15 s) -> 200" 200

# ---------------------------------------------------------------------------------------
section "absolute URLs follow the request's Host and the bound port"
for n in r1 r2 r3; do must_create "$ALICE" "$n" alice model false; done
req GET "$BASE/api/models?author=alice&limit=1" -H "Host: 127.0.0.1:$PORT"
check_match "Link with Host 127.0.0.1:$PORT" "^<http://127\\.0\\.0\\.1:$PORT/api/models\\?[^>]*>;[[:space:]]+rel=\"next\"" "$(hdr Link)"
req GET "$BASE/api/models?author=alice&limit=1" -H "Host: localhost:$PORT"
check_match "Link with Host localhost:$PORT" "^<http://localhost:$PORT/api/models\\?[^>]*>;[[:space:]]+rel=\"next\"" "$(hdr Link)"
api_create "$ALICE" r1 alice model false
check_eq "409 create url uses the bound port" "409 $BASE/alice/r1" "$ST $(jbody .url)"
req POST "$BASE/api/repos/create" -H "Host: localhost:$PORT" -H "Authorization: Bearer $ALICE" \
  -H 'Content-Type: application/json' --data-binary '{"name": "r4", "organization": "alice", "type": "model"}'
check_eq "create url with Host localhost:$PORT" "200 http://localhost:$PORT/alice/r4" "$ST $(jbody .url)"
BATCH_BODY="{\"operation\": \"upload\", \"transfers\": [\"basic\"], \"objects\": [{\"oid\": \"$TESS_SHA\", \"size\": $TESS_SIZE}]}"
req POST "$BASE/alice/r1.git/info/lfs/objects/batch" -H "Host: localhost:$PORT" -u "hf_user:$ALICE" \
  -H 'Accept: application/vnd.git-lfs+json' -H 'Content-Type: application/vnd.git-lfs+json' --data-binary "$BATCH_BODY"
check_status "LFS batch upload offer -> 200" 200
check_match "LFS upload href with Host localhost:$PORT" "^http://localhost:$PORT/" "$(jbody '.objects[0].actions.upload.href')"
req POST "$BASE/alice/r1.git/info/lfs/objects/batch" -u "hf_user:$ALICE" \
  -H 'Accept: application/vnd.git-lfs+json' -H 'Content-Type: application/vnd.git-lfs+json' --data-binary "$BATCH_BODY"
check_match "LFS upload href with Host 127.0.0.1:$PORT" "^$BASE/" "$(jbody '.objects[0].actions.upload.href')"

# ---------------------------------------------------------------------------------------
section "SIGTERM during a slow download"
must_create "$ALICE" big alice model false
W="$T/big"
gitc "" clone -q "$BASE/alice/big" "$W" 2>"$T/clone.err" || die "clone alice/big" "$(brief "$T/clone.err" 500)"
cat "$TESS" "$TESS" "$TESS" "$TESS" >"$W/model.bin"
BIG_SHA="$(sha256_of "$W/model.bin")"
BIG_SIZE="$(stat -c %s "$W/model.bin")"
(cd "$W" && git lfs track "*.bin" >/dev/null && git add .gitattributes model.bin && git commit -q -m "Add a 16 MB model")
HA="$(cred_helper alice "$ALICE")"
gitc "$HA" -C "$W" push -q origin main >"$T/push.out" 2>&1 || die "push alice/big" "$(brief "$T/push.out" 1000)"
BIG_HEAD="$(git -C "$W" rev-parse HEAD)"
pass "pushed a $BIG_SIZE-byte LFS object"

cat >"$T/slow_get.py" <<'EOF'
# slow_get.py HOST PORT PATH STARTED_FILE: GET PATH with a tiny receive buffer, reading
# ~4 MB/s; touches STARTED_FILE after the first 256 KiB; prints "STATUS BYTES SHA256".
import hashlib, socket, sys, time
host, port, path, started = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
s.settimeout(60)
s.connect((host, port))
s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
buf = b""
while b"\r\n\r\n" not in buf:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
head, _, body = buf.partition(b"\r\n\r\n")
lines = head.decode("latin-1").split("\r\n")
status = lines[0].split(" ")[1] if lines and " " in lines[0] else "000"
length = None
for l in lines[1:]:
    k, _, v = l.partition(":")
    if k.strip().lower() == "content-length":
        length = int(v.strip())
h = hashlib.sha256(body)
n = len(body)
told = False
while length is None or n < length:
    try:
        chunk = s.recv(16384)
    except OSError:
        break
    if not chunk:
        break
    h.update(chunk)
    n += len(chunk)
    if not told and n >= 262144:
        open(started, "w").close()
        told = True
    time.sleep(0.004)  # throttle: this is the slow client, not synchronisation
print(status, n, h.hexdigest())
EOF
STARTED="$T/download-started"
python3 "$T/slow_get.py" 127.0.0.1 "$PORT" "/alice/big/resolve/main/model.bin" "$STARTED" >"$T/slow.out" 2>"$T/slow.err" &
SLOW_PID=$!
EXTRA_PIDS+=("$SLOW_PID")
for ((i = 0; i < 600; i++)); do [[ -e "$STARTED" ]] && break; alive "$SLOW_PID" || break; sleep 0.05; done
if [[ -e "$STARTED" ]]; then
  pass "slow download under way"
else
  fail "slow download under way" "$(cat "$T/slow.out" "$T/slow.err" | head -c 500)"
fi
TERM_PID="$SERVER_PID"
kill -TERM "$TERM_PID"
ALIVE_AFTER_TERM=no
alive "$TERM_PID" && ALIVE_AFTER_TERM=yes
for ((i = 0; i < 1200; i++)); do alive "$SLOW_PID" || break; sleep 0.05; done
wait "$SLOW_PID" 2>/dev/null
info "download result: $(cat "$T/slow.out") (server alive right after SIGTERM: $ALIVE_AFTER_TERM)"
check_eq "the in-flight download completed with every byte after SIGTERM" "200 $BIG_SIZE $BIG_SHA" "$(cat "$T/slow.out")"
stop_server
check_eq "after SIGTERM the server exits 0" 0 "$SERVER_RC"
check_eq "stdout still has exactly one line at exit" 1 "$(wc -l <"$FIRST_OUT" | tr -d ' ')"
check_false "nothing listens on the old port any more" curl -s -o /dev/null --max-time 5 "$BASE/healthz"

# ---------------------------------------------------------------------------------------
section "admin while stopped, then restart on the same data dir"
new_user erin
ERIN="$(new_token erin --role write)"
if admin org add-member acme erin --role write >"$T/am6.out" 2>&1; then
  pass "add-member while stopped"
else
  fail "add-member while stopped" "$(head -c 400 "$T/am6.out")"
fi
start_server "$DATA" || die "restart on the same data dir"
pass "restarted on port $PORT"
req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $ERIN"
check_json "token made while stopped works after restart" .name erin
api_create "$ERIN" erins-model acme model false
check_status "  membership added while stopped: erin creates in acme -> 200" 200
req GET "$BASE/api/models/alice/big"
check_json "repos survive a restart (sha)" .sha "$BIG_HEAD"
req GET "$BASE/alice/big/resolve/main/model.bin"
check_eq "LFS object survives a restart" "200 $BIG_SHA" "$ST $(sha256_of "$BODY")"
req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $ALICE"
check_json "old tokens survive a restart" .name alice
stop_server
check_eq "SIGTERM on an idle server: exit 0" 0 "$SERVER_RC"

# ---------------------------------------------------------------------------------------
section "HANGAR_DATA_DIR and HANGAR_LISTEN"
D2="$T/data-env"
if launch_server env HANGAR_DATA_DIR="$D2" HANGAR_LISTEN=127.0.0.1:0 "$HANGAR_BIN" serve; then
  pass "serve with only HANGAR_DATA_DIR and HANGAR_LISTEN printed its line (port $PORT)"
  check_true "  the data dir from HANGAR_DATA_DIR was populated" test -n "$(ls -A "$D2" 2>/dev/null)"
  check_false "  nothing was written to the default ./hangar-data" test -e "$PWD/hangar-data"
  if env HANGAR_DATA_DIR="$D2" "$HANGAR_BIN" admin user create gina >"$T/g.out" 2>&1; then
    pass "admin user create with HANGAR_DATA_DIR (no --data-dir)"
    GINA="$(env HANGAR_DATA_DIR="$D2" "$HANGAR_BIN" admin token create gina 2>"$T/g.err")"
    req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $GINA"
    check_json "  token from HANGAR_DATA_DIR works on that server" .name gina
  else
    fail "admin user create with HANGAR_DATA_DIR (no --data-dir)" "$(head -c 400 "$T/g.out")"
  fi
  req GET "$BASE/api/whoami-v2" -H "Authorization: Bearer $ALICE"
  check_status "  a token of the other data dir is unknown here -> 401" 401
  stop_server
  check_eq "  exit 0 on SIGTERM" 0 "$SERVER_RC"
else
  fail "serve with only HANGAR_DATA_DIR and HANGAR_LISTEN printed its line" "$(tail -c 800 "$SERVER_ERR")"
fi
D3="$T/data-flag"
if launch_server env HANGAR_DATA_DIR="$T/not-this-one" HANGAR_LISTEN=127.0.0.1:1 \
   "$HANGAR_BIN" serve --data-dir "$D3" --listen 127.0.0.1:0; then
  pass "flags override HANGAR_LISTEN (bound port $PORT, not 1)"
  check_true "  flags override HANGAR_DATA_DIR" test -n "$(ls -A "$D3" 2>/dev/null)"
  check_false "  the env data dir was not used" test -e "$T/not-this-one"
  stop_server
  check_eq "  exit 0 on SIGTERM" 0 "$SERVER_RC"
else
  fail "flags override HANGAR_LISTEN / HANGAR_DATA_DIR" "$(tail -c 800 "$SERVER_ERR")"
fi

section "relative --data-dir: git hooks-free work (commit-graph) runs in the right place"
REL="$T/relcwd"
mkdir -p "$REL"
pushd "$REL" >/dev/null
launch_server "$HANGAR_BIN" serve --data-dir rel-data --listen 127.0.0.1:0
started=$?
popd >/dev/null
if [[ $started == 0 ]]; then
  (cd "$REL" && "$HANGAR_BIN" admin user create rita --data-dir rel-data >/dev/null 2>&1)
  RT="$(cd "$REL" && "$HANGAR_BIN" admin token create rita --data-dir rel-data 2>/dev/null)"
  curl -s -o /dev/null -X POST -H "Authorization: Bearer $RT" \
    -d '{"name":"rel","organization":"rita"}' "$BASE/api/repos/create"
  W="$T/relwork"
  git -c credential.helper= clone -q "http://rita:$RT@127.0.0.1:$PORT/rita/rel" "$W" 2>/dev/null
  echo one >"$W/one.txt"
  git -C "$W" add one.txt
  git -C "$W" -c user.name=r -c user.email=r@x commit -qm one
  check_true "push to a server started with a relative data dir" \
    git -C "$W" push -q origin main
  check_true "  the push wrote a commit-graph (changed-path filters) into the repo" \
    test -s "$REL/rel-data/repos/models/rita/rel.git/objects/info/commit-graph"
  stop_server
else
  fail "serve with a relative --data-dir" "did not start"
fi

finish
