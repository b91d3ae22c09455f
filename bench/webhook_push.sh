#!/usr/bin/env bash
# Push and commit latency with webhooks whose receiver is fast, failing or dead (issue 19
# §5: "a slow or dead receiver never slows a push or a commit"), beside the same hub with
# no webhook at all.
#
#   bench/webhook_push.sh PATH_TO_HANGAR [ROUNDS] [PER_ROUND] [HOOKS]
#
# Starts its own hub (temp data dir, 127.0.0.1, webhooks allowed to reach 127.0.0.1) and
# tests/integration/webhook_receiver.py, whose /ok answers 200 at once, /fail 500 and /hang
# nothing for 60 s. Then ROUNDS (default 3) rounds, each running every scenario in turn:
#   none   no webhook
#   ok     HOOKS (default 5) webhooks watching the repo, receiver answering 200
#   fail   HOOKS webhooks answered 500 (each delivery retried with back-off)
#   hang   HOOKS webhooks whose receiver never answers (each delivery held to the timeout)
# and in each, PER_ROUND (default 10) `git push`es of a one-file commit, then PER_ROUND
# create_commit calls (POST /api/models/…/commit/main, one small file). Prints the median
# and 90th percentile of each, per scenario, and their ratio to `none`; and how many
# deliveries the receiver saw, so the webhooks are known to have fired.
set -euo pipefail
HANGAR="$(realpath "${1:?usage: webhook_push.sh PATH_TO_HANGAR [ROUNDS] [PER_ROUND] [HOOKS]}")"
ROUNDS="${2:-3}"
PER_ROUND="${3:-10}"
HOOKS="${4:-5}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
T="$(mktemp -d "${TMPDIR:-/tmp}/webhook_push.XXXXXX")"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; sleep 0.3; rm -rf "$T"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$T/gitconfig" GIT_TERMINAL_PROMPT=0
git config --global user.name bench
git config --global user.email bench@hangar.test
git config --global init.defaultBranch main

DATA="$T/data"
admin() { "$HANGAR" admin "$@" --data-dir "$DATA"; }
admin user create bench >/dev/null
TOKEN="$(admin token create bench --role write)"
python3 "$ROOT/tests/integration/webhook_receiver.py" "$T/received.jsonl" "$T/rport" 60 &
PIDS+=($!)
for _ in $(seq 100); do [[ -s "$T/rport" ]] && break; sleep 0.1; done
RECV="http://127.0.0.1:$(cat "$T/rport")"
"$HANGAR" serve --data-dir "$DATA" --listen 127.0.0.1:0 \
  --set webhooks.allow_private_hosts=127.0.0.1 >"$T/out" 2>"$T/err" &
PIDS+=($!)
for _ in $(seq 300); do grep -q '^listening on' "$T/out" 2>/dev/null && break; sleep 0.1; done
BASE="$(sed -nE 's/^listening on (http:[^ ]+)$/\1/p' "$T/out" | head -1)"
[[ -n "$BASE" ]] || { echo "hub did not start: $(tail -5 "$T/err")" >&2; exit 1; }
AUTH=(-H "Authorization: Bearer $TOKEN")
curl -sf "${AUTH[@]}" -H 'Content-Type: application/json' "$BASE/api/repos/create" \
  --data-binary '{"name":"w","type":"model"}' >/dev/null
cat >"$T/cred.sh" <<EOF
#!/bin/sh
test "\$1" = get || exit 0
echo username=bench
echo password=$TOKEN
EOF
chmod +x "$T/cred.sh"
W="$T/work"
git -c credential.helper="$T/cred.sh" clone -q "$BASE/bench/w" "$W"

# hooks KIND: replaces the webhooks by HOOKS watching bench/w with the receiver's /KIND.
hooks() {
  local id
  for id in $(curl -sf "${AUTH[@]}" "$BASE/api/settings/webhooks" | jq -r '.[].id'); do
    curl -sf -X DELETE "${AUTH[@]}" "$BASE/api/settings/webhooks/$id" >/dev/null
  done
  [[ "$1" == none ]] && return
  local i
  for ((i = 0; i < HOOKS; i++)); do
    curl -sf "${AUTH[@]}" -H 'Content-Type: application/json' "$BASE/api/settings/webhooks" \
      --data-binary "{\"watched\":[{\"type\":\"model\",\"name\":\"bench/w\"}],\"url\":\"$RECV/$1/$i\",\"domains\":[\"repo\"]}" >/dev/null
  done
}

N=0
# run KIND: PER_ROUND pushes and PER_ROUND commits, their times (s) appended to files.
run() {
  local i s e
  for ((i = 0; i < PER_ROUND; i++)); do
    N=$((N + 1))
    printf '%s\n' "$N" >"$W/n.txt"
    git -C "$W" add -A && git -C "$W" commit -qm "push $N"
    s="$(date +%s%N)"
    git -c credential.helper="$T/cred.sh" -C "$W" push -q origin main
    e="$(date +%s%N)"
    echo "$(((e - s) / 1000))" >>"$T/push.$1"
  done
  for ((i = 0; i < PER_ROUND; i++)); do
    N=$((N + 1))
    local b64
    b64="$(printf 'commit %s\n' "$N" | base64 -w0)"
    printf '%s\n%s\n' '{"key":"header","value":{"summary":"api commit"}}' \
      "{\"key\":\"file\",\"value\":{\"path\":\"api.txt\",\"encoding\":\"base64\",\"content\":\"$b64\"}}" >"$T/commit.ndjson"
    s="$(date +%s%N)"
    curl -sf "${AUTH[@]}" -H 'Content-Type: application/x-ndjson' \
      --data-binary @"$T/commit.ndjson" "$BASE/api/models/bench/w/commit/main" >/dev/null
    e="$(date +%s%N)"
    echo "$(((e - s) / 1000))" >>"$T/commit.$1"
  done
  git -c credential.helper="$T/cred.sh" -C "$W" pull -q --rebase origin main
}

KINDS=(none ok fail hang)
for ((r = 1; r <= ROUNDS; r++)); do
  for k in "${KINDS[@]}"; do
    hooks "$k"
    run "$k"
  done
done
hooks none

# stats FILE: "median p90" in ms.
stats() { sort -n "$1" | awk '{ a[NR] = $1 } END { m = a[int((NR + 1) / 2)]; p = a[int(NR * 0.9 + 0.999)]; printf "%.1f %.1f", m / 1000, p / 1000 }'; }
echo "hub $BASE; $ROUNDS rounds x $PER_ROUND per scenario; $HOOKS webhooks in ok/fail/hang"
printf '%-6s %14s %14s %8s %14s %14s %8s\n' scenario "push med ms" "push p90 ms" ratio "commit med ms" "commit p90 ms" ratio
read -r PM0 _ <<<"$(stats "$T/push.none")"
read -r CM0 _ <<<"$(stats "$T/commit.none")"
for k in "${KINDS[@]}"; do
  read -r pm pp <<<"$(stats "$T/push.$k")"
  read -r cm cp <<<"$(stats "$T/commit.$k")"
  printf '%-6s %14s %14s %8.2f %14s %14s %8.2f\n' "$k" "$pm" "$pp" "$(awk "BEGIN { print $pm / $PM0 }")" \
    "$cm" "$cp" "$(awk "BEGIN { print $cm / $CM0 }")"
done
for k in ok fail hang; do
  echo "deliveries the receiver saw under /$k: $(jq -r --arg k "/$k/" 'select(.path | startswith($k)) | 1' "$T/received.jsonl" | wc -l)"
done
