#!/usr/bin/env bash
# Issue 18 §1–3: git over SSH through a real OpenSSH sshd (started here on a loopback port
# with a temp host key; AuthorizedKeysCommand `hangar keys`, forced command `hangar serv`)
# and git:// — clone, fetch and push with a user key and with deploy keys, git-lfs over SSH
# (git-lfs-authenticate), protocol v2 from the trace, a deleted key refused at once, git://
# for public repos only, malformed commands and requests refused, and one admission budget
# across HTTP, SSH and git://.
#
# Usage: ssh_git.sh PATH_TO_HANGAR
source "$(dirname "$0")/lib.sh" "$@"

section "setup: users, server with SSH and git://, sshd"
DATA="$T/data"
mkdir -p "$DATA"
new_user alice --email alice@example.org
ALICE="$(new_token alice --name laptop --role write)"
new_user bob --email bob@example.org
BOB="$(new_token bob --name laptop --role write)"
start_server "$DATA" --set ssh.enabled=true --set git_daemon.listen=127.0.0.1:0 \
  || die "hangar serve did not start"
wait_until 10 grep -q '^git:// on port' "$SERVER_OUT" || die "no git:// port line"
GITD_PORT="$(sed -n 's/^git:\/\/ on port \([0-9]*\)$/\1/p' "$SERVER_OUT")"
pass "server on $BASE, git:// on $GITD_PORT"

start_sshd "$DATA"
pass "sshd on 127.0.0.1:$SSH_PORT (user $SSH_USER)"
for k in alice bob deploy_ro deploy_rw other; do ssh_key "$k"; done

section "keys through the API"
add_ssh_key "$ALICE" alice "alice laptop"
check_status "alice adds her key -> 201" 201
ALICE_KEY_ID="$(jbody .id)"
add_ssh_key "$BOB" bob "bob laptop"
check_status "bob adds his key -> 201" 201
add_ssh_key "$BOB" alice "stolen"
check_status "the same key on another account -> 409" 409
must_create "$ALICE" m alice model false
must_create "$ALICE" secret alice model true
must_create "$BOB" bobs bob model true
for k in deploy_ro:false deploy_rw:true; do
  req POST "$BASE/api/models/alice/m/deploy-keys" -H "Authorization: Bearer $ALICE" -H 'Content-Type: application/json' \
    --data-binary "$(jq -cn --arg k "$(cat "$T/${k%%:*}.pub")" --argjson rw "${k##*:}" '{key: $k, title: "ci", readWrite: $rw}')"
  check_status "deploy key ${k%%:*} on alice/m -> 201" 201
done

req GET "$BASE/alice/m"
check_true "the repo page shows both clone URLs" grep -q "git clone git@127.0.0.1:alice/m.git" "$BODY"

section "clone, push, fetch over SSH with a user key (protocol v2)"
W="$T/w"
if GIT_TRACE_PACKET="$T/trace" gits alice clone -q "$SSH_URL/alice/m.git" "$W" 2>"$T/clone.err"; then
  pass "alice clones alice/m over SSH"
else
  fail "alice clones alice/m over SSH" "$(brief "$T/clone.err")"
fi
check_true "protocol v2 in use (the trace shows the server saying version 2)" grep -qE "< version 2$" "$T/trace"
echo "hello over ssh" >"$W/ssh.txt"
git -C "$W" add ssh.txt && git -C "$W" commit -qm "over ssh"
if gits alice -C "$W" push -q origin main 2>"$T/push.err"; then
  pass "alice pushes over SSH"
else
  fail "alice pushes over SSH" "$(brief "$T/push.err")"
fi
req GET "$BASE/api/models/alice/m"
check_json "the API sees the SSH push at once" .sha "$(git -C "$W" rev-parse HEAD)"
if gits alice clone -q "$SSH_URL/alice/secret.git" "$T/secret" 2>"$T/c2.err"; then
  pass "alice clones her private repo over SSH"
else
  fail "alice clones her private repo over SSH" "$(brief "$T/c2.err")"
fi
gits bob clone -q "$SSH_URL/alice/secret" "$T/nope" 2>"$T/c3.err"
check_true "bob cannot clone alice's private repo" grep -qi "not found" "$T/c3.err"
gits bob -C "$W" push -q "$SSH_URL/alice/m.git" main:bobs-branch 2>"$T/p3.err"
check_true "bob cannot push to alice/m" grep -qi "write access" "$T/p3.err"

section "deploy keys"
if gits deploy_ro clone -q "$SSH_URL/alice/m.git" "$T/ro" 2>"$T/ro.err"; then
  pass "read-only deploy key clones its repo"
else
  fail "read-only deploy key clones its repo" "$(brief "$T/ro.err")"
fi
echo ro >"$T/ro/ro.txt"; git -C "$T/ro" add ro.txt; git -C "$T/ro" commit -qm ro
gits deploy_ro -C "$T/ro" push -q origin main 2>"$T/ro-push.err"
check_true "read-only deploy key refused on push, with a clear message" grep -q "read-only" "$T/ro-push.err"
gits deploy_rw -C "$T/ro" push -q origin main 2>"$T/rw-push.err" &&
  pass "read-write deploy key pushes" || fail "read-write deploy key pushes" "$(brief "$T/rw-push.err")"
gits deploy_rw clone -q "$SSH_URL/alice/secret.git" "$T/dk-other" 2>"$T/dk-other.err"
check_true "a deploy key opens no other repo" grep -qi "not found" "$T/dk-other.err"

section "git-lfs over SSH (git-lfs-authenticate)"
L="$T/lfs"
gits alice clone -q "$SSH_URL/alice/m.git" "$L" 2>/dev/null
git -C "$L" lfs install --local >/dev/null
git -C "$L" lfs track '*.bin' >/dev/null
head -c 3000000 /dev/urandom >"$L/weights.bin"
SUM="$(sha256sum "$L/weights.bin" | cut -d' ' -f1)"
git -C "$L" add -A && git -C "$L" commit -qm "lfs over ssh"
if gits alice -C "$L" push -q origin main 2>"$T/lfs-push.err"; then
  pass "git-lfs push over SSH"
else
  fail "git-lfs push over SSH" "$(brief "$T/lfs-push.err")"
fi
req HEAD "$BASE/alice/m/resolve/main/weights.bin"
check_hdr "the LFS object is on the hub (X-Linked-Size)" x-linked-size 3000000
if gits bob clone -q "$SSH_URL/alice/m.git" "$T/lfs2" 2>"$T/lfs-clone.err"; then
  check_eq "git-lfs clone over SSH gives the bytes" "$SUM" "$(sha256sum "$T/lfs2/weights.bin" | cut -d' ' -f1)"
else
  fail "git-lfs clone over SSH" "$(brief "$T/lfs-clone.err")"
fi
# The credential git-lfs-authenticate hands out opens git and LFS on that repo only.
CRED="$($(sshc alice) "$SSH_USER@127.0.0.1" git-lfs-authenticate alice/m.git download | jq -r '.header.Authorization')"
check_match "git-lfs-authenticate answers a bearer credential" '^Bearer hgr_' "$CRED"
req GET "$BASE/api/whoami-v2" -H "Authorization: $CRED"
check_status "that credential is refused on other routes -> 403" 403
req GET "$BASE/v2/" -H "Authorization: $CRED"
check_status "and by the OCI registry -> 401" 401
LFS_BATCH="$(jq -cn --arg oid "$SUM" '{operation: "download", transfers: ["basic"], objects: [{oid: $oid, size: 3000000}]}')"
req POST "$BASE/alice/m.git/info/lfs/objects/batch" -H "Authorization: $CRED" \
  -H 'Content-Type: application/vnd.git-lfs+json' --data-binary "$LFS_BATCH"
check_status "it opens alice/m's LFS batch" 200

section "bad commands"
BEFORE="$(git ls-remote "$BASE/alice/m" refs/heads/main | cut -f1)"
sshx() { $(sshc alice) "$SSH_USER@127.0.0.1" "$@" </dev/null 2>&1; }
check_match "'..' in the path refused" "not a repository path" "$(sshx "git-upload-pack '../../etc/passwd'")"
check_match "broken quoting refused" "malformed quoting" "$(sshx "git-upload-pack 'alice/m.git")"
check_match "unknown verb refused" "unknown command 'rm'" "$(sshx "rm -rf /")"
check_match "shell metacharacters refused" "malformed command" "$(sshx 'git-upload-pack alice/m.git;id')"
check_match "another user's private repo: not found" "not found" "$(sshx "git-upload-pack 'bob/bobs.git'")"
check_match "an interactive login is greeted, not given a shell" "does not provide shell access" "$(sshx)"
check_eq "nothing changed on alice/m" "$BEFORE" "$(git ls-remote "$BASE/alice/m" refs/heads/main | cut -f1)"

section "git://"
# git-lfs cannot guess an HTTP endpoint from a git:// URL: it is told the hub's.
if git -c lfs.url="$BASE/alice/m.git/info/lfs" clone -q "git://127.0.0.1:$GITD_PORT/alice/m.git" "$T/gd" 2>"$T/gd.err" &&
   [[ "$(sha256sum "$T/gd/weights.bin" | cut -d' ' -f1)" == "$SUM" ]]; then
  pass "git:// clone of a public repo (its LFS file from the hub's HTTP endpoint)"
else
  fail "git:// clone of a public repo" "$(brief "$T/gd.err")"
fi
git clone -q "git://127.0.0.1:$GITD_PORT/alice/secret.git" "$T/gd2" 2>"$T/gd2.err"
check_true "git:// refuses a private repo (not found)" grep -q "repository not found" "$T/gd2.err"
git -C "$T/gd" push -q origin main:x 2>"$T/gd3.err"
check_true "git:// is read-only" grep -q "read-only" "$T/gd3.err"
python3 - "$GITD_PORT" >"$T/flood.out" 2>&1 <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
s.settimeout(10)
try:
    s.sendall(b"ffff" + b"A" * 200000)
except OSError:
    pass
print(s.recv(200).decode(errors="replace"))
PY
check_match "a pkt-line flood on git:// gets an ERR" "ERR protocol error" "$(cat "$T/flood.out")"
# A client trickling its request one byte a second: one deadline (10 s) for the whole
# request, however the bytes come.
python3 - "$GITD_PORT" >"$T/trickle.out" 2>&1 <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), 5)
start = time.time()
try:
    for b in b"fff0" + b"x" * 60:
        s.sendall(bytes([b]))
        time.sleep(1)
        if time.time() - start > 30:
            break
    print("still open after 30 s")
except OSError:
    print("closed after %d s" % (time.time() - start))
PY
check_match "a trickled git:// request is cut off at its deadline" "^closed after 1[0-4] s" "$(cat "$T/trickle.out")"

section "a deleted key is refused at once"
req DELETE "$BASE/api/settings/ssh-keys/$ALICE_KEY_ID" -H "Authorization: Bearer $ALICE"
check_match "alice deletes her key -> 200/204" '^20[04]$' "$ST"
gits alice ls-remote "$SSH_URL/alice/m.git" >"$T/revoked.out" 2>&1
check_true "the deleted key is refused (publickey)" grep -qi "permission denied" "$T/revoked.out"
req POST "$BASE/alice/m.git/info/lfs/objects/batch" -H "Authorization: $CRED" \
  -H 'Content-Type: application/vnd.git-lfs+json' --data-binary "$LFS_BATCH"
check_status "the LFS credential obtained with the deleted key dies with it -> 401" 401

finish
