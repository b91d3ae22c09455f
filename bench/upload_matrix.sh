#!/usr/bin/env bash
# The part size × workers matrix behind the defaults of `hangar upload` / `hangar download`
# (docs/uploads.md "Client", figures in docs/benchmarks.md).
#
#   bench/upload_matrix.sh [PATH_TO_HANGAR]       (default build-cli/hangar, then build/hangar)
#
# Makes one random file (SIZE_MIB, default 1024), starts `hangar serve` on 127.0.0.1 port 0
# with a temporary data dir (local store), and for every part size in PARTS_MIB (16 64 256)
# and worker count in WORKERS (1 2 4 8) times one `hangar upload` of the file into a fresh
# repo and one `hangar download` of it into an empty dir, REPS times (default 2; the best
# run counts). In the same run it measures the
# floors (before and after the matrix; the best counts): `cat file > /dev/null` (read),
# `sha256sum file` and `openssl dgst -sha256 file` (hash: the faster of the two counts) and
# a plain loopback copy
# (Python os.sendfile from the file into a 127.0.0.1 socket, the other end written to a file
# on the same disk). Ratios are to
#   upload floor   = hash + loopback copy (the client must hash before it can announce
#                    the object; then the bytes must cross the socket and land on disk);
#   download floor = max(hash, loopback copy) (the bytes must cross the socket and
#                    land on disk, and be hashed to be verified; the two can overlap).
# Prints one line per cell, then the table in Markdown.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-}"
if [[ -z "$BIN" ]]; then
  for c in "$ROOT/build-cli/hangar" "$ROOT/build/hangar"; do [[ -x "$c" ]] && BIN="$c" && break; done
fi
[[ -x "$BIN" ]] || { echo "usage: $0 PATH_TO_HANGAR" >&2; exit 2; }
SIZE_MIB="${SIZE_MIB:-1024}"
PARTS_MIB="${PARTS_MIB:-16 64 256}"
WORKERS="${WORKERS:-1 2 4 8}"
REPS="${REPS:-2}"  # runs per cell; the best counts (the machine is shared)

T="$(mktemp -d "${TMPDIR:-/tmp}/hangar-matrix.XXXXXX")"
SERVER_PID=""
cleanup() {
  [[ -n "$SERVER_PID" ]] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "binary:  $BIN ($(sha256sum "$BIN" | cut -c1-12))"
echo "date:    $(date -u '+%Y-%m-%d %H:%M UTC'); load: $(cut -d' ' -f1-3 /proc/loadavg)"

FILE="$T/model.bin"
head -c $((SIZE_MIB * 1024 * 1024)) /dev/urandom >"$FILE"
echo "file:    $SIZE_MIB MiB of random bytes"

# Floors: each the best of 3, measured before and after the matrix (best of both), so a
# busy minute at either end does not set the bar.
best() { sort -n | head -n 1; }
copy_once() {
  python3 - "$FILE" "$T/copy.out" <<'EOF'
import os, socket, sys, threading, time
src, dst = sys.argv[1], sys.argv[2]
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
def send():
    c, _ = srv.accept()
    with open(src, "rb") as f:
        size = os.fstat(f.fileno()).st_size; off = 0
        while off < size:
            off += os.sendfile(c.fileno(), f.fileno(), off, size - off)
    c.close()
t0 = time.monotonic()
th = threading.Thread(target=send); th.start()
s = socket.create_connection(srv.getsockname())
with open(dst, "wb") as out:
    while True:
        b = s.recv(1 << 20)
        if not b: break
        out.write(b)
th.join()
print(f"{time.monotonic() - t0:.2f}")
EOF
  rm -f "$T/copy.out"
}
timed() { local s; s=$(now); "$@" >/dev/null; secs "$s" "$(now)"; echo; }
floor_cat=99999 floor_sha256sum=99999 floor_openssl=99999 floor_copy=99999
measure_floors() {
  floor_cat="$( (echo "$floor_cat"; for _ in 1 2 3; do timed cat "$FILE"; done) | best)"
  floor_sha256sum="$( (echo "$floor_sha256sum"; for _ in 1 2 3; do timed sha256sum "$FILE"; done) | best)"
  # OpenSSL's SHA-256 (what hangar uses) is faster than coreutils' here: the hash floor is
  # the faster of the two.
  floor_openssl="$( (echo "$floor_openssl"; for _ in 1 2 3; do timed openssl dgst -sha256 "$FILE"; done) | best)"
  floor_copy="$( (echo "$floor_copy"; for _ in 1 2 3; do copy_once; done) | best)"
  floor_sha="$(printf '%s\n%s\n' "$floor_sha256sum" "$floor_openssl" | best)"
  floor_up="$(awk -v a="$floor_sha" -v b="$floor_copy" 'BEGIN { printf "%.2f", a + b }')"
  floor_down="$(awk -v a="$floor_sha" -v b="$floor_copy" 'BEGIN { printf "%.2f", (a > b ? a : b) }')"
  echo "floors:  cat > /dev/null ${floor_cat}s, sha256sum ${floor_sha256sum}s, openssl dgst -sha256 ${floor_openssl}s, loopback copy ${floor_copy}s" \
    "→ upload floor ${floor_up}s, download floor ${floor_down}s (load $(cut -d' ' -f1-3 /proc/loadavg))"
}
measure_floors

DATA="$T/data"
"$BIN" admin user create bench --data-dir "$DATA" >/dev/null 2>&1
TOKEN="$("$BIN" admin token create bench --data-dir "$DATA")"
"$BIN" serve --data-dir "$DATA" --listen 127.0.0.1:0 --set log.access_log=false \
  >"$T/server.out" 2>"$T/server.err" &
SERVER_PID=$!
for _ in $(seq 1 200); do grep -q '^listening on' "$T/server.out" 2>/dev/null && break; sleep 0.05; done
BASE="$(sed -nE 's/^listening on (http:[^ ]+)$/\1/p' "$T/server.out")"
[[ -n "$BASE" ]] || { echo "server did not start: $(cat "$T/server.err")" >&2; exit 1; }
export HANGAR_ENDPOINT="$BASE" HANGAR_TOKEN="$TOKEN"

ROWS=()
for p in $PARTS_MIB; do
  for w in $WORKERS; do
    ups=() downs=()
    for r in $(seq 1 "$REPS"); do
      repo="bench/m-$p-$w-$r"
      s=$(now)
      "$BIN" upload "$repo" "$FILE" --part-size "${p}M" --workers "$w" -q >/dev/null
      ups+=("$(secs "$s" "$(now)")")
      sync
      s=$(now)
      "$BIN" download "$repo" --local-dir "$T/dl" --part-size "${p}M" --workers "$w" -q >/dev/null
      downs+=("$(secs "$s" "$(now)")")
      cmp -s "$FILE" "$T/dl/model.bin" || { echo "download of $repo differs" >&2; exit 1; }
      rm -rf "$T/dl"
      sync
    done
    up="$(printf '%s\n' "${ups[@]}" | best)"
    down="$(printf '%s\n' "${downs[@]}" | best)"
    echo "part ${p} MiB, ${w} workers: upload ${up}s, download ${down}s   (runs: up ${ups[*]}; down ${downs[*]}; load $(cut -d' ' -f1 /proc/loadavg))"
    ROWS+=("$p $w $up $down")
  done
done

measure_floors
echo
echo "| part MiB | workers | upload s | upload / floor | download s | download / floor |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
for row in "${ROWS[@]}"; do
  read -r p w up down <<<"$row"
  echo "| $p | $w | $up | $(ratio "$up" "$floor_up") | $down | $(ratio "$down" "$floor_down") |"
done
echo
echo "floors (best before/after): cat ${floor_cat}s, sha256sum ${floor_sha256sum}s, openssl sha256 ${floor_openssl}s," \
  "loopback copy ${floor_copy}s; upload floor ${floor_up}s, download floor ${floor_down}s"
