#!/usr/bin/env bash
# A real S3 endpoint on 127.0.0.1 from Debian's packages: a one-node Ceph cluster (one
# monitor, one OSD on the in-memory object store) with the RADOS gateway in front of it,
# everything under one directory. Used by the S3 tests (tests/storage, tests/integration/
# s3_e2e.sh) and as the S3 of a local deployment. Needs radosgw, ceph-mon and ceph-osd
# (scripts/install-deps.sh installs them).
#
#   scripts/s3-server.sh start DIR [--watch PID] [--memory MIB]
#       Starts the cluster in DIR (created; must be empty or absent), creates an S3 user
#       with fresh keys, waits until the gateway answers a signed request, then writes
#       DIR/s3.env and prints it:
#         S3_ENDPOINT=http://127.0.0.1:PORT  S3_REGION=us-east-1
#         S3_ACCESS_KEY=...                  S3_SECRET_KEY=...
#       --watch PID stops the cluster by itself once process PID has gone (a test that
#       dies leaves no daemons behind). --memory is the OSD's store size (default 2048;
#       the objects live in RAM). Takes ~15 s on 2 cores. Exit 1 with the daemons' last
#       log lines when something does not come up (nothing is left running then).
#   scripts/s3-server.sh stop DIR
#       Stops the daemons started in DIR (SIGTERM, then SIGKILL after 10 s). DIR stays.
#
# The cluster has no authentication inside (cephx off: it listens on 127.0.0.1 only);
# the gateway checks SigV4 signatures of every S3 request as AWS does.
set -euo pipefail

die() { echo "s3-server.sh: $*" >&2; exit 1; }

# A TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The pids of DIR's daemons, newest first (gateway, OSD, monitor).
daemon_pids() {
  local dir=$1 f
  for f in "$dir"/run/client.rgw.pid "$dir"/run/osd.0.pid "$dir"/run/mon.a.pid; do
    [[ -s $f ]] && cat "$f"
  done
  return 0
}

stop_cluster() {
  local dir=$1 pids=() p i
  mapfile -t pids < <(daemon_pids "$dir")
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    ((alive)) || break
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  rm -f "$dir"/run/*.pid
}

# Last lines of every daemon log, for a failure message.
log_tails() {
  local f
  for f in "$1"/log/*.log; do
    [[ -f $f ]] && { echo "--- $f"; tail -n 15 "$f"; }
  done
  return 0
}

# mon_command DIR ARGS...: `ceph ARGS` on DIR's cluster, its stderr appended to
# DIR/log/setup.log. With auth none the CLI can send its first command before it has the
# monitor's map, with a null fsid; the monitor refuses that ("handle_command on fsid
# 00000000-... != ...", and the CLI says "Error EPERM: problem getting command descriptions
# from mon"). It happened in 2 of 6 starts on a loaded machine, to either command below, so
# a refusal (EPERM: the command did not run) is sent again, up to 5 times in all.
mon_command() {
  local dir=$1 attempt rc
  shift
  for ((attempt = 1; attempt <= 5; attempt++)); do
    rc=0
    timeout 60 ceph -c "$dir/ceph.conf" --connect-timeout 30 "$@" >/dev/null \
      2>"$dir/log/command.err" || rc=$?
    cat "$dir/log/command.err" >>"$dir/log/setup.log"
    ((rc)) || return 0
    grep -q EPERM "$dir/log/command.err" || return "$rc"
    sleep 1
  done
  return "$rc"
}

start_cluster() {
  local dir=$1 watch=$2 memory_mib=$3
  for tool in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph curl python3; do
    command -v "$tool" >/dev/null || die "$tool is missing (scripts/install-deps.sh installs it)"
  done
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ -z $(ls -A "$dir") ]] || die "$dir is not empty"
  mkdir -p "$dir"/{run,log,mon.a,osd.0,rgw}

  local mon_port rgw_port fsid osd_uuid access secret
  mon_port=$(free_port)
  rgw_port=$(free_port)
  fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  osd_uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
  access=hangar$(python3 -c 'import secrets; print(secrets.token_hex(6))')
  secret=$(python3 -c 'import secrets; print(secrets.token_hex(20))')

  # One replica of everything, few placement groups, no manager: the smallest cluster
  # that serves RGW. crush chooseleaf type 0 lets the default rule pick OSDs, not hosts.
  cat >"$dir/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$mon_port
public addr = 127.0.0.1
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
run dir = $dir/run
admin socket = $dir/run/\$name.asok
pid file = $dir/run/\$name.pid
log file = $dir/log/\$name.log
mon data = $dir/mon.\$id
osd data = $dir/osd.\$id
osd objectstore = memstore
memstore device bytes = $((memory_mib << 20))
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
osd crush update on start = false
osd class update on start = false
mon allow pool size one = true
mon max pg per osd = 1000
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $dir/rgw
EOF
  export CEPH_CONF=$dir/ceph.conf
  # From here on a failure stops whatever did start.
  trap 'log_tails "$dir" >&2; stop_cluster "$dir"' ERR

  local conf=(-c "$CEPH_CONF")
  monmaptool --create --fsid "$fsid" --addv a "v1:127.0.0.1:$mon_port" "$dir/monmap" >/dev/null
  ceph-mon "${conf[@]}" --mkfs -i a --monmap "$dir/monmap" 2>>"$dir/log/setup.log"
  ceph-mon "${conf[@]}" -i a 2>>"$dir/log/setup.log"
  mon_command "$dir" osd create "$osd_uuid"
  # The OSD is placed in the CRUSH map here, not by itself at boot: its own placement
  # commands can leave before it has the monitor's map, carrying a null cluster fsid that
  # the monitor refuses ("wrong fsid"), which ends the OSD on a loaded machine.
  mon_command "$dir" osd crush add osd.0 1.0 root=default
  ceph-osd "${conf[@]}" -i 0 --mkfs --osd-uuid "$osd_uuid" 2>>"$dir/log/setup.log"
  ceph-osd "${conf[@]}" -i 0 2>>"$dir/log/setup.log"
  local i
  for ((i = 0; i < 60; i++)); do  # the OSD up before the gateway creates its pools
    ceph "${conf[@]}" --connect-timeout 10 osd dump 2>/dev/null | grep -q '^osd\.0 up' && break
    sleep 0.5
  done
  ((i < 60)) || { log_tails "$dir" >&2; stop_cluster "$dir"; die "the OSD did not come up within 30 s"; }
  radosgw "${conf[@]}" -n client.rgw 2>>"$dir/log/setup.log"
  timeout 60 radosgw-admin "${conf[@]}" user create --uid=hangar --display-name=Hangar \
    --access-key="$access" --secret-key="$secret" >/dev/null 2>>"$dir/log/setup.log"

  # Up when a signed ListBuckets answers 200 (the gateway creates its pools first).
  local endpoint="http://127.0.0.1:$rgw_port" code=000
  for ((i = 0; i < 600; i++)); do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
      --aws-sigv4 "aws:amz:us-east-1:s3" --user "$access:$secret" \
      -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$endpoint/" || true)
    [[ $code == 200 ]] && break
    sleep 0.1
  done
  if [[ $code != 200 ]]; then
    log_tails "$dir" >&2
    stop_cluster "$dir"
    die "the gateway did not answer a signed request within 60 s (last status $code)"
  fi
  trap - ERR

  cat >"$dir/s3.env" <<EOF
S3_ENDPOINT=$endpoint
S3_REGION=us-east-1
S3_ACCESS_KEY=$access
S3_SECRET_KEY=$secret
EOF
  if [[ -n $watch ]]; then
    # Detached from our stdout/stderr so that a caller reading them sees EOF.
    (
      while kill -0 "$watch" 2>/dev/null && [[ -f $dir/run/mon.a.pid ]]; do sleep 1; done
      stop_cluster "$dir"
    ) </dev/null >/dev/null 2>&1 &
    disown
  fi
  cat "$dir/s3.env"
}

cmd=${1:-}
dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: s3-server.sh start DIR [--watch PID] [--memory MIB] | stop DIR"
shift 2
case $cmd in
  start)
    watch="" memory=2048
    while (($#)); do
      case $1 in
        --watch) watch=${2:?--watch needs a pid}; shift 2 ;;
        --memory) memory=${2:?--memory needs MiB}; shift 2 ;;
        *) die "unknown option $1" ;;
      esac
    done
    start_cluster "$dir" "$watch" "$memory" ;;
  stop) stop_cluster "$dir" ;;
  *) die "unknown command $cmd (start or stop)" ;;
esac
