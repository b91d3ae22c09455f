#!/usr/bin/env bash
# The model registry's benchmark (issue 16; figures in docs/benchmarks.md): the reference
# system's request mix (bench/registry_mix.lua) at 10, 50, 100 and 200 concurrent users,
# closed loop as the reference ran it, against `hangar serve` on its embedded defaults.
#
#   bench/registry_bench.sh [PATH_TO_HANGAR]        (default build/hangar)
#   DURATION=15 USERS="10 50 100 200" MODELS=100 bench/registry_bench.sh
#
# The hub gets a model repo with one commit, MODELS registered models (seed-0…) with a
# version each and a champion alias, and a gateway route; then each tier runs `wrk` with
# as many connections as users for DURATION seconds (a 3 s warm-up first, not counted), and
# prints requests/s, p50/p95/p99 and errors. The registrations made during the run are real
# (a new model and version each). Everything runs on 127.0.0.1 and stops by itself.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/build/hangar}"
[[ -x "$BIN" ]] || { echo "missing $BIN: nice bash scripts/build.sh" >&2; exit 2; }
command -v wrk >/dev/null || { echo "wrk is missing: bash scripts/install-deps.sh" >&2; exit 2; }
source "$ROOT/tests/integration/lib.sh" "$BIN"
DURATION="${DURATION:-15}"
USERS="${USERS:-10 50 100 200}"
export MODELS="${MODELS:-100}"
say() { printf '%s\n' "$*"; }
say "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(git -C "$ROOT" rev-parse --short HEAD)"

DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email a@example.org --admin
export HANGAR_TOKEN="$(new_token alice --name bench --role write)"
start_server "$DATA" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $HANGAR_TOKEN" -H 'Content-Type: application/json')
must_create "$HANGAR_TOKEN" bert alice model false
commit='{"key":"header","value":{"summary":"weights"}}
{"key":"file","value":{"path":"model.onnx","content":"d2VpZ2h0cw==","encoding":"base64"}}'
req POST "$BASE/api/models/alice/bert/commit/main" -H "Authorization: Bearer $HANGAR_TOKEN" \
  -H 'Content-Type: application/x-ndjson' --data-binary "$commit"
[[ "$ST" == 200 ]] || die "commit" "$(exchange)"
for ((i = 0; i < MODELS; i++)); do
  req POST "$BASE/api/v1/models" "${AUTH[@]}" \
    --data-binary "{\"name\":\"seed-$i\",\"repo\":\"alice/bert\",\"tags\":{\"team\":\"t$((i % 5))\"}}"
  [[ "$ST" == 201 ]] || die "seed model $i" "$(exchange)"
  req PUT "$BASE/api/v1/models/seed-$i/aliases/champion" "${AUTH[@]}" --data-binary '{"version":1}'
  [[ "$ST" == 200 ]] || die "alias $i" "$(exchange)"
done
for name in seed-0 seed-1 seed-2; do
  req POST "$BASE/api/v1/gateway/routes" "${AUTH[@]}" --data-binary \
    "{\"name\":\"$name-chat\",\"model\":\"$name\",\"alias\":\"champion\",\"backends\":[{\"url\":\"http://127.0.0.1:9\",\"weight\":100}]}"
  [[ "$ST" == 201 ]] || die "route $name" "$(exchange)"
done
say "seeded: $MODELS models with a version and an alias each, 3 routes"
say "users  requests/s  p50 ms  p95 ms  p99 ms  max ms  errors"
for users in $USERS; do
  wrk -t2 -c"$users" -d3s -s "$ROOT/bench/registry_mix.lua" "$BASE" >/dev/null 2>&1
  out="$(wrk -t2 -c"$users" -d"${DURATION}s" --timeout 10s -s "$ROOT/bench/registry_mix.lua" "$BASE" 2>&1 | grep '^{')"
  [[ -n "$out" ]] || die "wrk at $users users printed no figures"
  jq -r --arg u "$users" '"\($u)  \(.rps)  \(.p50_ms)  \(.p95_ms)  \(.p99_ms)  \(.max_ms)  \(.errors)"' <<<"$out"
done
req GET "$BASE/api/v1/models?limit=1"
say "models after the run: $(curl -s "$BASE/api/v1/models?limit=1000" | jq '.models | length')+ (the registrations are real)"
awk '/VmRSS/ {printf "hub RSS at the end: %.0f MiB\n", $2 / 1024}' "/proc/$SERVER_PID/status"
stop_server
