#!/usr/bin/env bash
# The gateway's overhead (issue 16; figures in docs/benchmarks.md): the same test backend
# (tests/js/gateway_backend.mjs) called straight, through Hangar's gateway, and through
# nginx `proxy_pass` (keep-alive upstream), in the same minutes.
#
#   bench/gateway_bench.sh [PATH_TO_HANGAR]                 (default build/hangar)
#   DURATION=15 RATES="1000 5000" PEAK_CONNECTIONS=64 bench/gateway_bench.sh
#
# At each fixed rate (bench/gateway_chat.lua paces 20 connections) it prints requests/s,
# p50 and p99 for the backend alone and through the gateway, and the gateway's added p50
# and p99; then the peak throughput (no pacing) of each path and the ratio gateway/nginx
# (a non-streamed chat completion each request); then, for streamed completions
# (bench/gateway_sse.mjs), the added time to the first event and between events.
# Everything runs on 127.0.0.1 and stops.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/build/hangar}"
[[ -x "$BIN" ]] || { echo "missing $BIN: nice bash scripts/build.sh" >&2; exit 2; }
for tool in wrk nginx node; do
  command -v "$tool" >/dev/null || [[ -x "/usr/sbin/$tool" ]] ||
    { echo "$tool is missing: bash scripts/install-deps.sh" >&2; exit 2; }
done
source "$ROOT/tests/integration/lib.sh" "$BIN"
DURATION="${DURATION:-15}"
RATES="${RATES:-1000 5000}"
PEAK_CONNECTIONS="${PEAK_CONNECTIONS:-64}"
say() { printf '%s\n' "$*"; }
say "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(git -C "$ROOT" rev-parse --short HEAD)"

# The backend.
node "$ROOT/tests/js/gateway_backend.mjs" --name bench --pace-ms 20 >"$T/backend.out" 2>&1 &
BACKEND_PID=$!
trap 'kill $BACKEND_PID 2>/dev/null; [[ -n "${NGINX_PID:-}" ]] && kill $NGINX_PID 2>/dev/null' EXIT
wait_until 10 grep -q listening "$T/backend.out" || die "backend did not start"
BACKEND="$(grep -o 'http://[0-9.:]*' "$T/backend.out")"

# The hub with one route to it.
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --admin
export HANGAR_TOKEN="$(new_token alice --role write)"
HANGAR_LOG_ACCESS_LOG=false start_server "$DATA" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $HANGAR_TOKEN" -H 'Content-Type: application/json')
must_create "$HANGAR_TOKEN" m alice model false
commit='{"key":"header","value":{"summary":"weights"}}
{"key":"file","value":{"path":"model.onnx","content":"d2VpZ2h0cw==","encoding":"base64"}}'
req POST "$BASE/api/models/alice/m/commit/main" -H "Authorization: Bearer $HANGAR_TOKEN" \
  -H 'Content-Type: application/x-ndjson' --data-binary "$commit"
[[ "$ST" == 200 ]] || die "commit" "$(exchange)"
req POST "$BASE/api/v1/models" "${AUTH[@]}" --data-binary '{"name":"m","repo":"alice/m"}'
[[ "$ST" == 201 ]] || die "register" "$(exchange)"
req POST "$BASE/api/v1/gateway/routes" "${AUTH[@]}" --data-binary \
  "{\"name\":\"bench\",\"model\":\"m\",\"version\":1,\"backends\":[{\"url\":\"$BACKEND\"}]}"
[[ "$ST" == 201 ]] || die "route" "$(exchange)"

# nginx in front of the same backend.
NGINX_PORT=$((20000 + RANDOM % 20000))
mkdir -p "$T/nginx"
cat >"$T/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $T/nginx/body; proxy_temp_path $T/nginx/proxy;
  fastcgi_temp_path $T/nginx/fcgi; uwsgi_temp_path $T/nginx/uwsgi; scgi_temp_path $T/nginx/scgi;
  upstream backend { server ${BACKEND#http://}; keepalive 64; }
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location / {
      proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
CONF
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
"$NGINX" -c "$T/nginx/nginx.conf" -g 'daemon off;' 2>"$T/nginx/stderr" &
NGINX_PID=$!
wait_until 10 curl -sf -o /dev/null -X POST "http://127.0.0.1:$NGINX_PORT/v1/models" ||
  die "nginx did not start" "$(cat "$T/nginx/stderr" "$T/nginx/error.log" 2>/dev/null | head -c 500)"
curl -sf -o /dev/null -H "Authorization: Bearer $HANGAR_TOKEN" -d '{"model":"bench","messages":[]}' \
  "$BASE/v1/chat/completions" || die "the gateway does not answer"

# run URL CONNECTIONS [RATE]: one wrk run; prints its JSON line.
run() {
  CONNECTIONS="$2" RATE="${3:-0}" wrk -t2 -c"$2" -d"${DURATION}s" --timeout 10s --latency \
    -s "$ROOT/bench/gateway_chat.lua" "$1" 2>&1 | grep '^{'
}
warm() { CONNECTIONS="$2" wrk -t2 -c"$2" -d2s -s "$ROOT/bench/gateway_chat.lua" "$1" >/dev/null 2>&1; }
warm "$BACKEND" 20; warm "$BASE" 20; warm "http://127.0.0.1:$NGINX_PORT" 20

say "rate/s  path     requests/s  p50 ms  p99 ms  errors  added p50 ms  added p99 ms"
for rate in $RATES; do
  direct="$(run "$BACKEND" 20 "$rate")"
  gw="$(run "$BASE" 20 "$rate")"
  jq -r --arg r "$rate" '"\($r)  direct   \(.rps)  \(.p50_ms)  \(.p99_ms)  \(.errors)"' <<<"$direct"
  jq -rn --arg r "$rate" --argjson d "$direct" --argjson g "$gw" \
    '"\($r)  gateway  \($g.rps)  \($g.p50_ms)  \($g.p99_ms)  \($g.errors)  \(($g.p50_ms - $d.p50_ms) * 1000 | round / 1000)  \(($g.p99_ms - $d.p99_ms) * 1000 | round / 1000)"'
done
say "peak ($PEAK_CONNECTIONS connections, no pacing)"
direct="$(run "$BACKEND" "$PEAK_CONNECTIONS")"
gw="$(run "$BASE" "$PEAK_CONNECTIONS")"
ngx="$(run "http://127.0.0.1:$NGINX_PORT" "$PEAK_CONNECTIONS")"
for pair in "direct:$direct" "gateway:$gw" "nginx:$ngx"; do
  jq -r --arg p "${pair%%:*}" '"\($p)  \(.rps) req/s  p50 \(.p50_ms) ms  p99 \(.p99_ms) ms  errors \(.errors)"' <<<"${pair#*:}"
done
jq -rn --argjson g "$gw" --argjson n "$ngx" '"gateway / nginx throughput: \($g.rps / $n.rps * 100 | round / 100)"'
say "server-sent events, one stream at a time (the backend sends an event every 20 ms)"
node "$ROOT/bench/gateway_sse.mjs" "$BACKEND" "$BASE" "$HANGAR_TOKEN" "${STREAMS:-40}" ||
  die "the SSE run failed"
awk '/VmRSS/ {printf "hub RSS at the end: %.0f MiB\n", $2 / 1024}' "/proc/$SERVER_PID/status"
stop_server
