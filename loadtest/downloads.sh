#!/usr/bin/env bash
# The reference report's download scenario: four clients downloading one 1 GiB file
# through /resolve over and over for two minutes. Each client (loadtest/download_loop.py)
# keeps one connection and hashes every body: a download is good only when its size and
# sha256 are right, and anything else counts as an error. Figures: the total throughput,
# and for each hub process (the one `hangar serve`, or every replica of the deployment:
# lib.sh HANGAR_DEPLOYMENT) its peak RSS (sampled every 50 ms) and the CPU seconds it used
# per second of the run; the balancer's CPU too, in the deployment. The file gets there
# through the native upload API (lib.sh hangar_native_upload), in S3 with HANGAR_DEPLOY_S3=1.
#
#   loadtest/downloads.sh                  # 1 GiB, 120 s: ~3 min, ~2.5 GiB in /tmp
#   BENCH_QUICK=1 loadtest/downloads.sh    # 64 MiB, 10 s
#   BENCH_DL_MIB=256 BENCH_DL_SECONDS=30 loadtest/downloads.sh
#
# The clients' hashing runs on the same 2 cores as the hub (and the balancer): the
# throughput is what the whole machine does, clients included. The file and the data
# live under lib.sh's temp dir and are deleted on exit, with every process started here.
source "$(dirname "$0")/lib.sh"

MIB=${BENCH_DL_MIB:-1024}; SECONDS_RUN=${BENCH_DL_SECONDS:-120}
if [ "${BENCH_QUICK:-0}" = 1 ]; then MIB=${BENCH_DL_MIB:-64}; SECONDS_RUN=${BENCH_DL_SECONDS:-10}; fi
CLIENTS=4; PART=$((64 * 1024 * 1024)); SIZE=$((MIB * 1024 * 1024))

avail=$(df --output=avail -B1M "$LT_TMP" | tail -1 | tr -d ' ')
need=$((MIB * 3 + 512))  # the source, the upload's parts, the blob
[ "$avail" -gt "$need" ] || { echo "need ~$need MiB free in $LT_TMP, have $avail" >&2; exit 1; }

log "writing $MIB MiB of random data"
head -c "$SIZE" /dev/urandom >"$LT_TMP/big.bin"
SHA=$(sha256sum "$LT_TMP/big.bin" | cut -c1-64)

hangar_admin_token "$LT_TMP/data"
hangar_start "$LT_TMP/data"
log "hangar at $HANGAR_URL"
NAME=downloads
hangar_create_repo "$NAME"
hangar_native_upload "$NAME" big "$LT_TMP/big.bin" "$SHA" "$PART" 2
hangar_commit_lfs "$NAME" "one large file (downloads.sh)" "big.bin:$SHA:$SIZE"
rm -f "$LT_TMP/big.bin"  # the clients check the sha256, not the bytes
URL="$HANGAR_URL/bench/$NAME/resolve/main/big.bin"
# One checked download first: the blob is where the run's downloads will find it (the page
# cache, or S3's), and a broken setup stops here rather than as 100% errors.
python3 "$LT_ROOT/loadtest/download_loop.py" "$URL" "$SIZE" "$SHA" "$(now_s)" 0 >"$LT_TMP/warm.json"
[ "$(jq -r .good "$LT_TMP/warm.json")" = 1 ] ||
  { echo "first download of $URL: $(jq -r .first_error "$LT_TMP/warm.json")" >&2; exit 1; }

# --- the run: the clients start together at START (each Python needs a moment to load).
log "$CLIENTS clients downloading $MIB MiB over and over for $SECONDS_RUN s"
rss_start dl 50
rss_start dlanon 50 RssAnon  # VmRSS less the shared libraries' clean pages (transfer_memory.sh)
start=$(awk -v t="$(now_s)" 'BEGIN { printf "%.3f", t + 1.5 }')
haproxy_ticks=""
[ -n "$DEPLOY_DIR" ] && haproxy_ticks=$(cpu_ticks "$HAPROXY_PID")
pids=()
for c in $(seq "$CLIENTS"); do
  python3 "$LT_ROOT/loadtest/download_loop.py" "$URL" "$SIZE" "$SHA" "$start" "$SECONDS_RUN" \
    >"$LT_TMP/client$c.json" &
  pids+=("$!"); LT_PIDS+=("$!")
done
sleep "$(awk -v s="$start" -v n="$(now_s)" 'BEGIN { d = s - n; printf "%.3f", (d > 0 ? d : 0) }')"
cpu_mark dl
for p in "${pids[@]}"; do wait "$p" || true; done
cpu_per_s dl >"$LT_TMP/cpu.dl.out"
rss_stop dl
rss_stop dlanon
hub_procs
labels=("${HUB_LABELS[@]}")
haproxy_note=""
if [ -n "$haproxy_ticks" ]; then
  haproxy_note="; HAProxy $(awk -v a="$haproxy_ticks" -v b="$(cpu_ticks "$HAPROXY_PID")" \
    -v hz="$(getconf CLK_TCK)" -v s="$(elapsed "$start" "$(now_s)")" \
    'BEGIN { printf "%.2f", (b - a) / hz / s }') CPU s/s"
fi

# --- figures. A client that died has no JSON: all its downloads count as errors (1).
python3 - "$SIZE" "$start" "$CLIENTS" "$LT_TMP"/client[0-9]*.json >"$LT_TMP/summary" <<'PY'
import json, statistics, sys
size, start, clients = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
runs = []
for f in sys.argv[4:]:
    try:
        runs.append(json.load(open(f)))
    except (OSError, ValueError):
        pass
good = sum(r["good"] for r in runs)
errors = sum(r["errors"] for r in runs) + (clients - len(runs))
total = sum(r["bytes"] for r in runs)
end = max([r["end"] for r in runs] or [start + 1])
times = sorted(t for r in runs for t in r["download_seconds"])
first = next((r["first_error"] for r in runs if r["first_error"]), "")
print("%.0f %d %d %d %.1f %s %s" % (total / 2**20 / (end - start), good, errors, total, end - start,
                                     statistics.median(times) if times else "nan",
                                     times[-1] if times else "nan"))
print(" ".join(first.replace("|", "/").split())[:120])  # a line of a Markdown table
PY
read -r mib_s good errors total secs dl_med dl_max <"$LT_TMP/summary"
first_error=$(sed -n 2p "$LT_TMP/summary")
hub="hangar serve"; [ -n "$DEPLOY_DIR" ] && hub="the balancer"
result downloads_mib_s "$mib_s" MiB/s "" \
  "$CLIENTS clients, $MIB MiB file through $hub, ${secs}s: $good good downloads ($((total / 1048576)) MiB received), each hashed by its client (same 2 cores); per download median ${dl_med}s, max ${dl_max}s"
result downloads_errors "$errors" "" "0" \
  "downloads with a wrong status, size or sha256, or a broken connection${first_error:+ (first: $first_error)}"
for label in "${labels[@]}"; do
  sfx=$(result_suffix "$label")
  who="hangar serve"; [ "$label" = hangar ] || who="replica $label"
  read -r _ peak first n < <(awk -v l="$label" '$1 == l' "$LT_TMP/rss.dl.peaks")
  result "downloads_rss_peak$sfx" "$((peak / 1024))" MiB "flat, < 64 MiB" \
    "$who: max VmRSS over $n samples (50 ms) during the run (at its start: $((first / 1024)) MiB)"
  read -r _ anon_peak anon_first _ < <(awk -v l="$label" '$1 == l' "$LT_TMP/rss.dlanon.peaks")
  result "downloads_rss_anon_peak$sfx" "$((anon_peak / 1024))" MiB "" \
    "$who: max RssAnon (private memory) during the run (at its start: $((anon_first / 1024)) MiB)"
  result "downloads_cpu_s_per_s$sfx" "$(awk -v l="$label" '$1 == l { print $2 }' "$LT_TMP/cpu.dl.out")" \
    "CPU s/s" "" "$who: user + system CPU seconds per second of the run (2 cores: at most 2)$haproxy_note"
done
hangar_stop
