#!/usr/bin/env bash
# Issue 17 §2 and §4: two `hangar serve` replicas on one PostgreSQL database (a throw-away
# cluster, scripts/pg-server.sh) and one data dir (the shared repos volume and local blob
# store), with no load balancer between them: every request names its replica.
#  - a repo created and a commit made on A are read on B in the very next request, and a
#    push through B is cloned from A (read-your-writes without stickiness);
#  - a token revoked on A (web settings page) is refused by B within 1 s, though B keeps
#    tokens for 60 s (cache.ttl_ms): LISTEN/NOTIFY, not the TTL, evicts it; likewise a repo
#    made private on A is hidden on B at once;
#  - SIGTERM with server.drain_delay_ms: /readyz turns 503 while requests are still served
#    (with Connection: close), then the process drains and exits 0;
#  - a database schema newer than the binary: the running replica turns not ready, a new
#    one refuses to start; an unreachable database and wrong credentials stop `serve` with
#    the reason.
# Usage: replicas.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: PostgreSQL and two replicas"
start_postgres
export HANGAR_DATABASE_URL="$PG_URL"
# Tokens, memberships and repo rows kept a minute: what B drops below, it drops because A
# told it to.
export HANGAR_CACHE_TTL_MS=60000
DATA="$T/data"
mkdir -p "$DATA"
admin user create alice --email alice@example.org --password-stdin <<<"alice-Passw0rd" \
  >"$T/admin.out" 2>&1 || die "create alice" "$(cat "$T/admin.out")"
ALICE="$(new_token alice --role write)"
new_user bob
BOB="$(new_token bob --role read)"
new_user root --admin
ROOT="$(new_token root --role read)"

HANGAR_SERVER_DRAIN_DELAY_MS=1500 start_server "$DATA" || die "replica A did not start"
A="$BASE" A_PID="$SERVER_PID"
start_server "$DATA" || die "replica B did not start"
B="$BASE" B_PID="$SERVER_PID"
EXTRA_PIDS+=("$A_PID")
pass "replicas A ($A) and B ($B) on one database"
for r in "$A" "$B"; do
  req GET "$r/readyz"
  check_status "GET /readyz on $r -> 200" 200
done

section "read-your-writes across replicas"
BASE="$A" must_create "$ALICE" shared alice model false
req GET "$B/api/models/alice/shared" -H "Authorization: Bearer $ALICE"
check_status "a repo created on A is read on B at once" 200

ND=(-H 'Content-Type: application/x-ndjson')
commit_line() {
  printf '{"key":"header","value":{"summary":"%s"}}\n' "$1"
  printf '{"key":"file","value":{"content":"%s","path":"note.txt","encoding":"base64"}}\n' \
    "$(printf '%s' "$2" | base64 -w0)"
}
for i in 1 2 3 4 5; do
  commit_line "c$i" "on A $i" >"$T/c.ndjson"
  req POST "$A/api/models/alice/shared/commit/main" -H "Authorization: Bearer $ALICE" "${ND[@]}" \
    --data-binary @"$T/c.ndjson"
  [[ "$ST" == 200 ]] || { _fail_http "commit $i on A"; continue; }
  OID="$(jbody .commitOid)"
  req GET "$B/api/models/alice/shared/revision/main" -H "Authorization: Bearer $ALICE"
  check_json "commit $i made on A is B's main in the very next request" .sha "$OID"
  req GET "$B/alice/shared/resolve/main/note.txt" -H "Authorization: Bearer $ALICE"
  check_eq "B serves commit $i's file" "on A $i" "$(cat "$BODY")"
done

# Commits racing on both replicas to one branch: ref updates are compare-and-swap under
# git's lock files on the shared volume, so none is lost and none is half-applied.
BEFORE="$(git --git-dir="$DATA/repos/models/alice/shared.git" rev-list --count main)"
RACERS=()
for i in $(seq 1 12); do
  r="$A"; ((i % 2)) && r="$B"
  printf '{"key":"header","value":{"summary":"race %s"}}\n{"key":"file","value":{"content":"%s","path":"race/%s.txt","encoding":"base64"}}\n' \
    "$i" "$(printf 'race %s' "$i" | base64 -w0)" "$i" >"$T/race$i.ndjson"
  curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $ALICE" "${ND[@]}" \
    --data-binary @"$T/race$i.ndjson" "$r/api/models/alice/shared/commit/main" >"$T/race$i.st" &
  RACERS+=($!)
done
wait "${RACERS[@]}"  # not a bare wait: the replicas are children of this shell too
OK_N="$(cat "$T"/race*.st | grep -c '^200$')"
info "12 racing commits (6 per replica): statuses $(sort "$T"/race*.st | uniq -c | tr -s ' \n' ' ')"
AFTER="$(git --git-dir="$DATA/repos/models/alice/shared.git" rev-list --count main)"
check_eq "every commit answered 200 is on main (none lost)" "$OK_N" "$((AFTER - BEFORE))"
check_eq "all 12 racing commits landed" 12 "$OK_N"
LANDED="$(git --git-dir="$DATA/repos/models/alice/shared.git" ls-tree --name-only main race/ | wc -l)"
check_eq "main holds each racing commit's file" "$OK_N" "$LANDED"

HC="$(cred_helper alice "$ALICE")"
gitc "$HC" clone -q "$B/alice/shared" "$T/w" 2>"$T/clone.err" || fail "clone from B" "$(head -c 400 "$T/clone.err")"
(cd "$T/w" && echo "pushed through B" >pushed.txt && git add pushed.txt && git commit -q -m push) ||
  fail "commit in the clone"
gitc "$HC" -C "$T/w" push -q origin main 2>"$T/push.err" || fail "push through B" "$(head -c 400 "$T/push.err")"
req GET "$A/alice/shared/resolve/main/pushed.txt" -H "Authorization: Bearer $ALICE"
check_eq "a push through B is served by A at once" "pushed through B" "$(cat "$BODY")"

# ms_until STATUS METHOD URL [curl args...]: polls the request every 20 ms, for 3 s at most,
# and prints the milliseconds until it answered STATUS ("" when it never did).
ms_until() {
  local want="$1" t0
  shift
  t0="$(date +%s%N)"
  while ((($(date +%s%N) - t0) / 1000000 < 3000)); do
    req "$@"
    if [[ "$ST" == "$want" ]]; then
      echo $((($(date +%s%N) - t0) / 1000000))
      return
    fi
    sleep 0.02
  done
}

section "a token revoked on A is refused by B within 1 s"
req GET "$B/api/whoami-v2" -H "Authorization: Bearer $ALICE"
check_status "alice's token works on B (and B keeps it for a minute)" 200
JAR="$T/alice.jar"
req GET "$A/login" -c "$JAR" -b "$JAR"
CSRF="$(python3 "$LIB_DIR/web_safety_html.py" csrf "$BODY")"
req POST "$A/login" -c "$JAR" -b "$JAR" --data-urlencode "_csrf=$CSRF" \
  --data-urlencode username=alice --data-urlencode password=alice-Passw0rd --data-urlencode next=/
check_status "alice signs in on A" 303
req GET "$A/settings/tokens" -b "$JAR"
CSRF="$(python3 "$LIB_DIR/web_safety_html.py" csrf "$BODY")"
REVOKE="$(grep -o '/settings/tokens/[0-9]*/revoke' "$BODY" | head -n 1)"
[[ -n "$REVOKE" ]] || die "a revoke form on A's tokens page" "$(exchange)"
req POST "$A$REVOKE" -b "$JAR" --data-urlencode "_csrf=$CSRF"
check_status "alice revokes her token on A's settings page" 303
REFUSED="$(ms_until 401 GET "$B/api/whoami-v2" -H "Authorization: Bearer $ALICE")"
info "B refused the revoked token ${REFUSED:-never} ms after A revoked it"
check_true "B refuses the revoked token within 1,000 ms" test -n "$REFUSED" -a "${REFUSED:-9999}" -lt 1000
req GET "$A/api/whoami-v2" -H "Authorization: Bearer $ALICE"
check_status "A refuses it too" 401

section "a repo made private on A is hidden on B at once"
ALICE2="$(new_token alice --role write)"
req GET "$B/api/models/alice/shared" -H "Authorization: Bearer $BOB"
check_status "bob reads the public repo on B (B keeps its row for a minute)" 200
req PUT "$A/api/models/alice/shared/settings" -H "Authorization: Bearer $ALICE2" \
  -H 'Content-Type: application/json' --data-binary '{"private":true}'
check_status "alice makes it private on A" 200
HIDDEN="$(ms_until 404 GET "$B/api/models/alice/shared" -H "Authorization: Bearer $BOB")"
info "B hid the repo from bob ${HIDDEN:-never} ms after A made it private"
check_true "B hides it from bob within 1,000 ms" test -n "$HIDDEN" -a "${HIDDEN:-9999}" -lt 1000

section "GET /metrics (Prometheus text) on B"
req GET "$B/metrics"
check_status "anonymous scrape -> 401" 401
req GET "$B/metrics" -H "Authorization: Bearer $BOB"
check_status "a user who is no site admin -> 403" 403
req GET "$B/metrics" -H "Authorization: Bearer $ROOT"
check_status "a site admin's read token scrapes it" 200
check_hdr_match "in Prometheus' text format 0.0.4" Content-Type '^text/plain; version=0.0.4'
M="$(cat "$BODY")"
check_match "B counted bob's 404s on the repo route" \
  'hangar_http_requests_total\{code="4xx",method="GET",route="/api/models/\{ns\}/\{name\}"\} [1-9]' "$M"
check_match "... with a latency histogram per route" \
  'hangar_http_request_duration_seconds_count\{method="GET",route="/api/models/\{ns\}/\{name\}"\} [1-9]' "$M"
check_match "in-flight requests: this scrape" 'hangar_http_requests_in_flight 1' "$M"
check_match "the database pool's use" 'hangar_db_connections_open [1-9]' "$M"
check_match "git slots" 'hangar_git_queue_length 0' "$M"
check_match "blob store calls, timed by operation" \
  'hangar_blob_store_duration_seconds_count\{op="check"\} [1-9]' "$M"
check_match "the job queue" 'hangar_jobs_dead 0' "$M"

section "SIGTERM: A leaves the rotation, serves on, drains and exits"
kill -TERM "$A_PID"
sleep 0.3
req GET "$A/readyz"
check_status "A's /readyz -> 503 while draining" 503
check_match "the answer says it is draining" "draining" "$(cat "$BODY")"
req GET "$A/api/models/alice/shared" -H "Authorization: Bearer $ALICE2"
check_status "A still serves requests during the drain delay" 200
check_match "... and closes their connections" "^close$" "$(hdr Connection)"
req GET "$B/readyz"
check_status "B stays ready" 200
for ((i = 0; i < 200; i++)); do alive "$A_PID" || break; sleep 0.05; done
if alive "$A_PID"; then
  fail "A exits within 10 s of SIGTERM"
else
  wait "$A_PID"
  check_eq "A exits 0 after the drain" 0 "$?"
fi
req GET "$B/api/models/alice/shared" -H "Authorization: Bearer $ALICE2"
check_status "B serves on" 200

section "a second SIGTERM ends the drain at once"
HANGAR_SERVER_DRAIN_DELAY_MS=20000 start_server "$DATA" || die "replica C did not start"
C_PID="$SERVER_PID"
kill -TERM "$C_PID"
sleep 0.3
req GET "$BASE/readyz"
check_status "C is draining (20 s to go)" 503
T0="$(date +%s%N)"
kill -TERM "$C_PID"
for ((i = 0; i < 100; i++)); do alive "$C_PID" || break; sleep 0.05; done
check_false "C exits within 5 s of the second SIGTERM" alive "$C_PID"
info "C exited $((($(date +%s%N) - T0) / 1000000)) ms after the second SIGTERM"
SERVER_PID="$B_PID" BASE="$B"

section "schema versions and bad database configuration"
psql_q() { psql "$PG_URL" -qAtX -c "$1"; }
NEWER=$(( $(psql_q "SELECT MAX(version) FROM schema_version") + 1 ))
psql_q "INSERT INTO schema_version (version) VALUES ($NEWER)" || fail "insert a newer schema version"
req GET "$B/readyz"
check_status "B turns not ready when the database's schema is newer than it" 503
check_match "... and says why" "schema is at version $NEWER" "$(cat "$BODY")"
"$HANGAR_BIN" serve --data-dir "$DATA" --listen 127.0.0.1:0 >"$T/newer.out" 2>"$T/newer.err" </dev/null
check_ne "a replica on an older binary refuses to start" 0 "$?"
check_match "... naming the versions" "newer than this hangar" "$(cat "$T/newer.err")"
psql_q "DELETE FROM schema_version WHERE version = $NEWER"
req GET "$B/readyz"
check_status "B is ready again once the schema matches" 200

BAD_PW="${PG_URL/:\/\/hangar:*@/://hangar:Wr0ngPassw0rd@}"
HANGAR_DATABASE_URL="$BAD_PW" "$HANGAR_BIN" serve --data-dir "$DATA" --listen 127.0.0.1:0 \
  >"$T/pw.out" 2>"$T/pw.err" </dev/null
check_ne "wrong database credentials: serve exits non-zero" 0 "$?"
check_match "... saying the credentials were refused" "password|authentication" "$(cat "$T/pw.err")"
check_false "... without printing the password" grep -q "Wr0ngPassw0rd" "$T/pw.err"
HANGAR_DATABASE_URL="postgresql://hangar:x@127.0.0.1:1/hangar" "$HANGAR_BIN" serve --data-dir "$DATA" \
  --listen 127.0.0.1:0 >"$T/down.out" 2>"$T/down.err" </dev/null
check_ne "an unreachable database: serve exits non-zero" 0 "$?"
check_match "... saying it cannot reach it" "127.0.0.1" "$(cat "$T/down.err")"
check_eq "... and never said it was listening" "" "$(cat "$T/down.out" "$T/pw.out")"

finish
