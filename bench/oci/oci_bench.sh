#!/usr/bin/env bash
# Issue #5: `hangar oci push` / `pull` of one large random file, part size × workers,
# against Hangar's registry and against Debian's docker-registry (CNCF Distribution 2.8.2)
# on the same machine, each cell on fresh registry storage (the client would otherwise
# skip blobs the registry has) and a fresh client cache (no resume records). In the same
# run: the floor = reading and sha256-hashing the file alone (`openssl dgst -sha256`, the
# faster of it and `sha256sum`; best of 3, before and after the matrix). Each cell prints
# MB/s (10^6 bytes/s) and its ratio to the floor. Then, unless SKOPEO=0, `skopeo copy` of
# one multi-layer OCI image layout (bench/oci/make_layout.sh) into each registry.
# Results go in docs/benchmarks.md ("Issue #5 — OCI push/pull").
#
#   bench/oci/oci_bench.sh PATH_TO_HANGAR
#   SIZE_MIB=4096 PARTS_MIB="64 128 256 512" WORKERS="2 4 8" REGISTRIES="hangar dreg" \
#   REPS=1 SKOPEO=1 SKOPEO_LAYERS=8 SKOPEO_LAYER_MIB=128 bench/oci/oci_bench.sh build/hangar
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
BIN="${1:-}"
[[ -x "$BIN" ]] || { echo "usage: $0 PATH_TO_HANGAR" >&2; exit 2; }
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
SIZE_MIB="${SIZE_MIB:-4096}"
PARTS_MIB="${PARTS_MIB:-64 128 256 512}"
WORKERS="${WORKERS:-2 4 8}"
REGISTRIES="${REGISTRIES:-hangar dreg}"
REPS="${REPS:-1}"  # runs per cell; the best counts
SKOPEO="${SKOPEO:-1}"

T="$(mktemp -d "${TMPDIR:-/tmp}/hangar-oci-bench.XXXXXX")"
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT
source "$HERE/registries.sh"

now() { date +%s%N; }
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.0f", b / 1e6 / (ns / 1e9) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
best() { sort -n | head -n 1; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM, $(df -h "$T" | awk 'NR == 2 {print $1}')"
echo "binary:  $BIN ($(sha256sum "$BIN" | cut -c1-12)); docker-registry $(docker-registry --version 2>/dev/null | awk '{print $3}')"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)"

FILE="$T/weights.bin"
BYTES=$((SIZE_MIB * 1024 * 1024))
(openssl enc -aes-128-ctr -nosalt -pbkdf2 -pass pass:hangar-oci-bench </dev/zero 2>/dev/null || true) |
  head -c "$BYTES" >"$FILE"
FILE_SHA="$(openssl dgst -sha256 -r "$FILE" | cut -d' ' -f1)"
echo "file:    $SIZE_MIB MiB of random bytes (AES-CTR keystream), sha256 ${FILE_SHA:0:12}"

floor_ns() {
  local runs=() t0 i
  for i in 1 2 3; do
    t0=$(now); openssl dgst -sha256 "$FILE" >/dev/null; runs+=($(($(now) - t0)))
    t0=$(now); sha256sum "$FILE" >/dev/null; runs+=($(($(now) - t0)))
  done
  printf '%s\n' "${runs[@]}" | best
}
FLOOR1="$(floor_ns)"
echo "floor:   $(mbps "$BYTES" "$FLOOR1") MB/s (read + sha256 of the file, before the matrix)"

declare -A PUSH PULL
# cell REGISTRY PART_MIB WORKERS: the best push and pull times (ns) of REPS runs.
cell() {
  local reg="$1" part="$2" workers="$3" rep push_best="" pull_best="" t0 dt
  for ((rep = 0; rep < REPS; rep++)); do
    start_registry "$reg" "$T/$reg"
    export XDG_CACHE_HOME="$T/cache"
    rm -rf "$XDG_CACHE_HOME" "$T/out"
    t0=$(now)
    "$BIN" oci push "$REG_HOST/bench/weights:v1" "$FILE" --part-size "${part}M" --workers "$workers" \
      -q "${REG_AUTH[@]}" >/dev/null 2>"$T/push.err" || { echo "push failed: $(tail -c 400 "$T/push.err")" >&2; exit 1; }
    dt=$(($(now) - t0))
    [[ -z "$push_best" || "$dt" -lt "$push_best" ]] && push_best=$dt
    t0=$(now)
    "$BIN" oci pull "$REG_HOST/bench/weights:v1" --output "$T/out" --workers "$workers" \
      -q "${REG_AUTH[@]}" >/dev/null 2>"$T/pull.err" || { echo "pull failed: $(tail -c 400 "$T/pull.err")" >&2; exit 1; }
    dt=$(($(now) - t0))
    [[ -z "$pull_best" || "$dt" -lt "$pull_best" ]] && pull_best=$dt
    if [[ "$(stat -c %s "$T/out/weights.bin")" != "$BYTES" ]]; then
      echo "pulled file has the wrong size" >&2; exit 1
    fi
    rm -rf "$T/out"
    stop_registry
  done
  PUSH[$reg,$part,$workers]=$push_best
  PULL[$reg,$part,$workers]=$pull_best
  printf '%-6s part %4s MiB  workers %s   push %5s MB/s   pull %5s MB/s\n' "$reg" "$part" "$workers" \
    "$(mbps "$BYTES" "$push_best")" "$(mbps "$BYTES" "$pull_best")"
}

for reg in $REGISTRIES; do
  for part in $PARTS_MIB; do
    for w in $WORKERS; do cell "$reg" "$part" "$w"; done
  done
done

FLOOR2="$(floor_ns)"
FLOOR=$((FLOOR1 < FLOOR2 ? FLOOR1 : FLOOR2))
FLOOR_MBPS="$(mbps "$BYTES" "$FLOOR")"
echo "floor:   $(mbps "$BYTES" "$FLOOR2") MB/s after the matrix; the best, $FLOOR_MBPS MB/s, is the bar"

echo
echo "| registry | part size | workers | push MB/s | push / floor | pull MB/s | pull / floor |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for reg in $REGISTRIES; do
  for part in $PARTS_MIB; do
    for w in $WORKERS; do
      p=$(mbps "$BYTES" "${PUSH[$reg,$part,$w]}")
      q=$(mbps "$BYTES" "${PULL[$reg,$part,$w]}")
      echo "| $(registry_label "$reg") | $part MiB | $w | $p | $(ratio "$p" "$FLOOR_MBPS") | $q | $(ratio "$q" "$FLOOR_MBPS") |"
    done
  done
done

[[ "$SKOPEO" == 1 ]] || exit 0
command -v skopeo >/dev/null || { echo "skopeo not installed: no skopeo rows"; exit 0; }
echo
LAYERS="${SKOPEO_LAYERS:-8}"
LAYER_MIB="${SKOPEO_LAYER_MIB:-128}"
"$HERE/make_layout.sh" "$T/layout" "$LAYERS" "$LAYER_MIB" >/dev/null
echo "skopeo copy oci:LAYOUT docker://REGISTRY/bench/image:v1 ($LAYERS layers of $LAYER_MIB MiB; best of 2, fresh storage each)"
echo
echo "| registry | skopeo copy s | MB/s |"
echo "| --- | --- | --- |"
for reg in $REGISTRIES; do
  sk_best=""
  for rep in 1 2; do
    start_registry "$reg" "$T/$reg"
    creds=()
    [[ ${#REG_AUTH[@]} -gt 0 ]] && creds=(--dest-creds "hangar:${REG_AUTH[1]}")
    t0=$(now)
    skopeo copy -q --dest-tls-verify=false "${creds[@]}" "oci:$T/layout:v1" "docker://$REG_HOST/bench/image:v1" \
      >/dev/null 2>"$T/skopeo.err" || { echo "skopeo copy failed: $(tail -c 400 "$T/skopeo.err")" >&2; exit 1; }
    dt=$(($(now) - t0))
    [[ -z "$sk_best" || "$dt" -lt "$sk_best" ]] && sk_best=$dt
    stop_registry
  done
  echo "| $(registry_label "$reg") | $(awk -v ns="$sk_best" 'BEGIN { printf "%.2f", ns / 1e9 }') | $(mbps $((LAYERS * LAYER_MIB * 1048576)) "$sk_best") |"
done
