#!/usr/bin/env bash
# Issue #3's memory and speed benchmark: 4 concurrent 1 GiB uploads through the native
# upload API (docs/uploads.md: create, PUT parts of 64 MiB with 2 curl processes per file,
# complete), one NDJSON commit of the 4 as `lfsFile` lines, then 4 concurrent download
# loops via /resolve (curl -o /dev/null) until >= 16 GiB have gone through the server;
# local store. The server's VmRSS is sampled every 50 ms for the whole run: RSS at start,
# peak and steady (median of the second half) per phase, the RSS slope against the bytes
# moved, VmHWM at the end. Against the deployment (lib.sh HANGAR_DEPLOYMENT; the reference
# scenario: 4 concurrent 1 GiB native uploads, to S3 with HANGAR_DEPLOY_S3=1) the uploads
# and downloads go through the balancer and every replica is sampled: the RSS figures
# come per replica (keys ending _a, _b). The floors are measured in the same run, on the
# same files: sha256sum of one file alone (and of the 4 at once; and `openssl dgst -sha256`, the hash
# code the server uses), and a plain loopback copy: curl from a Python os.sendfile server
# (one file alone, and the 4 at once before and after the download phase), with nginx
# (sendfile) serving the same files as the peer. Ratios: uploads against the sha256 floor
# (the server must hash), downloads against the loopback-copy floor.
#
#   loadtest/transfer_memory.sh                       # 4 x 1 GiB, >= 16 GiB down: ~3-5 min
#   BENCH_QUICK=1 loadtest/transfer_memory.sh         # 4 x 64 MiB, 1 GiB down: a dry run
#   BENCH_XFER_MIB=512 BENCH_XFER_DL_GIB=8 loadtest/transfer_memory.sh
#
# Files and the data dir live under lib.sh's temp dir in /tmp (a real disk on the bench
# machine, not tmpfs: the script says which; ~8 GiB at full size) and are deleted on exit, as are all the
# processes it started. BENCH_TIMEOUT (default 1200 s) bounds the whole run.
source "$(dirname "$0")/lib.sh"

MIB=${BENCH_XFER_MIB:-1024}; DL_GIB=${BENCH_XFER_DL_GIB:-16}; PART_MIB=${BENCH_XFER_PART_MIB:-64}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
  MIB=${BENCH_XFER_MIB:-64}; DL_GIB=${BENCH_XFER_DL_GIB:-1}; PART_MIB=${BENCH_XFER_PART_MIB:-16}
fi
NFILES=4; WORKERS=2; SAMPLE_MS=50
SIZE=$((MIB * 1024 * 1024)); PART=$((PART_MIB * 1024 * 1024))
# Each of the 4 loops downloads its own file ROUNDS times: >= DL_GIB GiB in all.
ROUNDS=$(( (DL_GIB * 1024 + NFILES * MIB - 1) / (NFILES * MIB) ))
HARD=${BENCH_TIMEOUT:-1200}

# The upload workers and download loops are subshells whose curl children lib.sh does not
# know: on exit, end every descendant of this script (by pid), then lib.sh's cleanup.
kill_tree() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do kill_tree "$c"; kill "$c" 2>/dev/null || true; done
}
trap 'kill_tree $$; lt_cleanup' EXIT
# Never a bare `wait` below: the watchdog and the servers are background children too.
waitall() { local p rc=0; for p in "$@"; do wait "$p" || rc=1; done; return $rc; }

# Hard timeout: TERM to this shell -> exit 130 -> lib.sh's EXIT trap (kill + rm -rf).
# `&&`: when the exit trap ends the watchdog, its sleep dies first (kill_tree), and the
# TERM must not follow then (it made a finished run exit 130).
setsid bash -c "sleep $HARD && echo 'transfer_memory: hard timeout ($HARD s)' >&2 && kill -TERM $$" \
  </dev/null >&2 2>&1 &
LT_PGIDS+=("$!")

fs=$(df --output=fstype "$LT_TMP" | tail -1 | tr -d ' ')
[ "$fs" = tmpfs ] && log "WARNING: $LT_TMP is on tmpfs: the store is in RAM, not on disk"
avail=$(df --output=avail -B1M "$LT_TMP" | tail -1 | tr -d ' ')
need=$((NFILES * MIB * 3 + 512))  # sources, staged parts, blobs
[ "$avail" -gt "$need" ] || { echo "need ~$need MiB free in $LT_TMP, have $avail" >&2; exit 1; }
log "temp dir $LT_TMP on $(df --output=source "$LT_TMP" | tail -1) ($fs, $avail MiB free)"

# --- the files (different random bytes each)
log "writing $NFILES x $MIB MiB of random data"
pids=()
for i in $(seq $NFILES); do head -c "$SIZE" /dev/urandom >"$LT_TMP/f$i.bin" & pids+=("$!"); done
waitall "${pids[@]}"
sync

# --- floor 1: sha256 of one file alone, then of the 4 at once (2 cores: ~2x, not 4x)
: >"$LT_TMP/sha-one"
for r in 1 2 3; do
  t0=$(now_s); sha256sum "$LT_TMP/f1.bin" >"$LT_TMP/sum1"; t1=$(now_s)
  elapsed "$t0" "$t1" >>"$LT_TMP/sha-one"
done
sha_one=$(median <"$LT_TMP/sha-one" | awk -v m="$MIB" '{printf "%.0f", m / $1}')
# The server hashes with OpenSSL (SHA-NI where the CPU has it); coreutils' sha256sum does
# not, so `openssl dgst -sha256` of the same file is the stricter floor.
: >"$LT_TMP/ossl-one"
for r in 1 2 3; do
  t0=$(now_s); openssl dgst -sha256 "$LT_TMP/f1.bin" >/dev/null; t1=$(now_s)
  elapsed "$t0" "$t1" >>"$LT_TMP/ossl-one"
done
ossl_one=$(median <"$LT_TMP/ossl-one" | awk -v m="$MIB" '{printf "%.0f", m / $1}')
t0=$(now_s)
pids=()
for i in $(seq $NFILES); do sha256sum "$LT_TMP/f$i.bin" | cut -c1-64 >"$LT_TMP/sha$i" & pids+=("$!"); done
waitall "${pids[@]}"
t1=$(now_s)
sha_all=$(awk -v m="$((NFILES * MIB))" -v s="$(elapsed "$t0" "$t1")" 'BEGIN {printf "%.0f", m / s}')
log "sha256 floor: sha256sum $sha_one MiB/s one file alone (runs $(paste -sd' ' "$LT_TMP/sha-one") s), $sha_all MiB/s for $NFILES at once; openssl dgst $ossl_one MiB/s one file (runs $(paste -sd' ' "$LT_TMP/ossl-one") s)"

# --- floor 2: plain loopback copy. A threaded Python server that answers GET /fN.bin
# with a bare header and os.sendfile(2)s the file (the same floor as startup.sh's).
FLOOR_PORT=$(free_port)
python3 "$LT_ROOT/loadtest/sendfile_floor.py" "$FLOOR_PORT" "$LT_TMP" &
LT_PIDS+=("$!")
FLOOR_URL="http://127.0.0.1:$FLOOR_PORT"
for _ in $(seq 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -I "$FLOOR_URL/f1.bin" 2>/dev/null)" = 200 ] && break
  sleep 0.05
done
dl() { curl -sS -o /dev/null -w '%{size_download} %{speed_download}\n' "$1"; }
: >"$LT_TMP/cp-one"
for r in 1 2 3; do
  read -r got speed < <(dl "$FLOOR_URL/f1.bin")
  [ "$got" = "$SIZE" ] || { echo "floor download: $got bytes, expected $SIZE" >&2; exit 1; }
  echo "$speed" >>"$LT_TMP/cp-one"
done
cp_one=$(median <"$LT_TMP/cp-one" | awk '{printf "%.0f", $1 / 1048576}')
# copy4 BASE_URL OUT — 3 passes of the 4 files at once from BASE_URL; MiB/s per pass >> OUT.
copy4() {
  local r i t0 t1 got pids
  for r in 1 2 3; do
    t0=$(now_s)
    pids=()
    for i in $(seq $NFILES); do dl "$1/f$i.bin" >"$LT_TMP/cp$i" & pids+=("$!"); done
    waitall "${pids[@]}"
    t1=$(now_s)
    got=$(cut -d' ' -f1 "$LT_TMP"/cp[0-9]* | paste -sd+ | bc)
    [ "$got" = "$((NFILES * SIZE))" ] || { echo "floor downloads from $1: $got bytes" >&2; exit 1; }
    awk -v b="$got" -v s="$(elapsed "$t0" "$t1")" 'BEGIN {printf "%.0f\n", b / 1048576 / s}' >>"$2"
  done
}
# nginx (sendfile, 2 workers; lib.sh) serving the same files: the peer, a stricter floor.
have_nginx=0; nginx_start "$LT_TMP" && have_nginx=1
: >"$LT_TMP/cp-all"; : >"$LT_TMP/ng-all"
copy4 "$FLOOR_URL" "$LT_TMP/cp-all"
[ $have_nginx = 1 ] && copy4 "$NGINX_URL" "$LT_TMP/ng-all"
cp_all=$(median <"$LT_TMP/cp-all" | awk '{printf "%.0f", $1}')
log "loopback copy floor: $cp_one MiB/s one stream (runs $(awk '{printf "%.0f ", $1/1048576}' "$LT_TMP/cp-one")), $cp_all MiB/s for $NFILES at once (runs $(paste -sd' ' "$LT_TMP/cp-all"))"

# --- hangar, user, token, repo
hangar_admin_token "$LT_TMP/data"
hangar_start "$LT_TMP/data"
log "hangar $(find_hangar) at $HANGAR_URL, pid $HANGAR_PID"
NAME=xfer
hangar_create_repo "$NAME"

# RSS of every hub process every SAMPLE_MS (lib.sh rss_start: it is running once this
# returns); ~10 idle samples before the first phase.
rss_start xfer "$SAMPLE_MS"
# The private part of it too: VmRSS counts the clean pages of the shared libraries each
# process has touched (DuckDB's alone ~25 MiB), which the kernel may drop and shares.
rss_start xferanon "$SAMPLE_MS" RssAnon
mark() { echo "$1 $(now_s)" >>"$LT_TMP/marks"; }
sleep 0.5
mark idle_end

# --- upload phase: 4 files at once, each create -> 2 curl workers over its parts -> complete
upload_one() {  # upload_one I
  hangar_native_upload "$NAME" "f$1" "$LT_TMP/f$1.bin" "$(cat "$LT_TMP/sha$1")" "$PART" "$WORKERS"
}
log "uploading $NFILES x $MIB MiB at once (parts of $PART_MIB MiB, $WORKERS curl processes per file)"
mark up_start
t0=$(now_s)
pids=()
for i in $(seq $NFILES); do upload_one "$i" & pids+=("$!"); done
for p in "${pids[@]}"; do wait "$p" || { echo "an upload failed" >&2; exit 1; }; done
t1=$(now_s)
mark up_end
up_s=$(elapsed "$t0" "$t1")

files=()
for i in $(seq $NFILES); do files+=("f$i.bin:$(cat "$LT_TMP/sha$i"):$SIZE"); done
hangar_commit_lfs "$NAME" "4 large files (transfer_memory.sh)" "${files[@]}"
for i in $(seq $NFILES); do
  code=$(curl -s -o /dev/null -w '%{http_code}' -I "$HANGAR_URL/bench/$NAME/resolve/main/f$i.bin")
  [ "$code" = 200 ] || { echo "HEAD resolve f$i.bin -> $code" >&2; exit 1; }
done
sleep 0.5

# --- download phase: 4 loops, each ROUNDS downloads of its own file, until >= DL_GIB GiB
log "downloading: $NFILES loops x $ROUNDS rounds x $MIB MiB"
mark dl_start
t0=$(now_s)
pids=()
for i in $(seq $NFILES); do
  (
    for r in $(seq "$ROUNDS"); do
      dl "$HANGAR_URL/bench/$NAME/resolve/main/f$i.bin" >>"$LT_TMP/dl$i" || exit 1
    done
  ) &
  pids+=("$!")
done
for p in "${pids[@]}"; do wait "$p" || { echo "a download loop failed" >&2; exit 1; }; done
t1=$(now_s)
mark dl_end
dl_s=$(elapsed "$t0" "$t1")
sleep 0.5
hwm=$(hangar_hwm_kib)
hwm_note=$(hub_hwm_note)
hub_procs
labels=("${HUB_LABELS[@]}")
rss_stop xfer
rss_stop xferanon
dl_bytes=$(cut -d' ' -f1 "$LT_TMP"/dl[0-9]* | paste -sd+ | bc)
bad=$(awk -v s="$SIZE" '$1 != s' "$LT_TMP"/dl[0-9]* | wc -l)
[ "$bad" = 0 ] || { echo "$bad downloads were not $SIZE bytes" >&2; exit 1; }
hangar_stop

# The same floors again after the downloads (the machine is shared: bracket the phase).
log "loopback copy floors again"
copy4 "$FLOOR_URL" "$LT_TMP/cp-all"
[ $have_nginx = 1 ] && copy4 "$NGINX_URL" "$LT_TMP/ng-all"
cp_all=$(median <"$LT_TMP/cp-all" | awk '{printf "%.0f", $1}')
ng_all=$(median <"$LT_TMP/ng-all" | awk '{printf "%.0f", $1}')
[ $have_nginx = 1 ] || ng_all=nan

# --- figures
up_mib_s=$(awk -v m="$((NFILES * MIB))" -v s="$up_s" 'BEGIN {printf "%.0f", m / s}')
dl_mib_s=$(awk -v b="$dl_bytes" -v s="$dl_s" 'BEGIN {printf "%.0f", b / 1048576 / s}')
# Per phase and hub process (one column of rss.xfer.tsv each): RSS at its start, peak,
# steady (median of the second half), slope (MiB of RSS per GiB moved, least squares over
# the phase), number of samples, RSS at its end, and its shape.
python3 - "$LT_TMP/rss.xfer.tsv" "$LT_TMP/marks" "$((NFILES * SIZE))" "$dl_bytes" "${labels[@]}" >"$LT_TMP/rss-stats" <<'PY'
import sys, statistics
labels = sys.argv[5:]
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
marks = {k: float(v) for k, v in (l.split() for l in open(sys.argv[2]))}
moved = {"up": int(sys.argv[3]), "dl": int(sys.argv[4])}
for col, label in enumerate(labels, start=1):
    for ph in ("up", "dl"):
        a, b = marks[ph + "_start"], marks[ph + "_end"]
        s = [(r[0], r[col] / 1024) for r in rows if a <= r[0] <= b]
        before = [r[col] / 1024 for r in rows if r[0] < a]
        start = before[-1] if before else s[0][1]
        half = [r for t, r in s if t >= (a + b) / 2]
        n = len(s)
        mt = sum(t for t, _ in s) / n; mr = sum(r for _, r in s) / n
        var = sum((t - mt) ** 2 for t, _ in s)
        slope_per_s = sum((t - mt) * (r - mr) for t, r in s) / var if var else 0.0
        gib_per_s = moved[ph] / 2**30 / (b - a)
        # RSS at each tenth of the phase (last sample before it): the shape, for the log.
        tenths = [next((r for t, r in reversed(s) if t <= a + (b - a) * k / 10), s[0][1]) for k in range(11)]
        print(label, ph, "%.1f %.1f %.1f %.2f %d %.1f" % (start, max(r for _, r in s), statistics.median(half),
                                                      slope_per_s / gib_per_s, n, s[-1][1]),
              ",".join("%.1f" % r for r in tenths))
PY
hwm_mib=$(awk -v k="$hwm" 'BEGIN {printf "%.1f", k / 1024}')
r_up=$(awk -v a="$up_mib_s" -v b="$sha_one" 'BEGIN {printf "%.2f", a / b}')
r_upo=$(awk -v a="$up_mib_s" -v b="$ossl_one" 'BEGIN {printf "%.2f", a / b}')
r_up4=$(awk -v a="$up_mib_s" -v b="$sha_all" 'BEGIN {printf "%.2f", a / b}')
r_dl=$(awk -v a="$dl_mib_s" -v b="$cp_all" 'BEGIN {printf "%.2f", a / b}')
r_ng=$(awk -v a="$dl_mib_s" -v b="$ng_all" 'BEGIN {printf "%.2f", a / b}')
r_dl1=$(awk -v a="$dl_mib_s" -v b="$cp_one" 'BEGIN {printf "%.2f", a / b}')

# stats LABEL PHASE — that process's figures for the phase (the fields printed above).
stats() { awk -v l="$1" -v p="$2" '$1 == l && $2 == p { $1 = $2 = ""; print substr($0, 3) }' "$LT_TMP/rss-stats"; }
{
  echo
  echo "transfer_memory: $NFILES x $MIB MiB, parts $PART_MIB MiB x $WORKERS workers/file; $((dl_bytes / 1048576)) MiB downloaded; RSS every ${SAMPLE_MS} ms; load $(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%-8s | %-10s | %9s | %9s | %9s | %9s | %10s | %8s | %10s | %s\n' \
    process phase "RSS start" "RSS peak" "steady" "RSS end" "MiB/GiB" samples "MiB/s" "floor MiB/s, ratio"
  for label in "${labels[@]}"; do
    read -r up_start up_peak up_steady up_slope up_n up_last _ < <(stats "$label" up)
    read -r dl_start dl_peak dl_steady dl_slope dl_n dl_last _ < <(stats "$label" dl)
    printf '%-8s | %-10s | %9s | %9s | %9s | %9s | %10s | %8s | %10s | %s\n' \
      "$label" upload "$up_start" "$up_peak" "$up_steady" "$up_last" "$up_slope" "$up_n" "$up_mib_s" \
      "sha256sum 1 file $sha_one: $r_up; 4 files $sha_all: $r_up4; openssl 1 file $ossl_one: $r_upo"
    printf '%-8s | %-10s | %9s | %9s | %9s | %9s | %10s | %8s | %10s | %s\n' \
      "$label" download "$dl_start" "$dl_peak" "$dl_steady" "$dl_last" "$dl_slope" "$dl_n" "$dl_mib_s" \
      "os.sendfile 4 streams $cp_all: $r_dl; nginx 4 streams $ng_all: $r_ng; os.sendfile 1 stream $cp_one: $r_dl1"
  done
  echo "At the end: $hwm_note (RSS in MiB; MiB/GiB = RSS growth per GiB moved, least squares)"
  for label in "${labels[@]}"; do
    echo "$label: RSS at 0, 10%, ..., 100% of the upload phase:   $(stats "$label" up | cut -d' ' -f7)"
    echo "$label: RSS at 0, 10%, ..., 100% of the download phase: $(stats "$label" dl | cut -d' ' -f7)"
  done
  echo
} >&2

# The RSS figures per hub process: keys as before for the one hangar serve, _a/_b per
# replica of the deployment (whose requests come through the balancer).
for label in "${labels[@]}"; do
  sfx=$(result_suffix "$label")
  who="hangar serve"; [ "$label" = hangar ] || who="replica $label"
  read -r up_start up_peak up_steady up_slope up_n up_last _ < <(stats "$label" up)
  read -r dl_start dl_peak dl_steady dl_slope dl_n dl_last _ < <(stats "$label" dl)
  result "xfer_rss_upload_peak$sfx" "$up_peak" MiB "flat, < 64 MiB" \
    "$who; 4 x $MIB MiB native uploads at once: VmRSS start $up_start, steady $up_steady (median of 2nd half), end $up_last MiB; slope $up_slope MiB per GiB; $up_n samples"
  result "xfer_rss_download_peak$sfx" "$dl_peak" MiB "flat, < 64 MiB" \
    "$who; 4 download loops, $((dl_bytes / 1048576)) MiB: VmRSS start $dl_start, steady $dl_steady, end $dl_last MiB; slope $dl_slope MiB per GiB; $dl_n samples"
  read -r _ anon_peak anon_first _ < <(awk -v l="$label" '$1 == l' "$LT_TMP/rss.xferanon.peaks")
  result "xfer_rss_anon_peak$sfx" "$((anon_peak / 1024))" MiB "" \
    "$who; RssAnon (private memory: VmRSS less the shared libraries' clean file pages) over both phases, peak (at start $((anon_first / 1024)) MiB)"
done
result xfer_rss_hwm "$hwm_mib" MiB "flat, < 64 MiB" "largest VmHWM of the hub's processes after both phases ($hwm_note)"
result xfer_upload_mib_s "$up_mib_s" MiB/s "" \
  "4 x $MIB MiB in $up_s s (create, parts, complete); sha256sum floor one file $sha_one MiB/s (median of 3), 4 at once $sha_all MiB/s"
result xfer_upload_sha_ratio "$r_up" x "" "upload aggregate / sha256sum of one file alone (4 at once: $r_up4; / openssl dgst -sha256 of one file, $ossl_one MiB/s: $r_upo)"
result xfer_download_mib_s "$dl_mib_s" MiB/s ">= 90% of loopback cat-to-socket" \
  "$((dl_bytes / 1048576)) MiB in $dl_s s by 4 curl loops; loopback copy floor (os.sendfile) 4 streams $cp_all MiB/s (median of 6, 3 before + 3 after: $(paste -sd' ' "$LT_TMP/cp-all")), 1 stream $cp_one MiB/s; nginx 4 streams $ng_all MiB/s ($(paste -sd' ' "$LT_TMP/ng-all"))"
result xfer_download_floor_ratio "$r_dl" x ">= 0.90" "download aggregate / loopback copy (os.sendfile server, 4 streams, same curl) (1 stream: $r_dl1)"
result xfer_download_nginx_ratio "$r_ng" x "" "download aggregate / nginx sendfile, same 4 files, 4 streams"
