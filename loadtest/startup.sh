#!/usr/bin/env bash
# Start-to-ready time of `hangar serve` (median of 10, fresh data dir and restart), and
# the server's memory while it serves large files: RSS during the git-lfs push of a
# 1 GiB file and during 4 concurrent downloads of it, plus single-download throughput
# beside nginx (sendfile) serving the same bytes.
#
#   loadtest/startup.sh
#   BENCH_QUICK=1 loadtest/startup.sh      # 3 starts, 64 MiB file
#
# Against the deployment (lib.sh HANGAR_DEPLOYMENT) it measures the reference's figure
# instead, start to ready of a stopped replica: `deploy/stack.sh time-start` on replica a
# (the other replica, if any, serves meanwhile), from exec to its port listening, to its
# /readyz 200 and to HAProxy having it back in rotation; the large-file part is
# loadtest/downloads.sh's there. With HANGAR_ENGINE=postgres the starts are restarts on the
# one database (a fresh start would need a fresh database each time: not measured).
#
# The random file lives under the script's temp dir in /tmp and is deleted on exit.
source "$(dirname "$0")/lib.sh"

STARTS=10; MIB=${BENCH_LFS_MIB:-1024}
if [ "${BENCH_QUICK:-0}" = 1 ]; then STARTS=3; MIB=${BENCH_LFS_MIB:-64}; fi
BIN=$(find_hangar)

if [ "${HANGAR_DEPLOYMENT:-0}" = 1 ]; then
  hangar_start "$LT_TMP/data"
  log "deploy/stack.sh time-start: replica a, $STARTS runs"
  "$LT_ROOT/deploy/stack.sh" time-start "$DEPLOY_DIR" a --runs "$STARTS" | tee "$LT_TMP/time-start.out" >&2
  figure() { awk -v k="$1" '$1 == k { print $2 }' "$LT_TMP/time-start.out"; }
  runs() { awk -v k="$1" '$1 == "run" { for (i = 3; i < NF; i += 2) if ($i == k) printf "%s ", $(i + 1) }' "$LT_TMP/time-start.out"; }
  hub_procs
  others=$(( ${#HUB_PIDS[@]} - 1 ))
  context="median of $STARTS; replica a stopped (SIGTERM, drained), started again with the same config, PostgreSQL and data dir; $others other replica(s) serving"
  result replica_start_listening_ms "$(figure replica_start_listening_ms)" ms "" \
    "exec to its port accepting a connection; $context; runs $(runs listening_ms)"
  result replica_start_ready_ms "$(figure replica_start_ready_ms)" ms "< 100 ms" \
    "exec to GET /readyz 200 (database and blob store reachable); $context; runs $(runs ready_ms)"
  result replica_start_rotation_ms "$(figure replica_start_rotation_ms)" ms "" \
    "exec to HAProxy having it UP again (checks every 250 ms, 2 good ones needed); $context; runs $(runs rotation_ms)"
  result rss_at_ready "$(( $(proc_kib "${HUB_PIDS[0]}" VmRSS) / 1024 ))" MiB "" "VmRSS of replica a after its last start (and HAProxy's checks)"
  hangar_stop
  exit 0
fi

# --- start to ready
postgres_up  # HANGAR_ENGINE=postgres: startup_time.py's servers inherit HANGAR_DATABASE_URL
if [ -z "$PG_DIR" ]; then
  mkdir -p "$LT_TMP/starts"
  python3 "$LT_ROOT/bench/startup_time.py" "$BIN" "$LT_TMP/starts" --runs "$STARTS" --fresh >"$LT_TMP/fresh.json"
fi
mkdir -p "$LT_TMP/reuse"
python3 "$LT_ROOT/bench/startup_time.py" "$BIN" "$LT_TMP/reuse" --runs 1 >/dev/null  # initialise
python3 "$LT_ROOT/bench/startup_time.py" "$BIN" "$LT_TMP/reuse" --runs "$STARTS" >"$LT_TMP/reuse.json"
j() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"; }
if [ -z "$PG_DIR" ]; then
  result startup_fresh_ms "$(j "$LT_TMP/fresh.json" median_ms)" ms "< 100 ms" \
    "median of $STARTS, empty data dir; runs $(j "$LT_TMP/fresh.json" runs_ms)"
fi
result startup_restart_ms "$(j "$LT_TMP/reuse.json" median_ms)" ms "< 100 ms" \
  "median of $STARTS, existing data dir; runs $(j "$LT_TMP/reuse.json" runs_ms)"
rss0=$(python3 -c "import json,sys; print(max(json.load(open(sys.argv[1]))['rss_ready_kib'])//1024)" "$LT_TMP/reuse.json")
result rss_at_ready "$rss0" MiB "" "VmRSS right after 'listening on'"

# --- large file: push with git-lfs, then 4 concurrent downloads
command -v git-lfs >/dev/null || { echo "git-lfs not installed; skipping the large-file part" >&2; exit 0; }
hangar_admin_token "$LT_TMP/data"
hangar_start "$LT_TMP/data"
log "hangar at $HANGAR_URL"
NAME=lfs
hangar_create_repo "$NAME"

src="$LT_TMP/lfs-src"
git init -q -b main "$src"
git -C "$src" lfs install --local >/dev/null
git -C "$src" lfs track "*.bin" >/dev/null
git -C "$src" config lfs.locksverify false
log "writing $MIB MiB of random data"
head -c "$((MIB * 1024 * 1024))" /dev/urandom >"$src/big.bin"
git -C "$src" add -A
git -C "$src" -c user.name=bench -c user.email=bench@hangar.invalid commit -q -m "big file"
rss_start upload
t0=$(now_s)
if ! timeout 600 git -C "$src" push -q "$(hangar_git_url "$NAME")" +main:main >&2; then
  rss_stop upload
  echo "git-lfs push to hangar failed; cannot measure downloads" >&2
  exit 1
fi
t1=$(now_s)
rss_stop upload
read -r _ up_peak up_first _ <"$LT_TMP/rss.upload.peaks"
up_s=$(elapsed "$t0" "$t1")
result lfs_push_seconds "$up_s" s "" "git-lfs push of $MIB MiB ($(python3 -c "print('%.0f' % ($MIB/$up_s))") MiB/s incl. client hashing)"
result rss_peak_upload "$((up_peak / 1024))" MiB "flat, < 64 MiB" "max VmRSS sampled every 20 ms during the push (at start: $((up_first / 1024)) MiB)"
rm -rf "$src/.git/lfs/objects"  # the client's copy: not needed any more

URL="$HANGAR_URL/bench/$NAME/resolve/main/big.bin"
code=$(curl -s -o /dev/null -w '%{http_code}' -I "$URL")
[ "$code" = 200 ] || { echo "HEAD $URL -> $code; cannot measure downloads" >&2; exit 1; }

# Single download, Hangar vs nginx serving the same file (sendfile: the loopback floor).
dl() { curl -s -o /dev/null -w '%{speed_download} %{size_download}\n' "$1"; }
mkdir -p "$LT_TMP/www/bench/$NAME/resolve/main"
ln "$src/big.bin" "$LT_TMP/www/bench/$NAME/resolve/main/big.bin"
have_nginx=0; nginx_start "$LT_TMP/www" && have_nginx=1

# The "cat-to-socket" floor itself: a minimal server that answers any request with a
# bare HTTP/1.1 header and os.sendfile(2)s the whole file into the socket, then closes.
FLOOR_PORT=$(free_port)
python3 "$LT_ROOT/loadtest/sendfile_floor.py" "$FLOOR_PORT" "$LT_TMP/www/bench/$NAME/resolve/main" &
LT_PIDS+=("$!")
FLOOR_URL="http://127.0.0.1:$FLOOR_PORT/big.bin"
have_floor=0
for _ in $(seq 100); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' -I "$FLOOR_URL" 2>/dev/null)" = 200 ]; then have_floor=1; break; fi
  sleep 0.05
done

dl "$URL" >/dev/null  # warm the page cache for both (same bytes, different files)
[ $have_nginx = 1 ] && dl "$NGINX_URL/bench/$NAME/resolve/main/big.bin" >/dev/null
: >"$LT_TMP/dh"; : >"$LT_TMP/dn"; : >"$LT_TMP/df"
for i in 1 2 3 4 5; do
  read -r speed size < <(dl "$URL"); echo "$speed" >>"$LT_TMP/dh"
  [ "$size" = "$((MIB * 1024 * 1024))" ] || { echo "download size $size, expected $((MIB * 1024 * 1024))" >&2; exit 1; }
  if [ $have_nginx = 1 ]; then read -r speed _ < <(dl "$NGINX_URL/bench/$NAME/resolve/main/big.bin"); echo "$speed" >>"$LT_TMP/dn"; fi
  if [ $have_floor = 1 ]; then
    read -r speed size < <(dl "$FLOOR_URL"); echo "$speed" >>"$LT_TMP/df"
    [ "$size" = "$((MIB * 1024 * 1024))" ] || { echo "floor download size $size" >&2; exit 1; }
  fi
done
mib() { awk '{printf "%.0f\n", $1/1048576}' "$1" | paste -sd' '; }
mbh=$(median <"$LT_TMP/dh" | awk '{printf "%.0f", $1/1048576}')
note="median of 5 (alternating), curl -o /dev/null; hangar runs $(mib "$LT_TMP/dh")"
if [ $have_nginx = 1 ]; then
  mbn=$(median <"$LT_TMP/dn" | awk '{printf "%.0f", $1/1048576}')
  note="$note; nginx sendfile ${mbn} MiB/s (runs $(mib "$LT_TMP/dn")), hangar/nginx $(python3 -c "print('%.2f' % ($mbh/$mbn))")"
fi
if [ $have_floor = 1 ]; then
  mbf=$(median <"$LT_TMP/df" | awk '{printf "%.0f", $1/1048576}')
  note="$note; cat-to-socket floor (python os.sendfile) ${mbf} MiB/s (runs $(mib "$LT_TMP/df"))"
  result download_floor_ratio "$(python3 -c "print('%.2f' % ($mbh/$mbf))")" x ">= 0.90" \
    "hangar / cat-to-socket floor (python os.sendfile of the same file, same curl client)"
fi
result download_mib_s "$mbh" MiB/s ">= 90% of loopback cat-to-socket" "$note"

# 4 concurrent downloads; RSS sampled throughout.
rss_start dl
t0=$(now_s)
pids=()
for i in 1 2 3 4; do
  curl -s -o /dev/null -w '%{size_download}\n' "$URL" >"$LT_TMP/dl$i" &
  pids+=("$!"); LT_PIDS+=("$!")
done
for p in "${pids[@]}"; do wait "$p"; done
t1=$(now_s)
rss_stop dl
read -r _ dl_peak dl_first nsamples <"$LT_TMP/rss.dl.peaks"
total=$(cat "$LT_TMP"/dl[1-4] | paste -sd+ | bc)
agg=$(python3 -c "print('%.0f' % ($total/1048576/($t1-$t0)))")
result rss_peak_4x_download "$((dl_peak / 1024))" MiB "flat, < 64 MiB RSS for 4 x 1 GiB" \
  "max VmRSS over $nsamples samples (20 ms) during 4 concurrent ${MIB} MiB downloads (at start: $((dl_first / 1024)) MiB); aggregate ${agg} MiB/s; $total bytes"
result rss_peak_startup_sh "$(( $(hangar_hwm_kib) / 1024 ))" MiB "" "VmHWM of hangar serve after upload + downloads"
hangar_stop
