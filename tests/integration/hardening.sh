#!/usr/bin/env bash
# Bad input found by adversarial testing, each a clear 4xx that changes nothing:
# wrongly typed privacy fields, invalid `gated`, each repo setting applied or refused
# naming it (issue #13), request framing (RFC 9112 §6.3, §3.2),
# an LFS download batch with the wrong size, a /resolve of an LFS object that was never
# uploaded (404 with X-Repo-Commit), and repo ids never reused after a delete.
# Usage: hardening.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup"
DATA="$T/data"
mkdir -p "$DATA"
new_user hana
HANA="$(new_token hana --role write)"
start_server "$DATA" || die "hangar serve did not start"
AUTH=(-H "Authorization: Bearer $HANA")
JSON=(-H 'Content-Type: application/json')

section "privacy fields must have the right type (never a silent public repo)"
for body in '{"name":"p1","private":"true"}' '{"name":"p2","private":1}' \
            '{"name":"p3","visibility":1}' '{"name":"p4","visibility":"secret"}'; do
  req POST "$BASE/api/repos/create" "${AUTH[@]}" "${JSON[@]}" --data-binary "$body"
  check_hf_error "create $body → 400" 400 BadRequest
done
for n in p1 p2 p3 p4; do
  req GET "$BASE/api/models/hana/$n" "${AUTH[@]}"
  check_hf_error "  hana/$n was not created" 404 RepoNotFound
done
must_create "$HANA" vis hana model false
req POST "$BASE/api/repos/create" "${AUTH[@]}" "${JSON[@]}" --data-binary '{"name":"vis2","visibility":"private"}'
check_status "create with visibility=private → 200" 200
req GET "$BASE/api/models/hana/vis2"
check_hf_error "  anonymous cannot see it" 404 RepoNotFound
for body in '{"private":"yes"}' '{"gated":"bogus"}' '{"gated":123}' '{"visibility":false}'; do
  req PUT "$BASE/api/models/hana/vis/settings" "${AUTH[@]}" "${JSON[@]}" --data-binary "$body"
  check_hf_error "settings $body → 400" 400 BadRequest
done
req GET "$BASE/api/models/hana/vis"
check_json "  hana/vis is still public" .private false

section "settings: each field changes what it says, or is refused naming it (issue #13)"
# settings TYPE NAME BODY: PUT …/settings as hana.
settings() {
  req PUT "$BASE/api/$1s/hana/$2/settings" "${AUTH[@]}" "${JSON[@]}" --data-binary "$3"
}
# private_now TYPE NAME: the repo's private flag as hana sees it.
private_now() { req GET "$BASE/api/$1s/hana/$2" "${AUTH[@]}"; jbody .private; }
# anon_sees TYPE NAME: the status of an anonymous repo info call.
anon_sees() { req GET "$BASE/api/$1s/hana/$2"; printf '%s' "$ST"; }
# refused_naming DESC FIELD: 400 BadRequest whose message names FIELD.
refused_naming() {
  check_hf_error "$1" 400 BadRequest
  check_match "  ... naming '$2'" "'$2'" "$(hdr X-Error-Message)"
}
settings model vis '{"private": true}'
check_status "private: true → 200" 200
check_eq "  hana/vis is private" true "$(private_now model vis)"
check_eq "  anonymous gets 404" 404 "$(anon_sees model vis)"
settings model vis '{"private": false}'
check_status "private: false → 200" 200
check_eq "  hana/vis is public" false "$(private_now model vis)"
check_eq "  anonymous reads it" 200 "$(anon_sees model vis)"
settings model vis '{"visibility": "private"}'
check_status "visibility: private → 200" 200
check_eq "  hana/vis is private" true "$(private_now model vis)"
settings model vis '{"visibility": "public"}'
check_status "visibility: public → 200" 200
check_eq "  hana/vis is public" false "$(private_now model vis)"
settings model vis '{"visibility": "protected"}'
refused_naming "visibility: protected on a model → 400" protected
must_create "$HANA" sp hana space false
settings space sp '{"visibility": "protected"}'
check_status "visibility: protected on a space → 200" 200
check_eq "  its files are private (Hangar runs no Space app to keep public)" true \
  "$(private_now space sp)"
check_eq "  anonymous gets 404" 404 "$(anon_sees space sp)"
settings model vis '{"private": true, "visibility": "public"}'
refused_naming "private and visibility disagreeing → 400" visibility
check_eq "  hana/vis is still public" false "$(private_now model vis)"
settings model vis '{"private": true, "visibility": "private"}'
check_status "private and visibility agreeing → 200" 200
check_eq "  hana/vis is private" true "$(private_now model vis)"
settings model vis '{"visibility": "public"}'
settings model vis '{"gated": false}'
check_status "gated: false → 200" 200
req GET "$BASE/api/models/hana/vis" "${AUTH[@]}"
check_json "  info says gated false" .gated false
for g in auto manual; do
  settings model vis "{\"gated\": \"$g\"}"
  check_status "gated: $g → 200 (issue 19)" 200
  req GET "$BASE/api/models/hana/vis" "${AUTH[@]}"
  check_json "  info says gated $g" .gated "$g"
  check_eq "  anonymous still sees the repo's card (only files are gated)" 200 "$(anon_sees model vis)"
done
settings model vis '{"gated": true, "private": true}'
refused_naming "gated: true → 400 (the hub takes \"auto\", \"manual\" or false)" gated
check_eq "  and the other field of the body was not applied" false "$(private_now model vis)"
settings model vis '{"gated": false}'
check_status "gated: false again → 200" 200
req GET "$BASE/api/models/hana/vis" "${AUTH[@]}"
check_json "  info says gated false" .gated false
settings model vis '{"xetEnabled": false}'
check_status "xetEnabled: false → 200 (files are stored with LFS)" 200
settings model vis '{"xetEnabled": true}'
refused_naming "xetEnabled: true → 400" xetEnabled
settings model vis '{"xetEnabled": "yes"}'
refused_naming "xetEnabled: \"yes\" → 400" xetEnabled
for f in discussionsDisabled gatedNotificationsEmail description; do
  settings model vis "{\"private\": true, \"$f\": true}"
  refused_naming "unknown setting $f → 400" "$f"
  check_eq "  hana/vis is still public" false "$(private_now model vis)"
done
new_user rita
RITA="$(new_token rita --role write)"
req PUT "$BASE/api/models/hana/vis/settings" -H "Authorization: Bearer $RITA" "${JSON[@]}" \
  --data-binary '{"gated": "manual"}'
check_hf_error "another user's settings call is 403 before any field is judged" 403 Forbidden

section "request framing"
# raw EXCHANGE: sends bytes on one connection, prints what came back (bounded: 5 s).
raw() {
  python3 - "$PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
s.settimeout(5)
out = b""
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        out += d
except socket.timeout:
    out += b"\n<timeout>"
sys.stdout.write(out.decode("latin-1"))
PY
}
OUT="$(raw 'POST /api/repos/create HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')"
check_match "Transfer-Encoding: gzip → 400" '^HTTP/1.1 400' "$OUT"
check_false "  and the smuggled request behind it is not served" grep -q 'ok' <<<"$OUT"
check_false "  and the connection is closed" grep -q '<timeout>' <<<"$OUT"
OUT="$(raw 'GET /healthz HTTP/1.1\r\n\r\n')"
check_match "HTTP/1.1 without Host → 400" '^HTTP/1.1 400' "$OUT"
OUT="$(raw 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n')"
check_match "two Host headers → 400" '^HTTP/1.1 400' "$OUT"
OUT="$(raw 'GET /healthz HTTP/1.1\r\nHost: evil.example/phish?\r\n\r\n')"
check_match "a Host that is not host[:port] → 400 (it would go into absolute URLs)" '^HTTP/1.1 400' "$OUT"
OUT="$(raw 'GET /healthz HTTP/1.0\r\n\r\n')"
check_match "HTTP/1.0 without Host is fine" '^HTTP/1.0 200|^HTTP/1.1 200' "$OUT"

section "LFS: sizes must match, missing objects say which commit"
W="$T/work"
gitc "$(cred_helper hana "$HANA")" clone -q "$BASE/hana/vis" "$W" 2>/dev/null
printf 'payload bytes for lfs\n' >"$W/w.bin"
git -C "$W" add w.bin && git -C "$W" commit -qm "lfs file"
gitc "$(cred_helper hana "$HANA")" -C "$W" push -q origin main 2>"$T/push.err"
check_true "push with an LFS file" test -s "$W/.git/lfs/objects/$(sha256sum "$W/w.bin" | cut -c1-2)/$(sha256sum "$W/w.bin" | cut -c3-4)/$(sha256sum "$W/w.bin" | cut -c1-64)"
OID="$(sha256sum "$W/w.bin" | cut -c1-64)"
req POST "$BASE/hana/vis.git/info/lfs/objects/batch" "${AUTH[@]}" \
  -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "{\"operation\":\"download\",\"objects\":[{\"oid\":\"$OID\",\"size\":999}]}"
check_status "download batch with a wrong size → 200 with a per-object error" 200
check_json "  per-object error 422" '.objects[0].error.code' 422
check_json "  and no download action" '.objects[0].actions' null

NEWOID="$(printf 'fresh object' | sha256sum | cut -c1-64)"
req POST "$BASE/hana/vis.git/info/lfs/objects/batch" "${AUTH[@]}" \
  -H 'Content-Type: application/vnd.git-lfs+json' \
  --data-binary "{\"operation\":\"upload\",\"objects\":[{\"oid\":\"$NEWOID\",\"size\":12}]}"
check_json_true "upload action: the ticket is in the href (hub clients)" \
  '.objects[0].actions.upload.href | test("/lfs-objects/upload/[A-Za-z0-9_-]+/")'
check_json_true "  and in the header form (git-lfs)" \
  '.objects[0].actions.upload.header.Authorization | startswith("Bearer ")'
HREF="$(jbody '.objects[0].actions.upload.href')"
TICKET_HDR="$(jbody '.objects[0].actions.upload.header.Authorization')"
req PUT "$HREF" -H "Authorization: $TICKET_HDR" --data-binary 'fresh object'
check_status "  a PUT sending that header is accepted" 200

# A pointer to an object nobody uploaded (pushed without its object).
printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 5\n' \
  "$(printf 'never' | sha256sum | cut -c1-64)" >"$W/ghost.bin"
GIT_LFS_SKIP_PUSH=1 git -C "$W" -c filter.lfs.clean=cat -c filter.lfs.smudge=cat add ghost.bin
git -C "$W" -c filter.lfs.clean=cat commit -qm "dangling pointer"
GIT_LFS_SKIP_PUSH=1 gitc "$(cred_helper hana "$HANA")" -C "$W" push -q origin main 2>"$T/push2.err"
HEAD_SHA="$(git -C "$W" rev-parse HEAD)"
req HEAD "$BASE/hana/vis/resolve/main/ghost.bin"
check_status "HEAD /resolve of a never-uploaded LFS object → 404" 404
check_hdr "  with X-Error-Code EntryNotFound" X-Error-Code EntryNotFound
check_hdr "  and X-Repo-Commit" X-Repo-Commit "$HEAD_SHA"
req GET "$BASE/hana/vis/resolve/main/ghost.bin"
check_hf_error "GET of it → 404 EntryNotFound" 404 EntryNotFound
check_hdr "  with X-Repo-Commit" X-Repo-Commit "$HEAD_SHA"

section "a large non-LFS file streams through git (never held whole)"
head -c 6291456 /dev/urandom >"$W/plain.raw"
git -C "$W" add plain.raw && git -C "$W" commit -qm "large non-LFS file"
gitc "$(cred_helper hana "$HANA")" -C "$W" push -q origin main 2>"$T/push3.err"
check_true "  it was committed as a plain git blob" \
  test "$(git -C "$W" cat-file -s HEAD:plain.raw)" = 6291456
curl -s -o "$T/plain.got" "$BASE/hana/vis/resolve/main/plain.raw"
check_true "GET /resolve gives every byte" cmp -s "$W/plain.raw" "$T/plain.got"
req GET "$BASE/hana/vis/resolve/main/plain.raw" -H 'Range: bytes=5000000-5000099'
check_status "  a range deep inside → 206" 206
check_true "  with the right 100 bytes" \
  cmp -s "$BODY" <(tail -c +5000001 "$W/plain.raw" | head -c 100)

section "repo ids are never reused"
must_create "$HANA" tmp1 hana model false
ID1="$(jbody .id)"
req DELETE "$BASE/api/repos/delete" "${AUTH[@]}" "${JSON[@]}" --data-binary '{"name":"tmp1","organization":"hana"}'
check_status "delete hana/tmp1" 200
must_create "$HANA" tmp2 hana model false
ID2="$(jbody .id)"
check_true "the next repo gets a new id ($ID1 then $ID2)" test "$ID1" != "$ID2"

section "request bodies that never arrive do not starve reads"
# 20 anonymous POSTs announce a body and send none: they hold the workers of requests
# with bodies until the idle timeout, but reads run on their own workers.
stalled=()
for i in $(seq 1 20); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$PORT"
  printf 'POST /api/repos/create HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{' >&"$fd"
  stalled+=("$fd")
done
sleep 0.5
st="$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$BASE/healthz")"
check_eq "  /healthz answers at once" 200 "$st"
st="$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$BASE/api/models/hana/vis")"
check_eq "  repo info answers at once" 200 "$st"
st="$(curl -s -o /dev/null -w '%{http_code}' --max-time 3 "$BASE/hana/vis/resolve/main/w.bin")"
check_eq "  a file download answers at once" 200 "$st"
for fd in "${stalled[@]}"; do exec {fd}>&-; done

stop_server
finish
