#!/usr/bin/env bash
# HEAD /resolve of a small file and GET model info under a fixed request rate, Hangar
# beside nginx serving the same file statically (the floor for "answer a small HEAD").
#
#   loadtest/resolve.sh            # 10 s measured per run (+1 s warmup)
#   BENCH_QUICK=1 loadtest/resolve.sh
#
# Open-loop load from bench/loadgen.cc (latency from the scheduled send time). Also
# a closed-loop max-throughput figure from wrk (5 s). Loopback only; every run bounded.
source "$(dirname "$0")/lib.sh"

DUR=11; WARM=1; WRK_DUR=5s; REPS=${BENCH_REPS:-3}
if [ "${BENCH_QUICK:-0}" = 1 ]; then DUR=3; WARM=1; WRK_DUR=2s; REPS=1; fi
# The deployment (HANGAR_DEPLOYMENT=1), and any hub when run_all.sh runs the reference
# group (BENCH_REFERENCE=1), is measured at the reference report's rates: HEAD /resolve at
# 400 req/s (200 per replica of two), model info at 100 req/s.
HEAD_RATES="1000 5000" INFO_RATE=1000
if [ "${HANGAR_DEPLOYMENT:-0}" = 1 ] || [ "${BENCH_REFERENCE:-0}" = 1 ]; then HEAD_RATES="400 5000" INFO_RATE=100; fi
LG=$(loadgen_bin)
NAME=resolve
FILE=config.json

# --- Hangar with one small repo
hangar_admin_token "$LT_TMP/data"
hangar_start "$LT_TMP/data"
log "hangar at $HANGAR_URL"
hangar_create_repo "$NAME"
src="$LT_TMP/src"
git init -q -b main "$src"
printf '{\n  "model_type": "bert",\n  "hidden_size": 768,\n  "num_attention_heads": 12\n}\n' >"$src/$FILE"
echo "# resolve bench" >"$src/README.md"
git -C "$src" add -A
git -C "$src" -c user.name=bench -c user.email=bench@hangar.invalid commit -q -m init
hangar_push "$src" "$NAME" >/dev/null

RESOLVE="/bench/$NAME/resolve/main/$FILE"
INFO="/api/models/bench/$NAME"
code=$(curl -s -o /dev/null -w '%{http_code}' -I "$HANGAR_URL$RESOLVE")
[ "$code" = 200 ] || { echo "HEAD $RESOLVE -> $code, expected 200; cannot measure" >&2; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' "$HANGAR_URL$INFO")
[ "$code" = 200 ] || { echo "GET $INFO -> $code, expected 200; cannot measure" >&2; exit 1; }

# --- nginx peer: the same bytes at the same path
have_nginx=0
mkdir -p "$LT_TMP/www/bench/$NAME/resolve/main" "$LT_TMP/www/api/models/bench"
cp "$src/$FILE" "$LT_TMP/www/bench/$NAME/resolve/main/$FILE"
curl -s "$HANGAR_URL$INFO" >"$LT_TMP/www/api/models/bench/$NAME"
if nginx_start "$LT_TMP/www"; then have_nginx=1; log "nginx at $NGINX_URL"; fi

# run NAME URL METHOD RATE CONNS REP -> prints the loadgen JSON, keeps it in $LT_TMP/NAME.REP.json
run() {
  "$LG" -m "$3" -R "$4" -c "$5" -d "$DUR" -w "$WARM" --json "$2" | tee "$LT_TMP/$1.$6.json"
}
# field NAME KEY -> median of KEY over the repetitions (errors: the sum)
field() {
  python3 - "$2" "$LT_TMP/$1".*.json <<'EOF'
import json, statistics, sys
key, files = sys.argv[1], sys.argv[2:]
vals = [json.load(open(f))[key] for f in files]
print(sum(vals) if key == "errors" else round(statistics.median(vals), 3))
EOF
}
ratio() { python3 -c "import sys; a,b=map(float,sys.argv[1:]); print('%.2f' % (a/b) if b else 'nan')" "$1" "$2"; }

for rate in $HEAD_RATES; do
  conns=$((rate / 50)); [ $conns -lt 16 ] && conns=16
  for rep in $(seq "$REPS"); do
    run "hangar_head_$rate" "$HANGAR_URL$RESOLVE" HEAD $rate $conns "$rep" >&2
    [ $have_nginx = 1 ] && run "nginx_head_$rate" "$NGINX_URL$RESOLVE" HEAD $rate $conns "$rep" >&2
  done
  for p in p50 p99; do
    v=$(field "hangar_head_$rate" ${p}_ms)
    note="errors=$(field "hangar_head_$rate" errors) achieved=$(field "hangar_head_$rate" achieved_rps)/s service-time $p=$(field "hangar_head_$rate" svc_${p}_ms)ms"
    if [ $have_nginx = 1 ]; then
      n=$(field "nginx_head_$rate" ${p}_ms)
      note="$note nginx=${n}ms ratio=$(ratio "$v" "$n")"
    fi
    goal=""; [ $p = p99 ] && [ $rate = 5000 ] && goal="p99 < 2 ms at 5,000 rps"
    [ $p = p99 ] && [ $rate = 400 ] && goal="p99 <= 2.8 ms (10x the reference's 7-28 ms)"
    note="median of $REPS x 10 s; $note"
    result "resolve_head_${rate}rps_$p" "$v" ms "$goal" "$note"
  done
done

for rep in $(seq "$REPS"); do
  run "hangar_info_$INFO_RATE" "$HANGAR_URL$INFO" GET "$INFO_RATE" 20 "$rep" >&2
  [ $have_nginx = 1 ] && run "nginx_info_$INFO_RATE" "$NGINX_URL$INFO" GET "$INFO_RATE" 20 "$rep" >&2
done
for p in p50 p99; do
  v=$(field "hangar_info_$INFO_RATE" ${p}_ms)
  note="errors=$(field "hangar_info_$INFO_RATE" errors)"
  [ $have_nginx = 1 ] && note="$note nginx(static copy)=$(field "nginx_info_$INFO_RATE" ${p}_ms)ms"
  goal=""; [ $p = p99 ] && goal="p99 < 2 ms"
  [ $p = p99 ] && [ "$INFO_RATE" = 100 ] && goal="p99 <= 1.2 ms (10x the reference's 12-63 ms)"
  note="median of $REPS x 10 s; $note"
  result "model_info_${INFO_RATE}rps_$p" "$v" ms "$goal" "$note"
done

# --- GET of the same small file (body path) at 5,000 rps, open loop
for rep in $(seq "$REPS"); do
  run hangar_get_5000 "$HANGAR_URL$RESOLVE" GET 5000 100 "$rep" >&2
  [ $have_nginx = 1 ] && run nginx_get_5000 "$NGINX_URL$RESOLVE" GET 5000 100 "$rep" >&2
done
for p in p50 p99; do
  v=$(field hangar_get_5000 ${p}_ms)
  note="errors=$(field hangar_get_5000 errors) achieved=$(field hangar_get_5000 achieved_rps)/s"
  [ $have_nginx = 1 ] && note="$note nginx=$(field nginx_get_5000 ${p}_ms)ms"
  result "resolve_get_5000rps_$p" "$v" ms "" "median of $REPS x 10 s; $note"
done

# --- closed-loop max throughput (wrk). GET, not HEAD: wrk 4.1 waits for a body after
# a HEAD response that carries Content-Length, and so counts 0 requests. Median of
# $REPS runs each, alternating Hangar and nginx.
wrk_rps() { wrk -t1 -c32 -d"$WRK_DUR" "$1" | awk '/^Requests\/sec/ {print $2}'; }
: >"$LT_TMP/wrk_h"; : >"$LT_TMP/wrk_n"
for rep in $(seq "$REPS"); do
  wrk_rps "$HANGAR_URL$RESOLVE" >>"$LT_TMP/wrk_h"
  [ $have_nginx = 1 ] && wrk_rps "$NGINX_URL$RESOLVE" >>"$LT_TMP/wrk_n"
done
h=$(median <"$LT_TMP/wrk_h")
note="runs $(paste -sd' ' "$LT_TMP/wrk_h")"
if [ $have_nginx = 1 ]; then
  n=$(median <"$LT_TMP/wrk_n")
  note="$note; nginx=${n}/s (runs $(paste -sd' ' "$LT_TMP/wrk_n")) ratio=$(ratio "$h" "$n")"
fi
result resolve_get_max_rps "$h" req/s "(none; >= 5,000 needed for the p99 goal)" "median of $REPS x wrk -t1 -c32 $WRK_DUR; $note"

result rss_peak_resolve "$(( $(hangar_hwm_kib) / 1024 ))" MiB "" "largest VmHWM of the hub after the resolve runs ($(hub_hwm_note))"
hangar_stop
