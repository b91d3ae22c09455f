#!/usr/bin/env bash
# Issue 17 §4: W3C trace context and span export.
#  - a request's traceparent makes the hub's span a child of the caller's: the JSON access
#    log (log.access_format = "json") names the trace and the span, and the span reaches an
#    OTLP/HTTP collector (log.otlp_endpoint) with its parent, route name, status and
#    service.name; a request without one starts a trace of its own;
#  - a malformed traceparent is ignored (a new trace), never an error;
#  - with the collector gone, requests are answered as before (spans are dropped, logged).
# The collector is a stand-in: a few lines of Python that keep each POSTed body (no
# OpenTelemetry collector is packaged in Debian 12 or npm); what it keeps is checked
# against OTLP's JSON mapping.
# Usage: tracing.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: a stand-in collector and a server exporting to it"
mkdir -p "$T/otlp"
cat >"$T/collector.py" <<'EOF'
import http.server, itertools, sys
out, counter = sys.argv[1], itertools.count()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        with open(f"{out}/{next(counter)}.{self.path.strip('/').replace('/', '_')}.json", "wb") as f:
            f.write(body)
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
EOF
python3 "$T/collector.py" "$T/otlp" >"$T/collector.port" 2>"$T/collector.err" &
COLLECTOR=$!
EXTRA_PIDS+=("$COLLECTOR")
for ((i = 0; i < 100; i++)); do [[ -s "$T/collector.port" ]] && break; sleep 0.05; done
CPORT="$(cat "$T/collector.port")"
[[ -n "$CPORT" ]] || die "the stand-in collector did not start" "$(cat "$T/collector.err")"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice
ALICE="$(new_token alice --role write)"
LONG_NAME=bartholomew-the-long-named-user  # past std::string's in-place buffer
new_user "$LONG_NAME"
LONG="$(new_token "$LONG_NAME" --role read)"
HANGAR_LOG_OTLP_ENDPOINT="http://127.0.0.1:$CPORT/v1/traces" HANGAR_LOG_ACCESS_FORMAT=json \
  HANGAR_LOG_SERVICE_NAME=hangar-it start_server "$DATA" || die "hangar serve did not start"
must_create "$ALICE" m alice model false

PARENT_TRACE=4bf92f3577b34da6a3ce929d0e0e4736 PARENT_SPAN=00f067aa0ba902b7
req GET "$BASE/api/models/alice/m" -H "traceparent: 00-$PARENT_TRACE-$PARENT_SPAN-01"
check_status "a request with a traceparent is answered" 200
req GET "$BASE/api/models/alice/m"
check_status "one without" 200
req GET "$BASE/api/models/alice/m" -H "traceparent: 00-$PARENT_TRACE-0000000000000000-01"
check_status "one with a malformed traceparent is answered, not refused" 200

# spans: every span the collector has, one JSON object a line.
spans() {
  cat "$T"/otlp/*.json 2>/dev/null | jq -c '.resourceSpans[] | .resource as $r | .scopeSpans[].spans[] | . + {service: ($r.attributes[] | select(.key == "service.name") | .value.stringValue)}' 2>/dev/null
}
for ((i = 0; i < 100; i++)); do
  [[ "$(spans | grep -c '"/api/models/{ns}/{name}"' || true)" -ge 3 ]] && break
  sleep 0.1
done

section "the span of the traced request"
TRACED="$(spans | jq -c --arg t "$PARENT_TRACE" 'select(.traceId == $t)' | head -n 1)"
check_ne "the collector got a span of the caller's trace" "" "$TRACED"
check_eq "its parent is the caller's span" "$PARENT_SPAN" "$(jq -r .parentSpanId <<<"$TRACED")"
check_match "its own span id" '^[0-9a-f]{16}$' "$(jq -r .spanId <<<"$TRACED")"
check_eq "named by method and route pattern (never the path)" "GET /api/models/{ns}/{name}" \
  "$(jq -r .name <<<"$TRACED")"
check_eq "a server span" 2 "$(jq -r .kind <<<"$TRACED")"
check_eq "its status code attribute" 200 \
  "$(jq -r '.attributes[] | select(.key == "http.response.status_code") | .value.intValue' <<<"$TRACED")"
check_eq "its route attribute" "/api/models/{ns}/{name}" \
  "$(jq -r '.attributes[] | select(.key == "http.route") | .value.stringValue' <<<"$TRACED")"
check_eq "service.name from log.service_name" hangar-it "$(jq -r .service <<<"$TRACED")"
check_true "start before end, in unix nanoseconds" jq -e \
  '(.startTimeUnixNano | tonumber) > 1.7e18 and (.startTimeUnixNano | tonumber) <= (.endTimeUnixNano | tonumber)' \
  <<<"$TRACED"
SPAN_ID="$(jq -r .spanId <<<"$TRACED")"
LOGLINE="$(grep -F "\"trace_id\":\"$PARENT_TRACE\"" "$SERVER_ERR" | head -n 1)"
check_ne "the JSON access log names the trace" "" "$LOGLINE"
LOGJSON="$(sed 's/^[^{]*//' <<<"$LOGLINE")"
check_eq "... and the span the collector got" "$SPAN_ID" "$(jq -r .span_id <<<"$LOGJSON" 2>/dev/null)"
check_eq "... with the request's fields" "GET /api/models/alice/m 200" \
  "$(jq -r '"\(.method) \(.target) \(.status)"' <<<"$LOGJSON" 2>/dev/null)"

section "untraced and malformed: traces of their own"
OTHERS="$(spans | jq -c --arg t "$PARENT_TRACE" 'select(.name == "GET /api/models/{ns}/{name}" and .traceId != $t)')"
check_eq "both became spans of new traces" 2 "$(grep -c . <<<"$OTHERS")"
check_eq "... without a parent" "" "$(jq -r '.parentSpanId // empty' <<<"$OTHERS" | tr -d '\n')"
check_eq "... each its own trace" 2 "$(jq -r .traceId <<<"$OTHERS" | sort -u | grep -c .)"

section "the JSON access log: who, and valid UTF-8 whatever the client sent"
req GET "$BASE/api/models/alice/m" -H "Authorization: Bearer $LONG"
check_status "a request of $LONG_NAME" 200
LONG_ID="$(hdr X-Request-Id)"
check_eq "its line names the user" "$LONG_NAME" \
  "$(grep -F "\"request_id\":\"$LONG_ID\"" "$SERVER_ERR" | sed 's/^[^{]*//' | jq -r .user)"
printf 'GET /\xc3\x28?q=\xe9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' |
  timeout 5 python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(sys.stdin.buffer.read()); s.recv(4096)' "$PORT"
printf 'GET / HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n' |
  timeout 5 python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1", int(sys.argv[1]))); s.sendall(sys.stdin.buffer.read()); s.recv(4096)' "$PORT"
sleep 0.2
check_true "every access line is JSON in valid UTF-8 (a bad target, a refused head)" python3 -c '
import json, sys
n = 0
for raw in open(sys.argv[1], "rb"):
    if b"[access]" not in raw:
        continue
    line = raw.decode("utf-8")  # raises on invalid UTF-8
    json.loads(line[line.index("{"):])
    n += 1
sys.exit(0 if n >= 5 else 1)' "$SERVER_ERR"

section "the collector gone"
kill "$COLLECTOR"
wait "$COLLECTOR" 2>/dev/null
T0="$(date +%s%N)"
ALL_OK=1
for i in $(seq 1 50); do
  req GET "$BASE/api/models/alice/m"
  [[ "$ST" == 200 ]] || ALL_OK=0
done
info "50 requests with the collector down: $((($(date +%s%N) - T0) / 1000000)) ms"
check_eq "requests are answered as before" 1 "$ALL_OK"
for ((i = 0; i < 60; i++)); do grep -q "spans not exported" "$SERVER_ERR" && break; sleep 0.1; done
check_true "the lost spans are logged" grep -q "spans not exported" "$SERVER_ERR"
stop_server
check_eq "the server still stops cleanly" 0 "$SERVER_RC"

finish
