#!/usr/bin/env bash
# A throw-away PostgreSQL server on 127.0.0.1 from Debian's packages (postgresql, which
# scripts/install-deps.sh installs): one cluster under one directory, never run as root.
# Used by the store suites on PostgreSQL (tests/db) and as the database of a local
# deployment.
#
#   scripts/pg-server.sh start DIR [--watch PID] [--no-fsync]
#       Creates a cluster in DIR (created; must be empty or absent) with a user `hangar`
#       whose fresh password is checked (scram-sha-256) on TCP, a database `hangar`, and a
#       server on a free port of 127.0.0.1 (its Unix socket in DIR/run); then writes
#       DIR/pg.env and prints it:
#         PG_URL=postgresql://hangar:PASSWORD@127.0.0.1:PORT/hangar
#         PG_PORT=PORT  PG_SOCKET_DIR=DIR/run
#       As root, the server runs as the `postgres` account the package made (DIR is given
#       to it). --watch PID stops the server once process PID has gone (a test that dies
#       leaves no server behind). --no-fsync trades durability for speed (tests).
#       Takes ~3 s. Exit 1 with the server's last log lines when it does not come up.
#   scripts/pg-server.sh stop DIR
#       Stops the server started in DIR (fast shutdown). DIR stays.
set -euo pipefail

die() { echo "pg-server.sh: $*" >&2; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The newest installed server's binaries.
pg_bin() {
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [[ -n $d && -x $d/initdb ]] || die "no PostgreSQL server installed (scripts/install-deps.sh installs postgresql)"
  echo "$d"
}

# as_owner CMD...: CMD as the account that owns the cluster (postgres when we are root).
as_owner() {
  if [[ $(id -u) == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

stop_server() {
  local dir=$1 bin
  [[ -f $dir/data/postmaster.pid ]] || return 0
  bin=$(pg_bin)
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
}

start_server() {
  local dir=$1 watch=$2 fsync=$3 bin port password
  bin=$(pg_bin)
  mkdir -p "$dir"
  [[ -z $(ls -A "$dir") ]] || die "$dir is not empty"
  mkdir -p "$dir/run" "$dir/log"
  if [[ $(id -u) == 0 ]]; then
    id postgres >/dev/null 2>&1 || die "no postgres account to run the server as (install postgresql)"
    chown -R postgres: "$dir"
    chmod 755 "$dir"
    runuser -u postgres -- test -x "$dir" ||
      die "the postgres account cannot reach $dir: put it under a directory others may enter"
  fi
  password=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  as_owner sh -c "umask 077; printf '%s\n' '$password' >'$dir/pwfile'"
  as_owner "$bin/initdb" -D "$dir/data" -U hangar --pwfile="$dir/pwfile" -E UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 --no-sync >"$dir/log/initdb.log" 2>&1 ||
    { tail -n 20 "$dir/log/initdb.log" >&2; die "initdb failed"; }
  port=$(free_port)
  local opts="-c listen_addresses=127.0.0.1 -p $port -k $dir/run -c max_connections=300"
  [[ $fsync == 1 ]] || opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/log/postgres.log" -w -t 60 -o "$opts" \
    start >/dev/null; then
    tail -n 20 "$dir/log/postgres.log" >&2
    die "the server did not start"
  fi
  as_owner "$bin/psql" -h "$dir/run" -p "$port" -U hangar -d postgres -qAt \
    -c "CREATE DATABASE hangar" >/dev/null || { stop_server "$dir"; die "CREATE DATABASE failed"; }
  {
    echo "PG_URL=postgresql://hangar:$password@127.0.0.1:$port/hangar"
    echo "PG_PORT=$port"
    echo "PG_SOCKET_DIR=$dir/run"
  } >"$dir/pg.env"
  cat "$dir/pg.env"
  if [[ -n $watch ]]; then
    (
      while kill -0 "$watch" 2>/dev/null && [[ -f $dir/data/postmaster.pid ]]; do sleep 1; done
      stop_server "$dir"
    ) </dev/null >/dev/null 2>&1 &
    disown
  fi
}

cmd=${1:-} dir=${2:-}
[[ -n $cmd && -n $dir ]] || die "usage: pg-server.sh start DIR [--watch PID] [--no-fsync] | stop DIR"
shift 2
watch="" fsync=1
while (($#)); do
  case $1 in
    --watch) watch=${2:?--watch needs a pid}; shift 2 ;;
    --no-fsync) fsync=0; shift ;;
    *) die "unknown option $1" ;;
  esac
done
dir=$(realpath -m "$dir")
case $cmd in
  start) start_server "$dir" "$watch" "$fsync" ;;
  stop) stop_server "$dir" ;;
  *) die "unknown command $cmd" ;;
esac
