# Start and stop the two registries the OCI benchmarks compare, each on 127.0.0.1 port 0
# with fresh storage under a given directory. Sourced by oci_bench.sh; needs BIN (the
# hangar binary), T (a temp dir) and the PIDS array.
#
#   start_registry hangar|dreg DIR   sets REG_HOST (host:port), REG_AUTH (client flags)
#   stop_registry                    stops it and removes its storage
#   registry_label hangar|dreg       its name in the tables

REG_PID=""
REG_DIR=""

registry_label() {
  case "$1" in
    hangar) echo "Hangar" ;;
    dreg) echo "docker-registry 2.8.2" ;;
  esac
}

# wait_line FILE ERE: waits (≤ 30 s) for a line matching ERE in FILE; prints the match.
wait_line() {
  local i m
  for ((i = 0; i < 600; i++)); do
    m="$(grep -oE "$2" "$1" 2>/dev/null | head -n 1)"
    [[ -n "$m" ]] && { printf '%s' "$m"; return 0; }
    sleep 0.05
  done
  echo "no line matching '$2' in $1: $(tail -c 400 "$1")" >&2
  return 1
}

start_hangar() {
  local d="$1"
  mkdir -p "$d/data"
  "$BIN" admin user create bench --data-dir "$d/data" >/dev/null 2>&1
  local token
  token="$("$BIN" admin token create bench --role write --data-dir "$d/data")"
  # No access log: one line per request is not what is measured.
  HANGAR_LOG_ACCESS_LOG=false "$BIN" serve --data-dir "$d/data" --listen 127.0.0.1:0 \
    >"$d/out" 2>"$d/err" </dev/null &
  REG_PID=$!
  PIDS+=("$REG_PID")
  REG_HOST="$(wait_line "$d/out" 'listening on http://127\.0\.0\.1:[0-9]+' | sed 's|listening on http://||')"
  curl -sf -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary '{"name":"weights","organization":"bench","type":"model"}' "http://$REG_HOST/api/repos/create"
  curl -sf -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    --data-binary '{"name":"image","organization":"bench","type":"model"}' "http://$REG_HOST/api/repos/create"
  REG_AUTH=(--token "$token")
}

start_dreg() {
  local d="$1"
  mkdir -p "$d"
  cat >"$d/config.yml" <<EOF
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $d/storage
  delete:
    enabled: true
http:
  addr: 127.0.0.1:0
EOF
  docker-registry serve "$d/config.yml" >"$d/log" 2>&1 </dev/null &
  REG_PID=$!
  PIDS+=("$REG_PID")
  REG_HOST="$(wait_line "$d/log" 'listening on 127\.0\.0\.1:[0-9]+' | sed 's|listening on ||')"
  REG_AUTH=()
}

start_registry() {
  REG_DIR="$2"
  rm -rf "$REG_DIR"
  case "$1" in
    hangar) start_hangar "$REG_DIR" ;;
    dreg) start_dreg "$REG_DIR" ;;
    *) echo "unknown registry $1" >&2; return 1 ;;
  esac
}

stop_registry() {
  if [[ -n "$REG_PID" ]]; then
    kill "$REG_PID" 2>/dev/null
    wait "$REG_PID" 2>/dev/null || true
  fi
  REG_PID=""
  [[ -n "$REG_DIR" ]] && rm -rf "$REG_DIR"
  return 0
}
