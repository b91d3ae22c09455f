#!/usr/bin/env bash
# N full clones of one repo at once, from several principals, over any git transport
# (issue 18 §3): each clone's wall time, whether and how long it queued for a git slot, and
# the hub's queue length over the run.
#
#   bench/clonebench.sh URL N
#
#   URL   http(s)://HUB/ns/name, ssh://user@host:port/ns/name.git or git://host:port/ns/name.git
#   N     clones started at once
#
# Principals, taken in turn by the clones (none given: all anonymous):
#   CLONE_TOKENS="hf_… hf_…"        HTTP(S): one token per principal (a credential helper each)
#   CLONE_KEYS="/path/key1 /path/k2"  SSH: one private key per principal
# METRICS_TOKEN=hf_… (and METRICS_URL, default the URL's http(s) origin; for SSH and git://
# set it, e.g. http://127.0.0.1:8080) samples GET /metrics every 0.2 s for the queue length.
# SSH clones report their queueing from the hub's "waiting for a free git slot" lines.
#
# Output: one line per clone (principal, exit status, wall seconds, queued or not), then
# the median and maximum wall time, failures, and the largest queue seen. Clones go to a
# temp dir that is removed at the end.
set -uo pipefail
URL="${1:?usage: clonebench.sh URL N}"
N="${2:?usage: clonebench.sh URL N}"
read -r -a TOKENS <<<"${CLONE_TOKENS:-}"
read -r -a KEYS <<<"${CLONE_KEYS:-}"
T="$(mktemp -d "${TMPDIR:-/tmp}/clonebench.XXXXXX")"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT

case "$URL" in
  http://* | https://*) KIND=http ;;
  ssh://*) KIND=ssh ;;
  git://*) KIND=git ;;
  *) echo "clonebench: unsupported URL $URL" >&2; exit 2 ;;
esac
METRICS_URL="${METRICS_URL:-}"
[[ -z "$METRICS_URL" && "$KIND" == http ]] && METRICS_URL="$(printf '%s' "$URL" | sed -E 's#^(https?://[^/]+).*#\1#')"

# clone I: clone number I as its principal; writes $T/I.time (seconds) and $T/I.rc.
clone() {
  local i="$1" who=anonymous start end rc
  local cmd=(git -c credential.helper= -c protocol.version=2 clone -q)
  if [[ "$KIND" == http && ${#TOKENS[@]} -gt 0 ]]; then
    local tok="${TOKENS[$((i % ${#TOKENS[@]}))]}"
    printf '#!/bin/sh\ntest "$1" = get && printf "username=u\\npassword=%%s\\n" %s\n' "$tok" >"$T/cred$i"
    chmod +x "$T/cred$i"
    cmd=(git -c credential.helper= -c "credential.helper=$T/cred$i" -c protocol.version=2 clone -q)
    who="token$((i % ${#TOKENS[@]}))"
  fi
  local env=()
  if [[ "$KIND" == ssh ]]; then
    local key="${KEYS[$((i % ${#KEYS[@]}))]:-}"
    [[ -n "$key" ]] || { echo "clonebench: CLONE_KEYS is needed for ssh://" >&2; return 2; }
    env=(GIT_SSH_COMMAND="ssh -i $key -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR")
    who="key$((i % ${#KEYS[@]}))"
  fi
  start=$(date +%s.%N)
  env GIT_TERMINAL_PROMPT=0 "${env[@]}" "${cmd[@]}" "$URL" "$T/c$i" 2>"$T/$i.err"
  rc=$?
  end=$(date +%s.%N)
  echo "$who" >"$T/$i.who"
  echo "$rc" >"$T/$i.rc"
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f\n", e - s }' >"$T/$i.time"
  rm -rf "$T/c$i"
}

sample_queue() {
  [[ -n "$METRICS_URL" && -n "${METRICS_TOKEN:-}" ]] || return 0
  while true; do
    curl -sS -H "Authorization: Bearer $METRICS_TOKEN" "$METRICS_URL/metrics" 2>/dev/null |
      awk '$1 == "hangar_git_queue_length" {print $2}' >>"$T/queue"
    sleep 0.2
  done
}

sample_queue &
SAMPLER=$!
pids=()
for ((i = 0; i < N; i++)); do clone "$i" & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
kill "$SAMPLER" 2>/dev/null

printf '%-6s %-12s %4s %9s  %s\n' clone principal rc seconds queued
for ((i = 0; i < N; i++)); do
  q=-
  if [[ "$KIND" == ssh ]]; then
    q="$(grep -o 'waiting for a free git slot ([0-9]* ahead' "$T/$i.err" | head -1 | grep -o '[0-9]* ahead' || true)"
    [[ -n "$q" ]] && q="yes, $q" || q=no
  fi
  printf '%-6s %-12s %4s %9.2f  %s\n' "$i" "$(cat "$T/$i.who")" "$(cat "$T/$i.rc")" "$(cat "$T/$i.time")" "$q"
  [[ "$(cat "$T/$i.rc")" == 0 ]] || sed 's/^/         /' "$T/$i.err" | head -3
done
sort -n "$T"/*.time | awk -v n="$N" '{ t[NR] = $1 } END {
  printf "median %.2f s, max %.2f s over %d clones\n", t[int((NR + 1) / 2)], t[NR], n }'
echo "failed: $(grep -vc '^0$' "$T"/*.rc | awk -F: '{ s += $2 } END { print s + 0 }')"
[[ -s "$T/queue" ]] && echo "largest queue seen: $(sort -n "$T/queue" | tail -1)"
exit 0
